"""Every step-size, momentum and slack rule of
``benchmark_utils.solvers.schedules`` against the papers' formulas."""
import pytest

from benchmark_utils.solvers.schedules import (
    cut_slack,
    frank_wolfe_step,
    neumann_step,
    spider_fw_step,
    strongly_convex_step,
)


def test_frank_wolfe_steps():
    assert frank_wolfe_step(0) == 1.0 and frank_wolfe_step(2) == 0.5
    assert frank_wolfe_step(0, 12) == pytest.approx(1 / 6)    # CG-BiO code
    assert spider_fw_step(0, 0.1) == 0.1
    assert spider_fw_step(9, 0.1) == pytest.approx(0.01)


def test_cut_slack():
    # Cao et al. 2023, §5: 1e-4 (t+1)^-1/2 and 0.01 (t+1)^-1/3
    assert cut_slack(3, 1e-4, 0.5) == pytest.approx(5e-5)
    assert cut_slack(7, 0.01, 1 / 3) == pytest.approx(0.005)
    assert cut_slack(5, 0.0, 0.5) == 0.0


def test_steps_from_the_lower_level_curvature():
    assert strongly_convex_step(1.0, 3.0) == 0.5
    assert neumann_step(4.0) == 0.25
