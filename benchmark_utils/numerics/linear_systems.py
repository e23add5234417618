"""Iterative solution of symmetric positive definite linear systems
``H w = v`` given only products ``v -> H v``.

Shared by the problems (exact hypergradients and Newton steps for the
metrics, never timed) and by the solvers (AID-type hypergradient
approximations), so it belongs to neither.
"""
import torch

from benchmark_utils.checks.parameters import check_int, check_nonnegative


def conjugate_gradient(hvp, rhs, *, tol=1e-10, max_iter=100, w0=None,
                       precondition=None):
    """Solve ``H w = rhs`` for SPD ``H`` given as ``hvp(v) = H v``.

    Conjugate gradient (Hestenes & Stiefel 1952) from ``w0`` (zero by
    default; a warm start is what AID methods carry between outer steps),
    preconditioned by ``precondition(r) ~ H^-1 r`` when given (e.g. the
    Jacobi scaling of large logistic Newton systems).
    Stops when ``||rhs - H w|| <= tol * ||rhs||`` (relative residual; the
    recursively updated residual, so each iteration costs exactly one
    ``hvp``) or after ``max_iter`` iterations. A zero ``rhs`` returns zero
    (or ``w0`` unchanged if it already solves the system to ``tol``).
    ``hvp`` should be deterministic (one fixed batch): CG on a changing
    operator has no meaning.
    """
    max_iter = check_int("max_iter", max_iter, 0)
    check_nonnegative("tol", tol)
    if precondition is None:
        def precondition(r):
            return r
    w = torch.zeros_like(rhs) if w0 is None else w0.clone()
    r = rhs - hvp(w) if w0 is not None else rhs.clone()
    threshold = tol * float(torch.linalg.vector_norm(rhs))
    if float(torch.linalg.vector_norm(r)) <= threshold:
        return w
    z = precondition(r)
    rz = float((r * z).sum())
    p = z.clone()
    for _ in range(max_iter):
        Hp = hvp(p)
        curvature = float((p * Hp).sum())
        if not curvature > 0:
            # H not positive definite along p (or NaN): stop with the last
            # iterate instead of dividing by zero; the caller's divergence
            # guard sees a NaN if there is one
            break
        alpha = rz / curvature
        w = w + alpha * p
        r = r - alpha * Hp
        if float(torch.linalg.vector_norm(r)) <= threshold:
            break
        z = precondition(r)
        rz_next = float((r * z).sum())
        p = z + (rz_next / rz) * p
        rz = rz_next
    return w


# a refinement round solves the cheap system to this relative residual (the
# float32 products of the hyper-cleaning metrics carry a relative error of
# about 1e-6 on such systems, see refined_conjugate_gradient)
ROUND_TOL = 1e-4
# and within this many iterations (float32 CG loses orthogonality on hard
# systems and can crawl; the exact residual then decides what comes next)
ROUND_MAX_ITER = 100


def refined_conjugate_gradient(hvp, hvp_low, rhs, *, tol, max_iter,
                               precondition=None, w0=None):
    """Solve ``H w = rhs`` to ``||rhs - H w|| <= tol ||rhs||`` in exact
    products ``hvp(v) = H v``, doing the conjugate-gradient iterations on
    ``hvp_low``, a cheaper approximation of H (float32 products):
    mixed-precision iterative refinement (Wilkinson 1963; Carson and
    Higham 2018). Each round solves ``H_low d = r`` by preconditioned CG to
    the relative residual ``max(ROUND_TOL, what tol still needs)``, adds d
    to w and recomputes the residual ``r = rhs - H w`` with one exact
    product; it stops when that true residual meets ``tol``. A round that
    does not halve the true residual (H_low too far from H for this
    system) hands the rest to rounds of CG on ``hvp`` itself, and a round
    of those that does not halve it either ends the solve (the rounding
    floor of H's products; the caller sees the residual it gets, as from
    :func:`conjugate_gradient`). ``hvp_low=None``: rounds on ``hvp`` only,
    i.e. CG followed by a check of its true residual (CG's recursively
    updated one drifts from it by rounding).

    ``w0`` is a warm start, used when it is closer to the solution than 0
    (its residual below ``||rhs||``; otherwise dropped at the price of one
    product). ``max_iter`` bounds the CG iterations of each round.
    """
    rhs_norm = float(torch.linalg.vector_norm(rhs))
    threshold = tol * rhs_norm
    w, r = torch.zeros_like(rhs), rhs
    if w0 is not None:
        r0 = rhs - hvp(w0)
        if float(torch.linalg.vector_norm(r0)) < rhs_norm:
            w, r = w0.clone(), r0
    r_norm = float(torch.linalg.vector_norm(r))
    operator = hvp if hvp_low is None else hvp_low
    while r_norm > threshold:
        round_tol, round_iter = threshold / r_norm, max_iter
        if operator is hvp_low:
            round_tol = max(ROUND_TOL, round_tol)
            round_iter = min(ROUND_MAX_ITER, max_iter)
        w = w + conjugate_gradient(operator, r, tol=round_tol,
                                   max_iter=round_iter,
                                   precondition=precondition)
        r = rhs - hvp(w)
        previous, r_norm = r_norm, float(torch.linalg.vector_norm(r))
        if r_norm > 0.5 * previous:
            if operator is hvp:
                break
            operator = hvp      # H_low does not help here: exact rounds
    return w
