"""The O(d) weighted averages some methods report: z_t of Giang-Tran et al.
2025 (Alg. 1-2) and aR-IP-SeG's ybar_t (Cao et al. 2023, eq. (81)), with
aR-IP-SeG's schedule that weights it."""
import pytest
import torch

from benchmark_utils.solvers.averaging import (
    RegularizedAverage,
    RunningAverage,
)

from conftest import QUICK_REGRESSION, run_solver


def brute_force_z(xs, sigmas, t, start):
    """z_t straight from Algorithm 1/2's definition (xs[i] = x_i)."""
    head = (t + 1) * t * sigmas[t]
    weights = [(i + 1) * i * (sigmas[i - 1] - sigmas[i])
               for i in range(start, t + 1)]
    num = head * xs[t] + sum(w * xs[i] for w, i in zip(
        weights, range(start, t + 1), strict=True))
    return num / (head + sum(weights))


def random_points(n, seed=0):
    gen = torch.Generator().manual_seed(seed)
    return [torch.randn(5, generator=gen, dtype=torch.float64)
            for _ in range(n)]


@pytest.mark.parametrize("start", [1, 4])
def test_regularized_average_matches_definition(start):
    xs = random_points(30)
    # the convex sigma_t of IR-FSCG with q = 3 (frozen until t = q) and
    # of IR-SCG
    sigmas = [10.0 * (max(t, 3) + 1.0) ** -0.5 if start > 1
              else 10.0 * (t + 1.0) ** -0.25 for t in range(30)]
    avg = RegularizedAverage(xs[0], start=start)
    torch.testing.assert_close(avg.value(), xs[0])
    for t in range(1, 30):
        avg.update(t, xs[t], sigmas[t - 1], sigmas[t])
        torch.testing.assert_close(avg.value(), brute_force_z(xs, sigmas, t,
                                                              start))
    # z_1 = x_1: the sum S_1 is 2 sigma_0, all of it on x_1
    avg = RegularizedAverage(xs[0])
    avg.update(1, xs[1], sigmas[0], sigmas[1])
    torch.testing.assert_close(avg.value(), xs[1])


def test_running_average_matches_definition():
    ys = random_points(10, seed=1)
    weights = [0.5 * (t + 1) ** -0.5 for t in range(9)]
    avg = RunningAverage(ys[0])
    for t in range(9):
        avg.add(ys[t + 1], weights[t])
        expected = (sum(w * y for w, y in zip(weights[:t + 1], ys[1:t + 2],
                                              strict=True))
                    / sum(weights[:t + 1]))
        torch.testing.assert_close(avg.value, expected)
    # Gamma_0 = 0: the first added point is the first average
    avg = RunningAverage(ys[0])
    avg.add(ys[1], 0.3)
    torch.testing.assert_close(avg.value, ys[1])


def test_ar_ip_seg_schedule_and_average_weight():
    # gamma_t = gamma0 (t+1)^-3/4, rho_t = rho0 (t+1)^1/4, so the weight
    # (gamma_t rho_t)^r of y_{t+1} in ybar is (gamma0 rho0)^r (t+1)^-r/2
    def set_on_regression(**params):
        return run_solver("aR-IP-SeG", "regression", QUICK_REGRESSION,
                          params, n_iter=0)[1]
    solver = set_on_regression(outer_step=1e-7, penalty_weight=1e3)
    assert solver.schedule(0) == (1e-7, 1e3)
    steps = solver.steps
    assert (steps.outer_step, steps.penalty_weight) == (1e-7, 1e3)
    gamma, rho = set_on_regression(outer_step=1e-2,
                                   penalty_weight=1.0).schedule(15)
    assert gamma == pytest.approx(1e-2 / 8) and rho == pytest.approx(2.0)
    assert (gamma * rho) ** 0.5 == pytest.approx(0.05)
