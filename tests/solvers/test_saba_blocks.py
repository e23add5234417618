"""SABA's tables per block (benchmark_bilevel's sampling: fixed blocks) give
the iterates of its per-sample tables, at both memory starts, with the same
oracle counts; the empty start is benchmark_bilevel's first step (the
batch's own directions)."""
import pytest
import torch

from benchmark_utils.problems.batches import SliceBatch

from conftest import component, run_solver

SIMULATED = dict(generator="benchmark_bilevel", dim_x=6, dim_y=5,
                 n_samples=40, random_state=4, constraint="none")
PARAMS = dict(batch_size=8, inner_step=0.2, outer_step=0.1)


def run(monkeypatch, block_tables, n_iter=25, **params):
    monkeypatch.setattr(component("solver", "SABA"), "block_tables",
                        block_tables)
    records, solver = run_solver("SABA", "quadratic", SIMULATED,
                                 dict(PARAMS, **params), n_iter=n_iter)
    return records, solver


@pytest.mark.parametrize("init_memory", ["full", "zero"])
def test_block_tables_follow_per_sample_tables(monkeypatch, init_memory):
    blocks, by_block = run(monkeypatch, True, init_memory=init_memory)
    samples, by_sample = run(monkeypatch, False, init_memory=init_memory)
    torch.testing.assert_close(by_block.x, by_sample.x, rtol=1e-10,
                               atol=1e-12)
    torch.testing.assert_close(by_block.y, by_sample.y, rtol=1e-10,
                               atol=1e-12)
    # the iterates moved, and both paths were charged the same oracles
    assert float((by_block.x - by_block.problem.x0).abs().max()) > 1e-3
    counts = [{k: v for k, v in r.items() if k.startswith("n_")}
              for r in (blocks[-1], samples[-1])]
    assert counts[0] == counts[1]


def test_block_tables_hold_one_row_per_block(monkeypatch):
    # 40 samples in blocks of 8: 5 rows per table, not 40
    solver = component("solver", "SABA")
    seen = []
    original = solver.memories

    def spy(self, x, y, v):
        memories = original(self, x, y, v)
        seen.append(memories)
        return memories

    monkeypatch.setattr(solver, "memories", spy)
    run(monkeypatch, True, n_iter=2)
    lower, upper = seen[0]
    assert [t.shape[0] for t in lower.tables + upper.tables] == [5] * 5


def test_zero_memory_first_step_is_the_batch_direction(monkeypatch):
    # empty tables: the first SAGA estimates are the batch's own means, so
    # the first iterate is one SOBA step on the first blocks (0:8, 0:8)
    _, solver = run(monkeypatch, True, n_iter=1, init_memory="zero",
                    init="dataset")
    P = solver.problem.problem
    x0, y0 = P.x0, P.y0
    block = SliceBatch(0, 8)
    # (v_0 = 0: the cross term of D_x vanishes at the first step)
    grad_x_f, _ = P.grad_f(x0, y0, batch=block)
    torch.testing.assert_close(solver.x, x0 - 0.1 * grad_x_f,
                               rtol=1e-12, atol=1e-14)
    torch.testing.assert_close(
        solver.y, y0 - 0.2 * P.grad_g_y(x0, y0, batch=block),
        rtol=1e-12, atol=1e-14)


def test_init_memory_is_checked():
    with pytest.raises(ValueError, match="init_memory"):
        component("solver", "SABA").get_instance(
            init_memory="empty").check_parameters()
