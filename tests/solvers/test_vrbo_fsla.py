"""VRBO (Yang, Ji, Liang 2021, Alg. 2) and FSLA (Li, Gu, Huang 2022,
Alg. 1 with momentum): iterations against the update equations written out
by hand in matrix form, on full passes and on the very batches the solver
drew (so the SPIDER and STORM corrections are checked at the right
points), the samples and products the papers count, seeded convergence on
the quick quadratic within a stated budget, and bad parameters."""
import pytest
import torch

from benchmark_utils.counting import CountingView

from conftest import component, make_problem, run_solver

TINY = dict(dim_x=5, dim_y=4, n_samples=30)
QUICK = dict(dim_x=10, dim_y=10, n_samples=100)


class Batched:
    """The tiny quadratic's oracles on one batch, in matrix form: H_B,
    C_B, d_B, b_B, a_B are the batch means of the per-sample data (the
    problem's closed form, module ``quadratic``)."""

    def __init__(self, P, upper=None, lower=None):
        r = P.upper_reg
        if lower is None:
            H, C, d = P.H_bar, P.C_bar, P.d_bar
        else:
            H = P.H + torch.diag(P.hess_diag[lower].mean(0))
            C = P.C + P.cross_left[lower].T @ P.cross_right[lower] / len(lower)
            d = P.d[lower].mean(0)
        b = P.b_bar if upper is None else P.b[upper].mean(0)
        a = P.a_bar if upper is None else P.a[upper].mean(0)
        self.H, self.C = H, C
        self.grad_g_y = lambda x, y: H @ y + C @ x + d      # noqa: E731
        self.grad_f_y = lambda x, y: y - b                  # noqa: E731
        self.grad_f_x = lambda x, y: r * (x - a)            # noqa: E731


def record_batches(monkeypatch):
    """Log every batch the counting view draws, in order."""
    drawn = []
    for level in ("upper", "lower"):
        original = getattr(CountingView, f"batch_{level}")

        def draw(self, size, original=original):
            batch = original(self, size)
            drawn.append(batch)
            return batch
        monkeypatch.setattr(CountingView, f"batch_{level}", draw)
    return drawn


def start_and_run(name, params, n_iter, monkeypatch=None, data=TINY):
    _, start = run_solver(name, "quadratic", data, params, n_iter=0)
    drawn = None if monkeypatch is None else record_batches(monkeypatch)
    _, after = run_solver(name, "quadratic", data, params, n_iter=n_iter)
    return start, after, drawn


def close(a, b):
    torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-12)


# -- VRBO ---------------------------------------------------------------------

def vrbo_estimate(P, x, y, upper, lower, hessians, eta, Q):
    """(grad_y G, h) of Yang et al.'s Neumann estimate on S: v_Q =
    eta sum_{q=0}^{Q} prod_{j<=q} (I - eta H_j) grad_y F."""
    outer = Batched(P, upper, lower)
    p = outer.grad_f_y(x, y)
    total = p
    for batch in hessians:
        H_j = Batched(P, None, batch).H
        p = p - eta * H_j @ p
        total = total + p
    v_Q = eta * total
    assert len(hessians) == Q
    return outer.grad_g_y(x, y), outer.grad_f_x(x, y) - outer.C.T @ v_Q


def test_vrbo_two_outer_iterations_match_algorithm_2(monkeypatch):
    # small batches for S_2 and a large one for S_1, every drawn batch
    # replayed: the SPIDER differences must span (x_k, y_k) -> (x_{k+1},
    # y_{k,1}) at t = 1 and y steps afterwards, with x moving once
    Q, m = 2, 2             # Q Hessian factors: neumann_terms = Q + 1
    params = {"batch_size": 3, "large_batch_size": 20, "neumann_terms": Q + 1,
              "inner_loop_length": m, "period": 3, "outer_step": 0.3}
    start, after, drawn = start_and_run("VRBO", params, 2, monkeypatch)
    P = make_problem("quadratic", **TINY)
    alpha, beta = after.steps.outer_step, after.steps.inner_step
    eta = after.steps.linear_system_step
    sets = [(drawn[i], drawn[i + 1], drawn[i + 2:i + 2 + Q])
            for i in range(0, len(drawn), Q + 2)]
    assert len(sets) == 1 + 2 * (m + 1)          # one refresh (q = 3)
    x, y = start.x, start.y
    u, v = vrbo_estimate(P, x, y, *sets.pop(0), eta, Q)     # lines 3-5
    for _ in range(2):
        x_prev, y_prev = x, y
        x = x - alpha * v                                   # line 9
        y = y - beta * u                                    # y_{k,1}
        for t in range(1, m + 2):
            S = sets.pop(0)
            u_new, v_new = vrbo_estimate(P, x, y, *S, eta, Q)
            u_old, v_old = vrbo_estimate(P, x_prev, y_prev, *S, eta, Q)
            u, v = u + u_new - u_old, v + v_new - v_old
            if t <= m:
                x_prev, y_prev = x, y
                y = y - beta * u
    close(after.x, x)
    close(after.y, y)


def test_vrbo_full_passes_track_the_exact_estimate():
    # on full passes every SPIDER difference is exact, so v_{k,t} is the
    # deterministic Neumann hypergradient at the current point
    Q, m = 3, 2
    params = {"batch_size": None, "neumann_terms": Q + 1,
              "inner_loop_length": m, "period": 2}
    start, after, _ = start_and_run("VRBO", params, 3)
    P = make_problem("quadratic", **TINY)
    full = Batched(P)
    alpha, beta = after.steps.outer_step, after.steps.inner_step
    eta = after.steps.linear_system_step
    M = torch.eye(P.dim_y, dtype=P.H_bar.dtype) - eta * P.H_bar

    def hypergrad(x, y):
        w = eta * sum(torch.linalg.matrix_power(M, q) @ full.grad_f_y(x, y)
                      for q in range(Q + 1))
        return full.grad_f_x(x, y) - P.C_bar.T @ w

    x, y = start.x, start.y
    for _ in range(3):
        x_next = x - alpha * hypergrad(x, y)
        y = y - beta * full.grad_g_y(x, y)
        for _ in range(m):
            y = y - beta * full.grad_g_y(x_next, y)
        x = x_next
    close(after.x, x)
    close(after.y, y)


def test_vrbo_counts_per_outer_iteration():
    S, L, Q, m, q, K = 4, 8, 3, 2, 2, 3
    records, _ = run_solver("VRBO", "quadratic", QUICK,
                            {"batch_size": S, "large_batch_size": L,
                             "neumann_terms": Q + 1, "inner_loop_length": m,
                             "period": q},
                            n_iter=K)
    last = records[-1]
    refreshes, small = 2, K * (m + 1)            # k = 0, 2; m + 1 per k
    # each set: one upper batch (D_F), Q + 1 lower (D_G, B_1..B_Q)
    assert last["n_samples_upper"] == refreshes * L + small * S
    assert last["n_samples_lower"] == (Q + 1) * (refreshes * L + small * S)
    # grad_f and grad_y G at one point (refresh) or two (corrections)
    assert last["n_grad_evals"] == 2 * refreshes * L + 4 * small * S
    assert last["n_hvp"] == (Q + 1) * (refreshes * L + 2 * small * S)
    assert last["n_projections"] == 0
    assert records[0]["n_samples_upper"] == 0


def test_vrbo_defaults_tenfold_on_quick_quadratic_in_60_iterations():
    records, _ = run_solver("VRBO", "quadratic", QUICK, {}, n_iter=60,
                            eval_at=[0, 30])
    start = records[0]["hypergrad_norm"]
    assert not records[-1]["diverged"]
    assert all(r["hypergrad_norm"] <= start / 10 for r in records[1:])


# -- FSLA ---------------------------------------------------------------------

@pytest.mark.parametrize("step_rule", ["constant", "inverse_sqrt"])
def test_fsla_two_iterations_match_algorithm_1(monkeypatch, step_rule):
    # the batches the solver drew, replayed: lines 1-5 in matrix form, the
    # STORM correction at (x_{k-1}, y_k, v_k) on this iteration's batches;
    # inverse_sqrt: every step and the momentum over sqrt(k+1)
    params = {"batch_size": 5, "momentum": 0.3, "step_rule": step_rule}
    start, after, drawn = start_and_run("FSLA", params, 2, monkeypatch)
    P = make_problem("quadratic", **TINY)
    steps = (after.steps.outer_step, after.steps.inner_step,
             after.steps.linear_system_step, after.momentum)
    x, y = start.x, start.y
    w = torch.zeros_like(y)
    d, previous = None, None
    for k in range(2):
        scale = (k + 1) ** -0.5 if step_rule == "inverse_sqrt" else 1.0
        alpha, beta, eta, rho = (step * scale for step in steps)
        B1, B2, D1, D2, B3 = drawn[5 * k:5 * k + 5]
        y1 = y - beta * Batched(P, None, B1).grad_g_y(x, y)          # 1
        w1 = w - eta * (Batched(P, None, B2).H @ w                   # 2
                        - Batched(P, D1, None).grad_f_y(x, y1))
        at = Batched(P, D2, B3)

        def h(x, y, w, at=at):
            return at.grad_f_x(x, y) - at.C.T @ w                    # 3
        new = h(x, y1, w1)
        d = new if d is None else new + (1 - rho) * (d - h(*previous))  # 4
        previous = (x, y1, w1)
        x, y, w = x - alpha * d, y1, w1                              # 5
    close(after.x, x)
    close(after.y, y)


def test_fsla_counts_per_iteration():
    S, K = 4, 5
    records, _ = run_solver("FSLA", "quadratic", QUICK, {"batch_size": S},
                            n_iter=K)
    last = records[-1]
    assert last["n_samples_upper"] == 2 * S * K      # D_1, D_2
    assert last["n_samples_lower"] == 3 * S * K      # B_1, B_2, B_3
    # grad_y g, grad_y f, grad_x f (twice after k = 0)
    assert last["n_grad_evals"] == (3 + 4 * (K - 1)) * S
    # yy product, xy product (twice after k = 0)
    assert last["n_hvp"] == (2 + 3 * (K - 1)) * S
    assert last["n_projections"] == 0


def test_fsla_defaults_tenfold_on_quick_quadratic_in_200_iterations():
    records, _ = run_solver("FSLA", "quadratic", QUICK, {}, n_iter=200,
                            eval_at=[0, 100])
    start = records[0]["hypergrad_norm"]
    assert not records[-1]["diverged"]
    assert all(r["hypergrad_norm"] <= start / 10 for r in records[1:])


# -- both ---------------------------------------------------------------------



@pytest.mark.parametrize("name, params, bad", [
    ("VRBO", {"outer_step": 0.0}, "outer_step"),
    ("VRBO", {"inner_step": -1.0}, "inner_step"),
    ("VRBO", {"linear_system_step": 0.0}, "linear_system_step"),
    ("VRBO", {"neumann_terms": 0}, "neumann_terms"),
    ("VRBO", {"period": 0}, "period"),
    ("VRBO", {"inner_loop_length": 0}, "inner_loop_length"),
    ("VRBO", {"batch_size": 0}, "batch_size"),
    ("VRBO", {"large_batch_size": 1.5}, "large_batch_size"),
    ("FSLA", {"outer_step": -0.1}, "outer_step"),
    ("FSLA", {"inner_step": 0.0}, "inner_step"),
    ("FSLA", {"linear_system_step": "x"}, "linear_system_step"),
    ("FSLA", {"momentum": 0.0}, "momentum"),
    ("FSLA", {"momentum": 1.5}, "momentum"),
    ("FSLA", {"batch_size": 0}, "batch_size"),
    ("FSLA", {"step_rule": "cosine"}, "step_rule")])
def test_bad_parameters_raise(name, params, bad):
    with pytest.raises(ValueError, match=bad):
        component("solver", name).get_instance(**params).check_parameters()


@pytest.mark.parametrize("name", ["VRBO", "FSLA"])
def test_default_steps_resolve_from_the_curvature(name):
    P = make_problem("quadratic", **TINY)
    _, solver = run_solver(name, "quadratic", TINY, {"batch_size": 5},
                           n_iter=0)
    steps = solver.steps
    assert steps.outer_step == 0.2 * P.outer_step_scale
    assert steps.inner_step == 2.0 / (P.L_g + P.mu_g)
    assert steps.linear_system_step == 1.0 / P.L_g
    # FSLA's momentum rho is a number by default: read and recorded
    given = {"momentum"} if name == "FSLA" else set()
    assert {name for name in steps if steps[name].kind == "given"} == given
    assert {steps[name].kind for name in steps if name not in given} == {
        "default"}
    assert solver.inner_step is None


@pytest.mark.parametrize("name", ["VRBO", "FSLA"])
def test_batch_larger_than_the_data_raises(name):
    key = "large_batch_size" if name == "VRBO" else "batch_size"
    with pytest.raises(ValueError, match=key):
        run_solver(name, "quadratic", TINY, {key: 31}, n_iter=1)
