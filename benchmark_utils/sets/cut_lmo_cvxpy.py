"""The cut-LMO as an LP / SOCP / SDP solved by CVXPY (checking only).

Cao et al. 2023 and Giang-Tran et al. 2025 solve their cut subproblem with
a generic convex solver (CVX in MATLAB); this backend does the same with
CVXPY (Clarabel by default) so that the exact dual search of
:mod:`benchmark_utils.sets.cut_lmo` can be checked against it and the
papers' route reproduced. It is about 100x slower and is never the default.
The set says how it is written in CVXPY (``Z.cvxpy_constraints``).
"""

from collections import OrderedDict

import numpy as np
import torch

from benchmark_utils.sets.cut_result import (
    CutLMOResult,
    check_cut_inputs,
    host_f64,
    infeasible_result,
)

_CVXPY_CACHE = OrderedDict()
_CVXPY_CACHE_SIZE = 16


def _cvxpy_problem(Z):
    """A parametrized CVXPY problem for Z (cached per set structure)."""
    import cvxpy as cp
    key = Z.cache_key
    if key in _CVXPY_CACHE:
        _CVXPY_CACHE.move_to_end(key)
        return _CVXPY_CACHE[key]
    s = cp.Variable(Z.dim)
    c_par, a_par, b_par = cp.Parameter(Z.dim), cp.Parameter(Z.dim), \
        cp.Parameter()
    cut = a_par @ s <= b_par
    prob = cp.Problem(cp.Minimize(c_par @ s),
                      Z.cvxpy_constraints(s) + [cut])
    entry = (prob, s, c_par, a_par, b_par, cut)
    _CVXPY_CACHE[key] = entry
    if len(_CVXPY_CACHE) > _CVXPY_CACHE_SIZE:
        _CVXPY_CACHE.popitem(last=False)
    return entry


def cut_lmo_cvxpy(Z, c, a, beta, *, fallback=None, solver="CLARABEL",
                  **solver_opts):
    """Solve the same problem as :func:`~benchmark_utils.sets.cut_lmo.
    cut_lmo` with CVXPY.

    Any bounded set with ``cvxpy_constraints`` is supported (the nuclear
    ball becomes an SDP). One parametrized problem is compiled per set
    structure (``Z.cache_key``) and re-solved, so the timing is the best
    CVXPY offers. ``solver_opts`` go to ``Problem.solve`` (e.g. Clarabel
    tolerances). Infeasible -> ``feasible=False`` and ``point=fallback``; any
    other non-optimal status raises ``RuntimeError`` (solver failure). The
    multiplier is the solver's dual value of the cut.
    """
    import cvxpy as cp
    beta = check_cut_inputs(Z, c, a, beta)
    c_np, a_np = host_f64(c), host_f64(a)
    # first, so that an unbounded set fails at once (its LMO raises
    # UnboundedLMOError) rather than after a compilation
    cut_min = float(a_np @ host_f64(Z.lmo(a.detach().to(torch.float64))))
    prob, s, c_par, a_par, b_par, cut = _cvxpy_problem(Z)
    c_par.value, a_par.value, b_par.value = c_np, a_np, beta
    prob.solve(solver=solver, **solver_opts)
    n_iter = getattr(prob.solver_stats, "num_iters", None) or 0
    if prob.status in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE):
        return infeasible_result(fallback, cut_min, n_iter)
    if prob.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
        raise RuntimeError(f"CVXPY ({solver}) returned status {prob.status}")
    point = torch.as_tensor(s.value, dtype=c.dtype, device=c.device)
    multiplier = max(float(np.asarray(cut.dual_value).reshape(())), 0.0)
    return CutLMOResult(point, True, multiplier, float(prob.value), cut_min,
                        0.0, n_iter)


def compile_cut_lmo_cvxpy(Z):
    """Compile (and cache) the CVXPY problem of Z by one solve with a cut
    that never binds, so that the compilation is not timed in a run.

    CVXPY canonicalizes a parametrized problem on its first solve (about
    14 s for the dictionary set); paid inside a run it would be charged to
    whichever method happens to run first.
    """
    c = torch.ones(Z.dim, dtype=torch.float64)
    inactive = float(c @ Z.lmo(-c))     # max_Z <c, s>: never binds
    cut_lmo_cvxpy(Z, c, c, inactive)
