"""The certificate of ``f*``, the minimum of the upper level over the
lower-level solution set P of a least-squares simple-bilevel problem
(:mod:`~benchmark_utils.references.least_squares`).

It runs from stored points alone, so the computation that produced
``f_star`` and ``f_star_accuracy`` is re-run whenever they are loaded from
the cache (:mod:`~benchmark_utils.references.least_squares_check`): P is
rebuilt from its base point, and the bracket recomputed at the chosen point
(at the exact LP's stored multiplier, in closed form) and at the other
candidate whose dual bound was the best; the point that shows f's spread
over P is checked to lie in P.
A value moved to another point of P, or an accuracy edited either way, no
longer matches its recomputation.
"""
import numpy as np

from benchmark_utils.references.certificate import least_squares_bracket
from benchmark_utils.references.precision import higham_gamma, relative_floor


def certify_upper(data, P, x, exact_lp=False, mu=None):
    """Bracket of f* over P from x near P (see
    :func:`~benchmark_utils.references.certificate.least_squares_bracket`),
    with the infeasibility of x and the multiplier of ``Q^T x = h``.

    The linear minimum over P comes from weak duality at multipliers fitted
    on the support of x (closed form), with ``exact_lp`` from an LP, or at
    a given multiplier ``mu`` (the LP's, stored: closed form again).
    """
    found = {}

    def linear_min(c):
        if mu is not None:
            (bound, rounding), found["mu"] = P.bound_at(c, mu), mu
            return bound, rounding
        if exact_lp:
            bound, mu_lp, _, rounding = P.linear_min(c)
            found["mu"] = mu_lp
            return bound, rounding
        else:
            bound, found["mu"], rounding = P.dual_bound(c, P.to_v(x) > 0)
        return bound, rounding

    result = least_squares_bracket(data.A_f, data.b_f, data.w_f, x,
                                   linear_min, data.ball_support)
    result["infeasibility"] = P.infeasibility(x, result["grad"])
    result["mu"] = found["mu"]
    return result


def f_star_on_singleton(data, z_g, distance):
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
                f_spread=0.0, f_lower_level_sensitivity=0.0)


def certify_f_star(data, P, dh, x, x_dual=None, mu=None, x_spread=None):
    """f* over P (``dh`` bounds the error of P's right-hand side) from the
    chosen point ``x`` and, if given, the dual bound at ``x_dual``:
    dict(f_star, f_star_accuracy, f_spread, f_lower_level_sensitivity, mu,
    x_spread); see the module docstring of
    :mod:`~benchmark_utils.references.least_squares` for the terms.

    Computed: x's bound by an exact LP, whose multiplier ``mu`` is
    returned, and ``x_spread`` the LP vertex of P maximizing f's
    linearization (``f_spread = f(x_spread) - f_star``). Re-checked: with
    the stored ``mu`` and ``x_spread`` the same numbers follow in closed
    form, no LP."""
    top = certify_upper(data, P, x, exact_lp=True, mu=mu)
    lower = top["lower"] - top["rounding"]
    if x_dual is not None:
        other = certify_upper(data, P, x_dual)
        lower = max(lower, other["lower"] - other["rounding"])
    f_star = top["value"]
    sensitivity = float(np.linalg.norm(top["mu"]) * dh)
    raw = (f_star + top["infeasibility"] - lower + top["rounding"]
           + sensitivity)
    if x_spread is None:
        _, _, x_spread, _ = P.linear_min(-top["grad"])
    f_spread = 0.0
    if x_spread is not None:
        residual = data.A_f @ x_spread - data.b_f
        f_spread = max(data.w_f * float(residual @ residual) - f_star, 0.0)
    return dict(f_star=f_star,
                f_star_accuracy=max(raw, relative_floor(f_star)),
                f_spread=f_spread, f_lower_level_sensitivity=sensitivity,
                mu=top["mu"], x_spread=x_spread)
