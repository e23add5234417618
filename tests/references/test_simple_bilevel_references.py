"""Certified references of the simple-bilevel datasets against an
independent re-solve.

The benchmark's g* and f* come from CVXPY polished and certified in
``benchmark_utils/references/`` (``least_squares.py``, ``dictionary.py``).
Here they are recomputed another way:
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

from benchmark_utils.problems.least_squares import LeastSquaresBilevel
from benchmark_utils.references.least_squares import least_squares_references
from benchmark_utils.sets import Box, L2Ball

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


@pytest.mark.parametrize("radius", [0.5, 50.0])
def test_l2_ball_references_match_an_independent_solve(radius):
    # the regression datasets use an l1 ball; an l2 ball takes the secular
    # equation (active ball, unique solution) or the closed-form linear
    # minimum over a ball-shaped solution set (inactive ball)
    rng = np.random.default_rng(5)
    A, b = rng.standard_normal((30, 40)), rng.standard_normal(30)
    A_f, b_f = rng.standard_normal((30, 40)), rng.standard_normal(30)
    P = LeastSquaresBilevel(A_f, b_f, A, b, L2Ball(40, radius))
    references = least_squares_references(P)
    c = P.c_lower / A.shape[0]

    def grad(z):
        return 2 * c * A.T @ (A @ z - b)

    def project(z):
        return P.Z.project(torch.as_tensor(z)).numpy()

    z_g = fista(grad, project, np.zeros(40), 2 * c * np.linalg.norm(A, 2) ** 2,
                3000)
    assert close(float(P.g(torch.as_tensor(z_g))), references["g_star"])
    if radius < 1:
        # the ball is active and g strictly convex on it: z_g is the unique
        # lower-level solution, and f* = f(z_g)
        assert references["lower_level"] == "face"
        f_star = float(P.f(torch.as_tensor(z_g)))
    else:
        assert references["lower_level"] == "interior"
        z = cp.Variable(40)
        problem = cp.Problem(
            cp.Minimize(P.c_upper / 30 * cp.sum_squares(A_f @ z - b_f)),
            [cp.norm(z, 2) <= radius, A @ z == A @ z_g])
        problem.solve(solver=cp.CLARABEL, tol_gap_abs=1e-12,
                      tol_gap_rel=1e-12, tol_feas=1e-12)
        f_star = problem.value
    assert close(f_star, references["f_star"]), (f_star,
                                                 references["f_star"])


def test_least_squares_references_reject_other_sets():
    rng = np.random.default_rng(0)
    A, b = rng.standard_normal((5, 3)), rng.standard_normal(5)
    P = LeastSquaresBilevel(A, b, A, b, Box(-1.0, 1.0, dim=3))
    with pytest.raises(ValueError, match="supports Z = L1Ball or L2Ball"):
        least_squares_references(P)
