"""Metrics of both families, computed exactly (full batches, exact y*(x))
and outside benchopt's clock; each problem family exposes its own as
``problem.metrics(...)``.

Gaps are measured against certified references and never reported below the
reference's certified accuracy: a gap smaller than what the reference can
vouch for is reported at that floor, so a curve cannot claim more precision
than the benchmark has.
"""
import math

import torch


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
        # iterates outside the lower-level solution set may sit below f*
        metrics.update(upper_gaps(upper, problem.f_star,
                                  problem.f_star_accuracy))
    metrics.update(problem.task_metrics(x))
    return metrics


def upper_gaps(value, star, accuracy):
    """``upper_gap`` (signed) and ``upper_gap_abs`` (floored, for log axes)."""
    return {"upper_gap": value - star,
            "upper_gap_abs": floored_gap(abs(value - star), accuracy)}


def floored_gap(gap, accuracy):
    """``max(gap, accuracy)``; NaN stays NaN so failures remain visible."""
    if math.isnan(gap):
        return gap
    return max(gap, accuracy)


def general_metrics(problem, x, y):
    """Metrics of an iterate (x, y) of a general bilevel problem (full batch).

    * ``value`` = F(x) = f(x, y*(x)) with the problem's exact y*(x);
    * ``upper_gap`` = F(x) - F* (signed; only where F* is known) and
      ``upper_gap_abs`` = |F(x) - F*| floored at F*'s certified accuracy, as
      for the simple family (iterates are feasible here, so the sign only
      reflects the reference's own error);
    * ``hypergrad_norm`` = ||grad F(x)|| when X is the whole space (Kwon et
      al. 2023, Def. 2.1, use its square), else ``fw_gap`` =
      max_{s in X} <grad F(x), x - s> by the set's lmo (Abolfazli et al.
      2023, eq. (4));
    * ``inner_distance`` = ||y - y*(x)||, ``inner_grad_norm`` =
      ||grad_y g(x, y)|| (Abolfazli et al. 2023 plot it, Fig. 2),
      ``upper_value_current`` = f(x, y) (the quantity Kwon et al. 2023 and
      Abolfazli et al. 2023 plot, at the current y);
    * the problem's ``task_metrics(x, y)``.
    """
    with torch.no_grad():
        y_star = problem.inner_solution(x)
        value = float(problem.value(x, y_star))
        hypergrad = problem.hypergradient(x, y_star)
        metrics = {
            "value": value,
            "upper_value_current": float(problem.f(x, y)),
            "inner_distance": float(torch.linalg.vector_norm(y - y_star)),
            "inner_grad_norm": float(torch.linalg.vector_norm(
                problem.grad_g_y(x, y))),
        }
        if problem.X.unbounded:
            metrics["hypergrad_norm"] = float(
                torch.linalg.vector_norm(hypergrad))
        else:
            metrics["fw_gap"] = float(
                (hypergrad * (x - problem.X.lmo(hypergrad))).sum())
    if problem.F_star is not None:
        metrics.update(upper_gaps(value, problem.F_star,
                                  problem.F_star_accuracy))
    metrics.update(problem.task_metrics(x, y))
    return metrics
