"""Certified ``g*`` and ``f*`` of the least-squares simple-bilevel problems.

``g*`` comes from :mod:`~benchmark_utils.references.least_squares_g_star`.
``f_star`` is f at a feasible point of the exact lower-level solution set P
(:mod:`~benchmark_utils.references.solution_sets`): the upper level is
minimized over P by CVXPY (Clarabel, tight tolerances, data rescaled to
O(1)), polished by exact linear algebra (an active set on P's support, or
the minimizer over the affine part when it lies in the ball), and certified.
``f_star_accuracy`` bounds ``|f_star - f*|`` as the sum of the dual gap
``f_star - LB``, ``LB = f(x) + min_{s in P} <grad f(x), s - x>`` (an LP by
the HiGHS dual simplex, bounded through weak duality; closed form for an l2
ball), the first-order cost of the point's infeasibility, the sensitivity
to the lower level (the LP multiplier of ``Q^T z = h`` times the bound on
h) and the rounding and floor terms of g.

``f_spread`` = f(v) - f_star with v the maximizer of <grad f(x_f), .> over
P (an LP vertex): a lower bound on how much f varies over P, 0 when the
lower-level solution is unique. NumPy float64 on the CPU throughout. Why P
and not Cao et al.'s reformulation: docs/references.md.
"""
import time

import numpy as np

from benchmark_utils.references.cache import cached_references
from benchmark_utils.references.least_squares_check import (
    check_least_squares_references,
)
from benchmark_utils.references.least_squares_f_star import (
    certify_f_star,
    certify_upper,
    f_star_on_singleton,
)
from benchmark_utils.references.least_squares_g_star import (
    LeastSquaresData,
    solve_lower_level,
)
from benchmark_utils.references.linear_algebra import lstsq
from benchmark_utils.references.precision import TINY, solve_clarabel
from benchmark_utils.references.solution_sets import lower_level_solution_set


def _solve_upper(data, P, z_g, dh):
    """CVXPY solve of min_P f, polished by the active set and certified."""
    import cvxpy as cp
    A_f, b_f, r = data.A_f, data.b_f, data.radius
    scale = max(np.abs(b_f).max(), r * np.abs(A_f).max(), TINY)
    variable, x_hat, constraints = P.cvxpy_parts()
    problem = cp.Problem(cp.Minimize(cp.sum_squares(
        (r / scale) * A_f @ x_hat - b_f / scale) / A_f.shape[0]), constraints)
    status = solve_clarabel(problem)
    x_cvx = (z_g.copy() if variable.value is None
             else r * np.asarray(x_hat.value))
    candidates = {"cvxpy": x_cvx}
    try:
        candidates["active_set"] = P.active_set(A_f, b_f,
                                                P.repair(x_cvx, z_g))
    except (ValueError, np.linalg.LinAlgError):
        pass
    if P.mode == "interior" and data.N.shape[1]:
        # the minimizer over the affine set, if it lies in the ball
        t = lstsq(A_f @ data.N, b_f - A_f @ z_g)
        x = z_g + data.N @ t
        if data.norm(x) <= r:
            candidates["affine"] = x
    candidates = {name: P.repair(x, z_g) for name, x in candidates.items()}
    certified = {name: certify_upper(data, P, x)
                 for name, x in candidates.items()}
    best = min(certified, key=lambda k: certified[k]["value"]
               + certified[k]["infeasibility"])
    # the best dual bound of the other candidates (the chosen point's own
    # comes from an exact LP in certify_f_star)
    others = [name for name in certified if name != best]
    dual = max(others, default=None, key=lambda k: certified[k]["lower"]
               - certified[k]["rounding"])
    x_dual = None if dual is None else candidates[dual]
    return dict(certify_f_star(data, P, dh, candidates[best], x_dual),
                f_status=status, f_point=best, x=candidates[best],
                x_dual=x_dual)


def _as_list(vector):
    """A float64 vector as a JSON list (None stays None)."""
    return None if vector is None else np.asarray(
        vector, dtype=np.float64).tolist()


def least_squares_references(problem):
    """Certified g*, f* of a :class:`LeastSquaresBilevel` (Z an l1 or l2 ball).

    Returns a dict (JSON-serialisable, floats and strings):

    * ``g_star``, ``g_star_accuracy``: g* within [g_star - accuracy, g_star];
    * ``f_star``, ``f_star_accuracy``: |f_star - f*| <= accuracy, f* the
      minimum of f over the exact lower-level solution set (see the module
      docstring for the terms);
    * ``f_spread``: f varies over the solution set by at least this much
      (0 for a unique lower-level solution);
    * ``lower_level``: ``"interior"`` (the unconstrained least-squares
      minimum lies in Z) or ``"face"`` (the ball constraint is active);
    * ``rank_lower``, ``solution_set_dim`` (the dimension of the affine
      hull's null-space part, 0 for a unique solution), solver statuses,
      the names of the chosen polished points and the wall-clock time;
    * ``g_argmin`` (the point of value ``g_star``), ``g_dual_point`` (the
      candidate whose dual bound gives ``g_star_accuracy``) and ``f_argmin``
      (the point of value ``f_star``), ``set_point`` (the base point of the
      solution set), ``f_dual_point`` (the other candidate whose dual
      bound is the best), ``f_multiplier`` (the LP multiplier of f*'s
      bound) and ``f_spread_point`` (the point of P showing ``f_spread``),
      as lists (None where there is none): the certificates of ``g*`` and
      ``f*`` are re-run from them when the references are loaded from the
      cache
      (:mod:`~benchmark_utils.references.least_squares_check`).
    """
    start = time.perf_counter()
    data = LeastSquaresData(problem)
    lower = solve_lower_level(data)
    P, z_g, dh, mode = lower_level_solution_set(data, lower)
    if P is None:
        upper = dict(f_star_on_singleton(data, z_g, dh), x=z_g,
                     f_status="unique lower-level solution")
        set_dim = 0
    else:
        upper = _solve_upper(data, P, z_g, dh)
        set_dim = int(P.dimension)
    references = dict(
        g_star=float(lower["g_star"]),
        g_star_accuracy=float(lower["accuracy"]),
        f_star=float(upper["f_star"]),
        f_star_accuracy=float(upper["f_star_accuracy"]),
        f_spread=float(upper["f_spread"]),
        lower_level=mode, rank_lower=int(data.rank),
        solution_set_dim=set_dim,
        g_status=str(lower["status"]), g_point=lower["best"],
        f_status=str(upper["f_status"]), f_point=upper.get("f_point"),
        f_lower_level_sensitivity=float(
            upper.get("f_lower_level_sensitivity", 0.0)),
        g_argmin=lower["candidates"][lower["best"]].tolist(),
        g_dual_point=lower["candidates"][lower["dual"]].tolist(),
        f_argmin=np.asarray(upper["x"], dtype=np.float64).tolist(),
        # the certificate of f*, re-run on every load: the base point of
        # the solution set P and the other candidate's dual bound
        set_point=_as_list(z_g), f_dual_point=_as_list(upper.get("x_dual")),
        f_multiplier=_as_list(upper.get("mu")),
        f_spread_point=_as_list(upper.get("x_spread")),
    )
    references["seconds"] = time.perf_counter() - start
    return references


def cached_least_squares_references(problem, kind, params):
    """:func:`least_squares_references`, cached on disk under ``kind`` and
    ``params`` (every parameter of the instance) and re-checked by
    :func:`check_least_squares_references` whenever they are loaded."""
    return cached_references(
        kind, params, lambda: least_squares_references(problem),
        check=lambda stored: check_least_squares_references(problem, stored))
