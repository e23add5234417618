"""Where a claim is read: the points of an experiment's axes (its budget,
a time axis's CPU horizon, the early point of a claim of speed) and the
words a section says them in (:mod:`benchmark_utils.claims.sections`).
"""
import numpy as np

AXIS_WORDS = {"iterations": "iteration", "samples": "samples",
              "time": "s", "cpu_time": "CPU-s"}


def number(value):
    """A value as the tables print it: 3 significant digits."""
    if value is None or not np.isfinite(value):
        return "inf" if value is not None and value > 0 else str(value)
    return f"{value:.3g}"


def point_text(axis, target, common=False):
    """The point a value is read at; ``common``: the two methods' common
    end on ``axis`` (verdicts.common_end)."""
    text = (f"{target:.3g} {AXIS_WORDS[axis]}" if axis in ("time",
                                                          "cpu_time")
            else f"{AXIS_WORDS[axis]} {target:,.0f}")
    return text + (" (the earliest end of the two methods' runs that did "
                   "not diverge)" if common else "")


def on_horizon(exp, runs):
    """Whether ``exp`` is read at its CPU horizon: it has one and its
    evidence records the CPU clock (evidence from before the horizon is
    read as it was, at the wall-clock common end, and marked stale)."""
    return exp.horizon is not None and "cpu_time" in runs.columns


def table_point(exp, runs):
    """``(axis, target)`` of the method table: the horizon where it is
    read there, else the budget."""
    return ("cpu_time", exp.horizon) if on_horizon(exp, runs) else exp.budget


def claim_axes(exp, runs):
    """``(axis, target)`` of each reading: the paper's axis (at the budget
    where the budget is on it; time: the CPU horizon, :func:`on_horizon`),
    then equal samples where the paper's axis is another (at the sample
    budget); target None: each claim's two methods' common end on that
    axis (verdicts.common_end; at equal samples after a horizon, whose
    runs end at different sample counts; on time without a horizon, the
    CPU clock where the evidence records it)."""
    if on_horizon(exp, runs):
        return [("cpu_time", exp.horizon), ("samples", None)]
    axes = [exp.axis] + (["samples"] if exp.axis != "samples" else [])
    if exp.axis == "time" and "cpu_time" in runs.columns:
        axes[0] = "cpu_time"
    return [(axis, exp.budget[1] if exp.budget and exp.budget[0] == axis
             else None) for axis in axes]


# a claim of speed's early point: this share of the paper's axis budget
EARLY_FRACTION, EARLY_WORDS = 0.1, "a tenth of the budget"


def early_reading(exp, runs):
    """``(axis, target)`` of the early point, where the claims of speed
    are also read: EARLY_FRACTION of the first reading's point (None where
    that point is each claim's common end)."""
    axis, target = claim_axes(exp, runs)[0]
    return None if target is None else (axis, EARLY_FRACTION * target)


def paper_axis(axis):
    # the wall-clock and CPU readings are both the paper's time axis
    return "time" if axis == "cpu_time" else axis


# what a time-axis reading is: at the CPU horizon, or (evidence from
# before it) at the wall-clock common end
HORIZON_READING = (" Time is the CPU time of the solver's iterations "
                   "(`cpu_time`, the process clock, which machine load "
                   "changes far less than the wall-clock), every run "
                   "continued to the horizon of {horizon:g} CPU-seconds "
                   "({reason}){cap}.")
TIME_READING = (" Time is this machine's {clock}, read at the earliest "
                "end of the two methods' runs, not at the paper's horizon.")


def time_text(exp, runs):
    """How the time axis is read (nothing for another axis)."""
    if exp.axis != "time":
        return ""
    if on_horizon(exp, runs):
        cap = (", its sample budget only a safety cap"
               if exp.budget[0] == "samples" else "")
        return HORIZON_READING.format(horizon=exp.horizon,
                                      reason=exp.horizon_reason, cap=cap)
    clock = ("CPU time of the solver's iterations (`cpu_time`)"
             if "cpu_time" in runs.columns else "wall-clock")
    if exp.horizon is not None:
        return (TIME_READING.format(clock=clock) + " **Stale:** this "
                "evidence predates the horizon of "
                f"{exp.horizon:g} CPU-seconds; `python -m "
                f"benchmark_utils.claims run {exp.name}` renews it.")
    return TIME_READING.format(clock=clock)
