"""The hypergradient toolkit on the quadratic problem: CG and Neumann reach
the exact hypergradient, the stochastic Neumann estimators are unbiased for
the truncated series (seeded, with a stated statistical tolerance), and bad
parameters are refused."""
import functools

import pytest
import torch

from benchmark_utils.numerics.linear_systems import conjugate_gradient
from benchmark_utils.problems.quadratic import make_quadratic_bilevel
from benchmark_utils.solvers.hypergradients import (
    draw_neumann_depth,
    implicit_hypergradient,
    neumann_series,
    randomized_neumann,
)


@functools.lru_cache(maxsize=None)
def problem(seed=0):
    return make_quadratic_bilevel(dim_x=6, dim_y=8, n_samples=40, mu=0.4,
                                  L=3.0, cross_norm=1.2, noise=0.7,
                                  upper_reg=0.3, random_state=seed)


def at_point(seed):
    P = problem(seed)
    x = torch.randn(P.dim_x, generator=torch.Generator().manual_seed(seed),
                    dtype=torch.float64)
    return P, x, P.inner_solution(x)


def hypergradient_with(P, x, y, inverse):
    gx, gy = P.grad_f(x, y)
    return implicit_hypergradient(gx, gy, lambda v: P.hvp_yy_g(x, y, v),
                                  lambda v: P.hvp_xy_g(x, y, v), inverse)


class Counted:
    """hvp wrapper that counts its calls."""

    def __init__(self, hvp):
        self.hvp, self.calls = hvp, 0

    def __call__(self, v):
        self.calls += 1
        return self.hvp(v)


@pytest.mark.parametrize("seed", [0, 1])
def test_conjugate_gradient_gives_the_exact_hypergradient(seed):
    P, x, y = at_point(seed)
    exact = P.hypergradient(x)
    hvp = Counted(lambda v: P.hvp_yy_g(x, y, v))
    approx = hypergradient_with(
        P, x, y, lambda h, r: conjugate_gradient(hvp, r, tol=1e-12))
    torch.testing.assert_close(approx, exact, rtol=0, atol=1e-8)
    # CG in exact arithmetic ends in dim_y steps; allow a few for rounding
    assert hvp.calls <= P.dim_y + 3


def test_conjugate_gradient_solves_and_warm_starts():
    P, x, y = at_point(0)
    rhs = P.grad_f_y(x, y + 1.0)
    H = torch.func.jacrev(lambda b: P.grad_g_y(x, b))(y)
    w = conjugate_gradient(lambda v: H @ v, rhs, tol=1e-13, max_iter=50)
    torch.testing.assert_close(w, torch.linalg.solve(H, rhs), rtol=1e-10,
                               atol=1e-12)
    # started at the solution, it returns without a single iteration
    hvp = Counted(lambda v: H @ v)
    conjugate_gradient(hvp, rhs, tol=1e-8, w0=w)
    assert hvp.calls == 1                        # the initial residual only
    # a zero right-hand side gives zero; max_iter bounds the work
    assert not conjugate_gradient(lambda v: H @ v, 0 * rhs).any()
    hvp = Counted(lambda v: H @ v)
    conjugate_gradient(hvp, rhs, tol=0.0, max_iter=3)
    assert hvp.calls == 3


@pytest.mark.parametrize("seed", [0, 1])
def test_neumann_series_gives_the_exact_hypergradient(seed):
    P, x, y = at_point(seed)
    # error (1 - mu eta)^n ||H^-1 grad_y f||: eta = 1/L_g, n = 600 -> 1e-30
    hvp_calls = Counted(lambda v: P.hvp_yy_g(x, y, v))
    approx = hypergradient_with(P, x, y, lambda h, r: neumann_series(
        hvp_calls, r, eta=1.0 / P.L_g, n_terms=600))
    torch.testing.assert_close(approx, P.hypergradient(x), rtol=0, atol=1e-8)
    assert hvp_calls.calls == 599


def test_neumann_series_is_the_truncated_sum():
    P, x, y = at_point(0)
    H = torch.func.jacrev(lambda b: P.grad_g_y(x, b))(y)
    rhs = P.grad_f_y(x, y + 0.5)
    eta, identity = 0.2, torch.eye(P.dim_y, dtype=torch.float64)
    for n_terms in (1, 2, 5):
        expected = eta * sum(torch.linalg.matrix_power(identity - eta * H, q)
                             @ rhs
                             for q in range(n_terms))
        torch.testing.assert_close(
            neumann_series(lambda v: H @ v, rhs, eta=eta, n_terms=n_terms),
            expected, rtol=1e-13, atol=1e-13)


def test_randomized_neumann_averages_exactly_over_its_depth():
    """With a fixed H, the mean over the n_terms equally likely depths is the
    truncated series (the exact expectation, no sampling)."""
    P, x, y = at_point(1)
    rhs = P.grad_f_y(x, y + 0.5)

    def hvp(v):
        return P.hvp_yy_g(x, y, v)
    eta, n_terms = 1.0 / P.L_g, 7
    mean = sum(randomized_neumann(hvp, rhs, eta=eta, n_terms=n_terms,
                                  generator=None, k=k)
               for k in range(n_terms)) / n_terms
    torch.testing.assert_close(
        mean, neumann_series(hvp, rhs, eta=eta, n_terms=n_terms),
        rtol=1e-13, atol=1e-13)


def stochastic_mean(estimator, n_draws, seed):
    """Mean and standard error over n_draws of an estimator whose hvp draws a
    fresh lower-level batch of 2 samples (with replacement) per call."""
    P, x, y = at_point(0)
    gen = torch.Generator().manual_seed(seed)
    rhs = P.grad_f_y(x, y + 0.5)

    def fresh_hvp(v):
        batch = torch.randint(P.n_lower, (2,), generator=gen)
        return P.hvp_yy_g(x, y, v, batch=batch)
    draws = torch.stack([estimator(fresh_hvp, rhs, gen)
                         for _ in range(n_draws)])
    target = neumann_series(lambda v: P.hvp_yy_g(x, y, v), rhs,
                            eta=1.0 / P.L_g, n_terms=5)
    return draws.mean(0), draws.std(0) / n_draws ** 0.5, target


def test_randomized_neumann_is_unbiased_with_fresh_batches():
    """Mean over 20000 seeded draws within 4.5 standard errors of the
    truncated series in every coordinate (a 5-term series, eta = 1/L_g)."""
    eta = 1.0 / problem(0).L_g
    mean, stderr, target = stochastic_mean(
        lambda h, r, gen: randomized_neumann(h, r, eta=eta, n_terms=5,
                                             generator=gen), 20_000, seed=3)
    assert ((mean - target).abs() <= 4.5 * stderr).all()
    # the test has power: a prefactor eta instead of n_terms * eta (the
    # classic slip) would be off by far more than the tolerance
    assert ((mean / 5 - target).abs() > 20 * stderr).any()


def test_stochastic_neumann_series_is_unbiased():
    eta = 1.0 / problem(0).L_g
    mean, stderr, target = stochastic_mean(
        lambda h, r, gen: neumann_series(h, r, eta=eta, n_terms=5), 5_000,
        seed=4)
    assert ((mean - target).abs() <= 4.5 * stderr).all()


def test_neumann_depth_is_uniform():
    gen = torch.Generator().manual_seed(0)
    draws = torch.tensor([draw_neumann_depth(4, gen) for _ in range(8000)])
    counts = torch.bincount(draws, minlength=4)
    assert counts.shape == (4,)
    # each count ~ Binomial(8000, 1/4): mean 2000, std ~ 39
    assert ((counts - 2000).abs() <= 5 * 39).all()
    assert draw_neumann_depth(1, gen) == 0


@pytest.mark.parametrize("call, match", [
    (lambda r: neumann_series(lambda v: v, r, eta=0.0, n_terms=3), "eta"),
    (lambda r: neumann_series(lambda v: v, r, eta=0.1, n_terms=0), "n_terms"),
    (lambda r: neumann_series(lambda v: v, r, eta=float("inf"), n_terms=2),
     "eta"),
    (lambda r: randomized_neumann(lambda v: v, r, eta=0.1, n_terms=3,
                                  generator=None, k=3), "k must be"),
    (lambda r: randomized_neumann(lambda v: v, r, eta=-1, n_terms=3,
                                  generator=None), "eta"),
    (lambda r: conjugate_gradient(lambda v: v, r, max_iter=-1), "max_iter"),
    (lambda r: conjugate_gradient(lambda v: v, r, tol=-1.0), "tol"),
])
def test_bad_parameters_are_refused(call, match):
    with pytest.raises(ValueError, match=match):
        call(torch.ones(3, dtype=torch.float64))


def test_implicit_hypergradient_away_from_y_star_is_the_surrogate():
    """At y != y*(x): grad_x f - grad_xy g [grad_yy g]^-1 grad_y f, at y."""
    P, x, y_star = at_point(0)
    y = y_star + 0.3
    J_xy = torch.func.jacrev(lambda b: P.grad_g_x(x, b))(y)   # d grad_x g / dy
    H = torch.func.jacrev(lambda b: P.grad_g_y(x, b))(y)
    gx, gy = P.grad_f(x, y)
    expected = gx - J_xy @ torch.linalg.solve(H, gy)
    torch.testing.assert_close(
        hypergradient_with(P, x, y, lambda h, r: conjugate_gradient(
            h, r, tol=1e-13)), expected, rtol=1e-10, atol=1e-10)
    assert (expected - P.hypergradient(x)).norm() > 1e-3
