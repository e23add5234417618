"""Exact linear minimization over a feasible set cut by one halfspace.

The cutting-plane methods SBCGI and SBCGF (Cao et al. 2023, Alg. 1 and 2)
and CG-BiO (Jiang et al. 2023) need at every iteration an exact solution of
the subproblem of Cao et al. 2023, eq. (12) over the cut set of eq. (9):

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

Algorithm (:mod:`benchmark_utils.sets.dual_search`, shared by all sets,
only the LMO oracle changes):

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

What depends on the set is a method of the set
(:mod:`benchmark_utils.sets.cut_oracles` has the oracles):

* the l1 ball (the regression problem, Cao et al. 2023, eqs. (82)-(83)):
  the LMO of ``c + lam a`` is a signed vertex, so
  ``phi(lam) = -r ||c + lam a||_inf - lam beta`` is the upper envelope of
  the 2d lines ``+-(c_j + lam a_j)``; it is evaluated on host numpy copies.
* products (nested products are flattened): blocks on which ``a`` is
  identically zero (e.g. the code block of the dictionary problem) do not
  depend on ``lam``; their LMO answer for ``c`` is computed once.
* l2 columns (the dictionary block, Cao et al. 2023, eqs. (84)-(85)):
  column ``j`` of ``s(lam)`` is ``-r (G1_j + lam G2_j) / ||G1_j + lam
  G2_j||``, the LMO of the column ball. Eq. (85) prints the *projection*
  of ``G1 + lam G2`` onto the column balls instead; that has the opposite
  sign (it maximizes the linear function) and is not the LMO, so it is not
  used here. A column with ``G1_j + lam G2_j = 0`` returns 0 (the sets'
  convention); the jump of ``h`` there is handled like any kink
  (combination of both sides). At infinity, columns with ``G2_j = 0`` use
  ``G1_j`` (their LMO does not depend on ``lam``).
* any other set with an ``lmo``: the generic block-wise torch oracle.

:func:`cut_lmo_cvxpy` (:mod:`benchmark_utils.sets.cut_lmo_cvxpy`) solves (P)
as an LP / SOCP with CVXPY, the papers' own route; it is for checking and
reproduction only (about 100x slower), never for the solver loop.

Infeasibility is not an error: both functions return ``feasible=False`` and
``point=fallback`` (the caller's input, ``None`` by default); choosing what
to do then is the caller's business.
"""

from typing import Callable, NamedTuple

from benchmark_utils.sets.cut_lmo_cvxpy import compile_cut_lmo_cvxpy, \
    cut_lmo_cvxpy
from benchmark_utils.sets.cut_result import CutLMOResult, check_cut_inputs, \
    infeasible_result
from benchmark_utils.sets.dual_search import dual_search

__all__ = ["CutLMOResult", "cut_lmo", "cut_lmo_cvxpy", "CUT_LMO_BACKENDS"]

#: relative duality gap at which the search stops (machine precision level).
DEFAULT_RTOL = 1e-13
#: relative slack on ``min_Z <a, s> <= beta`` before declaring infeasibility.
DEFAULT_FEAS_TOL = 1e-12
#: hard cap on LMO calls (never reached in practice: the search is O(log)).
DEFAULT_MAX_EVALS = 300


def cut_lmo(Z, c, a, beta, *, fallback=None, rtol=DEFAULT_RTOL,
            feas_tol=DEFAULT_FEAS_TOL, max_evals=DEFAULT_MAX_EVALS):
    """Exactly solve ``min <c, s> s.t. s in Z, <a, s> <= beta``.

    Parameters
    ----------
    Z : FeasibleSet
        Compact convex set with an exact ``lmo``; ``Z.cut_lmo_oracle``
        chooses how the search evaluates it.
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
    beta = check_cut_inputs(Z, c, a, beta)
    oracle = Z.cut_lmo_oracle(c, a)
    out = dual_search(oracle, beta, rtol=rtol, feas_tol=feas_tol,
                      max_evals=max_evals)
    if not out.feasible:
        return infeasible_result(fallback, out.cut_min, out.n_evals)
    point = oracle.point(out.theta, out.state_1, out.state_2)
    return CutLMOResult(point, True, out.lam, out.value, out.cut_min,
                        out.gap, out.n_evals)


class CutLMOBackend(NamedTuple):
    """How a backend solves (P), and its one-time untimed set-up."""

    solve: Callable
    prepare: Callable


def _nothing_to_prepare(Z):
    return None


#: the backends that ``FeasibleSet.cut_lmo(..., backend=...)`` accepts
CUT_LMO_BACKENDS = {
    "exact": CutLMOBackend(cut_lmo, _nothing_to_prepare),
    "cvxpy": CutLMOBackend(cut_lmo_cvxpy, compile_cut_lmo_cvxpy),
}
