"""The simple-bilevel methods of papers 000 and 001 and their baselines:
seeded progress within an iteration budget, the papers' per-iteration sample
counts, the cutting-plane machinery (warm start, slack, infeasibility), and
parameters that actually reach the solver."""
import numpy as np
import pytest

from conftest import (QUICK_DICTIONARY, QUICK_REGRESSION, benchmark,
                      run_solver)

N_ITER = 300
# (solver, parameters): papers' structure, steps scaled to the quick
# instances (the papers' own values are in configs/)
CUT_METHODS = [
    ("SBCGI", {"warm_start_samples": 2000}),
    ("SBCGF", {"warm_start_samples": 2000, "gamma": 0.01}),
    ("CG-BiO", {"warm_start_max_iter": 200}),
]
ABLATIONS = [
    ("SBCGI", {"warm_start_samples": 2000, "cut": False}),     # STORM-FW
    ("SBCGF", {"warm_start_samples": 2000, "gamma": 0.01, "cut": False}),
    ("SBCGI", {"warm_start_samples": 2000, "K0": 0.0}),        # SBCGI-M
]
BASELINES = [
    ("aR-IP-SeG", {"gamma0": 1e-2, "rho0": 1.0}),
    ("SDBGD", {"gamma": 1e-3}),
]


def first_and_last(solver, dataset, params):
    dataset_params = (QUICK_REGRESSION if dataset == "regression"
                      else QUICK_DICTIONARY)
    records, _ = run_solver(solver, dataset, dataset_params, params,
                            n_iter=N_ITER, eval_at=[0, 1, 10, 100])
    for record in records:
        assert np.isfinite(record["lower_gap"]), (solver, record)
        assert np.isfinite(record["upper_value"]), (solver, record)
        assert record["diverged"] == 0
    return records[0], records[-1]


@pytest.mark.parametrize("solver, params", CUT_METHODS + ABLATIONS)
def test_cut_methods_reach_the_lower_level_on_regression(solver, params):
    # from a random start: the warm start plus 300 steps cut the lower gap
    # (about 9 at the start) at least tenfold, and the upper value too
    start, end = first_and_last(solver, "regression", params)
    assert end["lower_gap"] < start["lower_gap"] / 10
    assert end["upper_value"] < start["upper_value"] / 10


@pytest.mark.parametrize("solver, params", BASELINES)
def test_projected_baselines_decrease_both_levels_on_regression(solver,
                                                                 params):
    start, end = first_and_last(solver, "regression", params)
    assert end["lower_gap"] < 0.9 * start["lower_gap"]
    assert end["upper_value"] < 0.9 * start["upper_value"]


@pytest.mark.parametrize("solver, params", CUT_METHODS + BASELINES)
def test_dictionary_progress_keeps_the_lower_level(solver, params):
    # the dataset's start [D_hat, 0] is already lower-level optimal (gap
    # ~1e-5), so the stated progress is on the upper level: f does not
    # increase while g stays within 1e-2 of g*
    if solver.startswith("SBCG"):
        params = dict(params, warm_start="none")
    start, end = first_and_last(solver, "dictionary_learning", params)
    assert start["lower_gap"] < 1e-4
    assert end["lower_gap"] < 1e-2
    assert end["upper_value"] <= start["upper_value"]
    assert 0.0 <= end["recovery_rate"] <= 1.0


def test_spider_fw_ablation_leaves_the_lower_level():
    # paper 000 App. F.4: without the cut the method ignores g
    _, cut = first_and_last("SBCGF", "dictionary_learning",
                            {"gamma": 0.01, "warm_start": "none"})
    _, no_cut = first_and_last("SBCGF", "dictionary_learning",
                               {"gamma": 0.01, "warm_start": "none",
                                "cut": False})
    assert no_cut["lower_gap"] > 10 * cut["lower_gap"]


def samples_per_iteration(solver, params, n_iter=12):
    records, _ = run_solver(solver, "regression", QUICK_REGRESSION, params,
                            n_iter=n_iter, eval_at=range(n_iter + 1))
    upper = np.diff([r["n_samples_upper"] for r in records])
    lower = np.diff([r["n_samples_lower"] for r in records])
    return upper, lower


@pytest.mark.parametrize("solver, params, per_iteration", [
    ("aR-IP-SeG", {}, 4),                          # two steps, two levels
    ("SDBGD", {}, 2),
    ("SBCGI", {"batch_size": 8, "charge_warm_start": False}, 16),
    ("SBCGI", {"charge_warm_start": False, "cut": False}, 1),  # STORM-FW
])
def test_per_iteration_sample_counts_match_paper_001_tables(
        solver, params, per_iteration):
    upper, lower = samples_per_iteration(solver, params)
    assert ((upper + lower) == per_iteration).all()


def test_sbcgf_full_passes_every_q_and_S_otherwise():
    from conftest import make_problem
    P = make_problem("regression", **QUICK_REGRESSION)
    upper, lower = samples_per_iteration(
        "SBCGF", {"charge_warm_start": False}, n_iter=25)
    root_u, root_l = (int(np.sqrt(P.n_upper)), int(np.sqrt(P.n_lower)))
    for t, (u, l_) in enumerate(zip(upper, lower)):
        assert u == (P.n_upper if t % root_u == 0 else root_u)
        assert l_ == (P.n_lower if t % root_l == 0 else root_l)


def test_cg_bio_uses_full_passes():
    from conftest import make_problem
    P = make_problem("regression", **QUICK_REGRESSION)
    upper, lower = samples_per_iteration("CG-BiO",
                                         {"charge_warm_start": False})
    assert (upper == P.n_upper).all() and (lower == P.n_lower).all()


def test_warm_start_is_charged_unless_asked_not_to():
    params = {"warm_start_samples": 3000}
    charged, _ = run_solver("SBCGI", "regression", QUICK_REGRESSION, params,
                            n_iter=1, eval_at=[0, 1])
    free, _ = run_solver("SBCGI", "regression", QUICK_REGRESSION,
                         dict(params, charge_warm_start=False), n_iter=1,
                         eval_at=[0, 1])
    # the start is logged before the warm start; SPIDER-FW's 3000 queries
    # and the exact g(x_0) (n_lower) show up at iteration 1, plus 1 sample
    assert charged[0]["n_samples_lower"] == 0
    assert charged[1]["n_samples_lower"] >= 3000 + 1
    assert free[1]["n_samples_lower"] == 1
    # the same x_0 either way: the same first step
    assert charged[1]["lower_gap"] == pytest.approx(free[1]["lower_gap"])


@pytest.mark.parametrize("rule", ["lower_lmo", "skip"])
def test_infeasible_subproblems_take_the_fallback_and_are_counted(
        monkeypatch, rule):
    from benchmark_utils.solvers import cutting_plane as cutting_plane

    def below_g_star(self, x):
        # a right-hand side g(x_0) far below g*: every cut misses Z
        P = self.problem
        return x, float(P.g_star) - 1e3
    monkeypatch.setattr(cutting_plane.CuttingPlaneSolver, "lower_warm_start",
                        below_g_star)
    records, solver = run_solver(
        "SBCGI", "regression", QUICK_REGRESSION,
        {"K0": 0.0, "on_infeasible": rule, "warm_start": "none"},
        n_iter=20, eval_at=[0, 20])
    start, end = records
    assert end["n_infeasible"] == 20
    assert np.isfinite(end["lower_gap"])
    if rule == "skip":
        assert end["lower_gap"] == start["lower_gap"]
    else:   # steps towards the lower-level LMO point decrease g
        assert end["lower_gap"] < start["lower_gap"]


@pytest.mark.parametrize("solver, params, match", [
    ("SBCGI", {"K0": -1.0}, "K0"),
    ("SBCGI", {"gamma0": 2.0}, "gamma0"),
    ("SBCGI", {"batch_size": 10_000}, "batch_size"),
    ("SBCGI", {"on_infeasible": "ignore"}, "on_infeasible"),
    ("SBCGF", {"gamma": 0.0}, "gamma"),
    ("SBCGF", {"lmo_backend": "gurobi"}, "lmo_backend"),
    ("SBCGF", {"warm_start": "magic"}, "warm_start"),
    ("CG-BiO", {"step_offset": 1}, "step_offset"),
    ("aR-IP-SeG", {"rho0": 0.0}, "rho0"),
    ("SDBGD", {"gamma": -1.0}, "gamma"),
])
def test_bad_parameters_fail_before_running(solver, params, match):
    with pytest.raises(ValueError, match=match):
        run_solver(solver, "regression", QUICK_REGRESSION, params, n_iter=1)


def test_no_class_attribute_shadows_a_parameter():
    # benchopt sets a parameter only if the instance lacks the attribute, so
    # a class-level default with a parameter's name would silently win
    for solver in benchmark().get_solvers():
        shadowed = [name for name in solver.parameters
                    if hasattr(solver, name)]
        assert not shadowed, (solver.name, shadowed)


def test_init_parameter_reaches_the_solver():
    from conftest import make_problem
    P = make_problem("regression", **QUICK_REGRESSION)
    records, _ = run_solver("IR-SCG", "regression", QUICK_REGRESSION,
                            {"init": "dataset"}, n_iter=1, eval_at=[0, 1])
    assert records[0]["upper_value"] == pytest.approx(float(P.f(P.x0)))
