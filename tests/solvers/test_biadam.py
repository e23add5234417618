"""BiAdam and VR-BiAdam (Huang, Li, Gao, Huang 2021, Algs. 1-2): two
iterations against the update equations written out by hand in matrix form
(full passes, so only the drawn truncation depths are random: the test
records them by wrapping the depth draw), with A_t built from grad_x f
(eq. (4) as written, the default) or from the fresh hypergradient estimate
h_t (``adaptive_input="hypergradient"``), the K + 2 batches and the
Hessian-vector products of an iteration, the A_t-weighted step on a box, a
seeded decrease of the hypergradient norm on the quick quadratic, the
default's iterates against values recorded before ``adaptive_input``
existed, A_t on hyper-cleaning (rho I as written, adaptive from h_t), skips
and bad parameters.

The hand-written iterations use a tiny quadratic (dim_x = 5, dim_y = 4,
30 samples per level) where the full-batch oracles are
grad_x f = r (x - a), grad_y f = y - b, grad_y g = H y + C x + d,
grad^2_yy g = H and grad^2_xy g = C^T.
"""

import pytest
import torch

from benchmark_utils.solvers.adaptive import CoordinateAdam
from benchmark_utils.solvers.biadam_family import BiAdamFamilySolver

from conftest import component, make_problem, record_depths, run_solver

TINY = dict(dim_x=5, dim_y=4, n_samples=30)
QUICK = dict(dim_x=10, dim_y=10, n_samples=100)
CLEANING = dict(n_train=300, n_val=150, n_test=300)    # configs/quick.yml
FULL = dict(neumann_depth_bound=5, batch_size=None)


def tiny(constraint="none"):
    return dict(TINY, constraint=constraint)

def schedule(solver, t):
    """(eta_t, alpha_{t+1}, beta_{t+1}): Theorem 1 (BiAdam) or Theorem 2
    (VR-BiAdam), with m the smallest the theorem allows."""
    k, c1, c2 = solver.step_scale, solver.c1, solver.c2
    if solver.name == "BiAdam":
        m = max(k ** 2, (c1 * k) ** 2, (c2 * k) ** 2)
        eta = k / (m + t) ** 0.5
        return eta, c1 * eta, c2 * eta
    m = max(2, k ** 3, (c1 * k) ** 3, (c2 * k) ** 3)
    eta = k / (m + t) ** (1 / 3)
    return eta, c1 * eta ** 2, c2 * eta ** 2


def by_hand(solver, constraint, n_iter, params, depths):
    """(x, y, whether a bound was active) after ``n_iter`` iterations of the
    paper's equations, with the depths the solver drew."""
    P = make_problem("quadratic", **tiny(constraint))
    H, C, d = P.H_bar, P.C_bar, P.d_bar
    _, start = run_solver(solver.name, "quadratic", tiny(constraint),
                          params, n_iter=0)
    x, y = start.x.clone(), start.y.clone()
    K, th = solver.neumann_depth_bound, solver.steps.linear_system_step
    s = solver
    M = torch.eye(P.dim_y, dtype=H.dtype) - th * H
    vr = solver.name == "VR-BiAdam"

    def oracles(x, y, k):                  # grad_x f, grad_y g, estimator (6)
        gx = P.upper_reg * (x - P.a_bar)
        inverse = K * th * torch.linalg.matrix_power(M, k)
        return gx, H @ y + C @ x + d, gx - C.T @ (inverse @ (y - P.b_bar))

    w2, b, old, clamped = None, s.b0, None, False
    for t in range(1, n_iter + 1):
        k = depths[t - 1]
        gx, gy, h = oracles(x, y, k)
        if t == 1:
            v, w = gy, h
        else:
            _, alpha, beta = schedule(s, t - 1)
            if vr:       # STORM, same samples and depth at (x_{t-1}, y_{t-1})
                _, gy_old, h_old = oracles(*old, k)
                v = gy + (1 - alpha) * (v - gy_old)
                w = h + (1 - beta) * (w - h_old)
            else:
                v = alpha * gy + (1 - alpha) * v
                w = beta * h + (1 - beta) * w
        # eq. (4), coordinate-wise with the square root, on grad_x f or on
        # the fresh estimate h_t; eq. (5)
        g = h if s.adaptive_input == "hypergradient" else gx
        w2 = (1 - s.decay_x) * g ** 2 if w2 is None else (
            s.decay_x * w2 + (1 - s.decay_x) * g ** 2)
        A = torch.sqrt(w2) + s.rho
        b = s.decay_y * b + (1 - s.decay_y) * float(torch.linalg.norm(gy))
        eta = schedule(s, t)[0]
        x_tilde = x - s.steps.outer_step * w / A
        if constraint == "box":               # A-weighted = clamp on a box
            inside = torch.clamp(x_tilde, P.X.lower, P.X.upper)
            clamped |= bool((inside != x_tilde).any())
            x_tilde = inside
        old = (x, y)
        x = x + eta * (x_tilde - x)
        y = y - s.steps.inner_step * eta * v / (b + s.epsilon)
    return x, y, clamped


def test_vr_biadam_runs_biadams_loop():
    # Algorithm 2 changes lines 8-9 and the schedule only: both solver
    # files subclass BiAdam's loop in benchmark_utils (no solver file loads
    # another), and VR-BiAdam overrides just those
    biadam, vr_biadam = (component("solver", name)
                         for name in ("BiAdam", "VR-BiAdam"))
    assert issubclass(vr_biadam, BiAdamFamilySolver)
    assert issubclass(biadam, BiAdamFamilySolver)
    assert vr_biadam.iterations is biadam.iterations
    assert {name for name in vars(vr_biadam) if callable(
        getattr(vr_biadam, name)) and not name.startswith("_")} == {
            "momentum", "schedule", "smallest_step_offset"}


@pytest.mark.parametrize("name", ["BiAdam", "VR-BiAdam"])
@pytest.mark.parametrize("constraint", ["none", "box"])
@pytest.mark.parametrize("adaptive_input", ["grad_x_f", "hypergradient"])
def test_three_iterations_match_the_algorithm(name, constraint,
                                             adaptive_input, monkeypatch):
    n_iter = 3
    # on the box, a long step so that the clamp is active
    params = dict(FULL, outer_step=3.0 if constraint == "box" else 0.3,
                  adaptive_input=adaptive_input)
    depths = record_depths(monkeypatch, name)
    _, solver = run_solver(name, "quadratic", tiny(constraint), params,
                           n_iter=n_iter)
    assert len(depths) == n_iter
    x, y, clamped = by_hand(solver, constraint, n_iter, params, depths)
    assert clamped == (constraint == "box")
    torch.testing.assert_close(solver.x, x, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(solver.y, y, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name, evaluations", [("BiAdam", 1),
                                               ("VR-BiAdam", 2)])
def test_counts_per_iteration(name, evaluations, monkeypatch):
    K, S, n_iter = 4, 3, 6
    depths = record_depths(monkeypatch, name)
    records, _ = run_solver(name, "quadratic", tiny(),
                            {"neumann_depth_bound": K, "batch_size": S},
                            n_iter=n_iter)
    last = records[-1]
    # K + 2 batches per iteration (xi; zeta^0..zeta^{K-1}, zeta), drawn
    # and charged once even where VR-BiAdam evaluates at two points
    assert last["n_samples_upper"] == n_iter * S
    assert last["n_samples_lower"] == n_iter * (K + 1) * S
    # grad_f (both partials of f) and grad_y g; k_t + 1 products each
    points = [1] + [evaluations] * (n_iter - 1)
    assert last["n_grad_evals"] == sum(points) * 2 * S
    assert last["n_hvp"] == sum(
        p * (k + 1) for p, k in zip(points, depths, strict=True)) * S
    assert all(0 <= k < K for k in depths)
    assert last["n_projections"] == 0


def test_box_projects_once_per_iteration():
    records, _ = run_solver("BiAdam", "quadratic", tiny("box"), {},
                            n_iter=5)
    assert records[-1]["n_projections"] == 5


@pytest.mark.parametrize("name", ["BiAdam", "VR-BiAdam"])
@pytest.mark.parametrize("adaptive_input", ["grad_x_f", "hypergradient"])
def test_defaults_tenfold_on_quick_quadratic_in_300_iterations(
        name, adaptive_input):
    records, _ = run_solver(name, "quadratic", QUICK,
                            {"adaptive_input": adaptive_input}, n_iter=300,
                            eval_at=[0, 200])
    assert not records[-1]["diverged"]
    assert records[-1]["hypergrad_norm"] <= records[0]["hypergrad_norm"] / 10


@pytest.mark.parametrize("adaptive", ["adagrad_norm", "identity"])
def test_global_matrices_run_on_an_l2_ball(adaptive):
    records, _ = run_solver("BiAdam", "quadratic", tiny("l2_ball"),
                            {"adaptive": adaptive}, n_iter=20)
    assert records[-1]["n_projections"] == 20
    assert not records[-1]["diverged"]


def test_coordinate_matrix_skips_a_ball():
    with pytest.raises(pytest.skip.Exception, match="exact only on a box"):
        run_solver("BiAdam", "quadratic", tiny("l2_ball"), {}, n_iter=1)


@pytest.mark.parametrize("name", ["BiAdam", "VR-BiAdam"])
@pytest.mark.parametrize("params, message", [
    ({"neumann_depth_bound": 0}, "neumann_depth_bound must be"),
    ({"outer_step": -1.0}, "outer_step must be"),
    ({"inner_step": 0.0}, "inner_step must be"),
    ({"linear_system_step": 0.0}, "linear_system_step must be"),
    ({"adaptive": "adagrad"}, "adaptive must be"),
    ({"adaptive_input": "momentum"}, "adaptive_input must be one of"),
    ({"decay_x": 1.0}, "decay_x must be"), ({"decay_y": 0.0}, "decay_y"),
    ({"rho": 0.0}, "rho must be"), ({"c1": -1.0}, "c1 must be"),
    ({"step_scale": 0.0}, "step_scale must be"),
    ({"step_offset": 0.5}, "step_offset must be"),
    ({"step_offset": float("inf")}, "step_offset must be")])
def test_bad_parameters(name, params, message):
    with pytest.raises(ValueError, match=message):
        component("solver", name).get_instance(**params).check_parameters()


@pytest.mark.parametrize("name, theorem, m", [("BiAdam", "Theorem 1", 1.0),
                                              ("VR-BiAdam", "Theorem 2", 2.0)])
def test_steps_resolve_by_the_rules(name, theorem, m):
    # step_offset None: the theorem's smallest m (k = c1 = 1), resolved with
    # the steps (the parameter stays None); a given value is used as given
    P = make_problem("quadratic", **tiny())
    _, solver = run_solver(name, "quadratic", tiny(), {}, n_iter=0)
    steps = solver.steps
    assert solver.step_offset is None
    assert steps.step_offset == m == solver.smallest_step_offset()
    assert steps["step_offset"].source.startswith(f"default: {theorem}'s")
    assert steps.outer_step == 0.3 * P.outer_step_scale
    assert steps.inner_step == 1.0
    assert steps.linear_system_step == 1.0 / P.L_g
    _, given = run_solver(name, "quadratic", tiny(), {"step_offset": 9.0},
                          n_iter=0)
    assert given.steps.step_offset == 9.0
    assert given.steps["step_offset"].kind == "given"


@pytest.mark.parametrize("name, c2", [("BiAdam", 1.0), ("VR-BiAdam", 0.3)])
def test_schedule_constants_are_read_and_recorded(name, c2):
    # c1, c2 and the adaptive matrices' constants are given_step rules:
    # read from self.steps and recorded as given; VR-BiAdam replaces c2's
    # rule, and its parameter, docstring and record follow the rule
    solver_class = type(component("solver", name).get_instance())
    assert solver_class.parameters["c2"] == [c2]
    assert f"``c2`` (c2) = {c2!r}" in solver_class.__doc__
    records, solver = run_solver(name, "quadratic", tiny(), {"rho": 0.5},
                                 n_iter=1)
    for constant, value in (("c1", 1.0), ("c2", c2), ("rho", 0.5),
                            ("decay_x", 0.9), ("b0", 1.0)):
        assert solver.steps[constant].value == value
        assert records[-1][f"resolved_{constant}"] == value
        assert records[-1][f"resolved_{constant}_source"] == "given"
    eta, alpha, beta = solver.schedule(3)
    power = 1 if name == "BiAdam" else 2      # Theorem 1 / Theorem 2
    assert (alpha, beta) == (eta ** power, c2 * eta ** power)


# (||x||, ||y||) after 5 default iterations (seed 0), recorded before the
# parameter adaptive_input existed
RECORDED = {("BiAdam", "quadratic"): (2.552880970804425, 1.2783713980746452),
            ("BiAdam", "hyper_cleaning"): (19.401015418919638,
                                           0.29821071013640305),
            ("VR-BiAdam", "quadratic"): (2.549821705800048,
                                         1.2373601156633731),
            ("VR-BiAdam", "hyper_cleaning"): (23.605819210976595,
                                              0.3376806086179815)}


@pytest.mark.usefixtures("documented_defaults")  # recorded before tuning
@pytest.mark.parametrize("name, dataset", sorted(RECORDED))
def test_default_builds_a_t_from_grad_x_f_as_before(name, dataset):
    params = QUICK if dataset == "quadratic" else CLEANING
    _, default = run_solver(name, dataset, params, {}, n_iter=5)
    _, literal = run_solver(name, dataset, params,
                            {"adaptive_input": "grad_x_f"}, n_iter=5)
    assert default.adaptive_input == "grad_x_f"
    assert torch.equal(default.x, literal.x)
    assert torch.equal(default.y, literal.y)
    norms = (float(torch.linalg.norm(default.x)),
             float(torch.linalg.norm(default.y)))
    assert norms == pytest.approx(RECORDED[name, dataset], rel=1e-10)


@pytest.mark.parametrize("name", ["BiAdam", "VR-BiAdam"])
def test_a_t_on_hyper_cleaning(name, monkeypatch):
    # f (the validation loss) does not depend on the weights x: as written,
    # A_t = rho I; from the hypergradient estimate its diagonal varies
    matrices = []
    update = CoordinateAdam.update

    def spy(self, grad):
        matrices.append(update(self, grad))
        return matrices[-1]

    monkeypatch.setattr(CoordinateAdam, "update", spy)
    for adaptive_input in ("grad_x_f", "hypergradient"):
        matrices.clear()
        run_solver(name, "hyper_cleaning", CLEANING,
                   {"adaptive_input": adaptive_input}, n_iter=5)
        assert len(matrices) == 5
        # a multiple of the identity: one value on the diagonal
        scalar = [bool(a.min() == a.max()) for a in matrices]
        assert scalar == [adaptive_input == "grad_x_f"] * 5
        if adaptive_input == "grad_x_f":
            assert all(bool((a == 1.0).all()) for a in matrices)  # rho I


# seeded, 700 iterations (BiAdam's budget in test_hyper_cleaning_progress):
# rho well below the estimate's entries (at most ~0.05 here), an outer step
# of order 1 (the step per coordinate is about outer_step eta_t)
CLEANING_RUNS = {"BiAdam": (dict(rho=1e-4, outer_step=1.0), 0.7),
                 "VR-BiAdam": (dict(rho=1e-4, outer_step=0.1), 0.6)}


@pytest.mark.parametrize("name", sorted(CLEANING_RUNS))
def test_hypergradient_input_cleans_the_labels(name):
    params, auc = CLEANING_RUNS[name]
    (start, end), _ = run_solver(
        name, "hyper_cleaning", CLEANING,
        dict(params, adaptive_input="hypergradient"), n_iter=700)
    assert end["diverged"] == 0
    assert end["value"] < start["value"]
    assert end["cleaning_auc"] >= auc, end["cleaning_auc"]
