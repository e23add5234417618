"""The tuning plan of one solver entry: which parameters, around which
centre, over which grid, or why the entry is kept as it is.

Everything here runs before any benchopt run, so a config the tuning
cannot handle fails in seconds, not after an hour of runs.
"""
import itertools
from dataclasses import dataclass, field

from benchmark_utils.tuning.config_io import format_entry, parse_entry
from benchmark_utils.tuning.defaults import (
    first_problem,
    resolved_value,
    solver_class,
    valid_values,
)
from benchmark_utils.tuning.grids import (
    KNOB_LATTICES,
    STEP_PARAMETERS,
    TUNABLE_KNOBS,
    Axis,
    tuned_parameters,
    untuned_reason,
)
from benchmark_utils.tuning.search import Lattice


@dataclass
class SolverPlan:
    entry: str                      # the config's entry, as written there
    name: str
    params: dict                    # the entry's parameters
    center: dict = field(default_factory=dict)     # parameter -> number
    grid: dict = field(default_factory=dict)       # parameter -> [values]
    family: str = ""
    dataset: str = ""               # where the defaults were resolved
    reason: str = ""                # why nothing is tuned ("" if tuned)
    notes: list = field(default_factory=list)      # printed to the user
    axes: dict = field(default_factory=dict)       # parameter -> Axis
    # (parameter, lattice index) -> why the solver's checks refuse it
    refused: dict = field(default_factory=dict)
    # (parameter, value) -> the checks' message or None; None: no checks
    checker: object = field(default=None, repr=False, compare=False)

    @property
    def points(self):
        """The grid points (dicts), in benchopt's product order."""
        names = list(self.grid)
        return [dict(zip(names, values, strict=True))
                for values in itertools.product(*self.grid.values())]

    def grid_entry(self):
        """benchopt's selector running the whole grid: the entry's fixed
        parameters and a list per tuned parameter."""
        return format_entry(self.name, {**self.fixed_params(), **self.grid})

    def chosen_entry(self, point):
        """The entry with the chosen values (the tuned config's)."""
        return format_entry(self.name, {**self.fixed_params(), **point})

    def fixed_params(self):
        return {k: v for k, v in self.params.items() if k not in self.grid}

    def refusal(self, parameter, index):
        """Why the lattice point ``index`` of ``parameter`` is left out
        (the lattice's end, or the solver's checks), or None; each value
        is checked once."""
        key = (parameter, index)
        if key not in self.refused:
            axis = self.axes[parameter]
            reason = axis.end_reason(index)
            if reason is None and self.checker is not None:
                reason = self.checker(parameter, axis.value(index))
            self.refused[key] = reason
        return self.refused[key]

    def lattice(self):
        """The :class:`~benchmark_utils.tuning.search.Lattice` the search
        grows from the first grid (``grid``)."""
        axes = [self.axes[name] for name in self.grid]
        first = [[k for k in axis.first()
                  if axis.value(k) in self.grid[axis.name]] for axis in axes]
        return Lattice(axes, first, self.refusal)


# the reason of a solver that has none of the parameters --parameters lists
NONE_OF = "it has none of"


def refuse_nothing_to_tune(plans, parameters):
    """ValueError before any run where ``--parameters`` leaves none of
    ``plans`` (the selected solvers') anything to tune and some solver
    lacks them all: no "Tuned by" config in which nothing was tuned."""
    lacking = [plan for plan in plans if plan.reason.startswith(NONE_OF)]
    if parameters and lacking and all(plan.reason for plan in plans):
        raise ValueError(
            f"--parameters {' '.join(parameters)}: no selected solver has "
            "any of them to tune (" + "; ".join(
                f"{plan.name} accepts "
                + ", ".join(accepted_parameters(plan.name))
                for plan in lacking) + ")")


def accepted_parameters(name):
    """What ``--parameters`` may span for the solver ``name``: the role-named
    steps it has, and the knobs it declares tunable."""
    return tuple(p for p in solver_class(name).parameters
                 if p in STEP_PARAMETERS or p in TUNABLE_KNOBS.get(name, ()))


def plan_solver(entry, datasets, n_points, objective_entries=None,
                parameters=None):
    """The :class:`SolverPlan` of ``entry`` on the config's dataset
    instances ``datasets`` (defaults resolved on the first one the solver
    runs on); ``parameters`` (``--parameters``) replaces the table's
    tuned parameters."""
    name, params = parse_entry(entry)
    text = entry if isinstance(entry, str) else format_entry(name, params)
    plan = SolverPlan(text, name, params,
                      family=solver_class(name).family)
    tuned = tuned_parameters(name, solver_class(name).parameters)
    if not tuned:
        plan.reason = untuned_reason(name)
        return plan
    if parameters:
        accepted = accepted_parameters(name)
        tuned = tuple(p for p in parameters if p in accepted)
        if not tuned:
            plan.reason = f"{NONE_OF} {', '.join(parameters)}"
            return plan
    for parameter, value in params.items():
        # one configuration per entry: its grid points are told apart by
        # the tuned parameters alone
        if isinstance(value, list):
            raise ValueError(
                f"solver entry {text!r} gives a list for {parameter}: give "
                "one value (for a tuned step, the grid's centre), or split "
                "the entry into one entry per value")
    dataset, solver = first_problem(name, params, datasets,
                                    objective_entries)
    if dataset is None:
        plan.reason = "skipped on every dataset: " + "; ".join(solver)
        return plan
    plan.dataset = dataset.name

    def checker(parameter, value):
        return valid_values(name, params, parameter, [value], dataset,
                            objective_entries)[1].get(value)
    plan.checker = checker
    for parameter in tuned:
        center = resolved_value(solver, parameter)
        if center is None:
            plan.notes.append(
                f"{parameter} not tuned: its value "
                f"{getattr(solver, parameter, None)!r} resolves to no "
                "positive number on this dataset")
            continue
        axis = Axis(parameter, center, n_points,
                    KNOB_LATTICES.get(parameter, "log"))
        plan.axes[parameter] = axis
        values = []
        for index in axis.first():
            message = plan.refusal(parameter, index)
            if message is None:
                values.append(axis.value(index))
            else:
                plan.notes.append(f"{parameter}={axis.value(index)} left "
                                  f"out of the grid: {message}")
        if values:
            plan.center[parameter], plan.grid[parameter] = center, values
    if not plan.grid:
        plan.reason = "no parameter to tune: " + "; ".join(plan.notes)
    return plan
