"""Every dataset and solver of a ``benchopt run`` checked before its first run.

A dataset or solver class lists :class:`CheckedParameters` among its bases
and writes :meth:`~CheckedParameters.check_parameters`: the checks that need
nothing but the parameters (a ValueError naming the parameter and its
range, see :mod:`benchmark_utils.checks.parameters`). A dataset runs them
at the start of ``get_data`` and a solver in ``skip``, benchopt's public
hooks, so no run starts with a bad parameter, however it was started.

Across a run: benchopt 1.10 builds instances lazily while it walks the run
list, so a bad second dataset would abort ``benchopt run`` only after every
run on the first, and benchopt has no hook that sees the whole selection
first. So the first dataset's ``get_data`` (benchopt's public hook, the
first of this benchmark's code that a run calls, before any solver runs)
calls :func:`before_first_instance`, which says the budget chosen for a
run given none (:mod:`benchmark_utils.budget`) and calls
:func:`check_command_line_run`. One check comes earlier: benchopt refuses
an unknown name (``-s "SOBA[outre_step=1]"``) with a traceback when it
expands the run's names, so the objective's ``is_installed`` (benchopt's
public hook, which ``benchopt run`` calls just before) calls
:func:`refuse_unknown_names` (one message with the closest valid name
instead), which also counts the run list for the overall progress line
(:mod:`benchmark_utils.progress`) before benchopt starts any worker; no
check runs when a module is imported.
:func:`check_command_line_run` reads the run's selection
from the command line through click's public API (the ``-d`` / ``-s``
options, or the ``--config`` file's ``dataset`` / ``solver`` keys where
the options are not given, as benchopt reads them), expands it with
benchopt's public ``Benchmark.check_*_patterns`` and ``get_instance``, and
checks every instance once (:func:`check_run_list`): the parameters,
:meth:`check_run_ready` (the downloaded files of a dataset), and each
solver's batch sizes against each dataset's sample counts where both are
known from the parameters (``sample_counts`` / ``check_sample_counts``).
Any failure ends the command before any solver runs, printing one list of
every bad instance (no traceback), exit code 1. Outside ``benchopt run``
(tests, the Python API, a worker process) it does nothing. What needs more
than the parameters (a regression instance that is not genuinely bilevel)
still fails in ``get_data``: that dataset is then skipped with the reason
and the run goes on (:mod:`benchmark_utils.checks.dataset_failures`).
"""
import contextlib
import dataclasses
import itertools
import re
import sys
from pathlib import Path

import click
import yaml

from benchmark_utils import budget, progress
from benchmark_utils.checks.names import closest
from benchmark_utils.checks.parameters import same_value
from benchmark_utils.checks.run_options import (
    effective_options,
    option_errors,
)

# benchopt's run command and the options holding a run's selection
RUN_COMMAND = "run"
SELECTION_OPTIONS = {"dataset": "dataset", "solver": "solver",
                     "objective": "objective"}


@dataclasses.dataclass(frozen=True)
class SampleCounts:
    """What a dataset's ``sample_counts()`` declares from its parameters
    alone: the problem family and the samples of each level, enough for a
    solver's batch-size checks (:func:`_pair_failures`), and whether the
    upper level f is convex where the dataset knows it (None: not
    declared), for a choice that follows it (IR-SCG's auto schedule)."""

    family: str
    n_upper: int
    n_lower: int
    f_convex: bool | None = None


class RunListError(ValueError):
    """Instances of a run with invalid parameters or missing inputs."""


class CheckedParameters:
    """Mixin of the benchmark's datasets and solvers (see module doc)."""

    def check_parameters(self):
        """Hook: raise ValueError naming a bad parameter (default: none).

        Needs nothing but the parameters; checks that need the problem
        belong to the solver's ``check_with_problem``.
        """

    def check_run_ready(self):
        """Hook of the run-list check only: raise (ValueError or OSError)
        when a run of this instance cannot start for lack of something other
        than a parameter, such as a file ``benchopt prepare`` downloads
        (default: nothing). Not called by ``get_data``: ``benchopt prepare``
        builds the instance before it downloads."""


def before_first_instance():
    """In a ``benchopt run``, once, before its first instance is built
    (module doc): the chosen budget said, the run list checked. Nothing
    elsewhere."""
    budget.announce()
    check_command_line_run()


def refuse_unknown_names():
    """In a ``benchopt run``: a bad value of benchopt's own options
    (:mod:`benchmark_utils.checks.run_options`), then an unknown dataset,
    solver or parameter name, ends the command with one clear message
    (the closest valid name for a name; module doc: from the objective's
    is_installed); then the overall progress line's counter is set up for
    the run list. Nothing elsewhere."""
    context = run_command("bilevel_names_checked")
    if context is not None:
        options = effective_options(context, config_mapping(context))
        with _exit_on_error():
            errors = option_errors(options, context.params["benchmark"])
            if errors:
                raise RunListError("benchopt run's options:\n" + "\n".join(
                    f"  {error}" for error in errors))
            selected = selected_instances(context)
        # the run list is known, before benchopt starts any worker (a dask
        # cluster's too): one overall progress line per run
        datasets, solvers, objectives = (count(selection)
                                         for selection in selected)
        progress.install(datasets * max(objectives, 1) * solvers
                         * (options["n_repetitions"] or 1),
                         options["n_jobs"] or 1)


def check_command_line_run():
    """Check every instance of the ``benchopt run`` this process runs, if
    any (module doc); on a failure print the list and exit with code 1."""
    context = run_command("bilevel_run_list_checked")
    if context is None:
        return
    with _exit_on_error():
        check_run_list(*selected_instances(context))


def run_command(done_key):
    """The click context of the ``benchopt run`` this process runs, the
    first time a check marked ``done_key`` asks; None otherwise."""
    context = click.get_current_context(silent=True)
    if context is None or context.command.name != RUN_COMMAND:
        return None
    if context.meta.get(done_key):
        return None
    context.meta[done_key] = True
    return context


def selected_instances(context):
    """The run's selection as benchopt's public ``check_*_patterns``
    expand it (datasets, solvers, objectives); benchopt's own refusal of an
    unknown name as a RunListError with the closest valid name, every
    unknown name of the selection at once (benchopt stops at the first)."""
    from benchopt.benchmark import Benchmark
    benchmark = Benchmark(Path(context.params["benchmark"]))
    checks = {"dataset": benchmark.check_dataset_patterns,
              "solver": benchmark.check_solver_patterns,
              "objective": benchmark.check_objective_filters}
    patterns = {kind: selection_patterns(context, kind)
                for kind in SELECTION_OPTIONS}
    errors, known = [], {}
    for kind, check in checks.items():
        for pattern in patterns[kind]:
            error = _unknown_name(check, pattern)
            errors += [error] if error else []
            known.setdefault(kind, []).extend([] if error else [pattern])
    if not errors:
        return tuple(check(patterns[kind]) for kind, check in checks.items())
    # the instances of the known names are checked too, so that their
    # mistakes come in the same message (a kind whose names are all
    # unknown selects nothing, not everything)
    failures = run_list_failures(*(
        check(known.get(kind, [])) if known.get(kind) or not patterns[kind]
        else []
        for kind, check in checks.items()))
    if len(errors) == 1 and not failures:
        raise RunListError(errors[0])
    raise RunListError("\n".join(
        [f"{len(errors)} unknown name(s) in this run's selection:"]
        + ["- " + error.splitlines()[0] for error in errors]
        + ([failures_text(failures)] if failures else [])))


def _unknown_name(check, pattern):
    """benchopt's refusal of one selection ``pattern`` by ``check`` (one of
    its ``check_*_patterns``) with the closest valid name, or None."""
    try:
        check([pattern])
    except click.BadParameter as error:
        # an unknown class name (benchopt answers with its usage, exit 2)
        return unknown_name_text(error.message)
    except ValueError as error:
        return unknown_name_text(str(error))
    return None


@contextlib.contextmanager
def _exit_on_error():
    """A RunListError printed (no traceback), then exit code 1."""
    try:
        yield
    except RunListError as error:
        print(f"\n{error}", file=sys.stderr, flush=True)
        raise SystemExit(1) from None


def count(selection):
    """How many instances a selection (as :func:`check_run_list` takes
    it) gives."""
    return sum(len(list(expand_grid(klass, grid)))
               if isinstance(klass, type) and hasattr(klass, "parameters")
               else 1 for klass, grid in selection or ())


def unknown_name_text(message):
    """benchopt's message for an unknown parameter or class name (its list
    of the possible ones), with the closest of them named first."""
    unknown = (re.search(r"Unknown parameter '([^']+)'", message)
               or re.search(r"Patterns \['([^']+)'", message))
    possible = re.findall(r"^- (\S+)$", message, flags=re.M)
    hint = closest(unknown.group(1), possible) if unknown else ""
    first, _, rest = message.partition("\n")
    return f"{first.rstrip('.')}{hint}." + (f"\n{rest}" if rest else "")


def selection_patterns(context, kind):
    """The ``-d`` / ``-s`` patterns of the run (``--force-solver`` too for
    solvers), or the config file's where none is given, as benchopt's run
    reads them (an empty list selects everything)."""
    given = list(context.params.get(SELECTION_OPTIONS[kind]) or ())
    if kind == "solver":
        given += list(context.params.get("force_solver") or ())
    if given:
        return given
    value = config_mapping(context).get(kind, [])
    return value if isinstance(value, list) else [value]


def config_mapping(context):
    """The ``--config`` file of the run as benchopt reads it (an empty
    mapping where there is none)."""
    config_file = context.params.get("config_file")
    if config_file is None:
        return {}
    with open(config_file) as stream:
        return yaml.safe_load(stream) or {}


def check_run_list(datasets, solvers, objectives=()):
    """Check every instance of the selections ``datasets``, ``solvers`` and
    ``objectives`` (lists of (class, parameter grid), as benchopt's
    ``check_*_patterns`` / ``check_objective_filters`` return them);
    RunListError listing every failure."""
    failures = run_list_failures(datasets, solvers, objectives)
    if failures:
        raise RunListError(failures_text(failures))


def run_list_failures(datasets, solvers, objectives=()):
    """The failures :func:`check_run_list` lists (one line each)."""
    failures = [failure for kind, selection in (("objective", objectives),
                                                ("dataset", datasets),
                                                ("solver", solvers))
                for failure in _failures(kind, selection)]
    return failures + _pair_failures(datasets, solvers)


def failures_text(failures):
    return (f"{len(failures)} instance(s) of this run cannot run, so nothing "
            "was run; fix or remove them:\n- " + "\n- ".join(failures))


def expand_grid(klass, grid):
    """Every parameter dict of ``klass`` a selection's ``grid`` gives: the
    class's parameter lists updated by the grid's, in product order."""
    lists = {name: list(values) for name, values in klass.parameters.items()}
    unknown = sorted(set(grid) - set(lists))
    if unknown:
        raise ValueError(f"unknown parameters {unknown} of {klass.name}; "
                         f"its parameters are {sorted(lists)}")
    for name, values in grid.items():
        lists[name] = list(values) if isinstance(values, (list, tuple)) \
            else [values]
    names = list(lists)
    seen = []
    for values in itertools.product(*lists.values()):
        parameters = dict(zip(names, values, strict=True))
        if parameters not in seen:
            seen.append(parameters)
            yield parameters


def _instances(selection):
    """``(klass, parameters, instance)`` for every instance of a selection
    whose class uses the mixin, built with benchopt's ``get_instance`` (no
    check runs when an instance is built)."""
    for klass, grid in selection or ():
        if not (isinstance(klass, type)
                and issubclass(klass, CheckedParameters)):
            continue        # benchopt reports classes that failed to import
        for parameters in expand_grid(klass, grid):
            yield klass, parameters, klass.get_instance(**parameters)


def _pair_failures(datasets, solvers):
    """'solver <s> on dataset <d>: <reason>' for each pair whose batch sizes
    exceed the dataset's sample counts, read from the parameters
    (``sample_counts()``, where a dataset declares it) by the solver's
    ``check_sample_counts``: found before any run, not when the solver
    meets the dataset's problem."""
    counted = []
    for _, _, dataset in _instances(datasets):
        try:
            dataset.check_parameters()
            counts = dataset.sample_counts()
        except (AttributeError, ValueError, TypeError):
            continue        # undeclared, or a bad parameter (reported)
        counted.append((dataset, counts))
    failures = []
    for _, _, solver in _instances(solvers):
        check = getattr(solver, "check_sample_counts", None)
        try:
            solver.check_parameters()
        except ValueError:
            continue        # a bad parameter (reported)
        for dataset, counts in counted if check else ():
            try:
                check(counts)
            except ValueError as error:
                failures.append(f"solver {solver} on dataset {dataset}: "
                                f"{error}")
    return failures


def _failures(kind, selection):
    """'<kind> <instance>: <reason>' for each instance of ``selection``
    that fails its checks."""
    failures = []
    for klass, parameters, instance in _instances(selection):
        try:
            instance.check_parameters()
        except ValueError as error:
            failures.append(f"{kind} {instance}: " + "; ".join(
                every_reason(klass, parameters, str(error))))
            continue
        try:
            instance.check_run_ready()
        except (ValueError, OSError) as error:
            failures.append(f"{kind} {instance}: {error}")
    return failures


def every_reason(klass, parameters, first):
    """The checks' reasons against ``parameters`` (given to ``klass``),
    ``first`` the first: each time, the given parameter whose default in
    its place changes the reason is put back to its default and the rest
    checked again, so that several independent mistakes are named at once
    and a parameter is never blamed for another's value."""
    defaults = {name: values[0] for name, values in klass.parameters.items()}
    current, reasons, reason = dict(parameters), [], first
    while reason is not None and len(reasons) < len(parameters):
        reasons.append(reason)
        culprit = next((name for name, value in current.items()
                        if not same_value(value, defaults.get(name))
                        and _reason(klass, {**current,
                                            name: defaults[name]}) != reason),
                       None)
        if culprit is None:
            break
        current[culprit] = defaults[culprit]
        reason = _reason(klass, current)
    return reasons


def _reason(klass, parameters):
    """The parameter checks' message for ``klass(**parameters)``, or
    None."""
    try:
        klass.get_instance(**parameters).check_parameters()
    except ValueError as error:
        return str(error)
    return None
