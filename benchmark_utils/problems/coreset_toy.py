"""The 2-D coreset toy problem of Abolfazli et al. 2023 (IBCG, eq. (13),
Sec. 5.1, App. G.2).

Find the point theta closest to a target t whose image under a linear map A
lies in the convex hull of points x_1..x_4::

    min_{lam in Delta_4} f(lam, theta*(lam)) = 1/2 ||theta*(lam) - t||^2
    theta*(lam) = argmin_theta g(lam, theta) = 1/2 ||A theta - X lam||^2

with X = [x_1, .., x_4] in R^{2 x 4} and Delta_4 the probability simplex
(the feasible set ``X`` here is :class:`~benchmark_utils.sets.Simplex`;
the point matrix is ``points``). The paper gives t = (2, 2), the starts
theta_0 = (0, 0) and lam_0 = 1/4, and mu_g in {1 (Fig. 1), 0.1 (Figs.
3-4)}, not A or the points. Ours: ``A = diag(sqrt(L_g), sqrt(mu_g))
R(pi/6)^T``, so ``A^T A`` has eigenvalues exactly mu_g and L_g (default 2)
and a non-diagonal Hessian, and ``x_i = A b_i`` for four fixed b_i, so
theta*(lam) = B lam and F do not depend on mu_g: only the lower level's
conditioning changes. Deterministic (one sample per level); F* = 9/4,
computed exactly as 1/2 dist(t, conv(b_i))^2. Task metric:
``theta_error`` = ||theta - theta_opt|| of the lower iterate (the paper
plots the trajectories of theta_k). Details: docs/problems.md.
"""
import itertools
import math

import numpy as np
import torch

from benchmark_utils.checks.parameters import check_positive
from benchmark_utils.problems.general import GeneralBilevelProblem
from benchmark_utils.sets import Simplex

HULL_POINTS = ((-1.0, -1.0), (2.0, -1.0), (-1.0, 2.0), (-1.5, 0.5))
TARGET = (2.0, 2.0)
ROTATION_ANGLE = math.pi / 6


def coreset_matrix(mu_g, L_g, angle=ROTATION_ANGLE):
    """A = diag(sqrt(L_g), sqrt(mu_g)) R(angle)^T, so eig(A^T A) =
    {L_g, mu_g}."""
    cos, sin = math.cos(angle), math.sin(angle)
    rotation = np.array([[cos, -sin], [sin, cos]])
    return np.diag([math.sqrt(L_g), math.sqrt(mu_g)]) @ rotation.T


def nearest_point_in_hull(points, target):
    """(nearest point of conv(points) to target, its distance), exactly,
    in 2-D."""
    points, target = np.asarray(points, float), np.asarray(target, float)
    for i, j, k in itertools.combinations(range(len(points)), 3):
        T = np.column_stack([points[j] - points[i], points[k] - points[i]])
        if abs(np.linalg.det(T)) < 1e-14:
            continue
        u, v = np.linalg.solve(T, target - points[i])
        if u >= 0 and v >= 0 and u + v <= 1:
            return target.copy(), 0.0
    best, best_dist = None, math.inf
    for i, j in itertools.combinations(range(len(points)), 2):
        a, b = points[i], points[j]
        edge = b - a
        s = np.clip((target - a) @ edge / (edge @ edge), 0.0, 1.0)
        candidate = a + s * edge
        dist = float(np.linalg.norm(target - candidate))
        if dist < best_dist:
            best, best_dist = candidate, dist
    return best, best_dist


# the smoothness of F on the default quadratic instance (1.98), on which
# the general solvers' outer steps are tuned
QUADRATIC_L_F = 2.0


class CoresetToyBilevel(GeneralBilevelProblem):
    """Eq. (13) of Abolfazli et al. 2023 with the choices of the module doc."""

    n_upper = n_lower = 1
    F_convex = True         # F(lam) = 1/2 ||B lam - t||^2, a convex quadratic

    def __init__(self, mu_g=1.0, L_g=2.0, points=HULL_POINTS, target=TARGET,
                 device="cpu"):
        check_positive("mu_g", mu_g)
        check_positive("L_g", L_g)
        if L_g < mu_g:
            raise ValueError(
                f"L_g must be >= mu_g (= {mu_g}), the largest eigenvalue of "
                f"A^T A, got {L_g!r}")
        self.device = torch.device(device)
        self.mu_g, self.L_g = float(mu_g), float(L_g)
        self.L_g_full = self.L_g        # one sample: the same bound
        A = coreset_matrix(mu_g, L_g)
        B = np.asarray(points, dtype=np.float64).T      # 2 x 4, columns b_i
        self.A, self.B = self.as_tensor(A), self.as_tensor(B)
        self.points = self.as_tensor(A @ B)                 # x_i = A b_i
        self.target = self.as_tensor(target)
        self.dim_x, self.dim_y = self.B.shape[1], 2
        self.X = Simplex(self.dim_x)
        self.x0 = torch.full((self.dim_x,), 1.0 / self.dim_x,
                             dtype=self.dtype, device=self.device)
        self.y0 = torch.zeros(self.dim_y, dtype=self.dtype, device=self.device)
        theta_opt, dist = nearest_point_in_hull(B.T, target)
        self.theta_opt = self.as_tensor(theta_opt)
        self.F_star = 0.5 * dist ** 2
        self.F_star_accuracy = 1e-14 * max(1.0, self.F_star)
        # F = 1/2 ||B lam - t||^2 is L_F-smooth with L_F = lambda_max(B^T B)
        # (11.1 for the default points) where the default quadratic, on
        # which the solvers' outer steps are tuned, has L_F ~ 2: the outer
        # steps scale by 2 / L_F (GeneralBilevelProblem.outer_step_scale)
        self.L_F = float(np.linalg.eigvalsh(B.T @ B)[-1])
        self.outer_step_scale = QUADRATIC_L_F / self.L_F

    # -- values (any batch: one deterministic sample) -------------------------
    def f(self, x, y, *, batch=None):
        r = y - self.target
        return 0.5 * (r @ r)

    def g(self, x, y, *, batch=None):
        r = self.A @ y - self.points @ x
        return 0.5 * (r @ r)

    # -- first order ----------------------------------------------------------
    def grad_f_x(self, x, y, *, batch=None):
        return torch.zeros_like(x)

    def grad_f_y(self, x, y, *, batch=None):
        return y - self.target

    def grad_f(self, x, y, *, batch=None):
        return torch.zeros_like(x), y - self.target

    def _residual(self, x, y):
        return self.A @ y - self.points @ x

    def grad_g_x(self, x, y, *, batch=None):
        return -self.points.T @ self._residual(x, y)

    def grad_g_y(self, x, y, *, batch=None):
        return self.A.T @ self._residual(x, y)

    def grad_g(self, x, y, *, batch=None):
        r = self._residual(x, y)
        return -self.points.T @ r, self.A.T @ r

    # -- second order: constant matrices --------------------------------------
    def hvp_yy_g(self, x, y, v, *, batch=None):
        return self.A.T @ (self.A @ v)

    def hvp_xy_g(self, x, y, v, *, batch=None):
        return -self.points.T @ (self.A @ v)

    # -- exact quantities -----------------------------------------------------
    def inner_solution(self, x):
        """theta*(lam) = A^{-1} X lam = B lam (exact: x_i = A b_i)."""
        return self.B @ x

    def hypergradient(self, x, y_star=None):
        """grad F(lam) = -grad^2_xy g [A^T A]^-1 grad_theta f
        = B^T (theta* - t)."""
        y = self.inner_solution(x) if y_star is None else y_star
        return self.B.T @ (y - self.target)

    def task_metrics(self, x, y):
        return {"theta_error": float(torch.linalg.vector_norm(
            y - self.theta_opt))}

    def __repr__(self):
        return f"CoresetToyBilevel(mu_g={self.mu_g}, L_g={self.L_g})"
