"""Re-check of cached least-squares references (regression) before use.

The solve behind ``g*`` and ``f*`` takes seconds to minutes
(:mod:`~benchmark_utils.references.least_squares`); this check takes a few
matrix-vector products and one LMO, and runs on every load from the cache:

* fields: every value used is a finite number, ``g_star >= 0`` and
  ``f_star >= 0`` (least-squares losses are nonnegative),
  ``f_spread >= 0``, accuracies at or above the relative floor, the stored
  points finite vectors of the problem's dimension;
* ``g*``, fully: the dual bracket of
  :func:`~benchmark_utils.references.certificate.least_squares_bracket` is
  recomputed at the stored ``g_argmin`` and ``g_dual_point`` (both in Z);
  ``g_star`` must be g at ``g_argmin`` and ``g_star_accuracy`` the bracket's
  width, both within the relative floor (the computation is the one that
  produced them, so on the same machine they agree bit for bit);
* ``f*``, fully: ``f_star`` must be f at the stored ``f_argmin``, a point
  of Z at which g is ``g_star`` up to rounding (it lies in the lower-level
  solution set); the solution set P is rebuilt from its stored base point
  (``set_point``) and the certificate of
  :mod:`~benchmark_utils.references.least_squares_f_star` re-run (an LP):
  ``f_star_accuracy`` and ``f_spread`` must be what it gives (the accuracy
  to 1e-3 of itself: a bound, whose last digits move with BLAS's thread
  count), so a value moved to another point of P or an accuracy edited
  either way is caught.
"""
import numpy as np

from benchmark_utils.references.cache import InvalidReference
from benchmark_utils.references.certificate import least_squares_bracket
from benchmark_utils.references.checks import (
    finite_float,
    float_array,
    require_certificate,
    require_close,
    require_in_ball,
    value_and_accuracy,
)
from benchmark_utils.references.least_squares_f_star import (
    certify_f_star,
    f_star_on_singleton,
)
from benchmark_utils.references.least_squares_g_star import LeastSquaresData
from benchmark_utils.references.precision import relative_floor
from benchmark_utils.references.solution_sets import lower_level_solution_set

LOWER_LEVEL_MODES = ("interior", "face")
# g at the f point may exceed g_star by the rounding of both values and of
# the point's distance to the solution set; this relative margin is far
# above that and far below any point that is not lower-level optimal
LOWER_LEVEL_SLACK = 1e-9
# the point showing f's spread over P is an LP vertex, feasible to the LP's
# tolerance (1e-10): its infeasibility may cost this fraction of the spread
SPREAD_SLACK = 1e-6
# f_star_accuracy agrees with its recomputation to this relative margin
# (recertify_f_star): far above the rounding of a bound, far below any
# edit or another point's certificate
ACCURACY_DIGITS = 1e-3


def check_least_squares_references(problem, references):
    """Raise :class:`InvalidReference` unless ``references`` (as stored) are
    consistent with ``problem`` (a ``LeastSquaresBilevel``); see the module
    docstring for what is checked."""
    data = LeastSquaresData(problem)
    g_star, g_accuracy = value_and_accuracy(references, "g_star", 0.0)
    f_star, _ = value_and_accuracy(references, "f_star", 0.0)
    finite_float(references, "f_spread", 0.0)
    if references.get("lower_level") not in LOWER_LEVEL_MODES:
        raise InvalidReference(
            f"lower_level = {references.get('lower_level')!r} is not one of "
            f"{LOWER_LEVEL_MODES}")
    points = {key: float_array(references, key, (data.dim,))
              for key in ("g_argmin", "g_dual_point", "f_argmin",
                          "set_point")}
    for key in ("f_dual_point", "f_spread_point"):
        if references.get(key) is not None:
            points[key] = float_array(references, key, (data.dim,))
    for key, point in points.items():
        require_in_ball(key, data.norm(point), data.radius)

    g_raw = require_certificate("g_star", g_star, g_accuracy,
                                data.certify_lower, points["g_argmin"],
                                points["g_dual_point"])

    # f*: its value at the stored point, a point of the solution set
    x_f = points["f_argmin"]
    upper = least_squares_bracket(
        data.A_f, data.b_f, data.w_f, x_f,
        lambda c: (data.support_min(c), 0.0), data.ball_support)
    require_close("f_star", f_star, upper["value"],
                  upper["rounding"] + relative_floor(f_star))
    lower_at_f = data.certify_lower(x_f)
    excess = lower_at_f["value"] - g_star
    margin = (g_accuracy + lower_at_f["rounding"]
              + LOWER_LEVEL_SLACK * max(1.0, g_star))
    if not excess <= margin:
        raise InvalidReference(
            f"f_argmin is not in the lower-level solution set: g there "
            f"exceeds g_star by {excess:.3g} (margin {margin:.3g})")
    recertify_f_star(data, references, points, g_raw)


def recertify_f_star(data, references, points, g_raw):
    """Re-run f*'s certificate from the stored points (module docstring)."""
    mode = references["lower_level"]
    # the lower-level solve's output that P is built from: the unconstrained
    # least-squares point (interior), or the best point and g's accuracy
    lower = ({"candidates": {"least_squares": points["set_point"]}}
             if mode == "interior" else
             {"candidates": {"best": points["set_point"]}, "best": "best",
              "raw_accuracy": g_raw})
    P, z_g, dh, rebuilt_mode = lower_level_solution_set(data, lower)
    if rebuilt_mode != mode:
        raise InvalidReference(f"lower_level = {mode!r} but the stored "
                               f"set_point gives {rebuilt_mode!r}")
    if P is None:
        upper = f_star_on_singleton(data, z_g, dh)
    else:
        mu = references.get("f_multiplier")
        if not isinstance(mu, list) or not all(
                isinstance(m, (int, float)) for m in mu):
            raise InvalidReference("f_multiplier is not a list of numbers")
        upper = certify_f_star(data, P, dh, points["f_argmin"],
                               points.get("f_dual_point"), np.array(mu),
                               points.get("f_spread_point"))
        spread_point = points.get("f_spread_point")
        if spread_point is not None:
            # the spread is shown by a point of P, not by one outside it
            residual = data.A_f @ spread_point - data.b_f
            cost = P.infeasibility(spread_point, 2.0 * data.w_f * (
                data.A_f.T @ residual))
            if not cost <= SPREAD_SLACK * max(upper["f_spread"], 1.0):
                raise InvalidReference(
                    f"f_spread_point lies outside the lower-level solution "
                    f"set (first-order cost {cost:.3g})")
    floor = relative_floor(upper["f_star"])
    for key in ("f_star", "f_star_accuracy", "f_spread"):
        # an accuracy is a bound, read to a few digits: its recomputation
        # moves in the fourth digit with BLAS's thread count (the solution
        # set's SVD), which must not reject a cache written with another
        slack = ACCURACY_DIGITS * upper[key] if key == "f_star_accuracy" \
            else 0.0
        require_close(key, references[key], upper[key],
                      floor + relative_floor(references[key]) + slack)
