"""A solver's resolved step defaults on an experiment's dataset.

A default such as ``inner_step=None`` means "computed from the problem's
constants" (``2 / (mu_g + L_g)``, the tuned outer step times the problem's
``outer_step_scale``, ...). The grid is centred on the number the solver
actually runs with, so the solver is built and set on the problem as
benchopt does (tests/conftest.py does the same) and its resolved step
(``solver.steps``, benchmark_utils/solvers/steps.py) is read.
"""
import functools
import math
from pathlib import Path

from benchopt.benchmark import Benchmark
from benchopt.utils.run_context import RunContext

from benchmark_utils.checks.names import closest
from benchmark_utils.checks.run_list import expand_grid
from benchmark_utils.tuning.config_io import as_list, format_entry, parse_entry

ROOT = Path(__file__).resolve().parents[2]
# the tuning runs of a random dataset (one with a ``random_state``) use the
# instance ``random_state + TUNING_INSTANCE_OFFSET``: the tuned config is
# evaluated on the config's own instances, never on the one tuned on
TUNING_INSTANCE_OFFSET = 1000


@functools.lru_cache(maxsize=None)
def benchmark():
    return Benchmark(ROOT)


def solver_class(name):
    """The benchmark's solver class named ``name`` (ValueError if none)."""
    classes = {cls.name: cls for cls in benchmark().get_solvers()}
    if name not in classes:
        raise ValueError(f"no solver named {name!r}{closest(name, classes)};"
                         f" the benchmark's solvers are {sorted(classes)}")
    return classes[name]


def dataset_instances(dataset_entries):
    """Every dataset instance the config's entries select, in benchopt's
    order (an entry's parameter lists and the class's default lists
    expand to several instances)."""
    selected = benchmark().check_dataset_patterns(as_list(dataset_entries))
    return [klass.get_instance(**parameters) for klass, grid in selected
            for parameters in expand_grid(klass, grid)
            if klass.is_installed()]


def tuning_dataset_entries(dataset_entries,
                           offset=TUNING_INSTANCE_OFFSET):
    """``(entries, shifted)``: the config's dataset entries as the tuning
    runs select them, each random dataset's ``random_state`` (the entry's,
    else the class default) plus ``offset``; ``shifted``: whether any
    entry moved. A ``random_state`` of None (fresh randomness) is kept."""
    classes = {cls.name: cls for cls in benchmark().get_datasets()}
    entries, shifted = [], False
    for entry in as_list(dataset_entries):
        name, params = parse_entry(entry)
        cls = classes.get(name)
        if cls is None or "random_state" not in cls.parameters:
            entries.append(entry)
            continue
        value = params.get("random_state", cls.parameters["random_state"])
        values = [v if v is None else v + offset for v in as_list(value)]
        shifted |= values != as_list(value)
        params["random_state"] = values[0] if len(values) == 1 else values
        entries.append(format_entry(name, params))
    return entries, shifted


@functools.lru_cache(maxsize=8)
def _data(dataset):
    return dataset.get_data()


def _objective(objective_entries):
    objective_class = benchmark().get_benchmark_objective()
    params = {}
    if objective_entries:
        selected = benchmark().check_objective_filters(
            as_list(objective_entries))
        params = next(iter(selected))[1] if selected else {}
        params = {k: v[0] if isinstance(v, list) else v
                  for k, v in params.items()}
    return objective_class.get_instance(**params)


def set_on_problem(name, params, dataset, objective_entries=None):
    """The solver ``name[params]`` set on ``dataset``'s problem, as
    benchopt sets it before a run: ``(solver, skip_reason)``; the solver's
    checks raise ValueError for invalid parameters."""
    _, solver, reason = attached(name, params, dataset, objective_entries)
    return solver, reason


def attached(name, params, dataset, objective_entries=None):
    """``(objective, solver, skip_reason)``: :func:`set_on_problem` with
    the objective it set the data on (to evaluate the solver's iterates)."""
    objective = _objective(objective_entries)
    solver = solver_class(name).get_instance(**params)
    RunContext(base_seed="0", objective_name=objective.name,
               dataset_name=dataset.name, solver_name=solver.name,
               repetition=0).attach(objective, dataset, solver)
    objective.set_data(**_data(dataset))
    # benchopt's own sequence: skip, then set_objective, on what the
    # objective hands solvers
    handed = objective.get_objective()
    skip, reason = solver.skip(**handed)
    if not skip:
        solver.set_objective(**handed)
    return objective, solver, (reason if skip else None)


def resolved_value(solver, parameter):
    """The number the solver runs ``parameter`` with: its resolved step
    where the solver declares one, else the parameter; None where neither
    is a finite positive number."""
    steps = getattr(solver, "steps", {})
    resolved = steps[parameter].value if parameter in steps else None
    for value in (resolved, getattr(solver, parameter, None)):
        if (isinstance(value, (int, float)) and not isinstance(value, bool)
                and math.isfinite(value) and value > 0):
            return float(value)
    return None


def first_problem(name, params, datasets, objective_entries=None):
    """``(dataset, solver)``: the first dataset instance the solver runs
    on (not skipped), the solver set on it; ``(None, reasons)`` where it
    skips all of them."""
    reasons = []
    for dataset in datasets:
        solver, reason = set_on_problem(name, params, dataset,
                                        objective_entries)
        if reason is None:
            return dataset, solver
        reasons.append(f"{dataset.name}: {reason}")
    return None, reasons


def valid_values(name, params, parameter, values, dataset,
                 objective_entries=None):
    """``(valid, rejected)``: the grid values the solver's checks accept
    on ``dataset`` (e.g. IBCG's outer step must lie in (0, 1]), and for
    each rejected one its ValueError message."""
    valid, rejected = [], {}
    for value in values:
        try:
            set_on_problem(name, {**params, parameter: value}, dataset,
                           objective_entries)
        except ValueError as error:
            rejected[value] = str(error)
        else:
            valid.append(value)
    return valid, rejected
