"""SUSTAIN (Khanduri et al. 2021, Alg. 1) and MRBO (Yang, Ji, Liang 2021,
Alg. 1): two iterations against the update equations written out by hand
in matrix form (full passes, so only SUSTAIN's drawn truncation depths are
random: the test records them by wrapping the depth draw), the batches and
Hessian-vector products of an iteration, the projection on a constrained
X, a seeded decrease of the hypergradient norm on the quick quadratic and
bad parameters.

By hand: the tiny quadratic's full-batch oracles in closed form
(:func:`tiny_oracles`), so each iteration is a few matrix products.
"""

import pytest
import torch

from conftest import component, make_problem, record_depths, run_solver

TINY = dict(dim_x=5, dim_y=4, n_samples=30)
QUICK = dict(dim_x=10, dim_y=10, n_samples=100)


def tiny_oracles():
    """(grad_x f, grad_y f, grad_y g, H, C) on TINY: grad_x f = r (x - a),
    grad_y f = y - b, grad_y g = H y + C x + d, grad^2_yy g = H and
    grad^2_xy g = C^T."""
    P = make_problem("quadratic", **TINY)
    H, C, d = P.H_bar, P.C_bar, P.d_bar
    return (lambda x: P.upper_reg * (x - P.a_bar), lambda y: y - P.b_bar,
            lambda x, y: H @ y + C @ x + d, H, C)

def start(name, params):
    _, solver = run_solver(name, "quadratic", TINY, params, n_iter=0)
    return solver.x.clone(), solver.y.clone()


def test_sustain_two_iterations_match_the_algorithm(monkeypatch):
    # y step min(c_beta alpha_t, theta), theta = 1/4.1, caps it at t = 1
    # (0.252) and not at t = 2 (0.234), so both branches are checked
    params = dict(neumann_depth_bound=5, batch_size=None,
                  linear_system_step=1.0 / 4.1,
                  step_offset=3.0, inner_step_ratio=0.4, c_eta=0.5,
                  c_tau=0.7)
    depths = record_depths(monkeypatch, "SUSTAIN")
    _, solver = run_solver("SUSTAIN", "quadratic", TINY, params, n_iter=2)
    gx, gy_f, gy_g, H, C = tiny_oracles()
    K, th = params["neumann_depth_bound"], params["linear_system_step"]
    M = torch.eye(H.shape[0], dtype=H.dtype) - th * H

    def hatgrad(x, y, k):       # K/L_g prod_{i<=k} (I - H/L_g), full passes
        return gx(x) - C.T @ (K * th * torch.linalg.matrix_power(M, k)
                              @ gy_f(y))

    def alpha(t):
        return (params["step_offset"] + t) ** (-1.0 / 3.0)

    def beta(t):
        return min(params["inner_step_ratio"] * alpha(t), th)

    x1, y1 = start("SUSTAIN", params)
    k1, k2 = depths
    h_f, h_g = hatgrad(x1, y1, k1), gy_g(x1, y1)
    x2 = x1 - alpha(1) * h_f
    assert beta(1) == th and beta(2) < th
    y2 = y1 - beta(1) * h_g
    eta, tau = params["c_eta"] * alpha(1) ** 2, params["c_tau"] * alpha(1) ** 2
    h_f = hatgrad(x2, y2, k2) + (1 - eta) * (h_f - hatgrad(x1, y1, k2))
    h_g = gy_g(x2, y2) + (1 - tau) * (h_g - gy_g(x1, y1))
    x3 = x2 - alpha(2) * h_f
    y3 = y2 - beta(2) * h_g
    torch.testing.assert_close(solver.x, x3, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(solver.y, y3, rtol=1e-12, atol=1e-12)


def test_sustain_outer_step_is_the_x_step_at_t_1():
    # outer_step = s alpha_1; the derived x_step_scale s = outer_step /
    # alpha_1 scales alpha_t (w = 4: alpha_1 = 5^(-1/3)). Depth 0 with one
    # Neumann term: hatgrad f = grad_x f - C^T theta grad_y f
    alpha_1 = 5.0 ** (-1.0 / 3.0)
    params = dict(neumann_depth_bound=1, batch_size=None, outer_step=0.3)
    _, solver = run_solver("SUSTAIN", "quadratic", TINY, params, n_iter=1)
    gx, gy_f, _, _, C = tiny_oracles()
    x0, y0 = start("SUSTAIN", params)
    theta = solver.steps.linear_system_step
    torch.testing.assert_close(
        solver.x, x0 - 0.3 * (gx(x0) - C.T @ (theta * gy_f(y0))),
        rtol=1e-12, atol=1e-12)
    assert solver.steps.x_step_scale == pytest.approx(0.3 / alpha_1,
                                                      rel=1e-15)
    assert solver.steps["x_step_scale"].kind == "derived"
    # default: the paper's alpha_1 (s = 1) on the quadratic, whose
    # outer_step_scale and batch smoothness ratio are 1
    _, default = run_solver("SUSTAIN", "quadratic", TINY,
                            {"batch_size": None}, n_iter=0)
    assert default.steps.outer_step == pytest.approx(alpha_1, rel=1e-15)
    assert default.steps.x_step_scale == 1.0


def test_mrbo_two_iterations_match_the_algorithm():
    # neumann_terms = Q + 1: Q = 4 Hessian factors
    params = dict(neumann_terms=5, batch_size=None, linear_system_step=0.1,
                  outer_step=0.5, inner_step=0.3, step_scale=1.2, c1=0.6,
                  c2=0.9, step_offset=None)
    _, solver = run_solver("MRBO", "quadratic", TINY, params, n_iter=2)
    gx, gy_f, gy_g, H, C = tiny_oracles()
    eta = params["linear_system_step"]
    M = torch.eye(H.shape[0], dtype=H.dtype) - eta * H
    # eta sum_{q=-1}^{Q-1} (I - eta H)^{q+1}: Q + 1 = neumann_terms terms
    neumann = eta * sum(torch.linalg.matrix_power(M, q)
                        for q in range(params["neumann_terms"]))

    def hatgrad(x, y):
        return gx(x) - C.T @ (neumann @ gy_f(y))

    d, c1, c2 = params["step_scale"], params["c1"], params["c2"]
    m = max(2.0, d ** 3, (c1 * d) ** 3, (c2 * d) ** 3)      # Theorem 1

    def eta_k(k):
        return d / (m + k) ** (1.0 / 3.0)

    x0, y0 = start("MRBO", params)
    u, v = hatgrad(x0, y0), gy_g(x0, y0)
    x1 = x0 - params["outer_step"] * eta_k(0) * u
    y1 = y0 - params["inner_step"] * eta_k(0) * v
    alpha, beta = c1 * eta_k(0) ** 2, c2 * eta_k(0) ** 2
    u = hatgrad(x1, y1) + (1 - alpha) * (u - hatgrad(x0, y0))
    v = gy_g(x1, y1) + (1 - beta) * (v - gy_g(x0, y0))
    x2 = x1 - params["outer_step"] * eta_k(1) * u
    y2 = y1 - params["inner_step"] * eta_k(1) * v
    assert solver.steps.step_offset == m and solver.step_offset is None
    torch.testing.assert_close(solver.x, x2, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(solver.y, y2, rtol=1e-12, atol=1e-12)


def test_sustain_counts_per_iteration(monkeypatch):
    K, S, n_iter = 4, 3, 6
    depths = record_depths(monkeypatch, "SUSTAIN")
    records, _ = run_solver("SUSTAIN", "quadratic", TINY,
                            {"neumann_depth_bound": K, "batch_size": S},
                            n_iter=n_iter)
    last = records[-1]
    # K + 2 batches per iteration (xi; zeta^0..zeta^{K-1}, zeta), drawn and
    # charged once though evaluated at two points after the first
    assert last["n_samples_upper"] == n_iter * S
    assert last["n_samples_lower"] == n_iter * (K + 1) * S
    points = [1] + [2] * (n_iter - 1)
    # grad_f (both partials of f) and grad_y g; k + 1 products per point
    assert last["n_grad_evals"] == sum(points) * 2 * S
    assert last["n_hvp"] == sum(
        p * (k + 1) for p, k in zip(points, depths, strict=True)) * S
    assert all(0 <= k < K for k in depths)
    assert last["n_projections"] == 0


def test_mrbo_counts_per_iteration():
    Q, S, n_iter = 3, 2, 5
    records, _ = run_solver("MRBO", "quadratic", TINY,
                            {"neumann_terms": Q + 1, "batch_size": S},
                            n_iter=n_iter)
    last = records[-1]
    # D_F (upper); D_G, B_1..B_Q and B_y (lower), charged once
    assert last["n_samples_upper"] == n_iter * S
    assert last["n_samples_lower"] == n_iter * (Q + 2) * S
    evaluations = 1 + 2 * (n_iter - 1)
    assert last["n_grad_evals"] == evaluations * 2 * S
    assert last["n_hvp"] == evaluations * (Q + 1) * S
    assert last["n_projections"] == 0


@pytest.mark.parametrize("name", ["SUSTAIN", "MRBO"])
def test_constrained_x_projects_once_per_iteration(name):
    records, _ = run_solver(name, "quadratic",
                            dict(TINY, constraint="l2_ball"), {}, n_iter=5)
    assert records[-1]["n_projections"] == 5
    assert not records[-1]["diverged"]


@pytest.mark.parametrize("name", ["SUSTAIN", "MRBO"])
def test_defaults_tenfold_on_quick_quadratic_in_300_iterations(name):
    records, _ = run_solver(name, "quadratic", QUICK, {}, n_iter=300,
                            eval_at=[0, 150])
    assert not records[-1]["diverged"]
    assert records[-1]["hypergrad_norm"] <= records[0]["hypergrad_norm"] / 10


@pytest.mark.parametrize("name, params, message", [
    ("SUSTAIN", {"neumann_depth_bound": 0}, "neumann_depth_bound must be"),
    ("SUSTAIN", {"linear_system_step": 0.0}, "linear_system_step must be"),
    ("SUSTAIN", {"step_offset": -1.0}, "step_offset must be"),
    ("SUSTAIN", {"inner_step_ratio": 0.0}, "inner_step_ratio must be"),
    ("SUSTAIN", {"outer_step": 0.0}, "outer_step must be"),
    ("SUSTAIN", {"c_eta": 10.0, "step_offset": 4.0}, "c_eta must be in"),
    ("SUSTAIN", {"c_tau": -1.0}, "c_tau must be"),
    ("SUSTAIN", {"batch_size": 0}, "batch_size must be"),
    ("MRBO", {"neumann_terms": 0}, "neumann_terms must be"),
    ("MRBO", {"linear_system_step": 0.0}, "linear_system_step must be"),
    ("MRBO", {"outer_step": 0.0}, "outer_step must be"),
    ("MRBO", {"inner_step": -1.0}, "inner_step must be"),
    ("MRBO", {"step_scale": 0.0}, "step_scale must be"),
    ("MRBO", {"c1": -1.0}, "c1 must be"),
    ("MRBO", {"step_offset": 1.0}, "step_offset must be"),
    ("MRBO", {"step_offset": float("inf")}, "step_offset must be"),
])
def test_bad_parameters(name, params, message):
    with pytest.raises(ValueError, match=message):
        component("solver", name).get_instance(**params).check_parameters()
