"""What every solver gets from the shared base and its family base: the
shared parameters declared once, per-repetition seeds, the start and the
family skip (the divergence guard: test_divergence_guard.py)."""
import numpy as np
import pytest
import torch

from conftest import (
    QUICK_REGRESSION,
    benchmark,
    component,
    make_problem,
    run_solver,
)

TINY_QUADRATIC = dict(dim_x=5, dim_y=4, n_samples=30, constraint="none")


def test_no_class_attribute_shadows_a_parameter():
    # benchopt sets a parameter only if the instance lacks the attribute, so
    # a class-level default with a parameter's name would silently win
    for solver in benchmark().get_solvers():
        shadowed = [name for name in solver.parameters
                    if hasattr(solver, name)]
        assert not shadowed, (solver.name, shadowed)


def test_init_is_declared_once_for_every_solver():
    # the base appends it last: the parameter order (and benchopt's sorted
    # solver names) are those of a solver that lists it itself
    for solver in benchmark().get_solvers():
        assert list(solver.parameters)[-1] == "init", solver.name
        assert solver.parameters["init"] == ["random"], solver.name
        assert "init=random" in repr(solver.get_instance()), solver.name


def test_init_dataset_starts_from_the_dataset_for_both_families():
    P = make_problem("regression", **QUICK_REGRESSION)
    records, _ = run_solver("IR-SCG", "regression", QUICK_REGRESSION,
                            {"init": "dataset"}, n_iter=1, eval_at=[0, 1])
    assert records[0]["upper_value"] == pytest.approx(float(P.f(P.x0)))
    P = make_problem("quadratic", **TINY_QUADRATIC)
    _, solver = run_solver("F2SA", "quadratic", TINY_QUADRATIC,
                           {"init": "dataset"}, n_iter=0)
    assert torch.equal(solver.x, P.x0) and torch.equal(solver.y, P.y0)
    _, solver = run_solver("F2SA", "quadratic", TINY_QUADRATIC, {},
                           n_iter=0)
    assert not torch.equal(solver.x, P.x0)


def test_repetitions_draw_different_starts_and_samples():
    a, _ = run_solver("IR-SCG", "regression", QUICK_REGRESSION, n_iter=20,
                      repetition=0)
    b, _ = run_solver("IR-SCG", "regression", QUICK_REGRESSION, n_iter=20,
                      repetition=1)
    c, _ = run_solver("IR-SCG", "regression", QUICK_REGRESSION, n_iter=20,
                      repetition=0)
    assert a[0]["lower_value"] != b[0]["lower_value"]
    # the same repetition, the same run (the CPU clock aside)
    assert [without_clock(r) for r in a] == [without_clock(r) for r in c]


def without_clock(record):
    return {k: v for k, v in record.items() if k != "cpu_time"}


@pytest.mark.parametrize("solver, dataset, params", [
    ("F2SA", "regression", QUICK_REGRESSION),
    ("IR-SCG", "quadratic", TINY_QUADRATIC),
])
def test_solvers_skip_the_other_family(solver, dataset, params):
    from benchmark_utils.counting import CountingView
    instance = component("solver", solver).get_instance()
    skip, reason = instance.skip(
        problem=CountingView(make_problem(dataset, **params)))
    assert skip and f"solves {instance.family} bilevel problems" in reason


@pytest.mark.parametrize("dataset, params, iterate", [
    ("regression", QUICK_REGRESSION, {"x"}),
    ("quadratic", TINY_QUADRATIC, {"x", "y"}),
])
def test_objective_evaluates_the_family_iterate(dataset, params, iterate):
    # the problem family says what an iterate is and which metrics it gets:
    # the objective has no family branch
    objective = benchmark().get_benchmark_objective().get_instance()
    objective.set_data(problem=make_problem(dataset, **params))
    objective.get_objective()
    result = objective.get_one_result()
    assert set(result) == iterate | {"diverged"}
    metrics = objective.evaluate_result(**result)
    assert metrics["diverged"] == 0 and metrics["n_lmo"] == 0
    assert np.isfinite(metrics["value"])


def test_each_evaluation_reports_the_cpu_time_of_the_iterations():
    """``cpu_time``: the process's CPU seconds in the solver's iterations
    alone (a clock beside benchopt's time that load changes far less): 0
    at the start, non-decreasing, positive once the solver has worked,
    and not charged for the evaluations between."""
    records, solver = run_solver("SOBA", "quadratic", {}, {}, n_iter=200,
                                 eval_at=[0, 50, 100])
    times = [r["cpu_time"] for r in records]
    assert times[0] == 0.0 and times == sorted(times) and times[-1] > 0
    assert solver.cpu_time == times[-1]
