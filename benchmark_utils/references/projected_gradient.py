"""Accelerated projected gradient: the cheap polish of a solver's point.

CVXPY returns points accurate to its tolerances only; a few thousand steps
of FISTA from such a point (or from a projected closed form) often reach the
relative floor of the certificates. The polish is never trusted by itself:
every polished point is certified like any other candidate.
"""
import math


def accelerated_projected_gradient(x, grad, project, lipschitz, n_iter):
    """FISTA (Beck & Teboulle 2009, eq. (4.1)-(4.3)) from ``x`` with step
    1/lipschitz, ``n_iter`` steps, no restart (numpy arrays or tensors).

    ``grad(x)`` is the gradient of the smooth objective, ``project(x)`` the
    Euclidean projection onto the feasible set; returns the last iterate.
    """
    y, x_prev, t = x, x, 1.0
    for _ in range(n_iter):
        x_next = project(y - grad(y) / lipschitz)
        t_next = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * t * t))
        y = x_next + ((t - 1.0) / t_next) * (x_next - x_prev)
        x_prev, t = x_next, t_next
    return x_prev
