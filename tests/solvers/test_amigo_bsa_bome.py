"""AmIGO (Arbel & Mairal 2022, Alg. 1-3), BSA (Ghadimi & Wang 2018) and
BOME (Ye et al. 2022, Alg. 1): two iterations against the update equations
written out by hand in matrix form (full passes, so only BSA's drawn
truncation depths are random: a spy on its draw records them), the batches and
products of an iteration, the projection on a constrained X, a seeded
tenfold decrease of the hypergradient norm on the quick quadratic with
the defaults within a stated budget, and bad parameters.

By hand: the tiny quadratic's full-batch oracles in closed form,
g = 1/2 y^T H y + y^T C x + d^T y (grad_y g = H y + C x + d,
grad_x g = C^T y, grad^2_yy g = H, grad^2_xy g = C^T) and
f = 1/2 ||y - b||^2 + r/2 ||x - a||^2 up to constants (grad_y f = y - b,
grad_x f = r (x - a)).
"""
import inspect
import math

import pytest
import torch

from benchmark_utils.solvers.inner_loops import lower_smoothness

from conftest import component, make_problem, record_depths, run_solver

TINY = dict(dim_x=5, dim_y=4, n_samples=30, constraint="none")
QUICK = dict(dim_x=10, dim_y=10, n_samples=100)
TOL = dict(rtol=1e-12, atol=1e-12)


def tiny():
    """(P, H, C, d, grad_x f, grad_y f, grad_y g) on TINY."""
    P = make_problem("quadratic", **TINY)
    H, C, d = P.H_bar, P.C_bar, P.d_bar
    return (P, H, C, d, lambda x: P.upper_reg * (x - P.a_bar),
            lambda y: y - P.b_bar, lambda x, y: H @ y + C @ x + d)


def start_and_after(name, params, n_iter):
    _, start = run_solver(name, "quadratic", TINY, params, n_iter=0)
    _, after = run_solver(name, "quadratic", TINY, params, n_iter=n_iter)
    return start.x.clone(), start.y.clone(), after

def gradient_steps(grad_y_g, x, y, step, n):
    for _ in range(n):
        y = y - step * grad_y_g(x, y)
    return y


# -- iterations by hand -------------------------------------------------------

def test_amigo_two_iterations_match_algorithms_1_to_3(monkeypatch):
    params = dict(T=3, N=4, inner_step=0.15, linear_system_step=0.12,
                  outer_step=0.3, batch_size=None)
    # the linear-system variable, observed where the loop solves for it
    module = inspect.getmodule(component("solver", "AmIGO").iterations)
    solve, solutions = module.fixed_point_solve, []

    def recording(*args, **kwargs):
        solutions.append(solve(*args, **kwargs))
        return solutions[-1]

    monkeypatch.setattr(module, "fixed_point_solve", recording)
    x, y, solver = start_and_after("AmIGO", params, 2)
    P, H, C, d, gx, gy_f, gy_g = tiny()
    z = torch.zeros(P.dim_y, dtype=H.dtype)           # z_{-1} = 0
    for _ in range(2):
        y = gradient_steps(gy_g, x, y, params["inner_step"], params["T"])
        u = gy_f(y)
        for _ in range(params["N"]):                   # Algorithm 3
            z = z - params["linear_system_step"] * (H @ z + u)
        x = x - params["outer_step"] * (gx(x) + C.T @ z)
    torch.testing.assert_close(solver.x, x, **TOL)
    torch.testing.assert_close(solver.y, y, **TOL)
    torch.testing.assert_close(solutions[-1], -z, **TOL)    # v = -z


@pytest.mark.parametrize("step_rule, inner_steps_growth, inner_step_rule",
                         [("inverse_sqrt", "sqrt", "constant"),
                          ("constant", "linear", "constant"),
                          ("inverse_sqrt", "constant", "inverse_sqrt")])
def test_bsa_two_iterations_match_the_method(monkeypatch, step_rule,
                                             inner_steps_growth,
                                             inner_step_rule):
    params = dict(outer_step=0.4, step_rule=step_rule, inner_step=0.2, T=2,
                  inner_steps_growth=inner_steps_growth, neumann_depth_bound=6,
                  linear_system_step=0.1, batch_size=None,
                  inner_step_rule=inner_step_rule)
    _, start = run_solver("BSA", "quadratic", TINY, params, n_iter=0)
    x, y = start.x.clone(), start.y.clone()
    depths = record_depths(monkeypatch, "BSA")
    _, solver = run_solver("BSA", "quadratic", TINY, params, n_iter=2)
    P, H, C, d, gx, gy_f, gy_g = tiny()
    b, eta = params["neumann_depth_bound"], params["linear_system_step"]
    M = torch.eye(H.shape[0], dtype=H.dtype) - eta * H
    exponent = {"constant": 0.0, "sqrt": 0.5,
                "linear": 1.0}[inner_steps_growth]
    assert len(depths) == 2
    assert all(0 <= p < b for p in depths)
    for k, p in enumerate(depths):
        t_k = math.ceil(params["T"] * (k + 1) ** exponent)
        beta_k = params["inner_step"] / (
            math.sqrt(k + 1) if inner_step_rule == "inverse_sqrt" else 1.0)
        y = gradient_steps(gy_g, x, y, beta_k, t_k)
        w = b * eta * torch.linalg.matrix_power(M, p) @ gy_f(y)
        alpha_k = params["outer_step"] / (math.sqrt(k + 1)
                                          if step_rule == "inverse_sqrt"
                                          else 1.0)
        x = x - alpha_k * (gx(x) - C.T @ w)
    torch.testing.assert_close(solver.x, x, **TOL)
    torch.testing.assert_close(solver.y, y, **TOL)


@pytest.mark.parametrize("choice_phi", ["grad_norm", "value_gap"])
def test_bome_two_iterations_match_algorithm_1(choice_phi):
    params = dict(T=3, inner_step=0.2, outer_step=0.07, joint_y_step=0.05,
                  eta=0.8, choice_phi=choice_phi, batch_size=None)
    x, y, solver = start_and_after("BOME", params, 2)
    P, H, C, d, gx, gy_f, gy_g = tiny()

    def g(x, y):
        return 0.5 * y @ H @ y + y @ (C @ x) + d @ y

    for _ in range(2):
        y_T = gradient_steps(gy_g, x, y, params["inner_step"], params["T"])
        q_x, q_y = C.T @ (y - y_T), gy_g(x, y)
        f_x, f_y = gx(x), gy_f(y)
        sq_norm = q_x @ q_x + q_y @ q_y
        phi = params["eta"] * (sq_norm if choice_phi == "grad_norm"
                               else g(x, y) - g(x, y_T))
        lam = max(float(phi - (f_x @ q_x + f_y @ q_y)), 0.0) / sq_norm
        x, y = (x - params["outer_step"] * (f_x + lam * q_x),
                y - params["joint_y_step"] * (f_y + lam * q_y))
    torch.testing.assert_close(solver.x, x, **TOL)
    torch.testing.assert_close(solver.y, y, **TOL)


def test_bome_multiplier_is_zero_when_grad_q_vanishes():
    dynamic_barrier_multiplier = component(
        "solver", "BOME").dynamic_barrier_multiplier
    zero = (torch.zeros(3, dtype=torch.float64),
            torch.zeros(2, dtype=torch.float64))
    grad_f = (torch.ones(3, dtype=torch.float64),
              torch.ones(2, dtype=torch.float64))
    lam = dynamic_barrier_multiplier(grad_f, zero,
                                     torch.tensor(0.0, dtype=torch.float64))
    assert lam.item() == 0.0
    # and an active barrier on a known pair: (phi - <a, b>) / ||b||^2
    grad_q = (torch.tensor([1.0, 0.0, 0.0], dtype=torch.float64),
              torch.tensor([0.0, -2.0], dtype=torch.float64))
    lam = dynamic_barrier_multiplier(grad_f, grad_q,
                                     torch.tensor(2.5, dtype=torch.float64))
    assert lam.item() == pytest.approx((2.5 - (1.0 - 2.0)) / 5.0)


def test_default_steps_follow_the_declared_curvature():
    P = make_problem("quadratic", **TINY)
    _, amigo = run_solver("AmIGO", "quadratic", TINY, {}, n_iter=0)
    assert (amigo.steps.inner_step == amigo.steps.linear_system_step
            == 1.0 / P.L_g)
    _, bsa = run_solver("BSA", "quadratic", TINY, {}, n_iter=0)
    assert bsa.steps.inner_step == 2.0 / (P.L_g + P.mu_g)
    assert bsa.steps.linear_system_step == 1.0 / P.L_g
    assert bsa.steps.outer_step == 0.3          # outer_step_scale 1
    _, bome = run_solver("BOME", "quadratic", TINY, {}, n_iter=0)
    assert bome.steps.inner_step == 2.0 / (lower_smoothness(P, True)
                                           + P.mu_g)
    assert bome.steps.outer_step == 0.05        # outer_step_scale 1
    assert bome.steps.joint_y_step == 0.16 / lower_smoothness(P, True)


@pytest.mark.usefixtures("documented_defaults")
def test_bome_steps_read_the_start_curvature_with_full_passes():
    # hyper-cleaning declares L_g_start, the full sum's curvature at the
    # start: full passes read it (inner_step = 1 / L_g_start), mini-batches
    # the per-batch bound L_g (docs/solvers_benchmark_bilevel.md, "BOME")
    P = make_problem("hyper_cleaning")
    _, full = run_solver("BOME", "hyper_cleaning", {}, {}, n_iter=0)
    assert full.steps.inner_step == 1.0 / P.L_g_start
    assert full.steps.joint_y_step == 0.16 / P.L_g_start
    assert full.steps.outer_step == 0.05 * P.outer_step_scale
    _, batch = run_solver("BOME", "hyper_cleaning", {}, {"batch_size": 16},
                          n_iter=0)
    assert batch.steps.inner_step == 2.0 / (P.L_g + P.mu_g)
    assert batch.steps.joint_y_step == 0.16 / P.L_g
    _, given = run_solver("BOME", "hyper_cleaning", {},
                          {"inner_step": 0.5, "joint_y_step": 0.2}, n_iter=0)
    assert (given.steps.inner_step, given.steps.joint_y_step) == (0.5, 0.2)
    assert given.steps["joint_y_step"].source == "given"
    assert full.steps["joint_y_step"].source == "default: 0.16/L"


# -- accounting ---------------------------------------------------------------

def test_amigo_counts_per_iteration():
    T, N, S, B, K = 3, 2, 4, 5, 6
    records, _ = run_solver("AmIGO", "quadratic", TINY,
                            {"T": T, "N": N, "batch_size": S,
                             "outer_batch_size": B}, n_iter=K)
    last = records[-1]
    assert last["n_samples_upper"] == K * B                 # D_f
    # T batches for y, N for z (N - 1 drawn at the first solve, from 0),
    # one for the cross product
    assert last["n_samples_lower"] == K * (T * S + B) + (K * N - 1) * S
    assert last["n_grad_evals"] == K * (T * S + B)
    assert last["n_hvp"] == (K * N - 1) * S + K * B
    assert last["n_projections"] == 0


def test_bsa_counts_per_iteration(monkeypatch):
    T, S, B, K = 3, 4, 5, 6
    drawn = record_depths(monkeypatch, "BSA")
    records, _ = run_solver("BSA", "quadratic", TINY,
                            {"T": T, "inner_steps_growth": "sqrt",
                             "batch_size": S, "outer_batch_size": B},
                            n_iter=K)
    last = records[-1]
    inner = sum(math.ceil(T * math.sqrt(k + 1)) for k in range(K))
    depths = sum(drawn)
    assert len(drawn) == K
    assert last["n_samples_upper"] == K * B
    # only the p drawn Hessian factors and the cross batch are drawn
    assert last["n_samples_lower"] == inner * S + (depths + K) * B
    assert last["n_grad_evals"] == inner * S + K * B
    assert last["n_hvp"] == (depths + K) * B
    assert last["n_projections"] == 0


@pytest.mark.parametrize("choice_phi, values", [("grad_norm", 0),
                                                ("value_gap", 2)])
def test_bome_counts_per_iteration(choice_phi, values):
    T, K = 3, 5
    n = TINY["n_samples"]
    records, _ = run_solver("BOME", "quadratic", TINY,
                            {"T": T, "choice_phi": choice_phi}, n_iter=K)
    last = records[-1]
    assert last["n_samples_upper"] == K * n
    # T passes for the inner steps, one shared by grad q (and its values)
    assert last["n_samples_lower"] == K * (T + 1) * n
    # grad_y g per inner step, grad f, grad g and grad_x g at y^T
    assert last["n_grad_evals"] == K * (T + 3) * n
    assert last["n_value_evals"] == K * values * n
    assert last["n_hvp"] == 0
    S = 7
    records, _ = run_solver("BOME", "quadratic", TINY,
                            {"T": T, "batch_size": S}, n_iter=K)
    assert records[-1]["n_samples_lower"] == K * (T + 1) * S
    assert records[-1]["n_samples_upper"] == K * S


@pytest.mark.parametrize("name", ["AmIGO", "BSA", "BOME"])
def test_constrained_x_projects_once_per_iteration(name):
    records, _ = run_solver(name, "quadratic",
                            dict(TINY, constraint="l2_ball"), {}, n_iter=5)
    assert records[-1]["n_projections"] == 5
    assert not records[-1]["diverged"]


# -- convergence with the defaults --------------------------------------------

@pytest.mark.parametrize("name, n_iter, eval_at", [
    ("AmIGO", 100, [0, 50]),
    # BSA's randomized truncation keeps a variance that only the decaying
    # step removes: worst of ten seeds 0.07 at iteration 200, 0.093 at 316
    ("BSA", 316, [0, 200]),
    ("BOME", 200, [0, 100]),
])
def test_defaults_tenfold_on_quick_quadratic(name, n_iter, eval_at):
    records, _ = run_solver(name, "quadratic", QUICK, {}, n_iter=n_iter,
                            eval_at=eval_at)
    start = records[0]["hypergrad_norm"]
    assert all(r["hypergrad_norm"] <= start / 10 for r in records[1:])
    assert not any(r["diverged"] for r in records)


# -- bad parameters -----------------------------------------------------------

@pytest.mark.parametrize("name, params, message", [
    ("AmIGO", {"T": 0}, "T must be"),
    ("AmIGO", {"N": 0}, "N must be"),
    ("AmIGO", {"N": 2.5}, "N must be"),
    ("AmIGO", {"inner_step": 0.0}, "inner_step must be"),
    ("AmIGO", {"linear_system_step": -1.0}, "linear_system_step must be"),
    ("AmIGO", {"outer_step": float("nan")}, "outer_step must be"),
    ("AmIGO", {"outer_batch_size": 0}, "outer_batch_size must be"),
    ("BSA", {"outer_step": -0.1}, "outer_step must be"),
    ("BSA", {"step_rule": "cosine"}, "step_rule must be one of"),
    ("BSA", {"inner_step_rule": "cosine"}, "inner_step_rule must be one of"),
    ("BSA", {"inner_step": 0.0}, "inner_step must be"),
    ("BSA", {"T": 0}, "T must be"),
    ("BSA", {"inner_steps_growth": "quadratic"},
     "inner_steps_growth must be one of"),
    ("BSA", {"step_rule": "decaying"}, "step_rule must be one of"),
    ("BSA", {"neumann_depth_bound": 0}, "neumann_depth_bound must be"),
    ("BSA", {"linear_system_step": float("inf")},
     "linear_system_step must be"),
    ("BSA", {"outer_batch_size": -3}, "outer_batch_size must be"),
    ("BOME", {"T": 0}, "T must be"),
    ("BOME", {"inner_step": -1.0}, "inner_step must be"),
    ("BOME", {"outer_step": 0.0}, "outer_step must be"),
    ("BOME", {"joint_y_step": "big"}, "joint_y_step must be"),
    ("BOME", {"eta": 0.0}, "eta must be"),
    ("BOME", {"choice_phi": "value"}, "choice_phi must be one of"),
    ("BOME", {"batch_size": 0}, "batch_size must be"),
])
def test_bad_parameters(name, params, message):
    with pytest.raises(ValueError, match=message):
        component("solver", name).get_instance(**params).check_parameters()


@pytest.mark.parametrize("name", ["AmIGO", "BSA"])
def test_outer_batch_size_above_the_levels_raises(name):
    with pytest.raises(ValueError, match="outer_batch_size"):
        run_solver(name, "quadratic", TINY, {"outer_batch_size": 31},
                   n_iter=0)
