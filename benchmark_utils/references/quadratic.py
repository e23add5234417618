"""Certified ``F*`` and ``x*`` of the quadratic general-bilevel problem.

F is a strongly convex quadratic (``F(x) = 1/2 x^T A x - c^T x + const``,
see :class:`~benchmark_utils.problems.quadratic.QuadraticBilevel`). Without
a constraint its minimizer is in closed form, ``x* = A^{-1} c``. Over an l2
ball or a box it is the minimum of a strongly convex quadratic, computed by
CVXPY (Clarabel), polished by accelerated projected gradient, certified by
the Frank-Wolfe gap ``max_{s in X} <grad F(x), x - s> >= F(x) - F*`` (the
set's exact LMO) and cached on disk (:func:`quadratic_references`). The
certificate is cheap (one gradient and one LMO), so it is recomputed at the
stored point on every load.
"""
import time
import warnings

import numpy as np
import torch

from benchmark_utils.problems.quadratic import GENERATOR_VERSION
from benchmark_utils.references.cache import (
    InvalidReference,
    cached_references,
)
from benchmark_utils.references.checks import (
    float_array,
    require_close,
    value_and_accuracy,
)
from benchmark_utils.references.precision import (
    CLARABEL_TIGHT,
    higham_gamma,
    relative_floor,
)
from benchmark_utils.references.projected_gradient import (
    accelerated_projected_gradient,
)

# a reference certified less tightly than this (relative) is not used
MAX_RELATIVE_ACCURACY = 1e-6


def certify(problem, x):
    """(F(x_feasible), bound on F(x_feasible) - F*, x_feasible).

    ``x`` is first projected onto X. The bound is the Frank-Wolfe gap
    ``max_{s in X} <grad F(x), x - s>`` (>= F(x) - F* for convex F, computed
    with the set's exact lmo), or ``||grad F||^2 / (2 mu_F)`` without a
    constraint (strong convexity), plus the floating-point error of the
    computed gradient over the set's diameter, the first-order effect of a
    projection that rounds just outside X, and a relative floor 1e-14.
    """
    X = problem.X
    x = X.project(x)
    with torch.no_grad():
        value = float(problem.value(x))
        grad = problem.A @ x - problem.c
    grad_norm = float(torch.linalg.vector_norm(grad))
    # error of A x - c in floating point (Higham's gamma_k, k = dim_x + 1)
    grad_error = higham_gamma(problem.dim_x + 1) * float(
        torch.linalg.vector_norm(problem.A.abs() @ x.abs() + problem.c.abs()))
    if X.unbounded:
        bound = (grad_norm + grad_error) ** 2 / (2 * problem.mu_F)
    else:
        gap = float(grad @ (x - X.lmo(grad)))
        bound = (max(gap, 0.0) + grad_error * X.diameter
                 + grad_norm * X.excess(x))
    return value, bound + relative_floor(value), x


def _projected_gradient(problem, x, n_iter):
    """FISTA on F over X from x, step 1/L_F: a cheap, independent polish."""
    return accelerated_projected_gradient(
        x, lambda z: problem.A @ z - problem.c, problem.X.project,
        problem.L_F, n_iter)


def _cvxpy_minimizer(problem):
    """CVXPY (Clarabel): min_X 1/2||J x + r||^2 + rho/2||x - abar||^2."""
    import cvxpy as cp
    J = problem.J.cpu().numpy()
    r = (problem.y_c - problem.b_bar).cpu().numpy()
    a_bar = problem.a_bar.cpu().numpy()
    rho, X = problem.upper_reg, problem.X
    x = cp.Variable(problem.dim_x)
    constraints = X.cvxpy_constraints(x)
    objective = 0.5 * cp.sum_squares(J @ x + r) + 0.5 * rho * cp.sum_squares(
        x - a_bar)
    cvx = cp.Problem(cp.Minimize(objective), constraints)
    # tight tolerances first, Clarabel's defaults if they fail; an
    # "inaccurate" point is still a candidate: the certificate judges it
    found, status = None, "failed"
    for options in (CLARABEL_TIGHT, {}):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                cvx.solve(solver=cp.CLARABEL, **options)
        except cp.error.SolverError:
            continue
        if x.value is not None and (found is None
                                    or cvx.status == cp.OPTIMAL):
            found, status = np.asarray(x.value), str(cvx.status)
        if cvx.status == cp.OPTIMAL:
            break
    if found is None:
        return None, status
    return problem.as_tensor(found), status


def compute_quadratic_references(problem, polish_iter=3000):
    """F*, its certified accuracy and the minimizer x* (JSON-serialisable).

    Unconstrained: x* = A^{-1} c. Constrained: candidates are the CVXPY
    solution, its FISTA polish, and the projected unconstrained minimizer
    polished by FISTA (exact when the constraint is inactive); the one with
    the smallest certified upper bound ``F + bound`` is kept.
    """
    start = time.perf_counter()
    candidates = {"closed_form": problem.unconstrained_minimizer()}
    status = "closed form"
    if not problem.X.unbounded:
        polished = _projected_gradient(
            problem, problem.X.project(candidates["closed_form"]), polish_iter)
        candidates = {"projected_closed_form_polished": polished}
        x_cvx, status = _cvxpy_minimizer(problem)
        if x_cvx is not None:
            candidates["cvxpy"] = x_cvx
            candidates["cvxpy_polished"] = _projected_gradient(
                problem, x_cvx, polish_iter)
    certified = {name: certify(problem, x) for name, x in candidates.items()}
    best = min(certified, key=lambda k: certified[k][0] + certified[k][1])
    value, accuracy, x_star = certified[best]
    return dict(F_star=value, F_star_accuracy=accuracy,
                x_star=x_star.cpu().tolist(), F_status=status, F_point=best,
                seconds=time.perf_counter() - start)


def quadratic_references(problem, params):
    """Certified references of ``problem``, cached on disk when constrained.

    ``params`` (every dataset parameter) keys the cache, together with the
    generator's version. Whatever the cache holds, the certificate is
    recomputed at the stored point on every load (one gradient and one
    lmo), so a stale or corrupted cache can never make the reported accuracy
    optimistic: a stored entry that fails :func:`check_quadratic_references`
    is recomputed.
    """
    if problem.X.unbounded:
        references = compute_quadratic_references(problem)
    else:
        key = dict(params, generator_version=GENERATOR_VERSION)
        references = cached_references(
            "quadratic", key, lambda: compute_quadratic_references(problem),
            check=lambda stored: check_quadratic_references(problem, stored))
    value, accuracy, x_star = _certified_at(problem, references["x_star"])
    if not accuracy <= MAX_RELATIVE_ACCURACY * max(1.0, abs(value)):
        raise ValueError(
            f"The reference F* = {value:.6g} of this quadratic instance is "
            f"certified only to {accuracy:.3g}, above "
            f"{MAX_RELATIVE_ACCURACY:g} relative: the solvers behind it "
            "failed on this instance.")
    return dict(references, F_star=value, F_star_accuracy=accuracy,
                x_star=x_star.cpu().tolist())


def check_quadratic_references(problem, references):
    """Raise :class:`InvalidReference` unless stored references are usable:
    finite ``F_star`` and accuracy, ``x_star`` a finite vector of length
    ``dim_x`` whose recomputed certificate is within
    ``MAX_RELATIVE_ACCURACY`` and agrees with the stored ``F_star``."""
    stored, _ = value_and_accuracy(references, "F_star")
    float_array(references, "x_star", (problem.dim_x,))
    value, accuracy, _ = _certified_at(problem, references["x_star"])
    if not accuracy <= MAX_RELATIVE_ACCURACY * max(1.0, abs(value)):
        raise InvalidReference(
            f"x_star is certified only to {accuracy:.3g}: not a minimizer")
    require_close("F_star", stored, value, accuracy)


def _certified_at(problem, x_star):
    return certify(problem, problem.as_tensor(x_star))


def simulated_references(problem):
    """F*, its certified accuracy and x* (None where F is not strongly
    convex, F* = -inf or unattained).

    ``x* = A^{-1} c`` in closed form, certified by strong convexity
    (:func:`certify`: ``||grad F||^2 /
    (2 mu_F)`` plus the rounding error of the gradient and a relative
    floor); no disk cache, the closed form costs two d x d solves.
    """
    if not problem.F_convex:
        return dict(F_star=None, F_star_accuracy=None, x_star=None,
                    F_status=f"F not convex (mu_F = {problem.mu_F:.3g})")
    references = compute_quadratic_references(problem)
    value, accuracy = references["F_star"], references["F_star_accuracy"]
    if not accuracy <= MAX_RELATIVE_ACCURACY * max(1.0, abs(value)):
        raise ValueError(
            f"The reference F* = {value:.6g} of this simulated instance is "
            f"certified only to {accuracy:.3g} (mu_F = {problem.mu_F:.3g}): "
            "F is too ill-conditioned for a certified F*")
    return dict(references, F_star=float(value),
                F_star_accuracy=float(accuracy))
