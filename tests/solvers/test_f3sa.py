"""F3SA (Kwon et al. 2023, Algorithm 2 with the estimators of App. C and
the steps of eq. (9)): two iterations against the update equations written
out by hand in matrix form (the second one exercises the STORM correction),
the batches the paper counts, seeded convergence on the quick quadratic
within a stated budget, and bad parameters; then the step rules F3SA
shares with F2SA (``benchmark_utils.solvers.kwon_steps``) and each one's
own rules."""
import sys

import pytest
import torch

from conftest import component, make_problem, run_solver

QUICK = dict(dim_x=10, dim_y=10, n_samples=100)


def test_two_iterations_match_algorithm_2_on_full_passes():
    # full passes: every batch is the whole sum, so the hand-written
    # gradients are the exact ones and the momentum term is deterministic
    params = {"batch_size": None, "noise_regime": "both", "step_offset": 3}
    _, start = run_solver("F3SA", "quadratic", QUICK, params, n_iter=0)
    _, after = run_solver("F3SA", "quadratic", QUICK, params, n_iter=2)
    P = make_problem("quadratic", **QUICK)
    H, C, d, b, a, r = P.H_bar, P.C_bar, P.d_bar, P.b_bar, P.a_bar, P.upper_reg
    gy = lambda x, y: H @ y + C @ x + d         # noqa: E731
    fy = lambda x, y: y - b                      # noqa: E731
    fx = lambda x, y: r * (x - a)                # noqa: E731
    gx = lambda x, y: C.T @ y                    # noqa: E731 (x-terms cancel)
    x, y, z = start.x, start.y, start.y.clone()
    h = None
    prev = None
    for k in range(2):
        alpha, gamma, lam, eta = after.schedule(k)
        new = [gy(x, z), fy(x, y), gy(x, y)]
        if prev is not None:
            xp, yp, zp = prev
            old = [gy(xp, zp), fy(xp, yp), gy(xp, yp)]
            new = [n + (1 - eta) * (hv - o)
                   for n, hv, o in zip(new, h[:3], old, strict=True)]
        z1 = z - gamma * new[0]                                  # line 2
        y1 = y - alpha * (new[1] + lam * new[2])                 # line 3
        newx = [fx(x, y1), gx(x, y1), gx(x, z1)]
        if prev is not None:
            oldx = [fx(xp, y), gx(xp, y), gx(xp, z)]
            newx = [n + (1 - eta) * (hv - o)
                    for n, hv, o in zip(newx, h[3:], oldx, strict=True)]
        x1 = x - after.steps.xi * alpha * (
            newx[0] + lam * (newx[1] - newx[2]))
        h, prev = new + newx, (x, y, z)
        x, y, z = x1, y1, z1
    torch.testing.assert_close(after.x, x, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(after.y, z, rtol=1e-12, atol=1e-12)


def test_schedule_follows_eq_9():
    _, s = run_solver("F3SA", "quadratic", QUICK,
                      {"lambda0": 7.0, "step_offset": 4}, n_iter=0)
    steps = s.steps
    assert steps.inner_step == pytest.approx(1 / (2 * s.problem.L_g),
                                             rel=1e-15)
    assert (steps.outer_step_exponent, steps.inner_step_exponent,
            steps.momentum_exponent) == (3 / 5, 2 / 5, 4 / 5)
    a0, g0, lam0, eta0 = s.schedule(0)
    assert (g0, lam0, eta0) == (pytest.approx(steps.inner_step),
                                pytest.approx(7.0), 1)
    assert a0 == pytest.approx(steps.alpha0, rel=1e-15)
    assert steps.alpha0 == pytest.approx(steps.inner_step / 7.0)
    assert s.schedule(1)[3] == 1                     # eta_0 = eta_1 = 1 (8b)
    for k in (1, 5, 50):                             # literal line 5 + (9b)
        alpha, gamma, _, _ = s.schedule(k - 1)
        assert s.schedule(k)[2] == pytest.approx(gamma / alpha, rel=1e-13)
        assert s.schedule(k)[0] * s.schedule(k)[2] <= s.schedule(k)[1]


def test_draws_five_batches_per_iteration_each_charged_once():
    S, K = 4, 7
    records, _ = run_solver("F3SA", "quadratic", QUICK, {"batch_size": S},
                            n_iter=K)
    last = records[-1]
    # zeta_y, zeta_x (upper); phi_z, phi_y, phi_x (lower), App. C
    assert last["n_samples_upper"] == K * 2 * S
    assert last["n_samples_lower"] == K * 3 * S
    # six estimators, each at two points except at k = 0
    assert last["n_grad_evals"] == (6 + (K - 1) * 12) * S
    assert last["n_hvp"] == 0 and last["n_projections"] == 0
    records, _ = run_solver("F3SA", "quadratic", QUICK,
                            {"batch_size": S, "shared_x_batch": False},
                            n_iter=K)
    assert records[-1]["n_samples_lower"] == K * 4 * S


def test_defaults_tenfold_on_quick_quadratic_in_150_iterations():
    records, _ = run_solver("F3SA", "quadratic", QUICK, {}, n_iter=150,
                            eval_at=[0, 100])
    start = records[0]["hypergrad_norm"]
    assert all(r["hypergrad_norm"] <= start / 10 for r in records[1:])


def test_deterministic_regime_tenfold_in_100_iterations():
    records, _ = run_solver("F3SA", "quadratic", QUICK,
                            {"batch_size": None, "noise_regime": "none"},
                            n_iter=100)
    assert records[-1]["hypergrad_norm"] <= records[0]["hypergrad_norm"] / 10


@pytest.mark.parametrize("params, name", [
    ({"outer_step": 0.0}, "outer_step"),
    ({"noise_regime": "low"}, "noise_regime"),
    ({"outer_step_exponent": 1.5}, "outer_step_exponent"),
    ({"outer_step_exponent": 0.1, "inner_step_exponent": 0.5},
     "outer_step_exponent"),
    ({"momentum_exponent": -1.0}, "momentum_exponent"),
    ({"lambda0": -1.0}, "lambda0"), ({"step_offset": 0}, "step_offset"),
    ({"inner_step": 0.0}, "inner_step"), ({"multiplier": "x"}, "multiplier"),
    ({"shared_x_batch": 1.5}, "shared_x_batch"), ({"batch_size": 0},
                                                  "batch_size")])
def test_bad_parameters_raise(params, name):
    with pytest.raises(ValueError, match=name):
        component("solver", "F3SA").get_instance(**params).check_parameters()


def test_f2sa_and_f3sa_share_one_step_rule():
    """alpha_k, gamma_k of both methods are ``kwon_steps``, with alpha_0 =
    r gamma_0 / lambda0 (F2SA: r = ``y_step_ratio``, 1 by default, 1/2 in
    eq. (7)) or gamma_0 / lambda0 (F3SA, eq. (9c))."""
    from benchmark_utils.solvers.kwon_steps import kwon_steps
    params = {"lambda0": 7.0, "step_offset": 4, "inner_step": 0.05}
    _, f2sa = run_solver("F2SA", "quadratic", QUICK, params, n_iter=0)
    _, f2sa_eq7 = run_solver("F2SA", "quadratic", QUICK,
                             dict(params, y_step_ratio=0.5), n_iter=0)
    _, f3sa = run_solver("F3SA", "quadratic", QUICK, params, n_iter=0)
    for solver, alpha0 in ((f2sa, 0.05 / 7.0), (f2sa_eq7, 0.05 / 14.0),
                           (f3sa, 0.05 / 7.0)):
        for k in (0, 1, 10, 1000):
            assert tuple(solver.schedule(k)[:2]) == kwon_steps(
                k, a=solver.steps.outer_step_exponent,
                c=solver.steps.inner_step_exponent, alpha0=alpha0,
                gamma0=0.05,
                k0=4)


def test_default_outer_steps_follow_the_tuned_value():
    # F3SA: xi = 20 x outer_step_scale, exactly, so outer_step = xi alpha_0;
    # F2SA, whose x step xi alpha_k scales with gamma_0: outer_step, the x
    # step at k = 0, is 0.05 x outer_step_scale and xi = outer_step / alpha_0
    _, f3sa = run_solver("F3SA", "quadratic", QUICK, {}, n_iter=0)
    scale = f3sa.problem.outer_step_scale
    steps = f3sa.steps
    assert steps.xi == 20.0 * scale
    assert steps.outer_step == 20.0 * scale * steps.alpha0
    _, f2sa = run_solver("F2SA", "quadratic", QUICK, {}, n_iter=0)
    steps = f2sa.steps
    assert steps.outer_step == 0.05 * scale
    assert steps.xi == steps.outer_step / steps.alpha0
    assert steps.xi * f2sa.schedule(0)[0] == pytest.approx(0.05 * scale,
                                                           rel=1e-12)


@pytest.mark.parametrize("name", ["F2SA", "F3SA"])
def test_outer_step_is_the_x_step_at_k_0(name):
    """A given ``outer_step`` is the x step at k = 0, xi alpha_0 (before
    2026-11-26 it was xi): xi = outer_step / alpha_0 is derived from it."""
    params = {"outer_step": 3.0, "inner_step": 0.05, "lambda0": 7.0}
    _, solver = run_solver(name, "quadratic", QUICK, params, n_iter=0)
    steps = solver.steps
    assert steps.outer_step == 3.0 and steps["outer_step"].kind == "given"
    assert steps["xi"].kind == steps["alpha0"].kind == "derived"
    assert steps.alpha0 == pytest.approx(0.05 / 7.0, rel=1e-15)
    assert steps.xi == 3.0 / steps.alpha0
    # the x step of the loop at k = 0, xi alpha_0
    assert steps.xi * solver.schedule(0)[0] == pytest.approx(3.0, rel=1e-14)


# -- the step rules of Kwon et al. 2023 ---------------------------------------

def solver_module(name):
    return sys.modules[component("solver", name).__module__]


def test_exponent_tables_are_the_corollaries():
    from benchmark_utils.solvers.kwon_steps import (
        F2SA_EXPONENTS,
        F3SA_EXPONENTS,
    )
    assert F2SA_EXPONENTS == {"both": (5 / 7, 4 / 7), "upper": (3 / 5, 2 / 5),
                              "none": (1 / 3, 0.0)}          # Cor. 4.2
    assert F3SA_EXPONENTS == {"both": (3 / 5, 2 / 5), "upper": (1 / 2, 1 / 4),
                              "none": (1 / 3, 0.0)}          # Cor. 4.4


@pytest.mark.parametrize("ratio", [1.0, 0.5])
@pytest.mark.parametrize("noise", ["both", "upper", "none"])
def test_f2sa_closed_form_multiplier_is_tied_to_the_steps(noise, ratio):
    _, solver = run_solver("F2SA", "quadratic", QUICK,
                           {"noise_regime": noise, "inner_step": 0.05,
                            "lambda0": 7.0, "step_offset": 3,
                            "y_step_ratio": ratio}, n_iter=0)
    a = solver.steps.outer_step_exponent
    c = solver.steps.inner_step_exponent
    alpha0, g0, lam0 = solver.schedule(0)
    assert g0 == pytest.approx(0.05) and lam0 == pytest.approx(7.0)
    for k in [0, 1, 2, 10, 100, 10_000]:
        alpha, gamma, lam = solver.schedule(k)
        # eq. (5): polynomial decay with the regime's exponents
        assert alpha == pytest.approx(alpha0 * (3 / (k + 3)) ** a, rel=1e-12)
        assert gamma == pytest.approx(0.05 * (3 / (k + 3)) ** c, rel=1e-12)
        # App. B.5, eq. (28): lambda_k = r gamma_k / alpha_k (r = 1/2)
        assert lam == pytest.approx(7.0 * ((k + 3) / 3) ** (a - c),
                                    rel=1e-12)
        # the effective y step beta_k = alpha_k lambda_k stays r gamma_k
        assert alpha * lam == pytest.approx(ratio * gamma, rel=1e-12)


def test_default_inner_steps():
    # F2SA, condition (3a): gamma_0 = min(1/(4 L_g), 1/(4 T mu_g))
    f2sa_default = solver_module("F2SA").default_inner_step
    assert f2sa_default(0.5, 5.0, 10) == pytest.approx(0.05)
    assert f2sa_default(0.01, 5.0, 10) == pytest.approx(0.05)
    assert f2sa_default(0.1, 1.0, 10) == pytest.approx(0.25)
    # F3SA: 1/(2 L_g), 8 times the bound 1/(16 L_g) of (8a)
    assert solver_module("F3SA").default_inner_step(4.0) == 0.125


def test_f3sa_momentum_weight_meets_8b():
    weight = solver_module("F3SA").momentum_weight
    assert weight(0, 0.8) == weight(1, 0.8) == 1.0       # eta_0 = eta_1 = 1
    assert weight(4, 0.8) == pytest.approx(4 ** -0.8)
    assert weight(7, 0.0) == 1.0                          # regime (c)
