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
* ``f*``, partly: ``f_star`` must be f at the stored ``f_argmin``, a point
  of Z at which g is ``g_star`` up to rounding (it lies in the lower-level
  solution set). The lower bound of ``f*`` (an LP over that set, on top of
  an SVD) is not re-run: an ``f_star`` with a valid point but a
  too-optimistic ``f_star_accuracy`` is caught only by the file's digest.
"""
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
from benchmark_utils.references.least_squares_g_star import LeastSquaresData
from benchmark_utils.references.precision import relative_floor

LOWER_LEVEL_MODES = ("interior", "face")
# g at the f point may exceed g_star by the rounding of both values and of
# the point's distance to the solution set; this relative margin is far
# above that and far below any point that is not lower-level optimal
LOWER_LEVEL_SLACK = 1e-9


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
              for key in ("g_argmin", "g_dual_point", "f_argmin")}
    for key, point in points.items():
        require_in_ball(key, data.norm(point), data.radius)

    require_certificate("g_star", g_star, g_accuracy, data.certify_lower,
                        points["g_argmin"], points["g_dual_point"])

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
