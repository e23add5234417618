"""Every dataset and solver of a ``benchopt run`` checked before its first run.

A dataset or solver class lists :class:`CheckedParameters` among its bases
and writes :meth:`~CheckedParameters.check_parameters`: the checks that need
nothing but the parameters (a ValueError naming the parameter and its
range, see :mod:`benchmark_utils.checks.parameters`). benchopt builds every
instance with ``get_instance``, which calls ``save_parameters``; the mixin
runs the checks there, so no instance with a bad parameter exists, whoever
builds it.

Across a run: benchopt 1.10 builds instances lazily while it walks the run
list (``benchopt._generate_runs._get_all_runs``), so a bad second dataset
would abort ``benchopt run`` only after every run on the first, writing no
parquet, and benchopt has no hook that sees the whole run list first. So
the first instance built during a run finds the frame of ``_get_all_runs``
on the call stack, reads the selections it is about to expand, and checks
every instance of them once (:func:`check_run_list`): the parameters,
:meth:`check_run_ready` (the downloaded files of a dataset), and each
solver's batch sizes against each dataset's sample counts where both are
known from the parameters (``sample_counts`` / ``check_sample_counts``).
Any failure aborts the run before any solver runs, with one
:class:`RunListError` listing every bad instance. Where benchopt's
internals differ, the frame is not found and only the per-instance checks
remain
(``tests/test_run_list_checks.py`` catches that). What needs more than the
parameters (a regression instance that is not genuinely bilevel) still
fails in ``get_data``: that dataset is then skipped with the reason and the
run goes on (:mod:`benchmark_utils.checks.dataset_failures`).
"""
import dataclasses
import sys

from benchopt.utils.parametrized_name_mixin import _get_used_parameters

from benchmark_utils.checks.dataset_failures import data_or_failure

# the benchopt function whose frame holds the run list while it is expanded
RUN_LIST_BUILDER = ("benchopt._generate_runs", "_get_all_runs")

# the run-list frame checked last: one check per run (kept alive, so that
# a later run's frame cannot be taken for it)
_checked_frame = None


@dataclasses.dataclass(frozen=True)
class SampleCounts:
    """What a dataset's ``sample_counts()`` declares from its parameters
    alone: the problem family and the samples of each level, enough for a
    solver's batch-size checks (:func:`_pair_failures`)."""

    family: str
    n_upper: int
    n_lower: int


class RunListError(ValueError):
    """Instances of a run with invalid parameters or missing inputs."""

    def __init__(self, message):
        super().__init__(message)
        self.message = message

    def __str__(self):
        # benchopt prefixes the message of an error raised while it builds
        # an instance with that instance's class; this one is about the run
        # list, which any instance may have triggered
        return self.message


class CheckedParameters:
    """Mixin of the benchmark's datasets and solvers (see module doc); list
    it before benchopt's base class."""

    def save_parameters(self, **parameters):
        super().save_parameters(**parameters)
        check_run_list()
        self.check_parameters()

    def _get_data(self):
        # datasets only: a failing get_data skips this dataset instead of
        # ending the run (benchmark_utils/checks/dataset_failures.py)
        return data_or_failure(self, super()._get_data)

    def check_parameters(self):
        """Hook: raise ValueError naming a bad parameter (default: none).

        Runs at construction, so it needs nothing but the parameters;
        checks that need the problem belong to the solver's
        ``check_with_problem``.
        """

    def check_run_ready(self):
        """Hook of the run-list check only: raise (ValueError or OSError)
        when a run of this instance cannot start for lack of something other
        than a parameter, such as a file ``benchopt prepare`` downloads
        (default: nothing). Not called at construction: ``benchopt prepare``
        builds the instance before it downloads."""


def check_run_list():
    """Check every instance of the run being built, once per run; a no-op
    outside ``benchopt run`` (see module doc)."""
    global _checked_frame
    frame = _run_list_frame()
    if frame is None or frame is _checked_frame:
        return
    _checked_frame = frame
    selections = {kind: frame.f_locals.get(f"{kind}s")
                  for kind in ("dataset", "solver")}
    failures = [failure for kind in ("dataset", "solver")
                for failure in _failures(kind, selections[kind])]
    failures += _pair_failures(selections["dataset"], selections["solver"])
    if failures:
        raise RunListError(
            f"{len(failures)} instance(s) of this run cannot run, so nothing "
            "was run; fix or remove them:\n- " + "\n- ".join(failures))


def _run_list_frame():
    """The frame of benchopt's ``_get_all_runs`` on the call stack, or None;
    its locals ``datasets`` and ``solvers`` are the run's selections."""
    frame = sys._getframe(1)
    while frame is not None:
        if (frame.f_globals.get("__name__"),
                frame.f_code.co_name) == RUN_LIST_BUILDER:
            return frame
        frame = frame.f_back
    return None


def _instances(selection):
    """Every instance of a selection whose class uses this mixin, built
    without the checks (those are :func:`_failures`'s)."""
    for klass, grid in selection or ():
        if not (isinstance(klass, type)
                and issubclass(klass, CheckedParameters)):
            continue        # benchopt reports classes that failed to import
        for parameters in _get_used_parameters(klass, grid):
            instance = klass(**parameters)
            # benchopt's save_parameters, without this mixin's checks
            super(CheckedParameters, instance).save_parameters(**parameters)
            yield instance


def _pair_failures(datasets, solvers):
    """'solver <s> on dataset <d>: <reason>' for each pair whose batch sizes
    exceed the dataset's sample counts, read from the parameters
    (``sample_counts()``, where a dataset declares it) by the solver's
    ``check_sample_counts``: found before any run, not when the solver
    meets the dataset's problem."""
    counted = []
    for dataset in _instances(datasets):
        try:
            counts = dataset.sample_counts()
        except (AttributeError, ValueError):
            continue        # undeclared, or a bad parameter (reported)
        counted.append((dataset, counts))
    failures = []
    for solver in _instances(solvers):
        check = getattr(solver, "check_sample_counts", None)
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
    for instance in _instances(selection):
        try:
            instance.check_parameters()
            instance.check_run_ready()
        except (ValueError, OSError) as error:
            failures.append(f"{kind} {instance}: {error}")
    return failures
