"""The 1-D dual search of the exact cut-LMO, generic in the LMO oracle.

It maximizes ``phi(lam) = min_{s in Z} <c + lam a, s> - lam beta`` over
``lam >= 0``; the method and its stopping rule are explained in
:mod:`benchmark_utils.sets.cut_lmo`. An oracle
(:mod:`benchmark_utils.sets.cut_oracles`) has

* ``at(lam)``   -> ``(y, x, state)``: ``y = <c, s>``, ``x = <a, s>`` (Python
  floats) for an exact minimizer ``s`` of ``<c + lam a, s>`` over Z;
  ``state`` is whatever rebuilds ``s``;
* ``at_inf()``  -> ``(y, x, state)`` for a minimizer of ``<a, s>`` over Z;
* ``y_const``   -> the part of ``y`` that does not depend on ``lam``;
* ``smooth``    -> False when every block that the cut sees is a
  polyhedron (tent steps only), True otherwise (secant steps too);
* ``point(theta, state_1, state_2)`` -> ``theta s_1 + (1 - theta) s_2``
  (a tensor; ``state_2`` may be None when ``theta == 1``).
"""

import math
from dataclasses import dataclass

import numpy as np

_EPS = float(np.finfo(np.float64).eps)
_INF = math.inf
# rounding of lam * <a, s> in ulps, part of the stopping tolerance
_LAM_ULPS = 4.0


@dataclass
class Outcome:
    """What the search found: feasibility, ``min_Z <a, s>``, the optimal
    point as ``theta s_1 + (1 - theta) s_2`` (oracle states), the
    multiplier ``lam``, the value, the certified gap and the LMO count."""

    feasible: bool
    cut_min: float
    theta: float = 1.0
    state_1: object = None
    state_2: object = None
    lam: float = _INF
    value: float = _INF
    gap: float = 0.0
    n_evals: int = 0


def dual_search(oracle, beta, *, rtol, feas_tol, max_evals):
    """Maximize the dual of the cut-LMO over ``lam >= 0``.

    Returns an :class:`Outcome`; when feasible, the optimal point is
    ``oracle.point(outcome.theta, outcome.state_1, outcome.state_2)``.
    """
    smooth = oracle.smooth
    y0, x0, s0 = oracle.at(0.0)
    yi, xi, si = oracle.at_inf()
    y_shift = oracle.y_const
    n_evals = 2
    scale_x = max(abs(x0), abs(xi), abs(beta))
    if not xi <= beta + feas_tol * scale_x:  # also catches NaN
        return Outcome(False, xi, n_evals=n_evals)
    b = max(beta, xi)  # == beta unless the cut touches Z within feas_tol
    if x0 <= b:  # cut inactive: the plain LMO answer is optimal
        return Outcome(True, xi, 1.0, s0, None, 0.0, y0, 0.0, n_evals)

    # bracket: L has slope h_L = x_L - b > 0, H has slope h_H = x_H - b <= 0
    lamL, yL, xL, sL = 0.0, y0, x0, s0
    lamH, yH, xH, sH = _INF, yi, xi, si
    best_phi, best_lam = y0, 0.0
    hL_eff, hH_eff = xL - b, xH - b  # Illinois-modified slopes
    last = prev = (0.0, x0 - b)      # the last two evaluated (lam, h)
    last_side, inf_steps = 0, 0
    gap_ref, stall, fallback_tent = _INF, 0, False

    while True:
        theta = (b - xH) / (xL - xH)
        value = theta * yL + (1.0 - theta) * yH
        gap = value - best_phi
        # stop at the rounding level of phi = y + lam (x - b): relative rtol
        # on the y's (a constant shared by all lines, e.g. from blocks with
        # a = 0, is left out) plus a few ulps of lam |x|, the error of the
        # dot product x times lam (large lam: the cut nearly touches Z)
        tol = rtol * max(abs(yL - y_shift), abs(yH - y_shift),
                         abs(best_phi - y_shift)) \
            + _LAM_ULPS * _EPS * best_lam * max(abs(xL), abs(xH), abs(b))
        if gap <= tol or n_evals >= max_evals:
            break
        if gap <= 0.5 * gap_ref:
            gap_ref, stall = gap, 0
        else:
            stall += 1
        tent = (yH - yL) / (xL - xH)  # peak of min(line_L, line_H)
        regula_falsi = False
        if lamH == _INF:
            lam = tent
            if inf_steps >= 2:  # still no finite H: grow geometrically
                lam = max(lam, 2.0 * lamL)
            if not lam > lamL:
                lam = 2.0 * lamL if lamL > 0 else 1.0
            if not math.isfinite(lam):
                break
            inf_steps += 1
        else:
            if lamH - lamL <= 2.0 * _EPS * lamH:
                break  # bracket collapsed to (nearly) adjacent floats
            mid = 0.5 * (lamL + lamH)
            if stall >= 2:  # the gap did not halve twice in a row
                lam = tent if (smooth and fallback_tent) else mid
                fallback_tent = not fallback_tent
                stall, gap_ref = 0, gap
            elif smooth:  # secant on h through the last two points
                (l1, h1), (l2, h2) = prev, last
                lam = l2 - h2 * (l2 - l1) / (h2 - h1) if h2 != h1 else mid
                if not lamL < lam < lamH:
                    lam = lamL + hL_eff * ((lamH - lamL) / (hL_eff - hH_eff))
                    regula_falsi = True
            else:
                lam = tent
            if not lamL < lam < lamH:
                lam = mid
                if not lamL < lam < lamH:
                    break
        y, x, s = oracle.at(lam)
        n_evals += 1
        h = x - b
        phi = y + lam * h
        if phi > best_phi:
            best_phi, best_lam = phi, lam
        prev, last = last, (lam, h)
        side = 1 if h > 0 else -1
        if side == 1:
            lamL, yL, xL, sL, hL_eff = lam, y, x, s, h
        else:
            lamH, yH, xH, sH, hH_eff = lam, y, x, s, h
        if regula_falsi and side == last_side:  # Illinois modification
            if side == 1:
                hH_eff *= 0.5
            else:
                hL_eff *= 0.5
        last_side = side
    return Outcome(True, xi, theta, sL, sH, best_lam, value,
                    max(gap, 0.0), n_evals)
