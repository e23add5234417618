"""The exact machinery of the hyper-cleaning metrics (SoftmaxSum): value,
gradient, Hessian-vector products (float64 and float32), cross
derivatives, probabilities and the Kronecker data factor against autograd
and explicit formulas, for one and several row blocks, nonnegative
features (one product for the gradient and its rounding estimate) and
signed ones."""
import numpy as np
import pytest
import torch

from benchmark_utils.numerics.softmax_sum import SoftmaxSum

N, D, K = 301, 7, 4


def _data(signed, seed=0):
    generator = torch.Generator().manual_seed(seed)
    A = torch.rand(N, D, generator=generator, dtype=torch.float64)
    if signed:
        A = 2 * A - 1
    labels = torch.randint(K, (N,), generator=generator)
    weights = 0.1 + torch.rand(N, generator=generator, dtype=torch.float64)
    y = torch.randn(K * D, generator=generator, dtype=torch.float64)
    v = torch.randn(K * D, generator=generator, dtype=torch.float64)
    return A, labels, weights, y, v


def _losses(A, labels, y):
    logits = A @ y.reshape(K, D).T
    return torch.logsumexp(logits, 1) - logits.gather(1, labels[:, None])[:, 0]


@pytest.mark.parametrize("signed", [False, True])
@pytest.mark.parametrize("n_blocks", [1, 3])
def test_first_order_matches_autograd(signed, n_blocks):
    A, labels, weights, y, _ = _data(signed)
    data_sum = SoftmaxSum(A, labels, K, n_blocks=n_blocks)
    assert len(data_sum.slices) == n_blocks
    y_grad = y.clone().requires_grad_()
    G = (weights * _losses(A, labels, y_grad)).sum()
    G.backward()
    assert data_sum.value(weights, y) == pytest.approx(float(G), rel=1e-13)
    grad, noise = data_sum.gradient(weights, y)
    torch.testing.assert_close(grad, y_grad.grad, rtol=0, atol=1e-12)
    probs = torch.softmax(A @ y.reshape(K, D).T, 1)
    torch.testing.assert_close(data_sum.probabilities(y), probs, rtol=0,
                               atol=1e-14)
    # the rounding estimate eps || |A|^T |R| || (R the weighted residuals)
    R = weights[:, None] * (probs - torch.nn.functional.one_hot(
        labels, K).double())
    expected = np.finfo(np.float64).eps * float(
        torch.linalg.matrix_norm(A.abs().T @ R.abs()))
    assert noise == pytest.approx(expected, rel=1e-10)


@pytest.mark.parametrize("signed", [False, True])
@pytest.mark.parametrize("n_blocks", [1, 3])
def test_second_order_matches_autograd(signed, n_blocks):
    A, labels, weights, y, v = _data(signed, seed=1)
    data_sum = SoftmaxSum(A, labels, K, n_blocks=n_blocks)

    def G(z):
        return (weights * _losses(A, labels, z)).sum()
    _, hvp_expected = torch.func.jvp(torch.func.grad(G), (y,), (v,))
    hvp = data_sum.hessian(weights, y)
    exact = hvp(v)
    assert exact.dtype == torch.float64
    scale = float(torch.linalg.vector_norm(hvp_expected))
    assert float(torch.linalg.vector_norm(exact - hvp_expected)) <= (
        1e-13 * scale)
    # float32 products: within float32 rounding, not exact
    low = hvp(v, low=True)
    assert low.dtype == torch.float64
    low_error = float(torch.linalg.vector_norm(low - hvp_expected)) / scale
    assert 1e-12 < low_error <= 1e-5
    # the cross derivative: d CE_i(y + t v) / dt per sample
    _, cross_expected = torch.func.jvp(
        lambda z: _losses(A, labels, z), (y,), (v,))
    torch.testing.assert_close(data_sum.cross(y, v), cross_expected,
                               rtol=0, atol=1e-13)


@pytest.mark.parametrize("n_blocks", [1, 3])
def test_data_factor_is_the_weighted_gram_matrix(n_blocks):
    A, labels, weights, _, _ = _data(signed=True, seed=2)
    values, vectors = SoftmaxSum(A, labels, K,
                                 n_blocks=n_blocks).data_factor(weights)
    expected = (A * weights[:, None]).T @ A
    torch.testing.assert_close(vectors @ torch.diag(values) @ vectors.T,
                               expected, rtol=0, atol=1e-12)


def test_the_full_pass_is_kept_for_the_last_y_only():
    A, labels, weights, y, v = _data(signed=False, seed=3)
    data_sum = SoftmaxSum(A, labels, K, n_blocks=2)
    first = data_sum.full_pass(y)
    assert data_sum.full_pass(y.clone()) is first
    assert data_sum.full_pass(y + v) is not first
    assert data_sum.value(weights, y) == pytest.approx(
        float((weights * _losses(A, labels, y)).sum()), rel=1e-13)


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"),
                    reason="needs fork")
def test_a_forked_child_gets_its_own_thread_pool():
    import multiprocessing
    A, labels, weights, y, _ = _data(signed=False, seed=4)
    data_sum = SoftmaxSum(A, labels, K, n_blocks=2)
    expected = data_sum.value(weights, y)      # the parent's pool exists
    context = multiprocessing.get_context("fork")
    with context.Pool(1) as pool:
        result = pool.apply_async(_fresh_value, (A, labels, weights, y))
        assert result.get(timeout=60) == pytest.approx(expected, rel=1e-13)


def _fresh_value(A, labels, weights, y):
    return SoftmaxSum(A, labels, K, n_blocks=2).value(weights, y)
