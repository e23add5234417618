"""SOBA and SABA (Dagréou et al. 2022, Alg. 1 and 2) and SRBA (Dagréou et
al. 2023, Alg. 1): iterations against the update equations written out by
hand on the batches the solver drew (SAGA tables kept per sample in a
plain loop here, SARAH differences at the previous point), the samples and
products of an iteration, a seeded tenfold decrease of the hypergradient
norm on the quick quadratic, the SAGA memory on batches with repeated
samples and through a declared per-sample oracle, and bad parameters."""
import pytest
import torch

from benchmark_utils.counting import CountingView
from benchmark_utils.problems.quadratic import QuadraticBilevel
from benchmark_utils.solvers.saga_memory import SagaMemory, per_sample

from conftest import component, make_problem, run_solver

TINY = dict(dim_x=5, dim_y=4, n_samples=30)
QUICK = dict(dim_x=10, dim_y=10, n_samples=100)


def close(a, b):
    torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-12)


class Samples:
    """The tiny quadratic's per-sample terms in matrix form: g_j has
    Hessian H_j = H + diag(delta_j) and cross matrix C_j = C + p_j q_j^T
    (grad_y g_j = H_j y + C_j x + d_j, grad^2_xy g_j = C_j^T); f_i has
    grad_y f_i = y - b_i, grad_x f_i = r (x - a_i)."""

    def __init__(self, P):
        self.P = P

    def H(self, j):
        return self.P.H + torch.diag(self.P.hess_diag[j])

    def C(self, j):
        P = self.P
        return P.C + torch.outer(P.cross_left[j], P.cross_right[j])

    def lower(self, j, x, y, v):
        """(grad_y g_j, H_j v, C_j^T v)."""
        return (self.H(j) @ y + self.C(j) @ x + self.P.d[j],
                self.H(j) @ v, self.C(j).T @ v)

    def upper(self, i, x, y):
        """(grad_y f_i, grad_x f_i)."""
        P = self.P
        return y - P.b[i], P.upper_reg * (x - P.a[i])

    def directions(self, x, y, v, lower, upper):
        """SOBA's (D_y, D_v, D_x): means over the index lists."""
        low = [torch.stack(t).mean(0) for t in zip(
            *[self.lower(j, x, y, v) for j in lower], strict=True)]
        up = [torch.stack(t).mean(0) for t in zip(
            *[self.upper(i, x, y) for i in upper], strict=True)]
        return low[0], low[1] + up[0], up[1] + low[2]


def record_batches(monkeypatch):
    """Log the index lists of every batch the counting view draws, in
    order (a full pass: all indices)."""
    drawn = []
    for level in ("upper", "lower"):
        for kind in ("batch", "full"):
            original = getattr(CountingView, f"{kind}_{level}")

            def draw(self, *args, original=original, level=level):
                batch = original(self, *args)
                n = self.problem.n_upper if level == "upper" else \
                    self.problem.n_lower
                drawn.append(list(range(n)) if not torch.is_tensor(batch)
                             else batch.tolist())
                return batch
            monkeypatch.setattr(CountingView, f"{kind}_{level}", draw)
    return drawn


def start_and_run(name, params, n_iter, monkeypatch):
    _, start = run_solver(name, "quadratic", TINY, params, n_iter=0)
    drawn = record_batches(monkeypatch)
    _, after = run_solver(name, "quadratic", TINY, params, n_iter=n_iter)
    return start, after, drawn


# -- SOBA ---------------------------------------------------------------------

@pytest.mark.parametrize("step_rule",
                         ["constant", "decreasing", "inverse_sqrt"])
def test_soba_three_iterations_match_algorithm_1(monkeypatch, step_rule):
    params = {"batch_size": 5, "inner_step": 0.15, "outer_step": 0.3,
              "step_rule": step_rule}
    start, after, drawn = start_and_run("SOBA", params, 3, monkeypatch)
    S = Samples(make_problem("quadratic", **TINY))
    x, y = start.x, start.y
    v = torch.zeros_like(y)
    for t in range(3):
        lower, upper = drawn[2 * t], drawn[2 * t + 1]
        d_y, d_v, d_x = S.directions(x, y, v, lower, upper)
        rho, gamma = 0.15, 0.3
        if step_rule == "decreasing":
            rho, gamma = rho * (t + 1) ** -0.4, gamma * (t + 1) ** -0.6
        if step_rule == "inverse_sqrt":     # benchmark_bilevel's update_lr
            rho, gamma = rho / (t + 1) ** 0.5, gamma / (t + 1) ** 0.5
        x, y, v = x - gamma * d_x, y - rho * d_y, v - rho * d_v
    assert len(drawn) == 6
    close(after.x, x)
    close(after.y, y)


def test_soba_outer_ratio_sets_the_outer_step():
    _, solver = run_solver("SOBA", "quadratic", TINY,
                           {"inner_step": 0.2, "outer_ratio": 4.0,
                            "batch_size": 8}, n_iter=0)
    assert solver.steps.outer_step == pytest.approx(0.05)


# -- SABA ---------------------------------------------------------------------

def test_saba_four_iterations_match_algorithm_2(monkeypatch):
    # tables of the five per-sample terms kept here in plain loops: filled
    # on the full pass at t = 0, SAGA estimates on the drawn batches after
    params = {"batch_size": 6, "inner_step": 0.15, "outer_step": 0.3}
    start, after, drawn = start_and_run("SABA", params, 4, monkeypatch)
    P = make_problem("quadratic", **TINY)
    S = Samples(P)
    n = P.n_lower
    x, y = start.x, start.y
    v = torch.zeros_like(y)
    low = [list(S.lower(j, x, y, v)) for j in range(n)]
    up = [list(S.upper(i, x, y)) for i in range(n)]

    def mean(table, k):
        return torch.stack([row[k] for row in table]).mean(0)

    est_low = [mean(low, k) for k in range(3)]
    est_up = [mean(up, k) for k in range(2)]
    assert drawn[0] == drawn[1] == list(range(n))   # the full pass
    for t in range(4):
        if t > 0:
            lower, upper = drawn[2 * t], drawn[2 * t + 1]
            new_low = {j: S.lower(j, x, y, v) for j in lower}
            new_up = {i: S.upper(i, x, y) for i in upper}
            est_low = [
                torch.stack([new_low[j][k] - low[j][k] for j in lower]).mean(0)
                + mean(low, k) for k in range(3)]
            est_up = [
                torch.stack([new_up[i][k] - up[i][k] for i in upper]).mean(0)
                + mean(up, k) for k in range(2)]
            for j in lower:
                low[j] = list(new_low[j])
            for i in upper:
                up[i] = list(new_up[i])
        d_y = est_low[0]
        d_v = est_low[1] + est_up[0]
        d_x = est_up[1] + est_low[2]
        x, y, v = x - 0.3 * d_x, y - 0.15 * d_y, v - 0.15 * d_v
    assert len(drawn) == 8
    close(after.x, x)
    close(after.y, y)


def test_saga_memory_with_repeated_samples_keeps_exact_means():
    gen = torch.Generator().manual_seed(0)
    table = torch.randn(7, 3, generator=gen, dtype=torch.float64)
    memory = SagaMemory([table])
    batch = torch.tensor([2, 5, 2, 2, 0])
    rows = torch.randn(5, 3, generator=gen, dtype=torch.float64)
    rows[2] = rows[3] = rows[0]                 # one sample, one point
    old = table[batch]
    (estimate,) = memory.step(batch, [(rows.mean(0), rows)])
    close(estimate, rows.mean(0) - old.mean(0) + table.mean(0))
    expected = table.clone()
    expected[batch] = rows
    close(memory.tables[0], expected)
    close(memory.means[0], expected.mean(0))


class RowsQuadratic(QuadraticBilevel):
    """The quadratic with a declared per-sample oracle of grad_y g."""

    ORACLES = dict(QuadraticBilevel.ORACLES,
                   grad_g_y_rows=("lower", "grad"))

    def grad_g_y_rows(self, x, y, *, batch):
        return torch.stack([self.grad_g_y(x, y, batch=batch[k:k + 1])
                            for k in range(len(batch))])


@pytest.mark.parametrize("declared", [False, True])
def test_per_sample_values_are_exact_and_counted_once(declared):
    P = make_problem("quadratic", **TINY)
    if declared:
        P = RowsQuadratic.__new__(RowsQuadratic)
        P.__dict__.update(make_problem("quadratic", **TINY).__dict__)
    view = CountingView(P)
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(P.dim_x, generator=gen, dtype=torch.float64)
    y = torch.randn(P.dim_y, generator=gen, dtype=torch.float64)
    batch = view.sample_lower(6)
    mean, rows = per_sample(view, "grad_g_y", x, y, batch=batch)
    S = Samples(P)
    close(rows, torch.stack([S.lower(j, x, y, y)[0] for j in batch]))
    close(mean, rows.mean(0))
    assert view.counts()["n_grad_evals"] == 6
    assert view.counts()["n_samples_lower"] == 6


# -- SRBA ---------------------------------------------------------------------

def test_srba_four_iterations_match_algorithm_1(monkeypatch):
    # period 2: restart (full passes) at t = 0 and 2, SARAH steps at t = 1,
    # 3 on the drawn batches at both points; a radius that binds
    params = {"batch_size": 4, "inner_step": 0.15, "outer_step": 0.3,
              "period": 2, "v_radius": 0.05}
    start, after, drawn = start_and_run("SRBA", params, 4, monkeypatch)
    S = Samples(make_problem("quadratic", **TINY))
    x, y = start.x, start.y
    v = torch.zeros_like(y)
    d, previous, projected = None, None, 0
    for t in range(4):
        lower, upper = drawn[2 * t], drawn[2 * t + 1]
        if t % 2 == 0:
            assert len(lower) == len(upper) == 30
            d = S.directions(x, y, v, lower, upper)
        else:
            new = S.directions(x, y, v, lower, upper)
            old = S.directions(*previous, lower, upper)
            d = tuple(a + b - c for a, b, c in zip(d, new, old, strict=True))
        previous = (x, y, v)
        v = v - 0.15 * d[1]
        if torch.linalg.vector_norm(v) > 0.05:
            v, projected = v * 0.05 / torch.linalg.vector_norm(v), \
                projected + 1
        x, y = x - 0.3 * d[2], y - 0.15 * d[0]
    assert projected > 0
    close(after.x, x)
    close(after.y, y)


def test_srba_default_period_is_one_pass_of_small_batches():
    _, solver = run_solver("SRBA", "quadratic", TINY, {"batch_size": 7},
                           n_iter=0)
    assert solver.sizes.period == 5                  # ceil(30 / 7)


# -- counts -------------------------------------------------------------------

def test_counts_per_iteration():
    B, K, n = 4, 5, QUICK["n_samples"]
    soba, _ = run_solver("SOBA", "quadratic", QUICK, {"batch_size": B},
                         n_iter=K)
    saba, _ = run_solver("SABA", "quadratic", QUICK, {"batch_size": B},
                         n_iter=K)
    srba, _ = run_solver("SRBA", "quadratic", QUICK,
                         {"batch_size": B, "period": 3}, n_iter=K)
    # SOBA: grad_y g + grad_f (2 gradient calls), yy + xy products
    last = soba[-1]
    assert last["n_samples_lower"] == last["n_samples_upper"] == K * B
    assert last["n_grad_evals"] == last["n_hvp"] == 2 * K * B
    # SABA: the same calls, on a full pass at t = 0
    last = saba[-1]
    drawn = n + (K - 1) * B
    assert last["n_samples_lower"] == last["n_samples_upper"] == drawn
    assert last["n_grad_evals"] == last["n_hvp"] == 2 * (n + (K - 1) * B)
    # SRBA: restarts at t = 0, 3 (full passes, one point), SARAH steps at
    # t = 1, 2, 4 (batches at two points)
    last = srba[-1]
    assert last["n_samples_lower"] == last["n_samples_upper"] == 2 * n + 3 * B
    assert last["n_grad_evals"] == last["n_hvp"] == 2 * (2 * n) + 4 * 3 * B
    for records in (soba, saba, srba):
        assert records[-1]["n_projections"] == 0
        assert records[0]["n_samples_upper"] == 0


# the projected single-loop methods of this family and VRBO / FSLA (Yang
# et al. 2021; Li et al. 2022)
@pytest.mark.parametrize("name", ["SOBA", "SABA", "SRBA", "VRBO", "FSLA"])
def test_constrained_x_is_projected_once_per_iteration(name):
    data = dict(TINY, constraint="l2_ball")
    records, solver = run_solver(name, "quadratic", data, {"batch_size": 8},
                                 n_iter=3)
    assert records[-1]["n_projections"] == 3
    P = make_problem("quadratic", **data)
    close(P.X.project(solver.x), solver.x)


# -- convergence --------------------------------------------------------------

@pytest.mark.parametrize("name, n_iter", [("SOBA", 300), ("SABA", 200),
                                          ("SRBA", 200)])
def test_defaults_tenfold_on_quick_quadratic(name, n_iter):
    records, _ = run_solver(name, "quadratic", QUICK, {}, n_iter=n_iter,
                            eval_at=[0, n_iter // 2])
    start = records[0]["hypergrad_norm"]
    assert not records[-1]["diverged"]
    assert all(r["hypergrad_norm"] <= start / 10 for r in records[1:])


# -- bad parameters -----------------------------------------------------------

@pytest.mark.parametrize("name, params, bad", [
    ("SOBA", {"inner_step": 0.0}, "inner_step"),
    ("SOBA", {"outer_step": -1.0}, "outer_step"),
    ("SOBA", {"outer_ratio": 0.0}, "outer_ratio"),
    ("SOBA", {"outer_step": 0.1, "outer_ratio": 2.0}, "outer_ratio"),
    ("SOBA", {"step_rule": "cosine"}, "step_rule"),
    ("SOBA", {"batch_size": 0}, "batch_size"),
    ("SABA", {"inner_step": "x"}, "inner_step"),
    ("SABA", {"outer_step": 0.0}, "outer_step"),
    ("SABA", {"outer_ratio": -2.0}, "outer_ratio"),
    ("SABA", {"batch_size": 1.5}, "batch_size"),
    ("SRBA", {"inner_step": -0.1}, "inner_step"),
    ("SRBA", {"period": 0}, "period"), ("SRBA", {"period": 2.5}, "period"),
    ("SRBA", {"v_radius": 0.0}, "v_radius"),
    ("SRBA", {"outer_ratio": 0.0}, "outer_ratio"),
    ("SRBA", {"batch_size": 0}, "batch_size")])
def test_bad_parameters_raise(name, params, bad):
    with pytest.raises(ValueError, match=bad):
        component("solver", name).get_instance(**params).check_parameters()


@pytest.mark.parametrize("name", ["SOBA", "SABA", "SRBA"])
def test_batch_larger_than_the_data_raises(name):
    with pytest.raises(ValueError, match="batch_size"):
        run_solver(name, "quadratic", TINY, {"batch_size": 31}, n_iter=1)
