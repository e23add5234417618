"""Every step-size, momentum and slack rule of
``benchmark_utils.solvers.schedules`` against the papers' formulas."""
import math

import pytest

from benchmark_utils.solvers.schedules import (
    F2SA_EXPONENTS, ar_ip_seg_average_weight, ar_ip_seg_schedule, cut_slack,
    f2sa_default_gamma0, f2sa_schedule, frank_wolfe_step,
    ibcg_linear_system_step, ibcg_step, ir_fscg_schedule, ir_scg_schedule,
    neumann_step, sbcgi_step, spider_fw_step, storm_weight,
    strongly_convex_step)


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


def test_frank_wolfe_steps():
    assert frank_wolfe_step(0) == 1.0 and frank_wolfe_step(2) == 0.5
    assert frank_wolfe_step(0, 12) == pytest.approx(1 / 6)    # CG-BiO code
    assert spider_fw_step(0, 0.1) == 0.1
    assert spider_fw_step(9, 0.1) == pytest.approx(0.01)


def test_sbcgi_steps_with_gamma_t_plus_one():
    # Alg. 1 line 12: iteration t steps with gamma_{t+1} = gamma0 (t+2)^-omega
    assert sbcgi_step(0, 0.01, 1.0) == pytest.approx(0.005)
    assert sbcgi_step(6, 0.1, 2 / 3) == pytest.approx(0.1 * 8 ** (-2 / 3))


def test_storm_weights_and_cut_slack():
    assert storm_weight(0, 2 / 3) == 1.0
    assert storm_weight(3, 0.5) == pytest.approx(0.5)
    # Cao et al. 2023, §5: 1e-4 (t+1)^-1/2 and 0.01 (t+1)^-1/3
    assert cut_slack(3, 1e-4, 0.5) == pytest.approx(5e-5)
    assert cut_slack(7, 0.01, 1 / 3) == pytest.approx(0.005)
    assert cut_slack(5, 0.0, 0.5) == 0.0


def test_ar_ip_seg_schedule():
    # gamma_t rho_t = gamma0 rho0 (t+1)^-1/2
    assert ar_ip_seg_schedule(0, 1e-7, 1e3) == (1e-7, 1e3)
    gamma, rho = ar_ip_seg_schedule(15, 1e-2, 1.0)
    assert gamma == pytest.approx(1e-2 / 8) and rho == pytest.approx(2.0)
    assert gamma * rho == pytest.approx(1e-2 / 4)
    assert ar_ip_seg_average_weight(gamma, rho, 0.5) == pytest.approx(0.05)


@pytest.mark.parametrize("noise", sorted(F2SA_EXPONENTS))
def test_f2sa_multiplier_is_tied_to_the_steps(noise):
    a, c = F2SA_EXPONENTS[noise]
    gamma0, lambda0, k0 = 0.05, 7.0, 3
    alpha0, g0, lam0 = f2sa_schedule(0, a=a, c=c, gamma0=gamma0,
                                     lambda0=lambda0, k0=k0)
    assert g0 == pytest.approx(gamma0) and lam0 == pytest.approx(lambda0)
    for k in [0, 1, 2, 10, 100, 10_000]:
        alpha, gamma, lam = f2sa_schedule(k, a=a, c=c, gamma0=gamma0,
                                          lambda0=lambda0, k0=k0)
        # App. B.5, eq. (28): lambda_k = gamma_k / (2 alpha_k)
        assert lam == pytest.approx(gamma / (2 * alpha), rel=1e-12)
        # eq. (5): polynomial decay with the regime's exponents
        assert alpha == pytest.approx(alpha0 * (3 / (k + 3)) ** a, rel=1e-12)
        assert gamma == pytest.approx(gamma0 * (3 / (k + 3)) ** c, rel=1e-12)
        assert lam == pytest.approx(lambda0 * ((k + 3) / 3) ** (a - c),
                                    rel=1e-12)
        # the effective y step beta_k = alpha_k lambda_k stays gamma_k / 2
        assert alpha * lam == pytest.approx(gamma / 2, rel=1e-12)


def test_f2sa_exponents_and_default_gamma0():
    # Kwon et al. 2023, Corollary 4.2
    assert F2SA_EXPONENTS == {"both": (5 / 7, 4 / 7), "upper": (3 / 5, 2 / 5),
                              "none": (1 / 3, 0.0)}
    # condition (3a): gamma_k <= min(1/(4 L_g), 1/(4 T mu_g))
    assert f2sa_default_gamma0(0.5, 5.0, 10) == pytest.approx(0.05)
    assert f2sa_default_gamma0(0.01, 5.0, 10) == pytest.approx(0.05)
    assert f2sa_default_gamma0(0.1, 1.0, 10) == pytest.approx(0.25)


def test_ibcg_step_rules():
    assert ibcg_step("nonconvex", 10_000) == pytest.approx(0.01)
    assert ibcg_step("convex", 1000) == pytest.approx(math.log(1000) / 1000)
    assert ibcg_step(0.25, 7) == 0.25


def test_steps_from_the_lower_level_curvature():
    assert strongly_convex_step(1.0, 3.0) == 0.5
    assert neumann_step(4.0) == 0.25
    # IBCG's w step: half of its bound alpha = 2/(mu_g + L_g)
    assert ibcg_linear_system_step(strongly_convex_step(1.0, 3.0)) == 0.25
