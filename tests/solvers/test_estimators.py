"""STORM and SPIDER against their defining recursions, fed by values."""
import torch

from benchmark_utils.counting import CountingView
from benchmark_utils.problems.batches import FullBatch
from benchmark_utils.solvers.estimators import Spider, Storm, at_both_points

from conftest import least_squares_problem


def test_storm_recursion_and_momentum_one_is_plain_sgd():
    p = least_squares_problem("mse")
    x0 = torch.zeros(12, dtype=torch.float64)
    x1 = torch.linspace(-1, 1, 12, dtype=torch.float64)
    b0, b1 = torch.tensor([1, 2]), torch.tensor([4, 4])
    v0 = p.grad_f(x0, batch=b0)
    for a in (0.3, 1.0):
        est = Storm()
        assert est.step(v0, None, a) is v0      # v_0: the plain estimate
        est.step(p.grad_f(x1, batch=b1), p.grad_f(x0, batch=b1), a)
        expected = ((1 - a) * v0 + p.grad_f(x1, batch=b1)
                    - (1 - a) * p.grad_f(x0, batch=b1))
        torch.testing.assert_close(est.value, expected)
    torch.testing.assert_close(est.value, p.grad_f(x1, batch=b1))


def test_spider_with_full_batches_is_exact():
    p = least_squares_problem("mse")
    est = Spider()
    xs = [torch.randn(12, dtype=torch.float64, generator=torch.Generator()
                      .manual_seed(i)) for i in range(4)]
    est.refresh(p.grad_g(xs[0], batch=FullBatch(p.n_lower)))
    everything = torch.arange(p.n_lower)
    for prev, x in zip(xs, xs[1:], strict=False):
        est.update(*at_both_points(p.grad_g, everything, x, prev))
    torch.testing.assert_close(est.value, p.grad_g(xs[-1]))


def test_storm_keeps_a_value_and_a_gradient_estimate_apart():
    # SBCGI's g_hat and grad G: two estimators fed by one oracle pass
    p = least_squares_problem("mse")
    x0 = torch.zeros(12, dtype=torch.float64)
    x1 = torch.linspace(-1, 1, 12, dtype=torch.float64)
    b0, b1 = torch.tensor([0, 3]), torch.tensor([5, 7])
    value, grad = Storm(), Storm()
    (g0, dg0), old = at_both_points(p.g_and_grad_g, b0, x0, None)
    assert old is None
    value.step(g0, None, 0.5), grad.step(dg0, None, 0.5)
    (g1, dg1), (g1_old, dg1_old) = at_both_points(p.g_and_grad_g, b1, x1, x0)
    value.step(g1, g1_old, 0.5)
    grad.step(dg1, dg1_old, 0.5)
    torch.testing.assert_close(
        value.value, p.g(x1, batch=b1) + 0.5 * (g0 - p.g(x0, batch=b1)))
    torch.testing.assert_close(
        grad.value,
        p.grad_g(x1, batch=b1) + 0.5 * (dg0 - p.grad_g(x0, batch=b1)))


def test_estimators_use_one_draw_at_two_points():
    view = CountingView(least_squares_problem("mse"))
    est = Storm()
    x = torch.zeros(12, dtype=torch.float64)
    est.step(*at_both_points(view.grad_f, view.sample_upper(1), x, None), 0.5)
    assert view.n_grad_evals == 1
    est.step(*at_both_points(view.grad_f, view.sample_upper(1), x + 1, x),
             0.5)
    assert view.n_samples_upper == 2 and view.n_grad_evals == 3
