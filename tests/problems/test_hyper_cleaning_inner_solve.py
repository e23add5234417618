"""The iterative (CG) path of the hyper-cleaning metrics: Kronecker-factored
preconditioner, agreement with the dense Cholesky path, the certificate of
y*(x), and the iteration budget of an ill-conditioned sum-reduced instance.
"""
import numpy as np
import pytest
import torch
from sklearn.datasets import load_digits

from benchmark_utils.numerics.kronecker_preconditioner import (
    class_factor,
    gram_eigh,
    kronecker_inverse,
    symmetric_eigh,
    weighted_gram,
)
from benchmark_utils.numerics.newton_inner_solver import GRAD_TOL
from benchmark_utils.problems.hyper_cleaning import make_hyper_cleaning

DIGITS = load_digits()


def _instance(hessian_solver, n_train=200, c=0.001, reduction="mean",
              **kwargs):
    return make_hyper_cleaning(
        DIGITS.data / 16.0, DIGITS.target, n_train=n_train, n_val=100,
        n_test=100, corruption=0.3, c=c, reduction=reduction, seed=0,
        hessian_solver=hessian_solver, **kwargs)


def _point(problem, seed):
    rng = np.random.default_rng(seed)
    return torch.as_tensor(rng.standard_normal(problem.dim_x))


def _certified(problem, x, y):
    """||grad_y g|| <= GRAD_TOL mu_g, or within 10x of it (the rounding
    floor the Newton solver stops at, see its module doc)."""
    grad_norm = float(torch.linalg.vector_norm(problem.grad_g_y(x, y)))
    assert problem.inner_accuracy == pytest.approx(grad_norm / problem.mu_g)
    assert grad_norm <= 10 * GRAD_TOL * problem.mu_g


def test_kronecker_inverse_matches_dense_inverse():
    # tiny instance: K = 3 classes, D = 4 features, 7 samples
    rng = np.random.default_rng(0)
    A = torch.as_tensor(rng.standard_normal((7, 4)))
    weights = torch.as_tensor(rng.uniform(0.1, 1.0, 7))
    probs = torch.softmax(torch.as_tensor(rng.standard_normal((7, 3))), 1)
    shift = 0.02
    B = class_factor(probs, weights)
    S = (A * weights[:, None]).T @ A
    explicit = torch.linalg.inv(
        torch.kron(B, S) + shift * torch.eye(12, dtype=torch.float64))
    # the data factor from A^T (D x n), as the row blocks hold it
    data = gram_eigh(weighted_gram(A.T.contiguous().numpy(),
                                   weights.numpy()))
    apply = kronecker_inverse(symmetric_eigh(B), data, shift)
    for _ in range(3):
        r = torch.as_tensor(rng.standard_normal(12))
        assert torch.allclose(apply(r), explicit @ r, rtol=0, atol=1e-12)


@pytest.mark.parametrize("preconditioner, hvp_precision", [
    ("kronecker", "mixed"), ("kronecker", "float64"), ("jacobi", "mixed")])
def test_cg_path_agrees_with_dense_path(preconditioner, hvp_precision):
    dense = _instance("dense")
    iterative = _instance("cg", preconditioner=preconditioner,
                          hvp_precision=hvp_precision)
    for seed in range(2):       # the second point is warm-started
        x = _point(dense, seed)
        y_dense, y_cg = dense.inner_solution(x), iterative.inner_solution(x)
        _certified(iterative, x, y_cg)
        # both certified to 1e-10 in y
        assert float(torch.linalg.vector_norm(y_cg - y_dense)) <= 2e-10
        h_dense = dense.hypergradient(x, y_dense)
        h_cg = iterative.hypergradient(x, y_cg)
        assert float(torch.linalg.vector_norm(h_cg - h_dense)) <= 1e-8 * max(
            1.0, float(torch.linalg.vector_norm(h_dense)))
    # "mixed": the CG iterations on float32 products, refined in float64
    low_share = iterative.hvp_count_low / iterative.hvp_count
    assert low_share > 0.5 if hvp_precision == "mixed" else low_share == 0


def test_sum_reduced_ill_conditioned_instance_within_budget():
    # Kwon et al. 2023's form: sums and c = 0.01, L_g / mu_g ~ 1e6 here
    problem = _instance("cg", n_train=600, c=0.01, reduction="sum")
    assert problem.L_g_full / problem.mu_g > 1e5
    x = problem.x0
    y = problem.inner_solution(x)
    _certified(problem, x, y)
    # cold start from y0 = 0; the Jacobi preconditioner needs thousands
    assert problem.inner_work["newton_steps"] <= 25
    assert problem.inner_work["cg_iterations"] <= 300
    before = problem.hvp_count
    problem.hypergradient(x, y)
    assert problem.hvp_count - before <= 150
    # a nearby point, warm-started: fewer steps
    x = x + 0.05 * _point(problem, 1)
    y = problem.inner_solution(x)
    _certified(problem, x, y)
    assert problem.inner_work["newton_steps"] <= 15


def test_preconditioner_and_precision_choices_are_checked():
    with pytest.raises(ValueError, match="preconditioner"):
        _instance("cg", preconditioner="cholesky")
    with pytest.raises(ValueError, match="hvp_precision"):
        _instance("cg", hvp_precision="float16")
