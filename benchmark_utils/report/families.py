"""What the report plots for each problem family: metrics and x-axes.

A reader compares solvers by the measures of progress of their family
(gaps, gradient norms, distances, task metrics) against the budget that
matters for it (samples, gradient evaluations, LMO calls, Hessian-vector
products, time). Counters (``n_*``, ``diverged``) are budgets, never
y-axes: they are the x-axes here and columns of the final-values table.

Each metric of a plot is a role with candidate columns in order of
preference, so one role serves every dataset of the family: the upper-level
gap ``|f - f*|`` where a certified reference exists, the upper value where
none does (a nonconvex upper level). A dataset is offered by a plot only
when every role of the plot is defined on it, so no figure is empty.
"""
from dataclasses import dataclass
from typing import NamedTuple


class XAxis(NamedTuple):
    """An x-axis: the ``columns`` summed, the axis ``label`` and the
    ``offset`` added to the sum. Counts start at 0, which a log axis cannot
    show: they are drawn as count + 1, so every curve starts at x = 1 with
    its value at the start (a warm start's cost shows as the distance to
    its next point), and the label says so."""
    columns: tuple
    label: str
    offset: float = 0.0


X_AXES = {
    "samples": XAxis(("objective_n_samples_upper",
                      "objective_n_samples_lower"),
                     "samples (upper + lower) + 1", 1.0),
    "grad_evals": XAxis(("objective_n_grad_evals",),
                        "gradient evaluations + 1", 1.0),
    "lmo_calls": XAxis(("objective_n_lmo",), "LMO calls + 1", 1.0),
    "hvp": XAxis(("objective_n_hvp",), "Hessian-vector products + 1", 1.0),
    # benchopt's callback counts iterations in stop_val (0 at the start)
    "iterations": XAxis(("stop_val",), "iterations + 1", 1.0),
    # the start is timed when it is evaluated: its time is positive
    "time": XAxis(("time",), "time (s)"),
}
# the task metric of each application, one per dataset (the first present);
# the others (e.g. hyper-cleaning's AUC and F1) are in the final-values table
TASK_COLUMNS = ("objective_test_error", "objective_recovery_rate",
                "objective_test_accuracy", "objective_normalized_error",
                "objective_theta_error")


def is_counter(column):
    """Whether a result column counts budget or faults (never a y-axis)."""
    return column.startswith("objective_n_") or column == "objective_diverged"


@dataclass(frozen=True)
class Family:
    """The curves of one family: ``metrics`` maps each role to its candidate
    columns, ``x_axes`` names keys of :data:`X_AXES`; a metric's y-axis may
    be logarithmic (where its values are positive and span a decade: gaps,
    norms, errors) unless it is one of ``linear`` (rates and accuracies,
    read on a linear scale)."""
    name: str
    metrics: dict
    x_axes: tuple
    linear: tuple = ()

    def log_y(self, column):
        """Whether ``column``'s y-axis may be logarithmic."""
        return column not in self.linear

    def resolve(self, rows, role):
        """The column that plays ``role`` on these rows (one dataset), or
        None when no candidate has a value."""
        for column in self.metrics[role]:
            if column in rows and rows[column].notna().any():
                return column
        return None

    def has_dataset(self, rows):
        """Whether every role of the family is defined on these rows."""
        return all(self.resolve(rows, role) is not None
                   for role in self.metrics)


SIMPLE = Family(
    "simple",
    metrics={"lower_gap": ("objective_lower_gap",),
             "upper_gap": ("objective_upper_gap_abs",
                           "objective_upper_value")},
    x_axes=("samples", "grad_evals", "lmo_calls", "iterations", "time"))
GENERAL = Family(
    "general",
    # ||grad F|| without constraints on x, the Frank-Wolfe gap with them
    metrics={"stationarity": ("objective_hypergrad_norm",
                              "objective_fw_gap"),
             "upper_gap": ("objective_upper_gap_abs", "objective_value"),
             "inner_distance": ("objective_inner_distance",)},
    x_axes=("samples", "grad_evals", "hvp", "iterations", "time"))
# errors go on a log axis where they span a decade (regression's test error
# falls by several decades), rates and accuracies stay linear
TASK = Family("task", metrics={"task_metric": TASK_COLUMNS},
              x_axes=("samples", "iterations", "time"),
              linear=("objective_recovery_rate", "objective_test_accuracy"))

