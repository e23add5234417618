"""The lower level of a least-squares bilevel problem: certified ``g*``.

``g(z) = c/n ||A z - b||^2`` over Z, an l1 or l2 ball. CVXPY (Clarabel,
tight tolerances, data rescaled to O(1)) gives a first point; exact linear
algebra polishes it (the unconstrained least-squares solution when it lies
in Z; otherwise, on the active ball, the Lawson-Hanson active set for l1 or
the secular equation for l2); every candidate is certified by
:func:`~benchmark_utils.references.certificate.least_squares_bracket`.

``g_star`` is g at a point of Z (an achievable value) and
``g_star_accuracy`` bounds ``g_star - g*``: the dual lower bound LB <= g*
gives ``g* in [LB, g_star]``, widened by the floating-point error of
evaluating g and LB (Higham's gamma_k) and by the first-order effect of a
point that a projection left just outside the ball, and never below the
relative floor ``1e-14 * max(1, |g_star|)``.
"""
import functools

import numpy as np

from benchmark_utils.references.certificate import (
    at_floor,
    best_of_brackets,
    least_squares_bracket,
)
from benchmark_utils.references.linear_algebra import (
    active_set_lstsq,
    ball_constrained_lstsq,
    call_on_numpy,
    row_space,
    to_numpy,
)
from benchmark_utils.references.precision import (
    TINY,
    relative_floor,
    solve_clarabel,
)


class LeastSquaresData:
    """NumPy copy of a LeastSquaresBilevel problem, with its derived data.

    ``kind`` ("l1" or "l2") and ``radius`` describe the ball Z; ``A, b, w``
    the lower level (g = w ||A z - b||^2), ``A_f, b_f, w_f`` the upper one;
    ``U, s, Q, N`` the numerical-rank SVD of A (Q spans its row space, N its
    null space), computed on first use: re-checking a cached reference
    needs no SVD.
    """

    def __init__(self, problem):
        ball = problem.Z.norm_ball
        if ball is None:
            raise ValueError("least_squares_references supports Z = L1Ball "
                             f"or L2Ball, got {problem.Z!r}")
        self.kind, self.radius = ball[0], float(ball[1])
        self.Z = problem.Z
        self.A = to_numpy(problem.A_lower)
        self.b = to_numpy(problem.b_lower)
        self.A_f = to_numpy(problem.A_upper)
        self.b_f = to_numpy(problem.b_upper)
        self.n, self.dim = self.A.shape
        self.w = problem.c_lower / self.n
        self.w_f = problem.c_upper / self.A_f.shape[0]

    @functools.cached_property
    def _svd(self):
        return row_space(self.A)

    U = property(lambda self: self._svd[0])
    s = property(lambda self: self._svd[1])
    Q = property(lambda self: self._svd[2])
    N = property(lambda self: self._svd[3])
    rank = property(lambda self: self._svd[1].size)

    def norm(self, x):
        """The norm of the ball Z."""
        if self.kind == "l1":
            return float(np.abs(x).sum())
        return float(np.linalg.norm(x))

    def project(self, z):
        return call_on_numpy(self.Z.project, z)

    def support_min(self, c):
        """min_{s in Z} <c, s> by the set's LMO."""
        return float(c @ call_on_numpy(self.Z.lmo, c))

    def ball_support(self, v):
        """max_{s in Z} <v, s> (Z is a symmetric ball)."""
        return -self.support_min(v)

    def certify_lower(self, z):
        """Bracket of g* from z in Z (see :func:`least_squares_bracket`)."""
        result = least_squares_bracket(self.A, self.b, self.w, z,
                                       lambda c: (self.support_min(c), 0.0),
                                       self.ball_support)
        # z may exceed the ball by rounding after a projection
        excess = max(0.0, self.norm(z) - self.radius)
        result["rounding"] += self.ball_support(np.abs(result["grad"])) * (
            excess / self.radius)
        return result

    def pinv(self, y):
        """A^+ y through the numerical-rank SVD."""
        return self.Q @ ((self.U.T @ y) / self.s)


def _lower_candidates(data, z_cvx):
    """Polished lower-level points in Z (name -> point)."""
    A, b, r, d = data.A, data.b, data.radius, data.dim
    candidates = {"cvxpy": data.project(z_cvx)}
    # (i) unconstrained least squares: project onto {A z = P_A b}, refined
    z = z_cvx.copy()
    for _ in range(3):
        z = z - data.pinv(A @ z - b)
    if data.norm(z) <= r:
        candidates["least_squares"] = z
    if any(at_floor(data.certify_lower(z)) for z in candidates.values()):
        return candidates           # certified to the floor: nothing to polish
    if data.kind == "l1":
        # (ii) ball constraint active: z = v+ - v-, v >= 0, sum(v) = r, by
        # the active-set method from the CVXPY point's support
        M = np.hstack([A, -A])
        v_cvx = np.concatenate([np.maximum(z_cvx, 0), np.maximum(-z_cvx, 0)])
        for tau in (1e-6, 1e-9):
            v0 = np.where(v_cvx > tau * max(v_cvx.max(), TINY), v_cvx, 0.0)
            if not v0.any():
                continue
            v0 *= r / v0.sum()
            v, converged = active_set_lstsq(M, b, np.ones((1, 2 * d)),
                                            np.array([r]), v0)
            candidates[f"active_set_{tau:g}"] = data.project(v[:d] - v[d:])
            if converged:
                break
    else:
        # (ii) the ball-constrained least squares by its secular equation
        try:
            candidates["secular"] = data.project(
                ball_constrained_lstsq(A, b, r))
        except ValueError:
            pass
    return candidates


def solve_lower_level(data):
    """CVXPY solve of min_{z in Z} g, polished and certified.

    Returns dict(status, candidates, best, dual, g_star, raw_accuracy,
    accuracy): ``best`` names the candidate of value ``g_star``, ``dual``
    the one whose dual bound is the best, ``raw_accuracy`` is before the
    relative floor (the solution-set bounds use it), ``accuracy`` the
    reported one.
    """
    import cvxpy as cp
    A, b, r, d = data.A, data.b, data.radius, data.dim
    # z = r u with u in the unit ball; A, b divided by a common scale
    scale = max(np.abs(b).max(), r * np.abs(A).max(), TINY)
    A_s, b_s = (r / scale) * A, b / scale
    if data.kind == "l1":
        v = cp.Variable(2 * d, nonneg=True)
        u = v[:d] - v[d:]
        constraints = [cp.sum(v) <= 1.0]
    else:
        u = v = cp.Variable(d)
        constraints = [cp.norm(v, 2) <= 1.0]
    problem = cp.Problem(
        cp.Minimize(cp.sum_squares(A_s @ u - b_s) / A.shape[0]), constraints)
    status = solve_clarabel(problem)
    z_cvx = np.zeros(d) if v.value is None else r * np.asarray(u.value)
    candidates = _lower_candidates(data, z_cvx)
    certified = {name: data.certify_lower(z)
                 for name, z in candidates.items()}
    best, dual, g_star, raw = best_of_brackets(certified)
    return dict(status=status, candidates=candidates, best=best, dual=dual,
                g_star=g_star, raw_accuracy=raw,
                accuracy=max(raw, relative_floor(g_star)))
