"""AID-CG, AID-FP (Grazzi et al. 2020, AID with conjugate gradient or the
fixed-point iteration) and reverse-mode ITD (Franceschi et al. 2017,
reverse-HG): iterations against the update equations written out in matrix
form (CG as the minimizer over the Krylov subspace, the fixed-point
iteration as explicit matrix powers, ITD against torch autograd on the
unrolled loop), the batches and products counted per iteration, seeded
convergence with the defaults on the quick quadratic within a stated budget,
and bad parameters.

The tiny quadratic (dim_x = 5, dim_y = 4, 30 samples per level) has the
closed-form full-batch oracles grad_y g = H_bar y + C_bar x + d_bar,
grad_y f = y - b_bar, grad_x f = upper_reg (x - a_bar), grad^2_xy g = C_bar^T.
"""
import pytest
import torch

from conftest import component, make_problem, run_solver

TINY = dict(dim_x=5, dim_y=4, n_samples=30, constraint="none")
QUICK = dict(dim_x=10, dim_y=10, n_samples=100)
TOL = dict(rtol=1e-12, atol=1e-12)


def runs(solver, params, n_iter):
    """(the solver at its start, the solver after n_iter iterations)."""
    _, start = run_solver(solver, "quadratic", TINY, params, n_iter=0)
    _, after = run_solver(solver, "quadratic", TINY, params, n_iter=n_iter)
    return start, after


def record_solves(monkeypatch, solver):
    """Log every v the AID solver's linear-system solve returns."""
    cls = component("solver", solver)
    original, solves = cls.solve_linear_system, []

    def solve(self, hvp, rhs, v0):
        v = original(self, hvp, rhs, v0)
        solves.append(v)
        return v
    monkeypatch.setattr(cls, "solve_linear_system", solve)
    return solves


def krylov_solution(H, rhs, v0, k):
    """argmin of 1/2 v^T H v - rhs^T v over v0 + span{r0, H r0, ...,
    H^{k-1} r0}, r0 = rhs - H v0: the k-th conjugate-gradient iterate."""
    r0 = rhs - H @ v0
    K = torch.stack([torch.linalg.matrix_power(H, j) @ r0 for j in range(k)],
                    dim=1)
    return v0 + K @ torch.linalg.solve(K.T @ H @ K, K.T @ r0)


def fixed_point_solution(H, rhs, v0, k, eta):
    """(I - eta H)^k v0 + eta sum_{q<k} (I - eta H)^q rhs."""
    M = torch.eye(H.shape[0], dtype=H.dtype) - eta * H
    return (torch.linalg.matrix_power(M, k) @ v0
            + eta * sum(torch.linalg.matrix_power(M, q) @ rhs
                        for q in range(k)))


@pytest.mark.parametrize("solver", ["AID-CG", "AID-FP"])
@pytest.mark.parametrize("warm_start_v", [False, True])
def test_two_aid_iterations_match_the_equations(solver, warm_start_v,
                                                monkeypatch):
    T, k = 3, 2           # k < dim_y: CG does not solve the system exactly
    params = {"T": T, "k": k, "batch_size": None,
              "warm_start_v": warm_start_v}
    solves = record_solves(monkeypatch, solver)
    start, after = runs(solver, params, 2)
    P = make_problem("quadratic", **TINY)
    H, C, d = P.H_bar, P.C_bar, P.d_bar
    alpha, beta = after.steps.inner_step, after.steps.outer_step
    x, y, v = start.x, start.y, torch.zeros(P.dim_y, dtype=H.dtype)
    for _ in range(2):
        for _ in range(T):
            y = y - alpha * (H @ y + C @ x + d)
        v0 = v if warm_start_v else torch.zeros_like(v)
        rhs = y - P.b_bar
        if solver == "AID-CG":
            v = krylov_solution(H, rhs, v0, k)
        else:
            v = fixed_point_solution(H, rhs, v0, k,
                                     after.steps.linear_system_step)
        x = x - beta * (P.upper_reg * (x - P.a_bar) - C.T @ v)
    torch.testing.assert_close(after.x, x, **TOL)
    torch.testing.assert_close(after.y, y, **TOL)
    assert len(solves) == 2
    torch.testing.assert_close(solves[-1], v, **TOL)


def test_itd_step_is_autograd_through_the_unrolled_loop():
    T = 4
    start, after = runs("ITD", {"T": T, "batch_size": None}, 1)
    P = make_problem("quadratic", **TINY)
    H, C, d = P.H_bar, P.C_bar, P.d_bar
    alpha = after.steps.inner_step
    x = start.x.clone().requires_grad_()
    y = start.y.clone()                  # y_0: a constant (truncated)
    for _ in range(T):
        y = y - alpha * (H @ y + C @ x + d)
    (hypergrad,) = torch.autograd.grad(P.f(x, y), x)
    torch.testing.assert_close(
        after.x, start.x - after.steps.outer_step * hypergrad, **TOL)
    torch.testing.assert_close(after.y, y.detach(), **TOL)


# -- accounting ---------------------------------------------------------------

@pytest.mark.parametrize("solver, warm_start_v, cold, warm", [
    ("AID-CG", False, 3, 3),    # k CG products + the cross one
    ("AID-CG", True, 3, 4),     # + the initial residual once v exists
    ("AID-FP", False, 2, 2),    # k - 1 (the first step from 0 is free) + 1
    ("AID-FP", True, 2, 3)])
def test_aid_accounting(solver, warm_start_v, cold, warm):
    T, k, S, B, K = 3, 2, 4, 5, 6
    records, _ = run_solver(
        solver, "quadratic", TINY,
        {"T": T, "k": k, "batch_size": S, "outer_batch_size": B,
         "warm_start_v": warm_start_v}, n_iter=K)
    last = records[-1]
    # T inner batches; one upper batch D; ONE lower batch for the solve
    assert last["n_samples_upper"] == K * B
    assert last["n_samples_lower"] == K * (T * S + B)
    assert last["n_grad_evals"] == K * (T * S + B)
    # products per sample at k = 2: the first iteration starts from 0
    assert last["n_hvp"] == (cold + (K - 1) * warm) * B
    assert last["n_projections"] == 0


def test_the_system_on_the_upper_tasks_needs_levels_that_share_samples():
    """system_batch='upper' names lower-level samples by the upper batch's
    indices: refused where the two levels are different data."""
    with pytest.raises(ValueError, match="system_batch"):
        run_solver("AID-CG", "quadratic", TINY, {"system_batch": "upper"},
                   n_iter=1)


def test_itd_accounting():
    T, S, B, K = 3, 4, 5, 6
    records, _ = run_solver("ITD", "quadratic", TINY,
                            {"T": T, "batch_size": S, "outer_batch_size": B},
                            n_iter=K)
    last = records[-1]
    # the reverse pass reuses the forward batches: no new samples
    assert last["n_samples_upper"] == K * B
    assert last["n_samples_lower"] == K * T * S
    assert last["n_grad_evals"] == K * (T * S + B)
    # T cross products and T - 1 Hessian products, each on its S_t
    assert last["n_hvp"] == K * (2 * T - 1) * S
    records, _ = run_solver("ITD", "quadratic", dict(TINY, constraint="box"),
                            {"T": T}, n_iter=K)
    assert records[-1]["n_projections"] == K


# -- convergence with the defaults --------------------------------------------

@pytest.mark.parametrize("solver", ["AID-CG", "AID-FP", "ITD"])
def test_defaults_tenfold_on_quick_quadratic_in_300_iterations(solver):
    records, _ = run_solver(solver, "quadratic", QUICK, {}, n_iter=300,
                            eval_at=[0, 100, 200])
    start = records[0]["hypergrad_norm"]
    assert all(r["hypergrad_norm"] <= start / 10 for r in records[1:])
    assert not any(r["diverged"] for r in records)


# -- bad parameters -----------------------------------------------------------

@pytest.mark.parametrize("solver, params, name", [
    ("AID-CG", {"T": 0}, "T"), ("AID-CG", {"k": 0}, "k"),
    ("AID-CG", {"k": 1.5}, "k"),
    ("AID-CG", {"inner_step": -1.0}, "inner_step"),
    ("AID-CG", {"outer_step": 0.0}, "outer_step"),
    ("AID-CG", {"batch_size": 0}, "batch_size"),
    ("AID-CG", {"outer_batch_size": 0}, "outer_batch_size"),
    ("AID-CG", {"warm_start_v": 1}, "warm_start_v"),
    ("AID-CG", {"system_batch": "both"}, "system_batch"),
    ("AID-FP", {"linear_system_step": 0.0}, "linear_system_step"),
    ("AID-FP", {"k": -2}, "k"), ("ITD", {"T": 0}, "T"),
    ("ITD", {"inner_step": float("nan")}, "inner_step"),
    ("ITD", {"outer_step": "x"}, "outer_step"),
    ("ITD", {"outer_batch_size": 0}, "outer_batch_size")])
def test_bad_parameters_raise(solver, params, name):
    with pytest.raises(ValueError, match=name):
        component("solver", solver).get_instance(**params).check_parameters()


@pytest.mark.parametrize("solver", ["AID-CG", "AID-FP", "ITD"])
def test_outer_batch_size_above_the_levels_raises(solver):
    with pytest.raises(ValueError, match="outer_batch_size"):
        run_solver(solver, "quadratic", TINY, {"outer_batch_size": 31},
                   n_iter=0)
