"""Iterative solution of symmetric positive definite linear systems
``H w = v`` given only products ``v -> H v``.

Shared by the problems (exact hypergradients and Newton steps for the
metrics, never timed) and by the solvers (AID-type hypergradient
approximations), so it belongs to neither.
"""
import torch

from benchmark_utils.parameter_checks import check_int, check_nonnegative


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
