"""Exact linear minimization over a feasible set cut by one halfspace.

The cutting-plane methods SBCGI and SBCGF (Cao et al. 2023, Alg. 1 and 2)
and CG-BiO (Jiang et al. 2023) need at every iteration an exact solution of
the subproblem of Cao et al. 2023, eq. (12) over the cut set of eq. (9)::

    min_s <c, s>   subject to   s in Z   and   <a, s> <= beta,          (P)

with Z compact convex (a :mod:`benchmark_utils.sets` object) and ``a`` the
(estimated) lower-level gradient. :func:`cut_lmo` solves (P) exactly (up
to floating point) through its 1-D dual ``phi(lam) = min_{s in Z} <c + lam
a, s> - lam beta``, ``lam >= 0``, using nothing but the LMO of Z: a bracket
of two LMO answers on both sides of the cut, whose convex combination meets
the cut with equality and certifies the duality gap; tent (Newton-type)
steps, exact after finitely many LMO calls on a polyhedron, alternating
with Illinois steps on curved sets, with bisection as a safeguard
(:mod:`benchmark_utils.sets.dual_search`). What depends on the set is its
LMO oracle (:mod:`benchmark_utils.sets.cut_oracles`).
:func:`cut_lmo_cvxpy` solves (P) with CVXPY (checking and reproduction
only). Infeasibility is not an error: ``feasible=False`` and
``point=fallback``. The algorithm step by step: docs/sets.md.
"""

from typing import Callable, NamedTuple

from benchmark_utils.sets.cut_lmo_cvxpy import (
    compile_cut_lmo_cvxpy,
    cut_lmo_cvxpy,
)
from benchmark_utils.sets.cut_result import (
    CutLMOResult,
    check_cut_inputs,
    infeasible_result,
)
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
