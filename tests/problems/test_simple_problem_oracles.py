"""The simple problems (least squares, dictionary learning): every oracle
against autograd, on random points, mini-batches (with repeated indices:
sampling is with replacement) and full passes; loss conventions, seeded
feasible starts and the recovery rate."""
import numpy as np
import pytest
import torch

from benchmark_utils.data.dictionary_learning import (
    fit_old_dictionary,
    make_continual_dictionary_data,
)
from benchmark_utils.problems.batches import FullBatch
from benchmark_utils.problems.dictionary_learning import (
    DictionaryLearningBilevel,
)

from conftest import least_squares_problem


def dictionary_problem(seed=0):
    D_true, A_old, A_new = make_continual_dictionary_data(
        n_features=6, n_atoms=8, n_old_atoms=5, n_new_atoms=4,
        n_old_samples=15, n_new_samples=12, n_nonzeros=2, seed=seed)
    D_hat, X_hat = fit_old_dictionary(A_old, 5, 3.0, n_iter_joint=50,
                                      n_iter_dictionary=50, seed=seed)
    X_start = np.random.default_rng(seed).standard_normal((8, 12))
    return DictionaryLearningBilevel(A_old, A_new, D_hat, X_hat, D_true, 8,
                                     3.0, X_start)


PROBLEMS = {
    "least_squares_mse": lambda: least_squares_problem("mse"),
    "least_squares_half_sse": lambda: least_squares_problem("half_sse"),
    "dictionary": dictionary_problem,
}


def per_sample_mean(value_fn, x, batch):
    return torch.stack([value_fn(x, batch=batch[i:i + 1])
                        for i in range(batch.shape[0])]).mean()


@pytest.mark.parametrize("name", PROBLEMS)
@pytest.mark.parametrize("level", ["upper", "lower"])
def test_oracles_match_autograd(name, level):
    problem = PROBLEMS[name]()
    gen = torch.Generator().manual_seed(1)
    value, grad = ((problem.f, problem.grad_f) if level == "upper"
                   else (problem.g, problem.grad_g))
    n = problem.n_upper if level == "upper" else problem.n_lower
    for _ in range(3):
        x = problem.random_start(gen) + 0.1 * torch.randn(
            problem.dim, generator=gen, dtype=torch.float64)
        batch = torch.tensor([0, 3, 3, n - 1])      # repeated index on purpose
        for b in (batch, None, FullBatch(n)):
            x_req = x.clone().requires_grad_(True)
            (auto,) = torch.autograd.grad(value(x_req, batch=b), x_req)
            torch.testing.assert_close(grad(x, batch=b), auto,
                                       rtol=1e-12, atol=1e-12)
        # a batch value is the mean of the per-sample values
        torch.testing.assert_close(value(x, batch=batch),
                                   per_sample_mean(value, x, batch))
        # the full sum is the mean over all samples
        torch.testing.assert_close(
            value(x), per_sample_mean(value, x, torch.arange(n)))
        if level == "lower":
            v, g = problem.g_and_grad_g(x, batch=batch)
            torch.testing.assert_close(v, problem.g(x, batch=batch))
            torch.testing.assert_close(g, problem.grad_g(x, batch=batch))


def test_least_squares_loss_conventions():
    x = torch.linspace(-1, 1, 12, dtype=torch.float64)
    mse = least_squares_problem("mse")
    half = least_squares_problem("half_mse")
    half_sse = least_squares_problem("half_sse")
    r = mse.A_upper @ x - mse.b_upper
    torch.testing.assert_close(mse.f(x), (r @ r) / r.shape[0])
    torch.testing.assert_close(half.f(x), 0.5 * (r @ r) / r.shape[0])
    torch.testing.assert_close(half_sse.f(x), 0.5 * (r @ r))
    with pytest.raises(ValueError, match="loss"):
        least_squares_problem("l1")


def test_dictionary_lower_level_ignores_codes_and_new_atoms():
    problem = dictionary_problem()
    gen = torch.Generator().manual_seed(0)
    x = problem.random_start(gen)
    grad = problem.grad_g(x)
    D_grad, X_grad = problem.split(grad)
    assert torch.all(X_grad == 0)
    # x_hat is zero-padded: the atoms beyond the old p never enter g
    assert torch.all(D_grad[:, 5:] == 0)


@pytest.mark.parametrize("name", PROBLEMS)
def test_random_start_is_feasible_and_seeded(name):
    problem = PROBLEMS[name]()
    a = problem.random_start(torch.Generator().manual_seed(3))
    b = problem.random_start(torch.Generator().manual_seed(3))
    c = problem.random_start(torch.Generator().manual_seed(4))
    assert problem.Z.contains(a)
    torch.testing.assert_close(a, b)
    assert not torch.equal(a, c)
    assert problem.Z.contains(problem.x0)


def test_recovery_rate():
    problem = dictionary_problem()
    x = problem.x0.clone()
    D, _ = problem.split(x)
    D[:] = 0
    assert problem.task_metrics(x)["recovery_rate"] == 0.0
    D[:, :] = 3.0 * problem.D_true      # scaled true atoms: all recovered
    assert problem.task_metrics(x)["recovery_rate"] == 1.0
    D[:, :4] = 0.0                      # half the atoms removed
    assert problem.task_metrics(x)["recovery_rate"] == 0.5
