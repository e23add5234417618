"""Metrics of the simple-bilevel family (DESIGN.md, "Metrics").

Gaps are measured against certified references and never reported below the
reference's certified accuracy: a gap smaller than what the reference can
vouch for is reported at that floor, so a curve cannot claim more precision
than the benchmark has.
"""
import math


def simple_metrics(problem, x):
    """Metrics of an iterate x of a simple bilevel problem (full-batch values)."""
    upper = float(problem.f(x))
    lower = float(problem.g(x))
    metrics = {
        "value": upper,
        "upper_value": upper,
        "lower_value": lower,
        "lower_gap": floored_gap(lower - problem.g_star, problem.g_star_accuracy),
    }
    if problem.f_star is not None:
        # signed: iterates outside the lower-level solution set may sit
        # below f*; the absolute value is the one to put on log axes
        metrics["upper_gap"] = upper - problem.f_star
        metrics["upper_gap_abs"] = floored_gap(
            abs(upper - problem.f_star), problem.f_star_accuracy)
    metrics.update(problem.task_metrics(x))
    return metrics


def floored_gap(gap, accuracy):
    """``max(gap, accuracy)``; NaN stays NaN so failures remain visible."""
    if math.isnan(gap):
        return gap
    return max(gap, accuracy)
