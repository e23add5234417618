"""Certified references against an independent re-solve.

The benchmark's g* and f* come from CVXPY polished and certified in
``benchmark_utils/references.py``. Here they are recomputed another way:
g* by accelerated projected gradient (FISTA) with the set's own projection,
f* from the exact description of the lower-level solution set
{z in Z : A z = A z_g} around that independent z_g, solved by CVXPY's
Clarabel on the plain (unscaled, un-reduced) formulation. The two must agree
to 1e-7 relative (absolute below 1).
"""
import cvxpy as cp
import numpy as np
import pytest
import torch

from conftest import QUICK_DICTIONARY, QUICK_REGRESSION, make_problem


def fista(grad, project, x0, lipschitz, n_iter):
    x, y, t = x0, x0, 1.0
    for _ in range(n_iter):
        x_next = project(y - grad(y) / lipschitz)
        t_next = 0.5 * (1 + np.sqrt(1 + 4 * t * t))
        y = x_next + (t - 1) / t_next * (x_next - x)
        x, t = x_next, t_next
    return x


def close(a, b, rtol=1e-7):
    return abs(a - b) <= rtol * max(1.0, abs(b))


@pytest.mark.parametrize("params", [QUICK_REGRESSION,
                                    dict(n_samples=120, n_features=70,
                                         random_state=3)])
def test_regression_references_match_an_independent_solve(params):
    P = make_problem("regression", **params)
    A, b = P.A_lower.numpy(), P.b_lower.numpy()
    c = P.c_lower / A.shape[0]
    lipschitz = 2 * c * np.linalg.norm(A, 2) ** 2

    def grad(z):
        return 2 * c * A.T @ (A @ z - b)

    def project(z):
        return P.Z.project(torch.as_tensor(z)).numpy()

    z_g = fista(grad, project, np.zeros(P.dim), lipschitz, 20000)
    g_star = float(P.g(torch.as_tensor(z_g)))
    assert close(g_star, P.g_star), (g_star, P.g_star)

    A_f, b_f = P.A_upper.numpy(), P.b_upper.numpy()
    z = cp.Variable(P.dim)
    problem = cp.Problem(
        cp.Minimize(P.c_upper / A_f.shape[0] * cp.sum_squares(A_f @ z - b_f)),
        [cp.norm1(z) <= P.Z.radius, A @ z == A @ z_g])
    problem.solve(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12,
                  tol_feas=1e-12)
    assert close(problem.value, P.f_star), (problem.value, P.f_star)


def test_dictionary_lower_reference_matches_an_independent_solve():
    P = make_problem("dictionary_learning", **QUICK_DICTIONARY)
    A = P.A_old.numpy()                     # (n, m)
    C = P.codes_old.numpy()                 # (n, q)
    n, m = A.shape
    q = C.shape[1]
    balls = P.Z.sets[0]

    def grad(d):
        D = d.reshape(m, q)
        return (-((A - C @ D.T).T @ C) / n).reshape(-1)

    def project(d):
        return balls.project(torch.as_tensor(d)).numpy()

    lipschitz = np.linalg.norm(C, 2) ** 2 / n
    d = fista(grad, project, np.zeros(m * q), lipschitz, 20000)
    D = d.reshape(m, q)
    g_star = 0.5 * np.sum((A - C @ D.T) ** 2) / n
    assert close(g_star, P.g_star), (g_star, P.g_star)
