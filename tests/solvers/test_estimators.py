"""STORM and SPIDER against their defining recursions."""
import torch

from benchmark_utils.counting import CountingView
from benchmark_utils.problems.batches import FullBatch
from benchmark_utils.solvers.estimators import Spider, Storm
from conftest import least_squares_problem


def test_storm_recursion_and_momentum_one_is_plain_sgd():
    p = least_squares_problem("mse")
    x0 = torch.zeros(12, dtype=torch.float64)
    x1 = torch.linspace(-1, 1, 12, dtype=torch.float64)
    b0, b1 = torch.tensor([1, 2]), torch.tensor([4, 4])
    est = Storm(p.grad_f)
    est.start(x0, b0)
    v0 = p.grad_f(x0, batch=b0)
    for a in (0.3, 1.0):
        est.value = v0
        est.update(x1, x0, b1, momentum=a)
        expected = ((1 - a) * v0 + p.grad_f(x1, batch=b1)
                    - (1 - a) * p.grad_f(x0, batch=b1))
        torch.testing.assert_close(est.value, expected)
    torch.testing.assert_close(est.value, p.grad_f(x1, batch=b1))


def test_spider_with_full_batches_is_exact():
    p = least_squares_problem("mse")
    est = Spider(p.grad_g)
    xs = [torch.randn(12, dtype=torch.float64, generator=torch.Generator()
                      .manual_seed(i)) for i in range(4)]
    est.refresh(xs[0], FullBatch(p.n_lower))
    for prev, x in zip(xs, xs[1:]):
        est.update(x, prev, torch.arange(p.n_lower))
    torch.testing.assert_close(est.value, p.grad_g(xs[-1]))


def test_estimators_use_one_draw_at_two_points():
    view = CountingView(least_squares_problem("mse"))
    est = Storm(view.grad_f)
    x = torch.zeros(12, dtype=torch.float64)
    est.start(x, view.sample_upper(1))
    est.update(x + 1, x, view.sample_upper(1), momentum=0.5)
    assert view.n_samples_upper == 2 and view.n_grad_evals == 3
