"""Every solver refuses bad parameters before any run, with a ValueError
that names the parameter: one table for all solvers, run on a problem of
the solver's family (the quick regression for the simple family, a tiny
quadratic for the general one; IBCG on a box, since it skips the whole
space). The shared parameters, ``init`` and ``batch_size``, are checked by
the base once for every solver that has them. A check that needs no
problem fails already when the solver is built (benchopt builds every
solver of a run before the first run starts); the others (batch sizes
against the problem's sizes, the schedule the problem picks) fail in
``set_objective``."""
import math

import pytest

from benchmark_utils.checks.run_list import RunListError, check_run_list
from benchmark_utils.solvers.steps import MAX_SIZE

from conftest import QUICK_REGRESSION, benchmark, component, run_solver

PROBLEM_OF_FAMILY = {
    "simple": ("regression", QUICK_REGRESSION),
    "general": ("quadratic", dict(dim_x=5, dim_y=4, n_samples=30,
                                  constraint="none")),
}
SOLVERS = sorted(solver.name for solver in benchmark().get_solvers())
WITH_BATCH_SIZE = sorted(solver.name for solver in benchmark().get_solvers()
                         if "batch_size" in solver.parameters)
# solvers for which batch_size=None means nothing (no full-pass or default
# meaning) refuse it
NO_NONE_BATCH = ["IR-SCG", "SBCGI", "SDBGD", "aR-IP-SeG"]

SHARED = (
    [(solver, {"init": "zeros"}, "init must be") for solver in SOLVERS]
    + [(solver, {"batch_size": 10_000}, "batch_size must be")
       for solver in WITH_BATCH_SIZE]
    + [(solver, {"batch_size": 0}, "batch_size must be")
       for solver in WITH_BATCH_SIZE]
    + [(solver, {"batch_size": None}, "batch_size must be")
       for solver in NO_NONE_BATCH]
)
OWN = [
    # iterative regularization (Giang-Tran et al. 2025)
    ("IR-FSCG", {"period": 1}, "period"),
    ("IR-SCG", {"upper_weight": -1.0}, "upper_weight"),
    ("IR-SCG", {"schedule": "convex", "upper_weight_exponent": 0.75},
     "upper_weight_exponent must be in"),
    ("IR-SCG", {"schedule": "nonconvex", "upper_weight_exponent": 0.9,
                "outer_step_exponent": 0.5},
     "upper_weight_exponent must be <= outer_step_exponent"),
    ("IR-SCG", {"schedule": "cubic"}, "schedule"),
    ("IR-FSCG", {"output": "best"}, "output"),
    # cutting-plane methods (Cao et al. 2023; Jiang et al. 2023)
    ("SBCGI", {"K0": -1.0}, "K0"),
    ("SBCGI", {"outer_step": 2.0}, "outer_step must be"),
    ("SBCGI", {"momentum_exponent": 0.0}, "momentum_exponent"),
    ("SBCGI", {"on_infeasible": "ignore"}, "on_infeasible"),
    ("SBCGI", {"cut": "yes"}, "cut must be"),
    ("SBCGF", {"outer_step": 0.0}, "outer_step must be"),
    ("SBCGF", {"lmo_backend": "gurobi"}, "lmo_backend"),
    ("SBCGF", {"warm_start_method": "magic"}, "warm_start_method"),
    ("SBCGF", {"warm_start_samples": 0}, "warm_start_samples"),
    ("CG-BiO", {"step_offset": 1}, "step_offset"),
    ("CG-BiO", {"charge_warm_start": "no"}, "charge_warm_start"),
    # projected baselines
    ("aR-IP-SeG", {"penalty_weight": 0.0}, "penalty_weight"),
    ("SDBGD", {"outer_step": -1.0}, "outer_step must be"),
    # F2SA (Kwon et al. 2023)
    ("F2SA", {"T": 0}, "T must be"),
    ("F2SA", {"outer_step": -1.0}, "outer_step must be"),
    ("F2SA", {"noise_regime": "loud"}, "noise_regime must be"),
    ("F2SA", {"outer_step_exponent": 0.2, "inner_step_exponent": 0.5},
     r"outer_step_exponent \(a\) must be >= inner_step_exponent"),
    ("F2SA", {"outer_step_exponent": 1.5}, "outer_step_exponent must be in"),
    ("F2SA", {"lambda0": 0.0}, "lambda0 must be"),
    ("F2SA", {"step_offset": 0}, "step_offset must be"),
    ("F2SA", {"inner_step": -0.1}, "inner_step must be"),
    ("F2SA", {"shared_x_batch": "yes"}, "shared_x_batch must be"),
    # stocBiO (Ji et al. 2021)
    ("stocBiO", {"D": 0}, "D must be"),
    ("stocBiO", {"neumann_terms": 0}, "neumann_terms must be"),
    ("stocBiO", {"outer_step": 0.0}, "outer_step must be"),
    ("stocBiO", {"inner_step": -1.0}, "inner_step must be"),
    ("stocBiO", {"linear_system_step": float("inf")},
     "linear_system_step must be"),
    ("stocBiO", {"outer_batch_size": 10_000}, "outer_batch_size must be"),
    ("stocBiO", {"cross_batch_size": 0}, "cross_batch_size must be"),
    ("stocBiO", {"hessian_batch_size": 10_000}, "hessian_batch_size must be"),
    ("F2SA", {"multiplier": "tied"}, "multiplier must be"),
    # IBCG (Abolfazli et al. 2023)
    ("IBCG", {"outer_step": 1.5}, "outer_step must be"),
    ("IBCG", {"outer_step": "convex"}, "outer_step must be"),
    ("IBCG", {"step_rule": "fast"}, "step_rule must be"),
    ("IBCG", {"horizon": 1}, "horizon must be"),
    ("IBCG", {"inner_step": 0.0}, "inner_step must be"),
    ("IBCG", {"linear_system_step": -0.5}, "linear_system_step must be"),
    ("IBCG", {"batch_size": 31}, "batch_size must be"),
    ("SDBGD", {"g_hat": float("nan")}, "g_hat must be"),
    ("stocBiO", {"outer_batch_size": 0}, "outer_batch_size must be"),
    ("SBCGF", {"period": 0}, "period must be"),
    # convex problem: p < 1/2
    ("IR-SCG", {"upper_weight_exponent": 0.75},
     "upper_weight_exponent must be in"),
]
# the checks above that need the problem (its sizes, its convexity)
NEEDS_PROBLEM = (
    [(solver, {"batch_size": 10_000}) for solver in WITH_BATCH_SIZE]
    + [("stocBiO", {"outer_batch_size": 10_000}),
       ("stocBiO", {"hessian_batch_size": 10_000}),
       ("IBCG", {"batch_size": 31}),
       ("IR-SCG", {"upper_weight_exponent": 0.75})])


@pytest.mark.parametrize("solver, params, match", SHARED + OWN)
def test_bad_parameters_fail_before_running(solver, params, match):
    dataset, dataset_params = PROBLEM_OF_FAMILY[
        component("solver", solver).family]
    if solver == "IBCG":
        dataset_params = dict(dataset_params, constraint="box")
    with pytest.raises(ValueError, match=match):
        run_solver(solver, dataset, dataset_params, params, n_iter=1)


@pytest.mark.parametrize("solver, params, match", [
    case for case in SHARED + OWN if case[:2] not in NEEDS_PROBLEM])
def test_bad_parameters_fail_before_the_solver_runs(solver, params, match):
    """In its checks (benchopt's ``skip`` runs them first), and in the
    check of a run's whole selection before any run starts."""
    instance = component("solver", solver).get_instance(**params)
    with pytest.raises(ValueError, match=match):
        instance.check_parameters()
    grid = {name: [value] for name, value in params.items()}
    with pytest.raises(RunListError, match=match):
        check_run_list([], [(component("solver", solver), grid)])


@pytest.mark.parametrize("solver, params", NEEDS_PROBLEM)
def test_checks_that_need_the_problem_wait_for_it(solver, params):
    component("solver", solver).get_instance(**params).check_parameters()


@pytest.mark.parametrize("solver", SOLVERS)
def test_default_parameters_are_accepted(solver):
    component("solver", solver).get_instance().check_parameters()


def test_stocbio_bounds_its_batch_size_by_the_lower_level_only():
    # stocBiO's batch_size sizes the inner loop's lower batches S_t only
    # (its outer batches are outer_batch_size); F2SA's serves both levels.
    # Hyper-cleaning: 200 lower (training) and 100 upper (validation) terms
    cleaning = dict(n_train=200, n_val=100, n_test=100)
    run_solver("stocBiO", "hyper_cleaning", cleaning,
               dict(inner_step=1.0, linear_system_step=1.0, batch_size=150,
                    outer_batch_size=32),
               n_iter=0)
    with pytest.raises(ValueError, match=r"batch_size must be .*\[1, 100\]"):
        run_solver("F2SA", "hyper_cleaning", cleaning,
                   dict(inner_step=1.0, batch_size=150), n_iter=0)


@pytest.mark.parametrize("name", ["IR-SCG", "IR-FSCG"])
def test_an_exponent_the_convex_schedule_ignores_is_refused(name):
    """The convex schedule's step is 2/(t+2): a given outer_step_exponent
    would be ignored, so it is refused naming the parameter and the way
    out."""
    solver = component("solver", name).get_instance(schedule="convex",
                                                    outer_step_exponent=0.5)
    with pytest.raises(ValueError, match="outer_step_exponent is the "
                       "nonconvex schedule's .* set schedule=nonconvex"):
        solver.check_parameters()
    component("solver", name).get_instance(
        schedule="nonconvex", outer_step_exponent=0.5).check_parameters()
    component("solver", name).get_instance(
        schedule="convex").check_parameters()


@pytest.mark.parametrize("name", ["F2SA", "F3SA"])
def test_a_noise_regime_both_exponents_override_is_refused(name):
    """noise_regime only picks (a, c): given with both exponents, it would be
    ignored, so it is refused."""
    both = dict(outer_step_exponent=0.5, inner_step_exponent=0.25)
    with pytest.raises(ValueError, match="noise_regime=.none. picks the "
                       "exponents a and c, and both are given"):
        component("solver", name).get_instance(
            noise_regime="none", **both).check_parameters()
    component("solver", name).get_instance(**both).check_parameters()
    component("solver", name).get_instance(
        noise_regime="none", outer_step_exponent=0.5).check_parameters()


GIVEN_STEPS = [(solver.name, rule.name) for solver in benchmark().get_solvers()
               for rule in solver.step_rules
               if rule.parameter and rule.parameter_default is not None]


@pytest.mark.parametrize("name, step", GIVEN_STEPS,
                         ids=[f"{n}-{s}" for n, s in GIVEN_STEPS])
def test_a_step_whose_default_is_a_number_refuses_none(name, step):
    # None means "the rule decides" only where there is a rule: here a
    # TypeError in a check, or a refusal only once the run started
    with pytest.raises(ValueError, match=f"^{step} must be a"):
        component("solver", name).get_instance(
            **{step: None}).check_parameters()


SIZES = sorted({(solver.name, rule.parameter or rule.name)
                for solver in benchmark().get_solvers()
                for rule in solver.size_rules})


@pytest.mark.parametrize("name, size", SIZES,
                         ids=[f"{n}-{s}" for n, s in SIZES])
def test_a_size_beyond_the_cap_is_refused_before_any_run(name, size):
    """A loop of 1e30 steps would never end (benchopt reads its timeout
    only between evaluations), and one past int64 would end the run at
    its save with every finished run lost: refused at construction; the
    cap itself is accepted."""
    for value, text in ((1e30, "1e\\+30"), (math.inf, "inf")):
        with pytest.raises(ValueError, match=f"^{size} must be at most "
                                             f"{MAX_SIZE} .*got {text}$"):
            component("solver", name).get_instance(
                **{size: value}).check_parameters()
    try:
        component("solver", name).get_instance(
            **{size: MAX_SIZE}).check_parameters()
    except ValueError as error:     # another of its checks, not the cap
        assert "at most" not in str(error)


def test_a_run_with_a_size_beyond_the_cap_runs_nothing():
    grid = {"horizon": [1e30]}
    with pytest.raises(RunListError, match="horizon must be at most"):
        check_run_list([], [(component("solver", "TTSA"), grid)])
