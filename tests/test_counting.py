"""The counting view: who is charged what (see benchmark_utils/counting.py)."""
import pytest
import torch

from benchmark_utils.counting import CountingView
from benchmark_utils.sets.cut_lmo import cut_lmo

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


def test_sets_forward_their_public_attributes():
    view = CountingView(least_squares_problem("mse"))
    Z = view.problem.Z
    assert view.Z.coordinate_separable is Z.coordinate_separable
    assert view.Z.polyhedral is Z.polyhedral
    assert view.Z.unbounded is Z.unbounded
    assert view.n_lmo == view.n_projections == 0


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
    for a, b in zip(upper_alone, upper_mixed, strict=True):
        assert torch.equal(a, b)
    view.seed(8)
    assert not all(torch.equal(a, view.sample_upper(3)) for a in upper_alone)
    idx = view.sample_lower(1000)
    assert idx.min() >= 0 and idx.max() < view.n_lower


# -- a problem's own sampling policy (benchmark_bilevel's epoch blocks) -------

def epoch_block_view(n_inner=40, n_outer=30):
    from benchmark_utils.problems.simulated_quadratic import (
        make_simulated_quadratic,
    )
    return CountingView(make_simulated_quadratic(
        n_samples_inner=n_inner, n_samples_outer=n_outer, dim_inner=3,
        dim_outer=2, random_state=4))


def samples(batch):
    return list(range(batch.start, batch.stop))


@pytest.mark.parametrize("size", [8, 7, 1, 40])
def test_epoch_blocks_visit_every_sample_once_per_epoch(size):
    view = epoch_block_view()
    view.seed(3)
    n = view.n_lower
    n_blocks = -(-n // size)
    epochs = []
    for _ in range(4):
        batches = [view.sample_lower(size) for _ in range(n_blocks)]
        drawn = [i for b in batches for i in samples(b)]
        assert sorted(drawn) == list(range(n))      # each sample once
        assert all(b.stop - b.start == size for b in batches
                   if b.stop != n)                   # fixed contiguous blocks
        epochs.append([b.start for b in batches])
    # the first epoch in order, later ones reshuffled (each a permutation)
    assert epochs[0] == sorted(epochs[0])
    if n_blocks > 2:
        assert any(e != epochs[0] for e in epochs[1:])
    # charged the samples drawn, as index tensors are
    assert view.n_samples_lower == 4 * n and view.n_samples_upper == 0


def test_epoch_blocks_are_charged_like_index_batches():
    view = epoch_block_view()
    x = torch.zeros(2, dtype=torch.float64)
    y = torch.zeros(3, dtype=torch.float64)
    batch = view.sample_upper(16)
    assert view.n_samples_upper == 16
    view.grad_f(x, y, batch=batch)
    view.grad_f(x + 1, y, batch=batch)       # re-use: no new samples
    assert view.n_samples_upper == 16 and view.n_grad_evals == 32
    short = view.sample_upper(16)            # 30 samples: the last block is 14
    assert short.shape[0] == 14 and view.n_samples_upper == 30
    view.hvp_yy_g(x, y, y, batch=view.sample_lower(5))
    assert view.n_hvp == 5 and view.n_samples_lower == 5


def test_epoch_blocks_are_seeded_per_level_and_size():
    view = epoch_block_view()

    def sequence(interleave):
        view.seed(11)
        out = []
        for _ in range(12):
            if interleave:
                view.sample_lower(4)         # another level
                view.sample_upper(3)         # another size, same level
            out.append(view.sample_upper(5).start)
        return out
    alone = sequence(False)
    assert alone == sequence(False) == sequence(True)
    view.seed(12)
    assert [view.sample_upper(5).start for _ in range(12)] != alone


def test_problems_without_a_policy_still_draw_index_tensors():
    view = CountingView(least_squares_problem("mse"))
    batch = view.sample_upper(4)
    assert torch.is_tensor(batch) and batch.shape == (4,)
