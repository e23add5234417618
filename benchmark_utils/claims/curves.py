"""The value a run's curve reaches at a given x (samples drawn, time,
oracle calls or iterations), the per-seed value a verdict compares
(:mod:`benchmark_utils.claims.stats`; read per run by
:func:`benchmark_utils.claims.verdicts.per_run`).

Runs are evaluated at iterations growing by 1.5, so two methods' curves
have no x in common: each is read at the same target, interpolated
between its two evaluations around it, the interpolation of
:func:`benchmark_utils.sample_budget.value_at_samples` (linear in the log
of a positive value, a gap or a loss that falls geometrically; linear
otherwise), which the tuning already scores with. Added here: an exact
hit returns the logged value itself (not a round trip through exp and
log), a target before the curve's first x or after its last is "not
reached" (None: no extrapolation, the start's value only at the start's
x), and an x that goes back is refused.
"""
import numpy as np

from benchmark_utils.sample_budget import value_at_samples


def value_at(x_values, y_values, target):
    """The curve (``x_values``, non-decreasing, and ``y_values``) at
    ``target``: the value logged there (the last one where several
    evaluations share that x), else interpolated between the two
    evaluations around it, or None where the curve does not reach it."""
    x = np.asarray(x_values, dtype=float)
    y = np.asarray(y_values, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"x and y of one curve, got shapes {x.shape} "
                         f"and {y.shape}")
    if np.any(np.diff(x) < 0):
        raise ValueError("the curve's x goes back: sort its evaluations "
                         "by stop_val")
    hits = np.flatnonzero(x == target)
    if hits.size:
        return float(y[hits[-1]])
    return value_at_samples(x.tolist(), y.tolist(), target)

