"""SBFW (Akhtar et al. 2022) and TTSA (Hong et al. 2023), the baselines of
Abolfazli et al. 2023 (App. G.1): iterations against the update equations
written out by hand in matrix form on the tiny quadratic (full passes, so the
only randomness is the drawn Neumann depth, recorded by a spy on the
solver's draw), per-iteration sample / oracle counts, seeded convergence
with the defaults within a stated budget, skips and bad parameters.

Tiny quadratic: dim_x = 5, dim_y = 4, 30 samples per level, mu_g = 0.5,
L_g = 5.25; f = upper_reg/2 ||x - a||^2 + 1/2 ||y - b||^2 and
grad_y g = H y + C x + d (closed-form full-batch oracles).
"""
import math

import pytest
import torch

from conftest import component, make_problem, record_depths, run_solver

TINY = dict(dim_x=5, dim_y=4, n_samples=30)
QUICK = dict(dim_x=10, dim_y=10, n_samples=100)
TOL = dict(rtol=1e-12, atol=1e-12)

def start_of(solver_name, constraint, params):
    _, solver = run_solver(solver_name, "quadratic",
                           dict(TINY, constraint=constraint), params,
                           n_iter=0)
    return solver.x, solver.y, solver


def oracles(constraint):
    P = make_problem("quadratic", **dict(TINY, constraint=constraint))
    eye = torch.eye(P.dim_y, dtype=P.H_bar.dtype)
    return P, eye


# -- SBFW: iterations = Abolfazli et al. 2023, App. G.1 -----------------------

def sbfw_by_hand(P, eye, x0, y0, solver, depths, n_iter, exact=False):
    """(x_{K+1}, y_K) of SBFW's recursion in matrix form."""
    H, C, d, L = P.H_bar, P.C_bar, P.d_bar, P.L_g

    def h(x, y, k, depth):
        grad_y_f = y - P.b_bar
        if exact:
            w = torch.linalg.solve(H, grad_y_f)
        else:
            w = ((k / L) * torch.linalg.matrix_power(eye - H / L, depth)
                 @ grad_y_f)
        return P.upper_reg * (x - P.a_bar) - C.T @ w

    x_prev, y_prev, x, dk = x0, y0, x0, None
    for k in range(1, n_iter + 1):
        rho = min(1.0, 2 / math.sqrt(k))
        eta = min(1.0, solver.steps.outer_step / (k + 1) ** 0.75)
        delta = solver.steps.inner_step / math.sqrt(k)
        y = y_prev - delta * (H @ y_prev + C @ x_prev + d)
        depth = None if exact else depths[k - 1]
        new = h(x, y, k, depth)
        dk = new if dk is None else (
            (1 - rho) * (dk - h(x_prev, y_prev, k, depth)) + new)
        s = P.X.lmo(dk)
        x_prev, y_prev, x = x, y, (1 - eta) * x + eta * s
    return x, y_prev


@pytest.mark.parametrize("constraint", ["l2_ball", "box"])
def test_sbfw_seven_iterations_match_the_recursion(monkeypatch, constraint):
    # seven iterations: rho_k < 1 from k = 5, so the STORM correction (the
    # same depth l at both points) is exercised twice
    params = {"hessian_inverse": "neumann", "outer_step": 1.0}
    depths = record_depths(monkeypatch, "SBFW", "draw_positive_depth")
    x0, y0, _ = start_of("SBFW", constraint, params)
    depths.clear()
    _, solver = run_solver("SBFW", "quadratic", dict(TINY,
                           constraint=constraint), params, n_iter=7)
    assert len(depths) == 7 and all(1 <= depth <= k + 1
                                    for k, depth in enumerate(depths))
    P, eye = oracles(constraint)
    x, y = sbfw_by_hand(P, eye, x0, y0, solver, depths, 7)
    torch.testing.assert_close(solver.x, x, **TOL)
    torch.testing.assert_close(solver.y, y, **TOL)


def test_sbfw_exact_hessian_inverse_matches_the_solve():
    x0, y0, _ = start_of("SBFW", "box", {})
    _, solver = run_solver("SBFW", "quadratic", dict(TINY, constraint="box"),
                           {}, n_iter=6)
    P, eye = oracles("box")
    x, y = sbfw_by_hand(P, eye, x0, y0, solver, None, 6, exact=True)
    # conjugate gradient stops at a relative residual of 1e-12: kappa_g
    # (10.5) times that bounds the difference with the direct solve
    torch.testing.assert_close(solver.x, x, rtol=1e-10, atol=1e-10)
    torch.testing.assert_close(solver.y, y, **TOL)


def test_sbfw_default_steps():
    _, _, solver = start_of("SBFW", "box", {})
    P, steps = solver.problem, solver.steps
    a0 = min(2 / (3 * P.mu_g), P.mu_g / (2 * P.L_g ** 2))
    # delta_1 = delta_factor (50) x the theory's a_0, capped at 1/L_g
    assert steps.inner_step == pytest.approx(min(50 * a0, 1 / P.L_g),
                                             rel=1e-15)
    assert steps.outer_step == 2.0          # the paper's eta_k = 2/(k+1)^3/4
    assert steps.neumann_series_step == 0.0     # "exact": no series
    assert solver.schedule(1) == pytest.approx((1.0, 1.0, steps.inner_step))
    assert solver.schedule(16) == pytest.approx(
        (0.5, 2 / 17 ** 0.75, steps.inner_step / 4))
    # the theory's delta (delta_factor 1): a_0 itself, below 1/L_g
    _, _, solver = start_of("SBFW", "box", {"delta_factor": 1.0})
    assert solver.steps.inner_step == pytest.approx(a0, rel=1e-15)
    _, _, solver = start_of("SBFW", "box", {"hessian_inverse": "neumann"})
    assert solver.steps.neumann_series_step == 1 / P.L_g


def test_sbfw_inner_step_is_the_y_step_at_k_1():
    # inner_step is delta_1 in delta_k = delta_1/k^{1/2} (no longer a_0
    # times delta_factor): given, it is used as is, delta_factor only sets
    # the default; the old SBFW[inner_step=a, delta_factor=c] is
    # inner_step = c a
    _, _, solver = start_of("SBFW", "box",
                            {"inner_step": 0.05, "delta_factor": 5})
    assert solver.steps.inner_step == 0.05
    assert solver.schedule(4)[2] == 0.05 / 2
    # the recorded steps rerun the curve where the default is capped
    records, solver = run_solver("SBFW", "quadratic",
                                 dict(TINY, constraint="box"), {}, n_iter=5)
    P = solver.problem
    assert solver.steps.inner_step == 1 / P.L_g     # 50 a_0 > 1/L_g here
    _, again = run_solver("SBFW", "quadratic",
                          dict(TINY, constraint="box"),
                          solver.steps.given(), n_iter=5)
    assert torch.equal(again.x, solver.x) and torch.equal(again.y, solver.y)


def test_sbfw_outer_step_is_the_x_steps_numerator():
    # outer_step is eta_0 in eta_k = eta_0/(k+1)^{3/4} (the paper's 2), no
    # longer a multiplier of the paper's eta_k: Abolfazli et al.'s "eta x
    # 0.8" (matrix completion) is outer_step = 1.6, bit for bit
    _, _, solver = start_of("SBFW", "box", {"outer_step": 1.6})
    assert solver.steps.outer_step == 1.6
    assert solver.steps["outer_step"].kind == "given"
    for k in (1, 2, 5, 16, 1000):
        assert solver.schedule(k)[1] == min(1.0, 0.8 * 2.0 / (k + 1) ** 0.75)


# -- SBFW: accounting ---------------------------------------------------------

def test_sbfw_full_pass_counts(monkeypatch):
    K = 7
    depths = record_depths(monkeypatch, "SBFW", "draw_positive_depth")
    records, solver = run_solver(
        "SBFW", "quadratic", dict(TINY, constraint="box"),
        {"hessian_inverse": "neumann"}, n_iter=K)
    last, n = records[-1], solver.problem.n_lower
    # one upper and one lower full pass per iteration, shared by the
    # y-step and both points
    assert last["n_samples_upper"] == K * n
    assert last["n_samples_lower"] == K * n
    # l factors + one cross product per point; one point while rho_k = 1
    points = [1 if k <= 4 else 2 for k in range(1, K + 1)]
    assert last["n_hvp"] == n * sum(
        p * (depth + 1) for p, depth in zip(points, depths, strict=True))
    assert last["n_grad_evals"] == n * sum(1 + p for p in points)
    assert last["n_lmo"] == K and last["n_projections"] == 0


def test_sbfw_minibatch_counts(monkeypatch):
    K, S = 6, 4
    depths = record_depths(monkeypatch, "SBFW", "draw_positive_depth")
    records, _ = run_solver(
        "SBFW", "quadratic", dict(TINY, constraint="l2_ball"),
        {"hessian_inverse": "neumann", "batch_size": S}, n_iter=K)
    last = records[-1]
    # one upper batch; lower: y-step, cross products, one per factor
    assert last["n_samples_upper"] == K * S
    assert last["n_samples_lower"] == S * sum(2 + depth for depth in depths)


# -- TTSA: iterations = Abolfazli et al. 2023, App. G.1 -----------------------

@pytest.mark.parametrize("constraint, step_rule, fixed", [
    ("none", "harmonic", False), ("none", "constant", False),
    ("box", "harmonic", False), ("none", "decreasing", True)])
def test_ttsa_iterations_match_the_updates(monkeypatch, constraint,
                                           step_rule, fixed):
    # fixed: benchmark_bilevel's depth bound (n_hia_steps) and Neumann step
    K = 4
    params = {"step_rule": step_rule}
    if fixed:
        params.update(depth_rule="fixed", neumann_depth_bound=3,
                      linear_system_step=0.05)
    depths = record_depths(monkeypatch, "TTSA", "draw_neumann_depth")
    x, y, _ = start_of("TTSA", constraint, params)
    depths.clear()
    _, solver = run_solver("TTSA", "quadratic", dict(TINY,
                           constraint=constraint), params, n_iter=K)
    P, eye = oracles(constraint)
    H, C, d, L, mu = P.H_bar, P.C_bar, P.d_bar, P.L_g, P.mu_g
    eta = 0.05 if fixed else solver.c_h / L
    for k in range(K):
        t_max = 3 if fixed else max(1, math.ceil(L / mu * math.log(k + 2)))
        assert 0 <= depths[k] < t_max
        w = (t_max * eta * torch.linalg.matrix_power(eye - eta * H, depths[k])
             @ (y - P.b_bar))
        h_f = P.upper_reg * (x - P.a_bar) - C.T @ w
        h_g = H @ y + C @ x + d
        alpha, beta = solver.steps.outer_step, solver.steps.inner_step
        if step_rule == "harmonic":
            ratio = solver.step_offset / (solver.step_offset + k)
            alpha, beta = alpha * ratio, beta * ratio ** (2 / 3)
        if step_rule == "decreasing":
            alpha, beta = alpha / (k + 1) ** 0.6, beta / (k + 1) ** 0.4
        x = x - alpha * h_f
        if constraint != "none":
            x = P.X.project(x)
        y = y - beta * h_g
    torch.testing.assert_close(solver.x, x, **TOL)
    torch.testing.assert_close(solver.y, y, **TOL)


def test_ttsa_default_beta():
    _, _, solver = start_of("TTSA", "none", {})
    P, steps = solver.problem, solver.steps
    theory = min(P.mu_g / P.L_g ** 2, 2 * 1000 ** -0.4 / P.mu_g)
    assert steps.inner_step == pytest.approx(min(10 * theory, 1 / P.L_g),
                                             rel=1e-15)
    assert steps.outer_step == 0.1 * P.outer_step_scale
    assert steps.linear_system_step == 0.5 / P.L_g
    assert steps.kappa == P.L_g / P.mu_g
    # the horizon K sets the theory's beta: 10 x 2 K^{-2/5}/mu_g < 1/L_g
    _, _, solver = start_of("TTSA", "none", {"horizon": 10 ** 6})
    assert solver.steps.inner_step == pytest.approx(
        10 * 2 * (10 ** 6) ** -0.4 / P.mu_g, rel=1e-15)
    assert solver.steps.inner_step < 1 / P.L_g


@pytest.mark.parametrize("params", [
    {}, {"neumann_depth_bound": None}, {"neumann_depth_bound": 12},
    {"depth_rule": "fixed", "neumann_depth_bound": 12}], ids=str)
def test_ttsa_depth_bound_is_the_theorys_capped(params):
    """t_max(k) = ceil(kappa log(k + 1)) grows with kappa = L_g / mu_g
    (1e4 on hyper-cleaning: 1e5 products an iteration), so by default it
    is capped at neumann_depth_bound = 100 (None: no cap); "fixed" uses
    neumann_depth_bound alone."""
    _, _, solver = start_of("TTSA", "none", params)
    kappa, cap = solver.steps.kappa, params.get("neumann_depth_bound", 100)
    assert kappa * math.log(10 ** 9) > 100         # the cap binds late on
    for k in (1, 10, 1000, 10 ** 9):
        theory = math.ceil(kappa * math.log(k + 1))
        expected = (cap if params.get("depth_rule") == "fixed"
                    else theory if cap is None else min(theory, cap))
        assert solver.depth_bound(k) == expected, k


def test_ttsa_inner_step_is_the_y_step():
    # a given inner_step is beta_0 itself (it was multiplied by
    # the removed beta_factor, 10 by default), uncapped
    _, solver = run_solver("TTSA", "quadratic", dict(TINY, constraint="none"),
                           {"inner_step": 0.1, "step_rule": "constant"},
                           n_iter=0)
    assert solver.steps.inner_step == 0.1
    assert solver.steps["inner_step"].kind == "given"
    assert solver.step_sizes(7) == (solver.steps.outer_step, 0.1)


# -- TTSA: accounting ---------------------------------------------------------

@pytest.mark.parametrize("constraint, projections", [("none", 0), ("box", 1)])
def test_ttsa_full_pass_counts(monkeypatch, constraint, projections):
    K = 6
    depths = record_depths(monkeypatch, "TTSA", "draw_neumann_depth")
    records, solver = run_solver("TTSA", "quadratic",
                                 dict(TINY, constraint=constraint), {},
                                 n_iter=K)
    last, n = records[-1], solver.problem.n_lower
    assert last["n_samples_upper"] == K * n
    assert last["n_samples_lower"] == K * n
    assert last["n_hvp"] == n * sum(p + 1 for p in depths)
    assert last["n_grad_evals"] == K * 2 * n      # grad f and grad_y g
    assert last["n_projections"] == K * projections


def test_ttsa_minibatch_counts(monkeypatch):
    K, S = 6, 4
    depths = record_depths(monkeypatch, "TTSA", "draw_neumann_depth")
    records, _ = run_solver("TTSA", "quadratic", dict(TINY, constraint="none"),
                            {"batch_size": S}, n_iter=K)
    last = records[-1]
    # upper: grad f; lower: h^g, the cross product, one per factor
    assert last["n_samples_upper"] == K * S
    assert last["n_samples_lower"] == S * sum(p + 2 for p in depths)
    assert last["n_hvp"] == S * sum(p + 1 for p in depths)


# -- convergence with the defaults --------------------------------------------

@pytest.mark.parametrize("constraint", ["l2_ball", "box"])
def test_sbfw_defaults_tenfold_fw_gap_in_100_iterations(constraint):
    records, _ = run_solver("SBFW", "quadratic",
                            dict(QUICK, constraint=constraint), {},
                            n_iter=100, eval_at=[0, 50])
    gaps = [r["fw_gap"] for r in records]
    assert gaps[-1] <= gaps[0] / 10
    assert all(math.isfinite(g) and g <= 2 * gaps[0] for g in gaps)
    assert not records[-1]["diverged"]


def test_ttsa_defaults_tenfold_hypergrad_norm_in_300_iterations():
    records, _ = run_solver("TTSA", "quadratic", QUICK, {}, n_iter=300,
                            eval_at=[0, 100, 200])
    norms = [r["hypergrad_norm"] for r in records]
    assert norms[-1] <= norms[0] / 10
    assert all(math.isfinite(g) and g <= 2 * norms[0] for g in norms)
    assert not records[-1]["diverged"]


# -- skips and bad parameters -------------------------------------------------

def test_sbfw_skips_the_whole_space():
    problem = make_problem("quadratic", **dict(TINY, constraint="none"))
    skip, reason = component("solver", "SBFW").get_instance().skip(problem)
    assert skip and "bounded X" in reason


@pytest.mark.parametrize("solver, params, name", [
    ("SBFW", {"inner_step": 0.0}, "inner_step"),
    ("SBFW", {"delta_factor": -1.0}, "delta_factor"),
    ("SBFW", {"outer_step": 0.0}, "outer_step"),
    ("SBFW", {"hessian_inverse": "cg"}, "hessian_inverse"),
    ("SBFW", {"batch_size": 0}, "batch_size"),
    ("TTSA", {"outer_step": 0.0}, "outer_step"),
    ("TTSA", {"inner_step": -0.1}, "inner_step"),
    ("TTSA", {"horizon": 0}, "horizon"),
    ("TTSA", {"c_h": 1.5}, "c_h"),
    ("TTSA", {"c_h": 0.0}, "c_h"),
    ("TTSA", {"step_rule": "linear"}, "step_rule"),
    ("TTSA", {"step_offset": 0}, "step_offset"),
    ("TTSA", {"neumann_depth_bound": 0}, "neumann_depth_bound"),
    ("TTSA", {"depth_rule": "capped"}, "depth_rule"),
    ("TTSA", {"depth_rule": "fixed", "neumann_depth_bound": None},
     "neumann_depth_bound"),
    ("TTSA", {"linear_system_step": -1.0}, "linear_system_step"),
])
def test_bad_parameters_raise(solver, params, name):
    # checked before any run, at the latest in skip (benchopt's first hook)
    problem = make_problem("quadratic", **dict(TINY, constraint="box"))
    with pytest.raises(ValueError, match=name):
        component("solver", solver).get_instance(**params).skip(problem)
