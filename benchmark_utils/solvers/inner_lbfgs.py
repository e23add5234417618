"""A lower-level solve to a tolerance, for methods that treat the inner
problem as solved exactly (Optuna's trials; benchmark_bilevel solves them
with jaxopt's L-BFGS): L-BFGS on y -> g(x, y) with full passes until
||grad_y g|| <= tol.

L-BFGS (Liu & Nocedal, Math. Program. 1989; Nocedal & Wright, "Numerical
Optimization", 2006, Alg. 7.4 and 7.5): the direction d = -H grad_y g, H
the inverse-Hessian approximation of the last ``memory`` pairs
(s = y+ - y, r = grad+ - grad) by the two-loop recursion, with the initial
scaling <s, r> / <r, r> (their eq. (7.20)); the first direction is -grad.
A pair is kept when <s, r> > 0 (always for g strongly convex in y).

Step: from t = 1 (``first_step`` at the first iteration), halved until the
approximate Armijo condition of Hager & Zhang (SIAM J. Optim. 2005, the
approximate Wolfe conditions) holds, with phi(t) = g(x, y + t d) and
delta = 1/4:

    phi'(t) = <grad_y g(x, y + t d), d> <= (2 delta - 1) phi'(0).

On a quadratic it is Armijo's g(y + t d) <= g(y) + t/4 <grad, d> exactly
(the trapezoid rule is exact there) and accepts the Newton step. It tests
gradients only: near the solution two values of g differ by less than
their rounding, two gradients do not (Hager & Zhang's reason), so the
tolerance stays reachable. The gradient at the accepted point is the next
iteration's.

Accounting: every gradient is a full lower pass at a new point (charged
n_lower samples), accepted or not; no value and no Hessian product.
"""
from collections import deque

import torch

MEMORY = 10             # jaxopt's LBFGS history_size
DELTA = 0.25            # Hager & Zhang's delta, in (0, 1/2)
# halvings before the last trial point is taken anyway (2^-30: no progress)
MAX_HALVINGS = 30


def _dot(a, b):
    return torch.sum(a * b)


def two_loop_direction(grad, pairs):
    """-H grad, H the L-BFGS inverse-Hessian approximation of ``pairs``
    (s, r, 1/<s, r>), oldest first (Nocedal & Wright, Alg. 7.4); -grad
    when there is none. Products stay on the device (no host sync)."""
    q, alphas = grad, []
    for s, r, rho in reversed(pairs):
        alphas.append(rho * _dot(s, q))
        q = q - alphas[-1] * r
    if pairs:
        s, r, _ = pairs[-1]
        q = q * (_dot(s, r) / _dot(r, r))
    for (s, r, rho), alpha in zip(pairs, reversed(alphas), strict=True):
        q = q + (alpha - rho * _dot(r, q)) * s
    return -q


def lbfgs_to_tolerance(P, x, y, *, tol, max_steps, first_step=1.0,
                       memory=MEMORY):
    """At most ``max_steps`` L-BFGS iterations on g(x, .) from ``y`` on
    full passes, stopping once ||grad_y g|| <= ``tol`` (module doc).
    Returns the last iterate; a NaN gradient stops (the caller checks
    finiteness)."""
    grad = P.grad_g_y(x, y, batch=P.full_lower())
    pairs, step = deque(maxlen=memory), first_step
    for _ in range(max_steps):
        # the host syncs are the tests; NaN fails them and stops
        if not float(torch.linalg.vector_norm(grad)) > tol:
            break
        direction = two_loop_direction(grad, pairs)
        slope = float(_dot(grad, direction))
        if not slope < 0:           # lost by rounding: restart from -grad
            pairs.clear()
            direction = -grad
            slope = float(_dot(grad, direction))
        for _ in range(MAX_HALVINGS):
            candidate = y + step * direction
            candidate_grad = P.grad_g_y(x, candidate, batch=P.full_lower())
            if float(_dot(candidate_grad, direction)) <= (
                    (2 * DELTA - 1) * slope):
                break
            step /= 2
        s, r = candidate - y, candidate_grad - grad
        curvature = float(_dot(s, r))
        if curvature > 0:
            pairs.append((s, r, 1.0 / curvature))
        y, grad, step = candidate, candidate_grad, 1.0
    return y
