"""The dual certificate of a convex least-squares minimum.

Every convex reference here (``g*`` of the least squares and of the
dictionary, ``f*`` on a lower-level solution set) is the minimum of a
weighted least squares over a convex set S. :func:`least_squares_bracket`
turns one candidate point into an interval that contains that minimum: the
value at the point is an upper bound (the point is in S, up to a rounding
excess the callers add), and a Lagrange dual bound, valid for *any* dual
point, is a lower bound. Both ends carry a worst-case floating-point error
(Higham's ``gamma_k``), so the interval holds for the computed numbers, not
only in exact arithmetic. Several candidates are certified and combined by
:func:`best_of_brackets`.
"""
import numpy as np

from benchmark_utils.references.precision import higham_gamma, relative_floor


def least_squares_bracket(A, b, weight, z, linear_min, ball_support):
    """Bracket of min_{s in S} weight * ||A s - b||^2 from one point z.

    ``linear_min(c)`` returns (a lower bound on min_{s in S} <c, s>, its
    rounding); ``ball_support(v)`` is an upper bound on max_{s in S} <v, s>
    for v >= 0 (the support of a ball containing S).

    Weak duality: ||A s - b||^2 >= 2 <t, A s - b> - ||t||^2 for every t, so
    with t = alpha * rho, rho the computed residual A z - b,

        min_S g >= -alpha^2 g~ - alpha beta,
        beta = 2 weight <rho, b> - min_{s in S} <2 weight A^T rho, s>,

    valid for any alpha (alpha = 1 is the Frank-Wolfe gap bound
    g(z) - max_s <grad g(z), z - s>, with the minimum over S from
    ``linear_min``, e.g. the set's LMO); the best alpha >= 0 is used, which
    also certifies a minimum near 0 when the residual is tiny. Because the
    bound holds for any rho, only its evaluation is subject to rounding, not
    the error of rho; the value g(z) itself is (Higham's gamma_k).

    Returns dict(value, lower, rounding, grad) with value = g(z) as computed
    and [lower - rounding, value + rounding] containing min_S g when z in S.
    """
    n, d = A.shape
    residual = A @ z - b
    grad = 2.0 * weight * (A.T @ residual)
    value = weight * float(residual @ residual)
    support_min, linear_rounding = linear_min(grad)
    abs_res = np.abs(residual)
    beta = 2.0 * weight * float(residual @ b) - support_min
    if beta >= 0.0 or value <= 0.0:
        alpha, lower = 0.0, 0.0
    else:
        alpha = -beta / (2.0 * value)
        lower = beta * beta / (4.0 * value)
    # g(z) from the computed residual: error of rho itself
    err_res = higham_gamma(d + 1) * (np.abs(A) @ np.abs(z) + np.abs(b))
    err_value = (weight * (2.0 * np.linalg.norm(abs_res) * np.linalg.norm(
        err_res) + float(err_res @ err_res)) + higham_gamma(n) * value)
    # the dual bound at the computed rho: evaluation only
    err_grad = higham_gamma(n) * 2.0 * weight * (np.abs(A).T @ abs_res)
    err_beta = (higham_gamma(n) * 2.0 * weight * float(abs_res @ np.abs(b))
                + ball_support(err_grad) + higham_gamma(d) * abs(support_min)
                + linear_rounding)
    err_lower = alpha * alpha * higham_gamma(n) * value + alpha * err_beta
    return dict(value=value, lower=lower, rounding=err_value + err_lower,
                grad=grad)


def at_floor(bracket):
    """Whether a certified bracket is already as tight as ever reported."""
    gap = bracket["value"] - bracket["lower"] + bracket["rounding"]
    return gap <= relative_floor(bracket["value"])


def best_of_brackets(certified):
    """(name, dual name, value, raw accuracy) from brackets of several
    candidates.

    The reported point ``name`` is the candidate of smallest value (each is
    in S); the lower bound is the best one over all candidates (that of
    ``dual name``), since every dual bound is valid whichever point produced
    it. The raw accuracy is ``value - lower`` plus both roundings, before
    the relative floor. Storing both points lets the bracket be recomputed
    from them alone, bit for bit.
    """
    best = min(certified, key=lambda name: certified[name]["value"])
    dual = max(certified, key=lambda name: certified[name]["lower"]
               - certified[name]["rounding"])
    value = certified[best]["value"]
    lower = certified[dual]["lower"] - certified[dual]["rounding"]
    raw = max(value - lower + certified[best]["rounding"], 0.0)
    return best, dual, value, raw
