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
from benchmark_utils.references.certificate import least_squares_bracket
from benchmark_utils.references.least_squares_check import (
    check_least_squares_references,
)
from benchmark_utils.references.least_squares_g_star import (
    LeastSquaresData,
    solve_lower_level,
)
from benchmark_utils.references.linear_algebra import lstsq
from benchmark_utils.references.precision import (
    TINY,
    higham_gamma,
    relative_floor,
    solve_clarabel,
)
from benchmark_utils.references.solution_sets import lower_level_solution_set


def _certify_upper(data, P, x, exact_lp=False):
    """Bracket of f* over P from x near P (see
    :func:`~benchmark_utils.references.certificate.least_squares_bracket`),
    with the infeasibility of x and the multiplier of ``Q^T x = h``.

    The linear minimum over P comes from weak duality at multipliers fitted
    on the support of x (closed form) or, with ``exact_lp``, from an LP.
    """
    found = {}

    def linear_min(c):
        if exact_lp:
            bound, mu, _, rounding = P.linear_min(c)
        else:
            bound, mu, rounding = P.dual_bound(c, P.to_v(x) > 0)
        found["mu"] = mu
        return bound, rounding

    result = least_squares_bracket(data.A_f, data.b_f, data.w_f, x,
                                   linear_min, data.ball_support)
    result["infeasibility"] = P.infeasibility(x, result["grad"])
    result["mu"] = found["mu"]
    return result


def _upper_on_singleton(data, z_g, distance):
    """f* = f(z*) for a unique lower-level solution z*, known only through
    ``||z_g - z*|| <= distance``: f(z_g) with a first-order (gradient) plus
    second-order (curvature) bound, and the rounding of f(z_g)."""
    A_f, b_f, w_f = data.A_f, data.b_f, data.w_f
    residual = A_f @ z_g - b_f
    value = w_f * float(residual @ residual)
    grad = 2.0 * w_f * (A_f.T @ residual)
    curvature = w_f * np.linalg.norm(A_f, 2) ** 2
    error = np.linalg.norm(grad) * distance + curvature * distance ** 2
    error += higham_gamma(data.dim + 1) * w_f * 2 * np.linalg.norm(
        residual) * (np.linalg.norm(np.abs(A_f) @ np.abs(z_g) + np.abs(b_f)))
    return dict(f_star=value,
                f_star_accuracy=max(error, relative_floor(value)),
                f_spread=0.0, f_status="unique lower-level solution", x=z_g)


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
    certified = {name: _certify_upper(data, P, x)
                 for name, x in candidates.items()}
    best = min(certified, key=lambda k: certified[k]["value"]
               + certified[k]["infeasibility"])
    # an exact LP for the chosen point: independent of the support guess
    top = certified[best] = _certify_upper(data, P, candidates[best],
                                           exact_lp=True)
    lower = max(c["lower"] - c["rounding"] for c in certified.values())
    f_star = top["value"]
    sensitivity = float(np.linalg.norm(top["mu"]) * dh)
    raw = (f_star + top["infeasibility"] - lower + top["rounding"]
           + sensitivity)
    # spread of f over P: the LP vertex maximizing the linearization
    _, _, x_max, _ = P.linear_min(-top["grad"])
    f_spread = 0.0
    if x_max is not None:
        residual = A_f @ x_max - b_f
        f_spread = max(data.w_f * float(residual @ residual) - f_star, 0.0)
    return dict(f_star=f_star,
                f_star_accuracy=max(raw, relative_floor(f_star)),
                f_spread=f_spread, f_status=status, f_point=best,
                f_lower_level_sensitivity=sensitivity, x=candidates[best])


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
      (the point of value ``f_star``), as lists: the certificate of ``g*``
      and the value of ``f*`` are re-checked from them when the references
      are loaded from the cache
      (:mod:`~benchmark_utils.references.least_squares_check`).
    """
    start = time.perf_counter()
    data = LeastSquaresData(problem)
    lower = solve_lower_level(data)
    P, z_g, dh, mode = lower_level_solution_set(data, lower)
    if P is None:
        upper = _upper_on_singleton(data, z_g, dh)
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
