"""Warm starts of the exact hyper-cleaning metrics (CG path): a warm
evaluation after a small move of x gives the cold evaluation's y*(x) and
hypergradient with fewer Hessian-vector products, the Kronecker data factor
is rebuilt exactly when x leaves PRECONDITIONER_REUSE of where it was
built, the certificate holds on every evaluation, Newton stops at a known
rounding floor without the stall rule's extra step, and the torch array
path (other devices) agrees with the NumPy one (CPU).
"""
import numpy as np
import pytest
import torch
from sklearn.datasets import load_digits

import benchmark_utils.numerics.kronecker_preconditioner as kronecker
import benchmark_utils.numerics.softmax_sum as softmax_sum
from benchmark_utils.numerics.newton_inner_solver import (
    GRAD_TOL,
    newton_minimize,
)
from benchmark_utils.numerics.softmax_sum import SoftmaxSum
from benchmark_utils.problems.hyper_cleaning import make_hyper_cleaning
from benchmark_utils.problems.hyper_cleaning_exact import PRECONDITIONER_REUSE

DIGITS = load_digits()
# Kwon et al. 2023's form (sums, c = 0.01) and Huang et al. 2021's (means)
FORMS = {"sum": 0.01, "mean": 0.001}


def _instance(reduction="sum", n_train=200):
    return make_hyper_cleaning(
        DIGITS.data / 16.0, DIGITS.target, n_train=n_train, n_val=100,
        n_test=100, corruption=0.3, c=FORMS[reduction], reduction=reduction,
        seed=0, hessian_solver="cg")


def _moves(problem, n, seed=0, step=0.05):
    """x0, then n nearby points x_{t+1} = x_t + step N(0, I)."""
    rng = np.random.default_rng(seed)
    x = problem.x0.clone()
    points = [x]
    for _ in range(n):
        x = x + step * torch.as_tensor(rng.standard_normal(problem.dim_x))
        points.append(x)
    return points


def _evaluate(problem, x):
    """(y*(x), its certified bound, hypergradient, HVPs spent)."""
    before = problem.hvp_count
    y = problem.inner_solution(x)
    bound = problem.inner_accuracy
    return y, bound, problem.hypergradient(x, y), problem.hvp_count - before


def _assert_certified(problem, x, y, bound):
    """The recorded bound is ||grad_y g|| / mu_g at y (up to rounding of
    the gradient, recomputed by the solvers' oracle) and within 10x of the
    1e-10 target (the rounding floor, see newton_inner_solver)."""
    grad_norm = float(torch.linalg.vector_norm(problem.grad_g_y(x, y)))
    assert bound <= 10 * GRAD_TOL
    assert grad_norm / problem.mu_g <= 10 * GRAD_TOL
    assert abs(grad_norm / problem.mu_g - bound) <= GRAD_TOL


@pytest.mark.parametrize("reduction", sorted(FORMS))
def test_warm_evaluation_matches_cold_with_fewer_products(reduction):
    warm = _instance(reduction)
    x_first, x = _moves(warm, 1)
    _evaluate(warm, x_first)
    y_warm, bound_warm, h_warm, work_warm = _evaluate(warm, x)
    cold = _instance(reduction)
    y_cold, bound_cold, h_cold, work_cold = _evaluate(cold, x)
    # both within their certified bound of y*(x)
    gap = float(torch.linalg.vector_norm(y_warm - y_cold))
    assert gap <= bound_warm + bound_cold + 1e-12
    scale = max(1.0, float(torch.linalg.vector_norm(h_cold)))
    assert float(torch.linalg.vector_norm(h_warm - h_cold)) <= 1e-8 * scale
    assert work_warm < work_cold


@pytest.mark.parametrize("reduction", sorted(FORMS))
def test_certificate_holds_on_every_evaluation(reduction):
    problem = _instance(reduction)
    for x in _moves(problem, 3, seed=1):
        y, bound, _, _ = _evaluate(problem, x)
        _assert_certified(problem, x, y, bound)


def test_data_factor_rebuilt_only_beyond_the_reuse_threshold(monkeypatch):
    builds = []
    original = SoftmaxSum.data_factor

    def counting(self, weights):
        builds.append(1)
        return original(self, weights)
    monkeypatch.setattr(SoftmaxSum, "data_factor", counting)
    problem = _instance()
    x = problem.x0.clone()
    problem.inner_solution(x)
    assert len(builds) == 1
    shift = torch.zeros_like(x)
    shift[0] = 0.6 * PRECONDITIONER_REUSE
    # within the threshold of the x the factor was built at: kept
    x = x + shift
    problem.hypergradient(x)
    assert len(builds) == 1
    # a second move of the same size is measured from the build point,
    # not from the last x: 1.2 * threshold away, rebuilt there
    x = x + shift
    problem.hypergradient(x)
    assert len(builds) == 2
    assert torch.equal(problem._data_eig[0], x)
    # a large jump rebuilds at once, and the solution is still certified
    x = x + 2 * PRECONDITIONER_REUSE
    y = problem.inner_solution(x)
    assert len(builds) == 3
    _assert_certified(problem, x, y, problem.inner_accuracy)


def _noisy_quadratic(noise, seed=0, dim=20):
    """A quadratic whose computed gradient carries rounding-like noise of
    norm ``noise`` (a fresh direction each call) and an inexact solver
    whose residual is exactly the requested rtol (a CG step's worst
    case)."""
    generator = torch.Generator().manual_seed(seed)
    Q = torch.linalg.qr(torch.randn(dim, dim, generator=generator,
                                    dtype=torch.float64))[0]
    H = Q @ torch.diag(torch.linspace(1.0, 10.0, dim,
                                      dtype=torch.float64)) @ Q.T
    center = torch.randn(dim, generator=generator, dtype=torch.float64)
    solves = []

    def value(x, y):
        return 0.5 * float((y - center) @ H @ (y - center))

    def grad(x, y):
        direction = torch.randn(dim, generator=generator,
                                dtype=torch.float64)
        return H @ (y - center) + noise * direction / direction.norm()

    def hessian_solver(x, y):
        solves.append(1)
        return lambda r, rtol: (1 - rtol) * torch.linalg.solve(H, r)
    y0 = torch.zeros(dim, dtype=torch.float64)
    return value, grad, hessian_solver, solves, y0


def test_newton_stops_at_a_known_rounding_floor_without_an_extra_step():
    # mu = 1: the target 1e-12 lies below the noise 5e-10 of the gradient
    noise, estimate = 5e-10, 1e-9
    value, grad, solver, stall_solves, y0 = _noisy_quadratic(noise)
    _, stall_bound = newton_minimize(value, grad, solver, None, y0, 1.0,
                                     exact=False)
    value, grad, solver, floor_solves, y0 = _noisy_quadratic(noise)
    y, floor_bound = newton_minimize(
        value, grad, solver, None, y0, 1.0, exact=False,
        grad_noise=lambda x, y: estimate)
    assert len(floor_solves) < len(stall_solves)
    # stopped at the floor: the computed gradient within the estimate
    assert floor_bound <= estimate
    assert stall_bound <= estimate


def _torch_arrays(device):
    return torch, (lambda t: t), (lambda t: t)


def test_torch_array_path_agrees_with_numpy_path(monkeypatch):
    x = _moves(_instance("mean"), 1, seed=2)[1]
    y_np, bound_np, h_np, _ = _evaluate(_instance("mean"), x)
    monkeypatch.setattr(softmax_sum, "array_library", _torch_arrays)
    monkeypatch.setattr(kronecker, "array_library", _torch_arrays)
    problem = _instance("mean")
    y_t, bound_t, h_t, _ = _evaluate(problem, x)
    assert isinstance(problem._softmax_sum().A_T[0], torch.Tensor)
    _assert_certified(problem, x, y_t, bound_t)
    assert float(torch.linalg.vector_norm(y_t - y_np)) <= (
        bound_np + bound_t + 1e-12)
    scale = max(1.0, float(torch.linalg.vector_norm(h_np)))
    assert float(torch.linalg.vector_norm(h_t - h_np)) <= 1e-8 * scale
