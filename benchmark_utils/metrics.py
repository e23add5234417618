"""Metrics of both families, computed exactly (full batches, exact y*(x))
and outside benchopt's clock; each problem family exposes its own as
``problem.metrics(...)``.

Gaps are measured against certified references and never reported below the
reference's certified accuracy: a gap smaller than what the reference can
vouch for is reported at that floor, so a curve cannot claim more precision
than the benchmark has.

**Divergence.** A run has diverged once one of its ``GUARDED_METRICS`` (the
values, gaps, distances and gradient norms that measure the optimization;
not the task metrics such as a test accuracy or an AUC, which may be
undefined on a sound run) is not finite or exceeds

    DIVERGENCE_FACTOR * max(1, |the same metric at the run's start|),

with ``DIVERGENCE_FACTOR = 1e12``. The bound is relative to the start so it
holds for every data scale (visit counts squared on WikiMath as well as unit
Gaussians), and so loose that no converging run comes near it: a least-squares
value 1e12 times its start means an iterate about 1e6 times farther out.
:class:`DivergenceGuard` applies it to each evaluation of a run: the first
diverged row and any after it report the last metrics within the bound (the
last finite iterate's) with ``diverged = 1``, so a curve never ends on
``inf`` and its points before the divergence are kept.
"""
import math

import torch

DIVERGENCE_FACTOR = 1e12
GUARDED_METRICS = (
    "value", "upper_value", "lower_value", "upper_value_current",
    "lower_gap", "upper_gap", "upper_gap_abs",
    "inner_distance", "inner_grad_norm", "hypergrad_norm", "fw_gap",
)


def simple_metrics(problem, x):
    """Metrics of an iterate x of a simple bilevel problem (full-batch
    values)."""
    upper = float(problem.f(x))
    lower = float(problem.g(x))
    metrics = {
        "value": upper,
        "upper_value": upper,
        "lower_value": lower,
        "lower_gap": floored_gap(lower - problem.g_star,
                                 problem.g_star_accuracy),
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
    * ``inner_tolerance``, where the problem records the certified accuracy
      of its y*(x) (``problem.inner_accuracy``: hyper-cleaning);
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
    # the certified accuracy of y*(x) where the problem records one
    # (iterative inner solves: the returned y*(x) is within
    # ||grad_y g|| / mu_g of the true one)
    accuracy = getattr(problem, "inner_accuracy", None)
    if accuracy is not None:
        metrics["inner_tolerance"] = float(accuracy)
    metrics.update(problem.task_metrics(x, y))
    return metrics


def diverged_metrics(metrics, start):
    """The names of the guarded ``metrics`` that are not finite or beyond
    ``DIVERGENCE_FACTOR * max(1, |start value|)`` (module docstring)."""
    return [name for name in GUARDED_METRICS if name in metrics
            and not _within_bound(metrics[name], start.get(name))]


def _within_bound(value, start):
    if not math.isfinite(value):
        return False
    scale = abs(start) if start is not None and math.isfinite(start) else 0.
    return abs(value) <= DIVERGENCE_FACTOR * max(1., scale)


class DivergenceGuard:
    """The metrics half of the divergence guard, for one run.

    ``report(metrics, diverged)`` takes the metrics of each evaluation in
    order (the first is the run's start) and whether the solver already
    flagged its iterate as non-finite, and returns the metrics to report and
    the run's ``diverged`` flag. Once diverged, every later evaluation
    reports the same frozen metrics: those of the diverging evaluation when
    they are within the bound (a solver-flagged iterate is its last finite
    one), else the last ones that were. A run whose start is already out of
    bound has nothing better to report and reports its start, flagged.
    """

    def __init__(self):
        self.start = None
        self.last_within_bound = None
        self.frozen = None

    @property
    def diverged(self):
        return self.frozen is not None

    def report_failure(self):
        """``(metrics, True)`` for an evaluation whose metrics could not be
        computed because the iterate diverged (the exact y*(x) solve met a
        matrix that is not positive definite): the last metrics within the
        bound, flagged; the run's start must have had metrics."""
        if self.start is None:
            raise ValueError("the run's start has no metrics")
        if not self.diverged:
            self.frozen = self.last_within_bound or self.start
        return dict(self.frozen), True

    def report(self, metrics, diverged=False):
        if self.start is None:
            self.start = metrics
        if self.diverged:
            return dict(self.frozen), True
        out_of_bound = diverged_metrics(metrics, self.start)
        if not out_of_bound:
            self.last_within_bound = metrics
        if diverged or out_of_bound:
            self.frozen = (self.last_within_bound
                           if self.last_within_bound is not None else metrics)
            return dict(self.frozen), True
        return dict(metrics), False
