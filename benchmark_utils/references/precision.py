"""Floating-point bounds and solver tolerances shared by every reference.

A reference is reported with an accuracy that must hold despite rounding, so
each certificate adds the worst-case error of the float64 sums it evaluates
(Higham's ``gamma_k``) and never reports less than a relative floor: below
``1e-14 * max(1, |value|)`` the rounding of the value itself dominates.
CVXPY is run with Clarabel at tight tolerances first (:data:`CLARABEL_TIGHT`)
and at its defaults if that fails; the certificate, not the solver status,
decides how good a point is.
"""
import numpy as np

EPS = np.finfo(np.float64).eps
TINY = np.finfo(np.float64).tiny
RELATIVE_FLOOR = 1e-14

CLARABEL_TIGHT = dict(tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12,
                      tol_ktratio=1e-10, max_iter=500)


def higham_gamma(k):
    """Higham's gamma_k = k u / (1 - k u): worst-case error of a k-term sum."""
    return k * EPS / (1.0 - k * EPS)


def relative_floor(value):
    """The smallest accuracy ever reported for a reference of this size."""
    return RELATIVE_FLOOR * max(1.0, abs(value))


def solve_clarabel(problem):
    """Clarabel at tight tolerances, then at its defaults if that fails.

    Returns the status of the first solve that ends optimal (or optimal
    inaccurate), else the last status as a string.
    """
    import cvxpy as cp
    for options in (CLARABEL_TIGHT, {}):
        try:
            problem.solve(solver=cp.CLARABEL, **options)
        except cp.error.SolverError:
            continue
        if problem.status in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
            return problem.status
    return str(problem.status)
