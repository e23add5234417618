"""Newton's method for a strongly convex lower level, to machine precision.

Used for the exact y*(x) of problems whose lower level is smooth and
mu-strongly convex in y but has no closed-form minimizer (the hyper-cleaning
problem). The problem supplies the value, the gradient in y and a solver of
its Hessian systems; this module only iterates.

Stopping: ``||grad_y g|| <= 1e-10 mu`` (so ``||y - y*|| <= 1e-10``), or the
rounding floor of large sums. With an iterative Hessian solver the floor
shows as a stall (near y*, a step that fails to halve the gradient: return
the better of the last two iterates); with ``grad_noise`` (the problem's
estimate nu of the rounding error of its computed gradient) the target
becomes ``max(tol, FLOOR_SHARE * nu)`` and Newton stops when a step solved
to reach it leaves a gradient within ``FLOOR_BAND`` of it. The returned
bound is always the computed ||grad|| / mu.

Inexact Newton: the step solves the Newton system to the forcing term of
Eisenstat and Walker 1996, choice 2, ``eta_k = 0.9 (||g_k|| /
||g_{k-1}||)^2`` capped at 0.1, never tighter than what brings the next
gradient to the target, never below 1e-13. The reasons and measurements:
docs/problems.md, "The numerical kernels".
"""
import math

import numpy as np
import torch

# relative gradient tolerance: ||grad|| <= GRAD_TOL * mu
GRAD_TOL = 1e-10
# inexact Newton: how close to the tolerance a gradient that fails to halve
# counts as the rounding floor (module doc)
STALL_ZONE = 1e4
# inexact Newton targets ||grad|| <= INEXACT_MARGIN * GRAD_TOL * mu
INEXACT_MARGIN = 1e-2
# Eisenstat-Walker choice 2 (module doc): eta = GAMMA (ratio)^2 <= ETA_MAX
EW_GAMMA, ETA_MAX, ETA_MIN = 0.9, 0.1, 1e-13
# known rounding floor (module doc): target FLOOR_SHARE * nu, and a gradient
# within FLOOR_BAND of that target after a step solved to reach it is the
# floor (FLOOR_SHARE * FLOOR_BAND = 1: stop at ||grad|| <= nu at worst)
FLOOR_SHARE, FLOOR_BAND = 0.5, 2.0


def newton_minimize(value, grad, hessian_solver, x, y, mu, exact,
                    max_iter=100, grad_noise=None):
    """Minimize ``value(x, .)`` from ``y`` by Newton's method.

    ``value(x, y)`` and ``grad(x, y)`` are the lower level and its gradient
    in y; ``hessian_solver(x, y)`` returns a function solving the Hessian
    system at (x, y): ``solve(r)`` exactly when ``exact`` (a
    factorization), otherwise ``solve(r, rtol=...)`` to a relative residual
    (an iterative solver: "inexact Newton"). ``grad_noise(x, y)``, when
    given, estimates the rounding error of the computed gradient's norm
    at (x, y) (module doc; iterative solver only, called after each
    ``grad(x, y)`` at the same point). Returns
    ``(y, bound)`` with ``bound = ||grad|| / mu >= ||y - y*||`` at the
    returned point.
    """
    # an iterative solver's steps are loose: aim 100x below the tolerance
    # there, so the returned y*(x) is as smooth in x as the exact path's
    # (whose last quadratic step overshoots the tolerance by far) and finite
    # differences of F hold; the rounding floor stops it earlier at scale
    tol_grad = GRAD_TOL * mu * (1.0 if exact else INEXACT_MARGIN)
    at_floor = False
    previous = None                 # (y, ||grad||) before the last step
    target = tol_grad               # raised to the known floor (module doc)
    reach = math.inf                # ||grad|| the last step was solved to
    for _ in range(max_iter):
        gradient = grad(x, y)
        grad_norm = float(torch.linalg.vector_norm(gradient))
        if grad_norm <= tol_grad or at_floor:
            break
        if grad_noise is not None and not exact:
            target = max(tol_grad, FLOOR_SHARE * grad_noise(x, y))
            if grad_norm <= FLOOR_BAND * target and reach <= target:
                break               # the known rounding floor (module doc)
        if (not exact and previous is not None
                and grad_norm <= STALL_ZONE * tol_grad
                and grad_norm > 0.5 * previous[1]):
            # the rounding floor (module doc): keep the better of the two
            if previous[1] < grad_norm:
                y, grad_norm = previous
            break
        solve = hessian_solver(x, y)
        if exact:
            rtol, step = 0.0, solve(gradient)
        else:
            rtol = forcing_term(grad_norm, previous, target)
            step = solve(gradient, rtol=rtol)
        reach = rtol * grad_norm
        previous = (y, grad_norm)
        y, step_norm = _line_search(value, x, y, gradient, step)
        # the rounding floor of large sums: an accurate Newton step (the
        # distance to y*) below 1e-12 relative cannot be improved on
        at_floor = rtol <= 1e-6 and step_norm <= 1e-12 * max(
            1.0, float(torch.linalg.vector_norm(y)))
    else:
        raise RuntimeError(
            "Newton's method on the lower level did not converge in "
            f"{max_iter} iterations (gradient norm {grad_norm:.3g})")
    return y, grad_norm / mu


def forcing_term(grad_norm, previous, tol_grad):
    """The relative residual of an inexact Newton step (module doc):
    Eisenstat-Walker choice 2, never tighter than needed to reach
    ``tol_grad`` in one step, within [ETA_MIN, ETA_MAX]."""
    eta = ETA_MAX
    if previous is not None:
        eta = min(ETA_MAX, EW_GAMMA * (grad_norm / previous[1]) ** 2)
    return max(ETA_MIN, min(ETA_MAX, max(eta, 0.5 * tol_grad / grad_norm)))


def _line_search(value, x, y, grad, step):
    """Backtracking (Armijo) on ``value`` along -step; the full Newton step
    once the predicted decrease is at the rounding level of the value."""
    slope = float(grad @ step)
    g0 = float(value(x, y))
    t = 1.0
    if slope > 1e3 * np.finfo(np.float64).eps * max(1.0, abs(g0)):
        while float(value(x, y - t * step)) > g0 - 1e-4 * t * slope:
            t *= 0.5
            if t < 1e-12:
                break
    return y - t * step, t * float(torch.linalg.vector_norm(step))
