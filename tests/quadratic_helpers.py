"""The small quadratic instances of the quadratic tests, and an independent
NumPy model of them (per-sample matrices averaged explicitly) that the
problem tests (tests/problems) and the F* tests (tests/references) check
the library against."""
import numpy as np
import torch

from benchmark_utils.problems.quadratic import make_quadratic_bilevel

SMALL = dict(dim_x=5, dim_y=4, n_samples=30, mu=0.3, L=4.0, cross_norm=1.5,
             noise=0.6, upper_reg=0.2)


def small(constraint="none", seed=0, **params):
    return make_quadratic_bilevel(**dict(SMALL, **params),
                                  constraint=constraint, radius=0.8,
                                  random_state=seed)


def point(problem, seed):
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(problem.dim_x, generator=gen, dtype=torch.float64)
    y = torch.randn(problem.dim_y, generator=gen, dtype=torch.float64)
    return x, y


def independent(problem):
    """Explicit per-sample matrices averaged in NumPy."""
    n = problem.n_lower
    P = {k: getattr(problem, k).numpy() for k in (
        "H", "hess_diag", "C", "cross_left", "cross_right", "d", "b", "a")}
    H = np.mean([P["H"] + np.diag(P["hess_diag"][j]) for j in range(n)], 0)
    C = np.mean([P["C"] + np.outer(P["cross_left"][j], P["cross_right"][j])
                 for j in range(n)], 0)
    d = P["d"].mean(0)
    rho = problem.upper_reg

    def y_star(x):
        return np.linalg.solve(H, -(C @ x + d))

    def F(x):
        y = y_star(x)
        return np.mean([0.5 * np.sum((y - P["b"][i]) ** 2)
                        + 0.5 * rho * np.sum((x - P["a"][i]) ** 2)
                        for i in range(n)])

    J = -np.linalg.solve(H, C)

    def grad_F(x):      # chain rule: dF/dx = d_x f + J^T d_y f at y*(x)
        return rho * (x - P["a"].mean(0)) + J.T @ (y_star(x) - P["b"].mean(0))

    def grad_y_g(x, y):
        return H @ y + C @ x + d

    return dict(y_star=y_star, F=F, grad_F=grad_F, grad_y_g=grad_y_g,
                hessian_F=J.T @ J + rho * np.eye(len(P["a"][0])))
