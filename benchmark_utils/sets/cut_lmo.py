"""Exact linear minimization over a feasible set cut by one halfspace.

The cutting-plane methods SBCGI / SBCGF / CG-BiO (paper 000, eqs. (9), (12),
(82)-(85)) need at every iteration an exact solution of

    min_s <c, s>   subject to   s in Z   and   <a, s> <= beta,          (P)

with Z compact convex (a :mod:`benchmark_utils.sets` object), ``a`` the
(estimated) lower-level gradient and, in the algorithms,
``beta = <a, x_t> + g(x_0) - g_hat_t + K_t``.

:func:`cut_lmo` solves (P) exactly (up to floating point) through its 1-D
dual, using nothing but the LMO of Z:

    phi(lam) = min_{s in Z} <c + lam a, s> - lam beta,      lam >= 0,

is concave and piecewise linear for a polyhedron; for a point ``s(lam)``
returned by the LMO at ``lam``, ``h(lam) = <a, s(lam)> - beta`` is a
supergradient, non-increasing in ``lam``. Every point ``s`` of Z defines a
line ``lam -> <c, s> + lam (<a, s> - beta)`` lying above ``phi``.

Algorithm (shared by all sets, only the LMO changes):

1. ``s(0)`` = LMO of ``c``. If ``<a, s(0)> <= beta`` the cut is inactive and
   ``s(0)`` is optimal (``lam* = 0``).
2. ``s_inf`` = a minimizer of ``<a, s>`` over Z (ties broken towards small
   ``<c, s>`` where cheap). ``m = <a, s_inf> = min_Z <a, s>``; (P) is
   infeasible iff ``m > beta`` (a relative slack ``feas_tol`` absorbs the
   rounding of ``beta``; within it ``beta`` is raised to ``m`` and the cut
   "touches" Z).
3. Keep a bracket: a point ``s_L`` with ``<a, s_L> > beta`` returned by the
   LMO at ``lam_L`` and a point ``s_H`` with ``<a, s_H> <= beta`` returned
   at ``lam_H`` (initially ``s(0)`` at 0 and ``s_inf`` at infinity). The
   convex combination ``theta s_L + (1 - theta) s_H`` with
   ``theta = (beta - <a, s_H>) / (<a, s_L> - <a, s_H>)`` lies in Z and
   satisfies the cut *with equality*; its value is the peak ``D`` of the
   "tent" min(line_L, line_H), so ``D - max_evaluated phi`` is a certified
   duality gap. Stop once it is below ``rtol`` times the scale of the terms
   (i.e. at machine precision), or when the bracket has shrunk to adjacent
   floats.
4. Next ``lam``: the tent peak (intersection of the two lines). For a
   polyhedral Z (l1 ball, simplex, box, l1 columns) this is a Newton-type
   step on a piecewise-linear concave function: it terminates finitely with
   ``lam*`` exactly, typically after a handful of LMO calls, and the
   combination of the two LMO answers at both sides of the kink is an exact
   optimal vertex / edge point (for the l1 ball: at most two nonzeros,
   ``+-r e_i`` and ``+-r e_j``). For sets with curved blocks (l2 balls, l2
   columns, nuclear ball) tent steps alternate with Illinois (safeguarded
   regula falsi) steps on ``h(lam) = 0``, which converge superlinearly on the
   smooth parts, and the gap closes at machine precision. A bisection step
   is forced whenever the bracket fails to halve (doubling while
   ``lam_H = inf``), so the number of LMO calls is O(log) in any case.

Set-specific oracles:

* :class:`~benchmark_utils.sets.L1Ball` (the regression problem, eqs.
  (82)-(83)): the LMO of ``c + lam a`` is ``-r sign(w_j) e_j`` with ``j`` the
  first argmax of ``|w| = |c + lam a|``, i.e. ``phi(lam) = -r ||c + lam
  a||_inf - lam beta``, the upper envelope of the 2d lines ``+-(c_j + lam
  a_j)``. It runs on host numpy copies of ``c`` and ``a`` (one device->host
  copy of 2d floats; a few microseconds per step, no per-step device sync)
  and the point is rebuilt from two (index, sign) pairs.
* :class:`~benchmark_utils.sets.ProductSet` (nested products are flattened):
  blocks on which ``a`` is identically zero (e.g. the code block of the
  dictionary problem) do not depend on ``lam``; their LMO answer for ``c``
  is computed once. The other blocks call their own ``lmo`` on
  ``c_b + lam a_b`` in torch on the input's device (one host sync per LMO
  call, to read the two scalars ``<c, s>`` and ``<a, s>``).
* :class:`~benchmark_utils.sets.ColumnBalls` with l2 columns (the dictionary
  block, eqs. (84)-(85)): column ``j`` of ``s(lam)`` is
  ``-r (G1_j + lam G2_j) / ||G1_j + lam G2_j||`` (the LMO; *not* the
  projection printed in (85), whose sign is wrong, see notes 000 Sec. 4.2).
  A column with ``G1_j + lam G2_j = 0`` returns 0 (sets.py convention); the
  jump of ``h`` there is handled like any kink (combination of both sides).
  At infinity, columns with ``G2_j = 0`` use ``G1_j`` (their LMO does not
  depend on ``lam``).
* Anything else with an ``lmo``: the generic torch oracle.

:func:`cut_lmo_cvxpy` solves (P) as an LP / SOCP with CVXPY (Clarabel by
default), the papers' own route (CVX in MATLAB); it is for checking and
reproduction only (about 100x slower), never for the solver loop.

Infeasibility is not an error: both functions return ``feasible=False`` and
``point=fallback`` (the caller's input, ``None`` by default); choosing what
to do then is the caller's business.
"""

from collections import OrderedDict
from dataclasses import dataclass
import math
from typing import Optional

import numpy as np
import torch

from benchmark_utils.sets import (
    Box,
    ColumnBalls,
    L1Ball,
    L2Ball,
    NuclearNormBall,
    ProductSet,
    Simplex,
)

__all__ = ["CutLMOResult", "cut_lmo", "cut_lmo_cvxpy"]

_EPS = float(np.finfo(np.float64).eps)
_INF = math.inf
_LAM_ULPS = 4.0

#: relative duality gap at which the search stops (machine precision level).
DEFAULT_RTOL = 1e-13
#: relative slack on ``min_Z <a, s> <= beta`` before declaring infeasibility.
DEFAULT_FEAS_TOL = 1e-12
#: hard cap on LMO calls (never reached in practice: the search is O(log)).
DEFAULT_MAX_EVALS = 300


@dataclass(frozen=True)
class CutLMOResult:
    """Outcome of :func:`cut_lmo` / :func:`cut_lmo_cvxpy`.

    Attributes
    ----------
    point : torch.Tensor or None
        A minimizer of (P) (dtype / device of ``c``) when ``feasible``;
        otherwise the ``fallback`` argument, unchanged (``None`` by default).
    feasible : bool
        Whether ``Z ∩ {<a, s> <= beta}`` is non-empty (up to ``feas_tol``).
    multiplier : float
        The optimal Lagrange multiplier ``lam* >= 0`` of the cut (0 when the
        cut is inactive). When the cut only touches Z (``beta = min_Z <a,
        s>``) the dual optimum may be unattained for curved sets; then this
        is the largest ``lam`` evaluated. ``inf`` when infeasible.
    value : float
        ``<c, point>`` (``inf`` when infeasible).
    cut_min : float
        ``min_{s in Z} <a, s>``; (P) is feasible iff ``cut_min <= beta``.
    gap : float
        Certified bound on ``value - optimal value`` (0 for the CVXPY
        backend, which reports none).
    n_evals : int
        Number of LMO evaluations (solver iterations for CVXPY).
    """

    point: Optional[torch.Tensor]
    feasible: bool
    multiplier: float
    value: float
    cut_min: float
    gap: float = 0.0
    n_evals: int = 0


# --------------------------------------------------------------------------
# the 1-D dual search, generic in the oracle
# --------------------------------------------------------------------------
#
# An oracle has
#   at(lam)   -> (y, x, state): y = <c, s>, x = <a, s> (Python floats) for an
#                exact minimizer s of <c + lam a, s> over Z; ``state`` is
#                whatever rebuilds s;
#   at_inf()  -> (y, x, state) for a minimizer of <a, s> over Z;
#   y_const   -> the part of y that does not depend on lam (float);
#   point(theta, state_1, state_2) -> theta s_1 + (1 - theta) s_2 (tensor;
#                state_2 may be None when theta == 1).


@dataclass
class _Outcome:
    feasible: bool
    cut_min: float
    theta: float = 1.0
    state_1: object = None
    state_2: object = None
    lam: float = _INF
    value: float = _INF
    gap: float = 0.0
    n_evals: int = 0


def _dual_search(oracle, beta, *, smooth, rtol, feas_tol, max_evals):
    y0, x0, s0 = oracle.at(0.0)
    yi, xi, si = oracle.at_inf()
    y_shift = oracle.y_const
    n_evals = 2
    scale_x = max(abs(x0), abs(xi), abs(beta))
    if not xi <= beta + feas_tol * scale_x:  # also catches NaN
        return _Outcome(False, xi, n_evals=n_evals)
    b = max(beta, xi)  # == beta unless the cut touches Z within feas_tol
    if x0 <= b:  # cut inactive: the plain LMO answer is optimal
        return _Outcome(True, xi, 1.0, s0, None, 0.0, y0, 0.0, n_evals)

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
    return _Outcome(True, xi, theta, sL, sH, best_lam, value,
                    max(gap, 0.0), n_evals)


# --------------------------------------------------------------------------
# oracles
# --------------------------------------------------------------------------

def _host_f64(t):
    """A float64 numpy array with the values of a 1-D tensor (no copy for a
    contiguous float64 CPU tensor)."""
    return t.detach().to("cpu", torch.float64).contiguous().numpy()


class _L1Oracle:
    """LMO of the l1 ball of radius r on host numpy copies of c and a.

    A vertex ``sigma r e_j`` is stored as ``(j, sigma)``, sigma in {-1,0,1}
    (sigma = 0 is the center, returned for a zero direction like
    :meth:`L1Ball.lmo`).
    """

    def __init__(self, c, a, radius, like):
        self.c, self.a, self.r, self.like = _host_f64(c), _host_f64(a), \
            radius, like
        self.y_const = 0.0
        # work buffers: the search evaluates |c + lam a| a handful of times
        self._w = np.empty_like(self.c)
        self._abs_w = np.empty_like(self.c)

    def _vertex(self, j, w_j):
        sig = -1.0 if w_j > 0 else (1.0 if w_j < 0 else 0.0)
        return (sig * self.r * float(self.c[j]),
                sig * self.r * float(self.a[j]), (j, sig))

    def at(self, lam):
        if lam:
            w = np.multiply(self.a, lam, out=self._w)
            np.add(w, self.c, out=w)
        else:
            w = self.c
        j = int(np.abs(w, out=self._abs_w).argmax())
        return self._vertex(j, float(w[j]))

    def at_inf(self):
        abs_a = np.abs(self.a)
        amax = abs_a.max()
        if not amax > 0:  # a = 0: every point minimizes <a, s>
            return self.at(0.0)
        ties = np.flatnonzero(abs_a == amax)
        if ties.size == 1:
            j = int(ties[0])
        else:  # the face minimizer: smallest <c, s> among tied vertices
            j = int(ties[np.argmin(-np.sign(self.a[ties]) * self.c[ties])])
        return self._vertex(j, float(self.a[j]))

    def point(self, theta, st1, st2):
        out = np.zeros(self.c.shape[0])
        j1, sig1 = st1
        out[j1] += theta * sig1 * self.r
        if st2 is not None and theta != 1.0:
            j2, sig2 = st2
            out[j2] += (1.0 - theta) * sig2 * self.r
        return torch.from_numpy(out).to(device=self.like.device,
                                        dtype=self.like.dtype)


def _leaves(Z, offset=0):
    """(set, start) pairs of the non-product factors of Z (flattened)."""
    if isinstance(Z, ProductSet):
        out = []
        for sub in Z.sets:
            out += _leaves(sub, offset)
            offset += sub.dim
        return out
    return [(Z, offset)]


def _inf_direction(S, c, a):
    """A direction whose LMO minimizes <a, s> over S and, where cheap to get,
    <c, s> among those minimizers (coordinates / columns with a = 0 follow
    c). Any minimizer of <a, s> is correct; the tie-break only speeds up the
    search when the cut touches S."""
    if isinstance(S, Box):
        return torch.where(a == 0, c, a)
    if isinstance(S, ColumnBalls):
        A = a.reshape(S.n_rows, S.n_cols)
        zero_col = (A == 0).all(dim=0, keepdim=True)
        return torch.where(zero_col, c.reshape(S.n_rows, S.n_cols),
                           A).reshape(-1)
    return a


_POLYHEDRAL = (L1Ball, Simplex, Box)


def _is_polyhedral(S):
    return isinstance(S, _POLYHEDRAL) or (
        isinstance(S, ColumnBalls) and S.norm == "l1")


class _TorchOracle:
    """Block-wise LMO in torch on the input's device (generic sets)."""

    def __init__(self, Z, c, a, like):
        self.like = like
        self.parts = []  # (start, stop, fixed tensor or None)
        self.var = []    # (set, c_b, a_b)
        y_const = c.new_zeros(())
        leaves = _leaves(Z)
        zero_flags = torch.stack(
            [(a[st:st + S.dim] == 0).all() for S, st in leaves]).tolist()
        for (S, st), zero in zip(leaves, zero_flags):
            c_b, a_b = c[st:st + S.dim], a[st:st + S.dim]
            if zero:
                s_b = S.lmo(c_b)
                y_const = y_const + torch.dot(c_b, s_b)
                self.parts.append(s_b)
            else:
                self.parts.append(None)
                self.var.append((S, c_b, a_b))
        self.y_const = float(y_const)
        self.smooth = not all(_is_polyhedral(S) for S, _, _ in self.var)

    def _eval(self, directions):
        pts, terms = [], []
        for (S, c_b, a_b), d in zip(self.var, directions):
            s_b = S.lmo(d)
            pts.append(s_b)
            terms.append(torch.dot(c_b, s_b))
            terms.append(torch.dot(a_b, s_b))
        if not terms:
            return self.y_const, 0.0, pts
        vals = torch.stack(terms).tolist()  # the one host sync per call
        return self.y_const + math.fsum(vals[0::2]), math.fsum(vals[1::2]), \
            pts

    def at(self, lam):
        if lam:
            return self._eval([torch.add(c_b, a_b, alpha=lam)
                               for _, c_b, a_b in self.var])
        return self._eval([c_b for _, c_b, _ in self.var])

    def at_inf(self):
        return self._eval([_inf_direction(S, c_b, a_b)
                           for S, c_b, a_b in self.var])

    def point(self, theta, st1, st2):
        var1 = iter(st1)
        var2 = iter(st2) if st2 is not None and theta != 1.0 else None
        out = []
        for fixed in self.parts:
            if fixed is not None:
                out.append(fixed)
            elif var2 is None:  # theta == 1
                out.append(next(var1))
            else:
                out.append(torch.lerp(next(var2), next(var1), theta))
        point = torch.cat(out) if len(out) > 1 else out[0].clone()
        return point.to(self.like.dtype)


# --------------------------------------------------------------------------
# public API
# --------------------------------------------------------------------------

def _check_inputs(Z, c, a, beta):
    for name, v in (("c", c), ("a", a)):
        if not isinstance(v, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(v)}")
        if v.dim() != 1 or v.shape[0] != Z.dim:
            raise ValueError(f"{name} must be a flat tensor of shape "
                             f"({Z.dim},), got {tuple(v.shape)}")
    beta = float(beta)
    if math.isnan(beta):
        raise ValueError("beta must not be NaN")
    return beta


def cut_lmo(Z, c, a, beta, *, fallback=None, rtol=DEFAULT_RTOL,
            feas_tol=DEFAULT_FEAS_TOL, max_evals=DEFAULT_MAX_EVALS):
    """Exactly solve ``min <c, s> s.t. s in Z, <a, s> <= beta``.

    Parameters
    ----------
    Z : FeasibleSet
        Compact convex set with an exact ``lmo`` (l1 ball: dedicated fast
        path; products: blocks with ``a == 0`` solved once; anything else:
        generic).
    c, a : torch.Tensor
        Flat tensors of length ``Z.dim`` (objective and cut normal). The
        work is done in float64; the point has the dtype / device of ``c``.
    beta : float
        Right-hand side of the cut (a 0-d tensor is accepted; ``inf``
        means no cut).
    fallback : optional
        Returned as ``point`` when the problem is infeasible.
    rtol : float
        Relative certified duality gap at which to stop.
    feas_tol : float
        The problem counts as feasible iff ``min_Z <a, s> <= beta + feas_tol
        * max(|min_Z <a, s>|, |<a, lmo(c)>|, |beta|)``; inside this slack
        the cut is treated as touching Z (``beta`` raised to the minimum).
    max_evals : int
        Cap on LMO calls (the returned point is feasible in any case).

    Returns
    -------
    CutLMOResult
    """
    beta = _check_inputs(Z, c, a, beta)
    if isinstance(Z, L1Ball):
        oracle = _L1Oracle(c, a, Z.radius, c)
        smooth = False
    else:
        oracle = _TorchOracle(Z, c.detach().to(torch.float64),
                              a.detach().to(torch.float64), like=c)
        smooth = oracle.smooth
    out = _dual_search(oracle, beta, smooth=smooth, rtol=rtol,
                       feas_tol=feas_tol, max_evals=max_evals)
    if not out.feasible:
        return CutLMOResult(fallback, False, _INF, _INF, out.cut_min,
                            0.0, out.n_evals)
    point = oracle.point(out.theta, out.state_1, out.state_2)
    return CutLMOResult(point, True, out.lam, out.value, out.cut_min,
                        out.gap, out.n_evals)


# --------------------------------------------------------------------------
# CVXPY backend (checking / reproduction)
# --------------------------------------------------------------------------

def _set_key(Z):
    if isinstance(Z, ProductSet):
        return ("product",) + tuple(_set_key(S) for S in Z.sets)
    if isinstance(Z, (L1Ball, L2Ball, Simplex)):
        return (type(Z).__name__, Z.dim, Z.radius)
    if isinstance(Z, ColumnBalls):
        return ("columns", Z.n_rows, Z.n_cols, Z.norm, Z.radius)
    if isinstance(Z, NuclearNormBall):
        return ("nuclear", Z.n_rows, Z.n_cols, Z.radius)
    if isinstance(Z, Box):
        return ("box", Z.dim, Z.lower.numpy().tobytes(),
                Z.upper.numpy().tobytes())
    raise NotImplementedError(
        f"cut_lmo_cvxpy does not support {type(Z).__name__}")


def _cvxpy_constraints(Z, s):
    import cvxpy as cp
    if isinstance(Z, ProductSet):
        cons, start = [], 0
        for S in Z.sets:
            cons += _cvxpy_constraints(S, s[start:start + S.dim])
            start += S.dim
        return cons
    if isinstance(Z, L1Ball):
        return [cp.norm1(s) <= Z.radius]
    if isinstance(Z, L2Ball):
        return [cp.norm(s, 2) <= Z.radius]
    if isinstance(Z, ColumnBalls):
        M = cp.reshape(s, (Z.n_rows, Z.n_cols), order="C")
        if Z.norm == "l1":
            return [cp.sum(cp.abs(M), axis=0) <= Z.radius]
        return [cp.norm(M, 2, axis=0) <= Z.radius]
    if isinstance(Z, Simplex):
        return [s >= 0, cp.sum(s) == Z.radius]
    if isinstance(Z, Box):
        return [s >= Z.lower.numpy(), s <= Z.upper.numpy()]
    if isinstance(Z, NuclearNormBall):
        M = cp.reshape(s, (Z.n_rows, Z.n_cols), order="C")
        return [cp.normNuc(M) <= Z.radius]
    raise NotImplementedError(
        f"cut_lmo_cvxpy does not support {type(Z).__name__}")


_CVXPY_CACHE = OrderedDict()
_CVXPY_CACHE_SIZE = 16


def _cvxpy_problem(Z):
    """A parametrized CVXPY problem for Z (cached per set structure)."""
    import cvxpy as cp
    key = _set_key(Z)
    if key in _CVXPY_CACHE:
        _CVXPY_CACHE.move_to_end(key)
        return _CVXPY_CACHE[key]
    s = cp.Variable(Z.dim)
    c_par, a_par, b_par = cp.Parameter(Z.dim), cp.Parameter(Z.dim), \
        cp.Parameter()
    cut = a_par @ s <= b_par
    prob = cp.Problem(cp.Minimize(c_par @ s),
                      _cvxpy_constraints(Z, s) + [cut])
    entry = (prob, s, c_par, a_par, b_par, cut)
    _CVXPY_CACHE[key] = entry
    if len(_CVXPY_CACHE) > _CVXPY_CACHE_SIZE:
        _CVXPY_CACHE.popitem(last=False)
    return entry


def cut_lmo_cvxpy(Z, c, a, beta, *, fallback=None, solver="CLARABEL",
                  **solver_opts):
    """Solve the same problem as :func:`cut_lmo` with CVXPY (LP / SOCP).

    Supports :class:`L1Ball`, :class:`L2Ball`, :class:`ColumnBalls`,
    :class:`Simplex`, :class:`Box`, :class:`NuclearNormBall` (SDP) and
    :class:`ProductSet` of those. One parametrized problem is compiled per
    set structure and re-solved (so the timing is the best CVXPY offers).
    ``solver_opts`` go to ``Problem.solve`` (e.g. Clarabel tolerances).
    Infeasible -> ``feasible=False`` and ``point=fallback``; any other
    non-optimal status raises ``RuntimeError`` (solver failure). The
    multiplier is the solver's dual value of the cut.
    """
    import cvxpy as cp
    beta = _check_inputs(Z, c, a, beta)
    prob, s, c_par, a_par, b_par, cut = _cvxpy_problem(Z)
    c_np, a_np = _host_f64(c), _host_f64(a)
    c_par.value, a_par.value, b_par.value = c_np, a_np, beta
    prob.solve(solver=solver, **solver_opts)
    cut_min = float(a_np @ _host_f64(Z.lmo(a.detach().to(torch.float64))))
    n_iter = getattr(prob.solver_stats, "num_iters", None) or 0
    if prob.status in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE):
        return CutLMOResult(fallback, False, _INF, _INF, cut_min, 0.0,
                            n_iter)
    if prob.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
        raise RuntimeError(f"CVXPY ({solver}) returned status {prob.status}")
    point = torch.as_tensor(s.value, dtype=c.dtype, device=c.device)
    multiplier = max(float(np.asarray(cut.dual_value).reshape(())), 0.0)
    return CutLMOResult(point, True, multiplier, float(prob.value), cut_min,
                        0.0, n_iter)
