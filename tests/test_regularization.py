"""Paper 001's schedules and the O(d) weighted average z_t."""
import math

import pytest
import torch

from benchmark_utils.solvers.schedules import (RegularizedAverage,
                                            ir_fscg_schedule, ir_scg_schedule)


def brute_force_z(xs, sigmas, t, start):
    """z_t straight from Algorithm 1/2's definition (xs[i] = x_i)."""
    head = (t + 1) * t * sigmas[t]
    weights = [(i + 1) * i * (sigmas[i - 1] - sigmas[i])
               for i in range(start, t + 1)]
    num = head * xs[t] + sum(w * xs[i] for w, i in zip(weights,
                                                       range(start, t + 1)))
    return num / (head + sum(weights))


@pytest.mark.parametrize("start", [1, 4])
def test_average_matches_definition(start):
    gen = torch.Generator().manual_seed(0)
    xs = [torch.randn(5, generator=gen, dtype=torch.float64) for _ in range(30)]
    sigmas = [ir_fscg_schedule(t, 3, True, 10.0, 0.5, 1.0)[1] if start > 1
              else ir_scg_schedule(t, True, 10.0, 0.25, 1.0)[1]
              for t in range(30)]
    avg = RegularizedAverage(xs[0], start=start)
    torch.testing.assert_close(avg.value(), xs[0])
    for t in range(1, 30):
        avg.update(t, xs[t], sigmas[t - 1], sigmas[t])
        torch.testing.assert_close(avg.value(), brute_force_z(xs, sigmas, t,
                                                              start))
    # z_1 = x_1 (S_1 = 2 sigma_0), noted in note 001 §2.3
    avg = RegularizedAverage(xs[0])
    avg.update(1, xs[1], sigmas[0], sigmas[1])
    torch.testing.assert_close(avg.value(), xs[1])


def test_ir_scg_schedules():
    assert ir_scg_schedule(0, True, 10.0, 0.25, 1.0) == (1.0, 10.0)
    alpha, sigma = ir_scg_schedule(15, True, 10.0, 0.25, 1.0)
    assert alpha == pytest.approx(2 / 17) and sigma == pytest.approx(5.0)
    alpha, sigma = ir_scg_schedule(127, False, 0.1, 2 / 7, 6 / 7)
    assert alpha == pytest.approx(128 ** (-6 / 7))
    assert sigma == pytest.approx(0.1 * 128 ** (-2 / 7))


def test_ir_fscg_schedules_freeze_sigma_in_the_warm_phase():
    q = 15
    for t in range(q):
        alpha, sigma = ir_fscg_schedule(t, q, True, 10.0, 0.5, 1.0)
        assert alpha == pytest.approx(math.log(q) / q)
        assert sigma == pytest.approx(10.0 * (q + 1) ** -0.5)
    assert ir_fscg_schedule(q, q, True, 10.0, 0.5, 1.0)[0] == pytest.approx(
        2 / (q + 2))
    for t in range(q + 1):
        alpha, sigma = ir_fscg_schedule(t, q, False, 0.1, 0.5, 0.75)
        assert alpha == pytest.approx(math.log(q + 1) / (q + 1))
        assert sigma == pytest.approx(0.1 * (q + 2) ** -0.5)
    alpha, sigma = ir_fscg_schedule(q + 1, q, False, 0.1, 0.5, 0.75)
    assert alpha == pytest.approx((q + 2) ** -0.75)
