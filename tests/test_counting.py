"""The counting view: who is charged what (see benchmark_utils/counting.py)."""
import torch

from benchmark_utils.sets.cut_lmo import cut_lmo

from benchmark_utils.counting import CountingView
from conftest import least_squares_problem


def test_draws_and_full_passes_are_charged_once():
    view = CountingView(least_squares_problem("mse"))
    x = torch.zeros(12, dtype=torch.float64)
    batch = view.sample_upper(4)
    assert view.n_samples_upper == 4 and view.n_samples_lower == 0
    view.grad_f(x, batch=batch)
    view.grad_f(x + 1, batch=batch)          # re-use at a second point
    assert view.n_samples_upper == 4
    assert view.n_grad_evals == 8            # the true work counts both
    full = view.full_lower()
    assert view.n_samples_lower == view.n_lower
    view.g_and_grad_g(x, batch=full)
    assert view.n_samples_lower == view.n_lower
    assert view.n_grad_evals == 8 + view.n_lower
    assert view.n_value_evals == view.n_lower


def test_undrawn_full_pass_is_charged_every_call():
    view = CountingView(least_squares_problem("mse"))
    x = torch.zeros(12, dtype=torch.float64)
    view.grad_g(x)
    view.g(x)
    assert view.n_samples_lower == 2 * view.n_lower


def test_sets_are_counted_and_counts_reset():
    view = CountingView(least_squares_problem("mse"))
    d = torch.ones(12, dtype=torch.float64)
    view.Z.lmo(d)
    view.Z.lmo(d)
    view.Z.project(d)
    assert view.n_lmo == 2 and view.n_projections == 1
    assert view.Z.diameter == view.problem.Z.diameter
    view.reset_counts()
    assert all(v == 0 for v in view.counts().values())


def test_cut_lmo_is_one_lmo_and_forwards_to_the_set():
    view = CountingView(least_squares_problem("mse"))
    Z = view.problem.Z
    c = torch.linspace(-1, 0.5, 12, dtype=torch.float64)
    a = torch.ones(12, dtype=torch.float64)
    beta = 0.5 * float(a @ Z.lmo(a))               # the cut binds
    result = view.Z.cut_lmo(c, a, beta)
    assert result.feasible and result.multiplier > 0
    assert torch.equal(result.point, cut_lmo(Z, c, a, beta).point)
    assert view.n_lmo == 1 and view.n_infeasible == 0
    fallback = torch.zeros(12, dtype=torch.float64)
    result = view.Z.cut_lmo(c, a, 2 * float(a @ Z.lmo(a)), backend="exact",
                            fallback=fallback)
    assert not result.feasible and result.point is fallback
    assert view.n_lmo == 2 and view.n_infeasible == 1
    result = view.Z.cut_lmo(c, a, beta, backend="cvxpy")
    assert result.feasible and view.n_lmo == 3


def test_preparing_the_cut_lmo_is_not_counted():
    view = CountingView(least_squares_problem("mse"))
    view.Z.prepare_cut_lmo("cvxpy")
    view.Z.prepare_cut_lmo("exact")
    assert all(v == 0 for v in view.counts().values())


def test_upper_and_lower_streams_are_independent_and_seeded():
    view = CountingView(least_squares_problem("mse"))
    view.seed(7)
    upper_alone = [view.sample_upper(3) for _ in range(4)]
    view.seed(7)
    upper_mixed = []
    for _ in range(4):
        view.sample_lower(5)                 # interleaved lower draws
        upper_mixed.append(view.sample_upper(3))
    for a, b in zip(upper_alone, upper_mixed):
        assert torch.equal(a, b)
    view.seed(8)
    assert not all(torch.equal(a, view.sample_upper(3)) for a in upper_alone)
    idx = view.sample_lower(1000)
    assert idx.min() >= 0 and idx.max() < view.n_lower
