"""The exact lower-level solution set of a least-squares bilevel problem.

For a least-squares lower level the predictions ``y = A z`` of all
lower-level solutions coincide (the loss is strictly convex in ``A z``), so
the solution set is ``P = {z in Z : A z = A z_g}`` with ``z_g`` the certified
lower-level point, written ``Q^T z = Q^T z_g = h`` with Q an orthonormal
basis of the row space of A (numerical rank: numpy's default tolerance).
When the lower-level ball constraint is active, P lies in one face of Z and
is written on that face (signs and support fixed), which keeps it well
posed. This module builds P for an l1 or l2 ball and minimizes linear
functions over it; :mod:`benchmark_utils.references.least_squares` minimizes
the upper level over it.

``h`` is known only approximately (``z_g`` is not exactly optimal), so
:func:`lower_level_solution_set` also returns a bound on ``||h - h*||``:
exact up to rounding when the unconstrained least-squares minimum lies in Z
(then ``A z* = P_A b``), otherwise from the strong convexity of g in
``A z``: ``c/n ||A z_g - A z*||^2 <= g(z_g) - g*``.
"""
import math

import numpy as np

from benchmark_utils.references.linear_algebra import (
    active_set_lstsq,
    ball_constrained_lstsq,
    lstsq,
    row_space,
)
from benchmark_utils.references.precision import TINY, higham_gamma


class L1SolutionSet:
    """The lower-level solution set for an l1 ball, as {v >= 0 : G v = h,
    1^T v = r} with x = B v.

    ``"interior"``: the unconstrained least-squares minimum is attained in Z,
    P = {x : ||x||_1 <= r, Q^T x = h}; v = (x+, x-, slack), B = [I, -I, 0],
    G = [Q^T, -Q^T, 0].

    ``"face"``: the ball constraint is active (multiplier > 0), every
    solution has its support in the equicorrelation set E with signs sigma:
    P = {x : x_E = sigma * v, v >= 0, sum(v) = r, G v = h, x = 0 off E},
    G = Q_E^T with Q_E an orthonormal basis of the row space of
    A_E diag(sigma).
    """

    def __init__(self, data, z_g, mode, support=None, signs=None):
        self.data, self.mode, self.radius = data, mode, data.radius
        d = data.dim
        if mode == "interior":
            self.B = np.hstack([np.eye(d), -np.eye(d), np.zeros((d, 1))])
            self.G = self.data.Q.T @ self.B
        else:
            self.support, self.signs = support, signs
            self.B = np.zeros((d, support.size))
            self.B[support, np.arange(support.size)] = signs
            _, s_E, Q_E, _ = row_space(data.A @ self.B)
            self.G, self.s_min = Q_E.T, s_E.min()
        self.h = self.G @ self.to_v(z_g)
        self.E = np.vstack([self.G, np.ones((1, self.G.shape[1]))])
        self.e = np.append(self.h, self.radius)
        self.dimension = self.G.shape[1] - row_space(self.E)[1].size

    # x <-> v
    def to_x(self, v):
        return self.B @ v

    def to_v(self, x):
        if self.mode == "interior":
            slack = max(self.radius - np.abs(x).sum(), 0.0)
            return np.concatenate([np.maximum(x, 0), np.maximum(-x, 0),
                                   [slack]])
        return self.signs * x[self.support]

    def repair(self, x, z_g):
        """A point of P up to rounding (affine projection, then a shrink)."""
        if self.mode == "interior":
            Q = self.data.Q
            x = x - Q @ (Q.T @ x - self.h)
            norm_x, norm_g = np.abs(x).sum(), np.abs(z_g).sum()
            if norm_x > self.radius and norm_g < self.radius:
                t = (self.radius - norm_g) / (norm_x - norm_g)
                x = z_g + t * (x - z_g)
            return x
        v = np.maximum(self.to_v(x), 0.0)
        v = v - lstsq(self.E, self.E @ v - self.e)
        return self.to_x(v)

    def infeasibility(self, x, grad):
        """First-order bound on f(proj_P x) - f(x)."""
        if self.mode == "interior":
            affine = np.linalg.norm(self.data.Q.T @ x - self.h)
            excess = max(0.0, np.abs(x).sum() - self.radius)
        else:
            v = self.signs * x[self.support]
            affine = np.linalg.norm(self.G @ v - self.h)
            outside = np.abs(x).sum() - np.abs(x[self.support]).sum()
            excess = (outside + np.abs(np.minimum(v, 0)).sum()
                      + abs(v.sum() - self.radius))
        return np.linalg.norm(grad) * affine + np.abs(grad).max() * excess

    def cvxpy_parts(self):
        """(variable, x_hat expression, constraints) in units of r."""
        import cvxpy as cp
        if self.mode == "interior":
            # x form: fewer variables than the split, faster in Clarabel
            x = cp.Variable(self.data.dim)
            return x, x, [cp.norm1(x) <= 1.0,
                          self.data.Q.T @ x == self.h / self.radius]
        v = cp.Variable(self.G.shape[1], nonneg=True)
        return v, self.B @ v, [cp.sum(v) == 1.0,
                               self.G @ v == self.h / self.radius]

    def active_set(self, A_f, b_f, x):
        """Exact minimizer of f over P from the support of x (active set)."""
        v0 = self.to_v(x)
        v0 = np.where(v0 > 1e-6 * max(v0.max(), TINY), v0, 0.0)
        v, _ = active_set_lstsq(A_f @ self.B, b_f, self.E, self.e, v0)
        return self.to_x(v)

    def dual_bound(self, c, v_support):
        """Lower bound on min_{x in P} <c, x> by weak duality.

        For any mu: min_P <c, x> >= mu^T h + r min_j (B^T c - G^T mu)_j.
        mu solves the reduced-cost equations on ``v_support`` (the support
        of a minimizer, where the reduced costs are equal), so the bound is
        tight when the support is right. Returns (bound, mu, rounding).
        """
        c_v = self.B.T @ c
        S = np.flatnonzero(v_support)
        if S.size == 0:
            mu = np.zeros(self.G.shape[0])
        else:
            rows = np.hstack([self.G[:, S].T, np.ones((S.size, 1))])
            mu = lstsq(rows, c_v[S])[:-1]
        bound, rounding = self.bound_at(c, mu)
        return bound, mu, rounding

    def bound_at(self, c, mu):
        """(bound, rounding): the weak-duality bound of :meth:`dual_bound`
        at a given multiplier ``mu`` (closed form; a stored certificate)."""
        c_v = self.B.T @ c
        reduced = c_v - self.G.T @ mu
        bound = float(mu @ self.h) + self.radius * reduced.min()
        rounding = higham_gamma(self.G.shape[0] + 2) * (
            float(np.abs(mu) @ np.abs(self.h)) + self.radius * float(
                (np.abs(c_v) + np.abs(self.G).T @ np.abs(mu)).max()))
        return bound, rounding

    def linear_min(self, c):
        """(lower bound on min_{x in P} <c, x>, multiplier, x_min, rounding).

        An exact LP solve by the HiGHS dual simplex (scipy), in units of r
        and ||c||_inf; the bound is the weak-duality bound of
        :meth:`dual_bound` at multipliers refined on the LP's optimal
        support, or at HiGHS's own multipliers if better.
        """
        from scipy.optimize import linprog
        c_scale = max(np.abs(c).max(), TINY)
        c_v = (self.B.T @ c) / c_scale
        result = linprog(c_v, A_eq=self.E, b_eq=self.e / self.radius,
                         bounds=(0, None), method="highs-ds",
                         options=dict(primal_feasibility_tolerance=1e-10,
                                      dual_feasibility_tolerance=1e-10))
        if result.x is None:
            return -math.inf, np.zeros(self.G.shape[0]), None, 0.0
        v_min = self.radius * result.x
        refined = self.dual_bound(c, v_min > 1e-9 * self.radius)
        mu = np.asarray(result.eqlin.marginals[:self.G.shape[0]]) * c_scale
        highs = (*self.bound_at(c, mu), mu)
        refined = (refined[0], refined[2], refined[1])
        bound, rounding, mu = max(refined, highs, key=lambda b: b[0] - b[1])
        return bound, mu, self.to_x(v_min), rounding


class L2SolutionSet:
    """P = {x : ||x||_2 <= r, Q^T x = h}, the solution set of an l2 ball whose
    constraint is inactive: a ball of radius sqrt(r^2 - ||h||^2) centred at
    Q h in the null space of A (closed-form linear minimization)."""

    mode = "interior"

    def __init__(self, data, z_g):
        self.data, self.radius = data, data.radius
        self.Q, self.N = data.Q, data.N
        self.h = self.Q.T @ z_g
        self.inner = math.sqrt(max(self.radius ** 2 - self.h @ self.h, 0.0))
        self.dimension = self.N.shape[1]

    def to_v(self, x):
        return x

    def dual_bound(self, c, v_support=None):
        bound, mu, _, rounding = self.linear_min(c)
        return bound, mu, rounding

    def bound_at(self, c, mu):
        """(bound, rounding) of the closed-form minimum (exact whatever
        ``mu``, which is kept for the interface of the l1 set)."""
        bound, _, _, rounding = self.linear_min(c)
        return bound, rounding

    def active_set(self, A_f, b_f, x):
        """The exact minimizer: a ball-constrained least squares in the
        null space of A (secular equation)."""
        x0 = self.Q @ self.h
        t = ball_constrained_lstsq(A_f @ self.N, b_f - A_f @ x0, self.inner)
        return x0 + self.N @ t

    def repair(self, x, z_g):
        x = x - self.Q @ (self.Q.T @ x - self.h)
        norm_x, norm_g = np.linalg.norm(x), np.linalg.norm(z_g)
        if norm_x > self.radius and norm_g < self.radius:
            # largest t with ||z_g + t (x - z_g)|| <= r
            e = x - z_g
            a, bq, cq = e @ e, 2 * (z_g @ e), norm_g ** 2 - self.radius ** 2
            t = (-bq + math.sqrt(bq * bq - 4 * a * cq)) / (2 * a)
            x = z_g + min(t, 1.0) * e
        return x

    def infeasibility(self, x, grad):
        affine = np.linalg.norm(self.Q.T @ x - self.h)
        excess = max(0.0, np.linalg.norm(x) - self.radius)
        return np.linalg.norm(grad) * (affine + excess)

    def cvxpy_parts(self):
        import cvxpy as cp
        x = cp.Variable(self.Q.shape[0])
        return x, x, [cp.norm(x, 2) <= 1.0,
                      self.Q.T @ x == self.h / self.radius]

    def linear_min(self, c):
        c_null = self.N @ (self.N.T @ c)
        norm_null = np.linalg.norm(c_null)
        value = float(c @ (self.Q @ self.h)) - self.inner * norm_null
        x_min = self.Q @ self.h - self.inner * c_null / max(norm_null, TINY)
        # d value / d h, the multiplier of Q^T x = h
        mu = self.Q.T @ c + self.h * norm_null / max(self.inner, TINY)
        rounding = higham_gamma(2 * c.size) * self.radius * np.linalg.norm(
            c) * 4
        return value, mu, x_min, rounding



def lower_level_solution_set(data, lower):
    """The lower-level solution set.

    Returns (P, z_g, bound, mode): P None for a single point z* (then
    ``bound`` >= ||z_g - z*||), else ``bound`` >= ||h - h*|| with h* the
    exact right-hand side of P's equations.
    """
    A, b, r = data.A, data.b, data.radius
    candidates = lower["candidates"]
    if "least_squares" in candidates:
        # the unconstrained minimum is attained in Z: A z* = P_A b exactly
        z_g = candidates["least_squares"]
        residual = A @ z_g - b
        err = np.linalg.norm(higham_gamma(data.dim + 1) * (
            np.abs(A) @ np.abs(z_g) + np.abs(b))) / data.s.min()
        if data.rank == data.dim:
            return None, z_g, np.linalg.norm(data.pinv(residual)) + err, \
                "interior"
        dh = np.linalg.norm((data.U.T @ residual) / data.s) + err
        if data.kind == "l1":
            return L1SolutionSet(data, z_g, "interior"), z_g, dh, "interior"
        return L2SolutionSet(data, z_g), z_g, dh, "interior"
    # the ball constraint is active; strong convexity of g in A z:
    # c/n ||A (z_g - z*)||^2 <= g(z_g) - g*
    z_g = candidates[lower["best"]]
    prediction_gap = math.sqrt(lower["raw_accuracy"] / data.w)
    grad = 2.0 * data.w * (A.T @ (A @ z_g - b))
    if data.kind == "l2":
        # grad g(z*) = -lam z*, and g(z) - g* >= lam/2 ||z - z*||^2 in Z
        lam = np.linalg.norm(grad) / r
        return None, z_g, math.sqrt(2 * lower["raw_accuracy"] / lam), "face"
    lam = np.abs(grad).max()
    support = np.flatnonzero(np.abs(grad) >= lam * (1 - 1e-8))
    signs = -np.sign(grad[support])
    P = L1SolutionSet(data, z_g, "face", support, signs)
    outside = np.abs(z_g).sum() - np.abs(z_g[support]).sum()
    gap = prediction_gap + np.linalg.norm(A, 2) * outside
    if P.dimension == 0:
        return None, z_g, gap / P.s_min + outside, "face"
    return P, z_g, gap / P.s_min, "face"
