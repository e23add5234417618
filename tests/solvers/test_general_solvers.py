"""General-family solvers F2SA (Kwon et al. 2023, Alg. 1), stocBiO (Ji et
al. 2021, Alg. 2) and IBCG (Abolfazli et al. 2023, Alg. 1): one iteration
against the paper's update equations written out independently in matrix
form, oracle and sample accounting, the schedules as the solvers use them,
seeded decrease of the stationarity measure within a stated iteration
budget, feasibility of every evaluated iterate, and skips. (Bad parameters:
``test_solver_parameters.py``; the schedules themselves:
``test_schedules.py``.)

Runs are on a tiny quadratic instance (dim_x = 5, dim_y = 4, 30 samples
per level; mu_g = 0.5, L_g = 5.25), Abolfazli et al. 2023's coreset toy
and a 20 x 20 matrix completion, and a tiny digits hyper-cleaning instance,
seeded through benchopt's run context.
"""
import copy
import math

import numpy as np
import pytest
import torch

from benchmark_utils.counting import CountingView

from conftest import benchmark, component, make_problem, run_solver

TINY = dict(dim_x=5, dim_y=4, n_samples=30)
SUPPORTED = {
    "F2SA": ["none", "l2_ball", "box"],
    "stocBiO": ["none", "l2_ball", "box"],
    "IBCG": ["l2_ball", "box"],
}
CASES = [(solver, constraint) for solver, constraints in SUPPORTED.items()
         for constraint in constraints]


def quadratic(constraint):
    return dict(TINY, constraint=constraint)


def stationarity(record):
    """hypergrad_norm on the whole space, the Frank-Wolfe gap on a set."""
    return record.get("hypergrad_norm", record.get("fw_gap"))


def one_step(solver, constraint, params):
    """(x_0, y_0, x_1, y_1, the view's problem) of one outer iteration."""
    _, start = run_solver(solver, "quadratic", quadratic(constraint), params,
                          n_iter=0)
    _, after = run_solver(solver, "quadratic", quadratic(constraint), params,
                          n_iter=1)
    return start.x, start.y, after.x, after.y, after


# -- one iteration = the paper's equations ------------------------------------

def test_f2sa_iteration_matches_algorithm_1():
    T = 3
    x0, y0, x1, z1, solver = one_step(
        "F2SA", "none", {"T": T, "batch_size": None, "noise_regime": "none"})
    P = make_problem("quadratic", **quadratic("none"))
    H, C, d = P.H_bar, P.C_bar, P.d_bar
    alpha, gamma, lam = solver.schedule(0)
    y, z = y0.clone(), y0.clone()
    for _ in range(T):                                       # lines 3-6
        z = z - gamma * (H @ z + C @ x0 + d)
        y = y - alpha * ((y - P.b_bar) + lam * (H @ y + C @ x0 + d))
    direction = P.upper_reg * (x0 - P.a_bar) + lam * (C.T @ y - C.T @ z)
    expected_x = x0 - solver.steps.xi * alpha * direction  # line 8
    torch.testing.assert_close(x1, expected_x, rtol=1e-12, atol=1e-12)
    # the reported lower iterate is z, the tracker of y*(x)
    torch.testing.assert_close(z1, z, rtol=1e-12, atol=1e-12)


def f2sa_by_hand(P, x, y, z, alpha, gamma, lam, T):
    """One outer iteration of Algorithm 1, lines 3-8, in matrix form."""
    H, C, d = P.H_bar, P.C_bar, P.d_bar
    for _ in range(T):
        z = z - gamma * (H @ z + C @ x + d)
        y = y - alpha * ((y - P.b_bar) + lam * (H @ y + C @ x + d))
    return x, y, z, P.upper_reg * (x - P.a_bar) + lam * (C.T @ y - C.T @ z)


@pytest.mark.parametrize("ratio", [1.0, 0.5])
@pytest.mark.parametrize("multiplier", ["recursion", "closed_form"])
def test_f2sa_second_iteration_uses_its_multiplier_rule(multiplier, ratio):
    """Line 9 with eq. (6) read literally, or eq. (28)'s closed form, with
    beta_k = alpha_k lambda_k tied to r gamma_k (r = ``y_step_ratio``, 1 by
    default, 1/2 in eq. (6)); with a large lambda0 the growth cap of eq.
    (6) binds at k = 1."""
    T, params = 2, {"T": 2, "batch_size": None, "noise_regime": "both",
                    "lambda0": 50.0, "multiplier": multiplier,
                    "y_step_ratio": ratio}
    _, start = run_solver("F2SA", "quadratic", quadratic("none"), params,
                          n_iter=0)
    _, after = run_solver("F2SA", "quadratic", quadratic("none"), params,
                          n_iter=2)
    P = make_problem("quadratic", **quadratic("none"))
    x, y, z = start.x, start.y.clone(), start.y.clone()
    lam = None
    for k in range(2):
        alpha, gamma, closed = start.schedule(k)
        if lam is None or multiplier == "closed_form":
            lam = closed
        x, y, z, direction = f2sa_by_hand(P, x, y, z, alpha, gamma, lam, T)
        x = x - start.steps.xi * alpha * direction
        cap = T * P.mu_g / 16 * alpha * lam ** 2
        if multiplier == "recursion":
            if k == 0:          # delta_0 = 0: r gamma_0 / alpha_0 = lambda0
                assert ratio * gamma / alpha == pytest.approx(lam, rel=1e-12)
            lam = lam + min(cap, ratio * gamma / alpha - lam)
    torch.testing.assert_close(after.x, x, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(after.y, z, rtol=1e-12, atol=1e-12)


def test_f2sa_multiplier_growth_is_capped_by_eq_6():
    import sys
    f2sa_next_multiplier = sys.modules[
        component("solver", "F2SA").__module__].next_multiplier
    # the cap T mu_g / 16 alpha lambda^2 = 10 * 0.5 / 16 * 0.01 * 4 binds
    assert f2sa_next_multiplier(2.0, 0.01, 1.0, T=10, mu_g=0.5,
                                ratio=0.5) == (
        pytest.approx(2.0 + 10 * 0.5 / 16 * 0.01 * 4))
    # otherwise lambda_{k+1} = r gamma_k / alpha_k, eq. (6): r = 1/2
    # (cap 10 * 0.5 / 16 * 0.5 * 4 = 0.625 > 0.5)
    assert f2sa_next_multiplier(2.0, 0.5, 2.5, T=10, mu_g=0.5,
                                ratio=0.5) == pytest.approx(2.5)
    # r = 1 (the default): beta_{k+1} <= gamma_k (cap 0.625 < 3)
    assert f2sa_next_multiplier(2.0, 0.5, 2.5, T=10, mu_g=0.5,
                                ratio=1.0) == pytest.approx(2.625)


def test_stocbio_iteration_matches_algorithm_2():
    D, Q = 4, 3           # neumann_terms = Q + 1: Q Hessian samples
    x0, y0, x1, y1, solver = one_step(
        "stocBiO", "none", {"D": D, "neumann_terms": Q + 1,
                            "batch_size": None})
    P = make_problem("quadratic", **quadratic("none"))
    H, C, d = P.H_bar, P.C_bar, P.d_bar
    alpha, eta = solver.steps.inner_step, solver.steps.linear_system_step
    beta = solver.steps.outer_step
    y = y0.clone()
    for _ in range(D):
        y = y - alpha * (H @ y + C @ x0 + d)
    # v_Q = eta sum_{q=0}^{Q} (I - eta H)^q grad_y f, with explicit powers
    M = torch.eye(P.dim_y, dtype=H.dtype) - eta * H
    v = eta * sum(torch.linalg.matrix_power(M, q) @ (y - P.b_bar)
                  for q in range(Q + 1))
    hypergrad = P.upper_reg * (x0 - P.a_bar) - C.T @ v
    torch.testing.assert_close(y1, y, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(x1, x0 - beta * hypergrad, rtol=1e-12,
                               atol=1e-12)


def test_stocbio_neumann_terms_counts_the_terms_of_the_series():
    # neumann_terms is Ji et al.'s Q + 1 (the default 21: Q = 20); one term
    # is v = eta grad_y f, with no Hessian sample
    assert component("solver", "stocBiO").parameters["neumann_terms"] == [21]
    x0, y0, x1, y1, solver = one_step(
        "stocBiO", "none", {"D": 1, "neumann_terms": 1, "batch_size": None})
    P = make_problem("quadratic", **quadratic("none"))
    v = solver.steps.linear_system_step * (y1 - P.b_bar)
    hypergrad = P.upper_reg * (x0 - P.a_bar) - P.C_bar.T @ v
    torch.testing.assert_close(x1, x0 - solver.steps.outer_step * hypergrad,
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("constraint", ["l2_ball", "box"])
def test_ibcg_iteration_matches_algorithm_1(constraint):
    x0, y0, x1, y1, solver = one_step("IBCG", constraint, {})
    P = make_problem("quadratic", **quadratic(constraint))
    H, C, d = P.H_bar, P.C_bar, P.d_bar
    gamma, alpha = solver.steps.outer_step, solver.steps.inner_step
    eta = solver.steps.linear_system_step
    w = y0.clone()                                           # line 2
    w = w - eta * (H @ w - (y0 - P.b_bar))                   # line 4
    F = P.upper_reg * (x0 - P.a_bar) - C.T @ w               # line 5
    s = P.X.lmo(F)                                           # line 6
    x = (1 - gamma) * x0 + gamma * s                         # line 7
    y = y0 - alpha * (H @ y0 + C @ x + d)                    # line 8, new x
    torch.testing.assert_close(x1, x, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(y1, y, rtol=1e-12, atol=1e-12)


# -- accounting ---------------------------------------------------------------

def test_f2sa_draws_3T_plus_2_batches_per_outer_iteration():
    T, S, K = 3, 4, 7
    records, _ = run_solver("F2SA", "quadratic", quadratic("none"),
                            {"T": T, "batch_size": S}, n_iter=K)
    last = records[-1]
    # each inner step: zeta_y (upper), phi_z, phi_y (lower); then zeta_x
    # (upper) and phi_x (lower), shared by both x-gradients of g (the
    # default): T + 1 upper and 2T + 1 lower batches
    assert last["n_samples_upper"] == K * (T + 1) * S
    assert last["n_samples_lower"] == K * (2 * T + 1) * S
    # 3T + 3 gradient calls, the shared batch used by two of them
    assert last["n_grad_evals"] == K * (3 * T + 3) * S
    assert last["n_hvp"] == 0 and last["n_projections"] == 0
    # Algorithm 1 as written: independent phi_xy and phi_xz, 3T + 3
    # batches, every one used by exactly one gradient call
    records, _ = run_solver("F2SA", "quadratic", quadratic("none"),
                            {"T": T, "batch_size": S,
                             "shared_x_batch": False}, n_iter=K)
    assert records[-1]["n_samples_lower"] == K * (2 * T + 2) * S
    assert records[-1]["n_grad_evals"] == K * (3 * T + 3) * S
    # on a constrained X, one projection per outer iteration (after line 8)
    records, _ = run_solver("F2SA", "quadratic", quadratic("box"),
                            {"T": T, "batch_size": S}, n_iter=K)
    assert records[-1]["n_projections"] == K


def test_stocbio_accounting():
    D, Q, S, B, K = 3, 2, 4, 5, 6     # Q Hessian samples: Q + 1 terms
    records, _ = run_solver(
        "stocBiO", "quadratic", quadratic("none"),
        {"D": D, "neumann_terms": Q + 1, "batch_size": S,
         "outer_batch_size": B}, n_iter=K)
    last = records[-1]
    # D inner batches, then D_F (upper), B_1..B_Q and D_G (lower)
    assert last["n_samples_upper"] == K * B
    assert last["n_samples_lower"] == K * (D * S + (Q + 1) * B)
    assert last["n_grad_evals"] == K * (D * S + B)
    assert last["n_hvp"] == K * (Q + 1) * B
    # Ji et al.'s separate sizes: D_F of B, D_G of G, each B_j of B_H
    G, B_H = 7, 3
    records, _ = run_solver(
        "stocBiO", "quadratic", quadratic("none"),
        {"D": D, "neumann_terms": Q + 1, "batch_size": S,
         "outer_batch_size": B, "cross_batch_size": G,
         "hessian_batch_size": B_H}, n_iter=K)
    last = records[-1]
    assert last["n_samples_upper"] == K * B
    assert last["n_samples_lower"] == K * (D * S + Q * B_H + G)
    assert last["n_grad_evals"] == K * (D * S + B)
    assert last["n_hvp"] == K * (Q * B_H + G)


def test_ibcg_accounting_is_deterministic_full_passes():
    K = 5
    records, solver = run_solver("IBCG", "quadratic", quadratic("box"), {},
                                 n_iter=K)
    last, n = records[-1], solver.problem.n_lower
    # one upper pass at (x_k, y_k); one lower pass shared by the two
    # second-order products at (x_k, y_k), one at the new point x_{k+1}
    assert last["n_samples_upper"] == K * n
    assert last["n_samples_lower"] == K * 2 * n
    assert last["n_hvp"] == K * 2 * n
    assert last["n_grad_evals"] == K * 2 * n
    assert last["n_lmo"] == K and last["n_projections"] == 0


# -- F2SA's schedule ----------------------------------------------------------

@pytest.mark.parametrize("noise, a, c", [("both", 5 / 7, 4 / 7),
                                         ("upper", 3 / 5, 2 / 5),
                                         ("none", 1 / 3, 0.0)])
def test_f2sa_uses_its_regime_and_default_gamma0(noise, a, c):
    _, solver = run_solver("F2SA", "quadratic", quadratic("none"),
                           {"noise_regime": noise, "lambda0": 7.0,
                            "step_offset": 3},
                           n_iter=0)
    P = solver.problem
    # default gamma0: the bound of (3a), min(1/(4 L_g), 1/(4 T mu_g))
    gamma0 = min(1 / (4 * P.L_g), 1 / (4 * solver.T * P.mu_g))
    assert solver.steps.inner_step == pytest.approx(gamma0, rel=1e-15)
    assert (solver.steps.outer_step_exponent,
            solver.steps.inner_step_exponent) == (a, c)
    _, g0, lam0 = solver.schedule(0)
    assert g0 == pytest.approx(gamma0) and lam0 == pytest.approx(7.0)


def test_f2sa_run_uses_its_schedule_once_per_outer_iteration(monkeypatch):
    solver_class = component("solver", "F2SA")
    calls = []
    original = solver_class.schedule

    def spy(self, k):
        calls.append(k)
        return original(self, k)

    monkeypatch.setattr(solver_class, "schedule", spy)
    run_solver("F2SA", "quadratic", quadratic("none"), {"T": 2}, n_iter=9)
    assert calls == list(range(9))


# -- convergence within a stated budget ---------------------------------------

def test_f2sa_deterministic_tenfold_in_200_iterations():
    records, _ = run_solver("F2SA", "quadratic", quadratic("none"),
                            {"batch_size": None, "noise_regime": "none"},
                            n_iter=200)
    assert records[-1]["hypergrad_norm"] <= records[0]["hypergrad_norm"] / 10


def test_stocbio_deterministic_tenfold_in_100_iterations():
    records, _ = run_solver("stocBiO", "quadratic", quadratic("none"),
                            {"batch_size": None}, n_iter=100)
    assert records[-1]["hypergrad_norm"] <= records[0]["hypergrad_norm"] / 10


def test_stocbio_neumann_bias_shrinks_with_neumann_terms():
    """Kwon et al. 2023, §5: a short Neumann series leaves a visible bias."""
    ends = {}
    for terms in (6, 61):        # the paper's Q = 5 and Q = 60
        records, _ = run_solver("stocBiO", "quadratic", quadratic("none"),
                                {"batch_size": None, "neumann_terms": terms},
                                n_iter=150, eval_at=[0])
        ends[terms] = (records[-1]["hypergrad_norm"]
                       / records[0]["hypergrad_norm"])
    assert ends[6] >= 0.3        # plateau of the (I - eta H)^6 bias
    assert ends[61] <= 1e-2


# stochastic defaults (batch 16 of 30 samples): every evaluation at
# iterations 200, 250 and 300 is below start / factor
STOCHASTIC_DECREASE = [("F2SA", "none", 4), ("F2SA", "l2_ball", 4),
                       ("F2SA", "box", 4), ("stocBiO", "none", 5),
                       ("stocBiO", "l2_ball", 5), ("stocBiO", "box", 5)]


@pytest.mark.parametrize("solver, constraint, factor", STOCHASTIC_DECREASE)
def test_stochastic_defaults_decrease_stationarity(solver, constraint, factor):
    records, _ = run_solver(solver, "quadratic", quadratic(constraint), {},
                            n_iter=300, eval_at=[0, 200, 250])
    start = stationarity(records[0])
    assert [r["iteration"] for r in records] == [0, 200, 250, 300]
    assert all(stationarity(r) <= start / factor for r in records[1:])


# Hyper-cleaning (digits, 200 / 100 / 100 samples, 30% corrupted labels,
# mean losses, c = 1e-3) with explicit steps, larger than the defaults
# (those: test_hyper_cleaning_progress.py); F2SA shares the batch of its
# two x-gradients of g (``shared_x_batch``, the default: with Algorithm
# 1's independent batches these steps saturate the weights).
TINY_CLEANING = dict(n_train=200, n_val=100, n_test=100)
CLEANING_STEPS = {
    "stocBiO": dict(inner_step=1.0, linear_system_step=1.0, outer_step=100.0,
                    batch_size=32),
    # outer_step: the x step at k = 0, xi alpha_0 = 1000 x 1.0 / 10.0
    "F2SA": dict(inner_step=1.0, outer_step=100.0, lambda0=10.0,
                 batch_size=32,
                 shared_x_batch=True),
}


@pytest.mark.parametrize("solver", ["F2SA", "stocBiO"])
def test_hyper_cleaning_in_300_iterations(solver):
    records, _ = run_solver(solver, "hyper_cleaning", TINY_CLEANING,
                            CLEANING_STEPS[solver], n_iter=300, eval_at=[0])
    start, end = records
    for record in records:
        # (the *_source columns say where a step came from)
        assert all(np.isfinite(v) for k, v in record.items()
                   if not k.endswith("_source")), record
    assert end["diverged"] == 0
    assert end["value"] <= 0.6 * start["value"]
    assert end["hypergrad_norm"] <= start["hypergrad_norm"] / 2
    # the learned weights tell clean from corrupted samples
    assert end["cleaning_auc"] >= 0.8


def test_ibcg_l2_ball_fw_gap_and_upper_gap_in_300_iterations():
    # the nonconvex rule 1/sqrt(K): on a strongly convex l2 ball it
    # converges linearly, far within the horizon K = 1000
    records, _ = run_solver("IBCG", "quadratic", quadratic("l2_ball"),
                            {"step_rule": "nonconvex"}, n_iter=300,
                            eval_at=[0])
    start, end = records
    assert end["fw_gap"] <= start["fw_gap"] * 1e-4
    assert end["upper_gap_abs"] <= start["upper_gap_abs"] * 1e-4


def test_ibcg_box_fw_gap_tenfold_in_300_iterations():
    # a constant step on a polytope leaves an O(gamma) Frank-Wolfe gap
    # (Theorem 4.3): tenfold, not to zero
    records, _ = run_solver("IBCG", "quadratic", quadratic("box"),
                            {"step_rule": "nonconvex"}, n_iter=300,
                            eval_at=[0])
    start, end = records
    assert end["fw_gap"] <= start["fw_gap"] / 10
    assert end["upper_gap_abs"] <= start["upper_gap_abs"] / 10


@pytest.mark.parametrize("dataset, params, rule", [
    ("quadratic", quadratic("box"), "convex"),
    ("coreset_toy", {"mu_g": 1.0}, "convex"),
    ("matrix_completion", {"n": 20, "rank": 3}, "nonconvex")])
def test_ibcg_default_step_rule_follows_the_problem(dataset, params, rule):
    """Cor. 4.2 (log K / K) where F is convex, Cor. 4.4 (1/sqrt K) else."""
    import sys
    ibcg_step = sys.modules[
        component("solver", "IBCG").__module__].horizon_step
    _, solver = run_solver("IBCG", dataset, params, {}, n_iter=0)
    assert solver.steps.outer_step == ibcg_step(rule, solver.horizon)
    assert solver.steps["outer_step"].kind == "default"


def test_ibcg_convex_rule_wins_on_the_ill_conditioned_coreset_toy():
    """mu_g = 0.1, K = 1000 iterations: the default (the convex rule,
    since the toy's F is convex) ends nearer F* than 1/sqrt(K)."""
    ends = {}
    for gamma in ("by_problem", "nonconvex"):
        records, _ = run_solver("IBCG", "coreset_toy", {"mu_g": 0.1},
                                {"step_rule": gamma}, n_iter=1000,
                                eval_at=[0])
        ends[gamma] = records[-1]["upper_gap_abs"]
    assert ends["by_problem"] <= ends["nonconvex"] / 3


def test_ibcg_coreset_toy():
    """Abolfazli et al. 2023's toy (§5.1): mu_g = 1 with the nonconvex
    step; mu_g = 0.1 with the convex rule log(K)/K (the toy's l is
    convex)."""
    records, _ = run_solver("IBCG", "coreset_toy", {"mu_g": 1.0},
                            {"step_rule": "nonconvex"}, n_iter=300,
                            eval_at=[0])
    start, end = records
    assert end["fw_gap"] <= start["fw_gap"] / 100
    assert end["upper_gap_abs"] <= 1e-3
    records, _ = run_solver("IBCG", "coreset_toy", {"mu_g": 0.1},
                            {"step_rule": "convex"}, n_iter=1000,
                            eval_at=[0])
    start, end = records
    assert end["upper_gap_abs"] <= start["upper_gap_abs"] / 100


def test_ibcg_matrix_completion():
    records, _ = run_solver("IBCG", "matrix_completion", TINY_COMPLETION,
                            COMPLETION_STEPS["IBCG"], n_iter=300,
                            eval_at=[0])
    start, end = records
    assert end["fw_gap"] <= start["fw_gap"] / 10
    # Abolfazli et al. 2023 (Fig. 2) plot ||grad_y g(x_k, y_k)||
    assert end["inner_grad_norm"] <= start["inner_grad_norm"] / 100


def test_ibcg_takes_its_step_rule():
    _, solver = run_solver("IBCG", "quadratic", quadratic("box"),
                           {"step_rule": "convex", "horizon": 500}, n_iter=0)
    assert solver.steps.outer_step == pytest.approx(math.log(500) / 500)
    # the nonconvex rule on a problem that declares F convex
    _, solver = run_solver("IBCG", "quadratic", quadratic("box"),
                           {"step_rule": "nonconvex", "horizon": 400},
                           n_iter=0)
    assert solver.steps.outer_step == 1 / 20


def test_ibcg_outer_step_is_gamma_whatever_the_rule():
    # outer_step is gamma itself (a float, given); the rule choice is
    # step_rule and only sets gamma's default (outer_step None)
    for rule in ("by_problem", "nonconvex", "convex"):
        _, solver = run_solver("IBCG", "quadratic", quadratic("box"),
                               {"outer_step": 0.25, "step_rule": rule,
                                "horizon": 7}, n_iter=0)
        assert solver.steps.outer_step == 0.25
        assert solver.steps["outer_step"].kind == "given"


def test_ibcg_step_rules():
    import sys
    module = sys.modules[component("solver", "IBCG").__module__]
    assert module.horizon_step("nonconvex", 10_000) == pytest.approx(0.01)
    assert module.horizon_step("convex", 1000) == pytest.approx(
        math.log(1000) / 1000)
    with pytest.raises(ValueError, match="no horizon rule"):
        module.horizon_step("by_problem", 7)
    # w's step: half of its bound alpha = 2/(mu_g + L_g)
    assert module.default_linear_system_step(0.5) == 0.25


# -- feasibility and finite curves --------------------------------------------

# Matrix completion (Abolfazli et al. 2023, eq. (2), n = 20, rank 3) with
# the means of (2) as printed: alpha = 7.8 ~ 2/(mu_g + L_g_full) with
# mu_g = 2 lambda2 = 0.1 and L_g_full = 2/|Omega_2| + lambda1 + 2 lambda2
# ~ 0.156 (the smoothness of the pseudo-Huber term is at most 1 per entry);
# a sample is a row, so batches are at most n = 20 rows.
TINY_COMPLETION = dict(n=20, rank=3, reduction="mean")
COMPLETION_STEPS = {
    "IBCG": dict(inner_step=7.8, outer_step=0.0025),  # 1/(4 sqrt(1e4))
    "F2SA": dict(inner_step=1.6, batch_size=16),
    "stocBiO": dict(inner_step=7.8, linear_system_step=6.4, outer_step=100.0,
                    batch_size=16),
}
FEASIBILITY_CASES = (
    [(solver, "quadratic", dict(quadratic(constraint), radius=0.2), {})
     for solver, constraint in CASES]
    + [(solver, "coreset_toy", {"mu_g": 1.0}, params) for solver, params in
       [("IBCG", {}), ("F2SA", {"batch_size": None}),
        ("stocBiO", {"batch_size": None})]]
    + [(solver, "matrix_completion", TINY_COMPLETION, params)
       for solver, params in COMPLETION_STEPS.items()])
# (hyper-cleaning: X is the whole space, and its finite curves are checked
# by test_hyper_cleaning_in_300_iterations)


@pytest.mark.parametrize("solver, dataset, dataset_params, params",
                         FEASIBILITY_CASES)
def test_curves_are_finite_and_iterates_stay_in_X(solver, dataset,
                                                  dataset_params, params,
                                                  monkeypatch):
    objective_class = benchmark().get_benchmark_objective()
    original = objective_class.evaluate_result
    inside = []

    def checking(self, x, y=None, **kwargs):
        inside.append(self.problem.X.contains(x))
        return original(self, x=x, y=y, **kwargs)

    monkeypatch.setattr(objective_class, "evaluate_result", checking)
    n_iter = 40
    # on the quadratic, a small radius makes the constraint active
    records, _ = run_solver(solver, dataset, dataset_params, params,
                            n_iter=n_iter, eval_at=range(n_iter))
    assert len(inside) == n_iter + 1 and all(inside)
    unconstrained = (dataset == "quadratic"
                     and dataset_params["constraint"] == "none")
    key = "hypergrad_norm" if unconstrained else "fw_gap"
    for record in records:
        assert key in record
        assert record["diverged"] == 0
        for name, value in record.items():
            if name.endswith("_source"):    # where a step came from
                continue
            if value is None:               # a size that is a full pass
                assert record[name + "_source"].endswith("a full pass")
                continue
            assert np.isfinite(value), (solver, dataset, name, value)


# -- skips and bad input ------------------------------------------------------

def skip_of(solver_name, problem, **params):
    solver = component("solver", solver_name).get_instance(**params)
    return solver.skip(problem=CountingView(problem))


@pytest.mark.parametrize("solver", ["F2SA", "stocBiO"])
def test_single_sample_problems_run_with_full_passes(solver):
    # one sample per level: a mini-batch of 16 copies of it would be the
    # full pass charged 16 times, so the solver draws full passes instead
    problem = make_problem("coreset_toy", mu_g=1.0)
    assert skip_of(solver, problem) == (False, None)
    records, _ = run_solver(solver, "coreset_toy", {"mu_g": 1.0}, {},
                            n_iter=5)
    full, _ = run_solver(solver, "coreset_toy", {"mu_g": 1.0},
                         {"batch_size": None}, n_iter=5)
    for name in ("value", "n_samples_upper", "n_samples_lower"):
        assert records[-1][name] == full[-1][name]


def test_ibcg_skips_the_whole_space():
    skip, reason = skip_of("IBCG", make_problem("quadratic",
                                                **quadratic("none")))
    assert skip and "whole space" in reason


# every general solver whose default (None) parameters are computed from
# the problem's declared constants
FROM_PROBLEM = [solver.name for solver in benchmark().get_solvers()
                if solver.family == "general"
                and solver.defaults_from_problem()]


@pytest.mark.parametrize("solver", FROM_PROBLEM)
def test_default_steps_need_declared_constants(solver):
    problem = copy.copy(make_problem("quadratic", **quadratic("box")))
    # Without-BO also needs a problem that declares its single-level x
    problem.single_level_x = problem.x0
    assert skip_of(solver, problem) == (False, None)
    problem.L_g = None
    skip, reason = skip_of(solver, problem)
    names = component("solver", solver).defaults_from_problem()
    assert skip and all(name in reason for name in names), reason
    # explicit values need no constant
    assert skip_of(solver, problem, **{name: 0.1 for name in names}) == (
        False, None)


def test_constants_skip_covers_the_papers_methods():
    assert {"F2SA", "F3SA", "stocBiO", "IBCG", "BiAdam", "SUSTAIN", "MRBO",
            "VRBO", "FSLA", "AID-CG", "AID-FP", "ITD",
            "Without-BO"} <= set(FROM_PROBLEM)
