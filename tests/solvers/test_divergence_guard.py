"""The divergence guard: a run whose iterate or metrics blow up ends flagged
``diverged = 1`` on a row with finite metrics (the last ones within the
bound), its curve before the divergence is kept, and runs that do not
diverge are untouched.

The iterate half lives in the solver base (``get_result``), the metrics half
in ``benchmark_utils.metrics.DivergenceGuard`` (used by the objective), and
the objective's stopping criterion ends a benchopt run at the flagged row.
"""
import math

import numpy as np
import pandas as pd
import pytest
import torch
from test_benchopt import benchopt

from benchmark_utils.metrics import (
    DIVERGENCE_FACTOR,
    GUARDED_METRICS,
    DivergenceGuard,
    diverged_metrics,
)

from conftest import QUICK_REGRESSION, benchmark, make_problem, run_solver

QUICK_QUADRATIC = dict(dim_x=10, dim_y=10, n_samples=100, constraint="none")
EVERY_ITERATION = list(range(11))


def guarded(record):
    return {k: v for k, v in record.items() if k in GUARDED_METRICS}


def assert_finite(record):
    assert all(math.isfinite(v) for v in guarded(record).values()), record


# -- the metrics bound ------------------------------------------------------

def test_bound_is_relative_to_the_start_and_ignores_task_metrics():
    start = {"value": 1e3, "lower_gap": 0.5, "test_accuracy": 0.1}
    within = {"value": 0.9 * DIVERGENCE_FACTOR * 1e3,
              "lower_gap": 0.9 * DIVERGENCE_FACTOR}
    assert diverged_metrics(within, start) == []
    assert diverged_metrics({"value": 2 * DIVERGENCE_FACTOR * 1e3,
                             "lower_gap": 2 * DIVERGENCE_FACTOR}, start) == [
        "value", "lower_gap"]
    for bad in (float("inf"), -float("inf"), float("nan")):
        assert diverged_metrics({"value": bad}, start) == ["value"]
    # a task metric may be undefined (an AUC with one class): never guarded
    assert diverged_metrics({"value": 1.0, "test_accuracy": float("nan"),
                             "cleaning_auc": float("nan")}, start) == []


def test_guard_reports_the_last_metrics_within_the_bound_once_diverged():
    guard = DivergenceGuard()
    rows = [{"value": 1.0}, {"value": 2.0}, {"value": float("inf")},
            {"value": 3.0}]
    reported = [guard.report(dict(row)) for row in rows]
    assert reported == [({"value": 1.0}, False), ({"value": 2.0}, False),
                        ({"value": 2.0}, True), ({"value": 2.0}, True)]
    # flagged by the solver (a non-finite iterate): its metrics are those of
    # the last finite iterate, reported as they are
    guard = DivergenceGuard()
    guard.report({"value": 1.0})
    assert guard.report({"value": 5.0}, diverged=True) == (
        {"value": 5.0}, True)
    # a start out of bound has nothing better to report than itself
    guard = DivergenceGuard()
    assert guard.report({"value": float("nan")})[1] is True


def test_stopping_criterion_ends_a_run_at_its_flagged_row():
    criterion = benchmark().get_benchmark_objective().stopping_criterion
    assert criterion.check_convergence([{"objective_diverged": 0}])[0] is False
    assert criterion.check_convergence([{"objective_diverged": 0},
                                        {"objective_diverged": 1}])[0] is True


# -- one run per family -----------------------------------------------------

def test_general_family_steps_of_1e6_end_flagged_on_the_start():
    # F2SA with inner_step = 1e6: y reaches ~1e72 after one iteration (metrics
    # ~1e145, then inf) while the iterate is still finite
    records, solver = run_solver("F2SA", "quadratic", QUICK_QUADRATIC,
                                 {"inner_step": 1e6}, n_iter=10,
                                 eval_at=EVERY_ITERATION)
    assert records[0]["diverged"] == 0
    assert records[1]["diverged"] == 1
    assert records[-1]["diverged"] == 1
    for record in records:
        assert_finite(record)
        # the start is the last evaluation within the bound
        assert guarded(record) == guarded(records[0])
    # the counters are those of the run so far, not of the start
    assert records[1]["n_grad_evals"] > records[0]["n_grad_evals"] == 0
    # the run ends at its first flagged row (StopAtDivergence)
    assert len(records) == 2 and records[-1]["iteration"] == 1


def test_metrics_that_fail_at_a_diverged_iterate_end_flagged():
    """Regularization selection's exact y*(x) solve meets a matrix that is
    not positive definite at a diverged x (stocBiO with outer_step=1e6):
    the run ends flagged with its last metrics within the bound, its curve
    kept, instead of an error that drops it."""
    small = {"n_train": 200, "n_val": 100, "n_test": 100}
    with pytest.warns(RuntimeWarning, match="metrics of a diverged iterate"):
        records, _ = run_solver("stocBiO", "regularization_selection", small,
                                {"outer_step": 1e6}, n_iter=5,
                                eval_at=EVERY_ITERATION)
    assert [r["diverged"] for r in records] == [0, 1]
    assert_finite(records[-1])
    assert guarded(records[-1]) == guarded(records[0])


def test_general_family_keeps_the_curve_before_a_later_divergence():
    # inner_step = 1: one sound-looking step (value ~4e11 < 1e12 x start), then
    # the bound trips; the row before is kept and is what the flag reports
    records, _ = run_solver("F2SA", "quadratic", QUICK_QUADRATIC,
                            {"inner_step": 1.0}, n_iter=10,
                            eval_at=EVERY_ITERATION)
    flags = [r["diverged"] for r in records]
    first = flags.index(1)
    assert first >= 2 and flags[:first] == [0] * first
    assert all(flags[first:])
    assert_finite(records[-1])
    assert guarded(records[-1]) == guarded(records[first - 1])


def test_simple_family_steps_of_1e6_stay_in_the_feasible_set():
    # the simple family's sets are bounded and every method keeps its
    # iterate in X: a step of 1e6 oscillates but cannot diverge
    records, _ = run_solver("SDBGD", "regression", QUICK_REGRESSION,
                            {"outer_step": 1e6}, n_iter=50)
    assert [r["diverged"] for r in records] == [0, 0]
    assert_finite(records[-1])


def test_simple_family_non_finite_metrics_end_flagged(monkeypatch):
    # a finite iterate whose metrics overflow (here forced from the fourth
    # evaluation on): flagged, reporting the third evaluation's metrics
    problem = make_problem("regression", **QUICK_REGRESSION)
    original = problem.metrics
    calls = {"n": 0}

    def overflowing(x):
        calls["n"] += 1
        metrics = original(x)
        if calls["n"] > 3:
            metrics["lower_gap"] = float("inf")
        return metrics

    monkeypatch.setattr(problem, "metrics", overflowing)
    records, _ = run_solver("SDBGD", "regression", QUICK_REGRESSION,
                            {"outer_step": 1e6}, n_iter=6,
                            eval_at=EVERY_ITERATION[:7])
    assert [r["diverged"] for r in records[:4]] == [0, 0, 0, 1]
    assert all(r["diverged"] == 1 for r in records[3:])
    assert_finite(records[-1])
    assert guarded(records[-1]) == guarded(records[2])


def break_grad_f(monkeypatch, after_calls, broken):
    """The quick regression's ``grad_f`` returns ``broken(gradient)`` once
    it has been called ``after_calls`` times."""
    problem = make_problem("regression", **QUICK_REGRESSION)
    original = type(problem).grad_f
    calls = {"n": 0}

    def patched(self, x, *, batch=None):
        calls["n"] += 1
        grad = original(self, x, batch=batch)
        return broken(grad) if calls["n"] > after_calls else grad

    monkeypatch.setattr(type(problem), "grad_f", patched)


def test_non_finite_iterate_keeps_the_last_finite_one(monkeypatch):
    break_grad_f(monkeypatch, 60, lambda grad: grad * float("nan"))
    records, solver = run_solver("IR-FSCG", "regression", QUICK_REGRESSION,
                                 {"output": "last"}, n_iter=500,
                                 eval_at=[0, 5, 10, 20, 40, 80, 160])
    last = records[-1]
    assert last["diverged"] == 1
    assert np.isfinite(last["lower_gap"]) and np.isfinite(last["value"])
    assert records[-1]["iteration"] < 500
    assert all(r["diverged"] == 0 for r in records[:-1])
    assert all(torch.isfinite(v).all() for v in solver._snapshot.values())


def test_linear_algebra_failure_in_an_iteration_ends_flagged(monkeypatch):
    # a projection or a solve that meets an overflowed iterate raises a
    # LinAlgError inside the iteration: the run ends flagged, not crashed
    def fail(grad):
        raise torch.linalg.LinAlgError("input contained non-finite values")

    break_grad_f(monkeypatch, 3, fail)
    with pytest.warns(RuntimeWarning, match="diverged"):
        records, solver = run_solver("SDBGD", "regression", QUICK_REGRESSION,
                                     n_iter=10, eval_at=EVERY_ITERATION)
    assert solver.diverged
    assert records[-1]["diverged"] == 1 and records[-2]["diverged"] == 0
    assert_finite(records[-1])
    assert guarded(records[-1]) == guarded(records[-2])


# -- a real benchopt run ----------------------------------------------------

def test_benchopt_run_ends_a_diverged_run_at_its_flagged_row(tmp_path):
    output = tmp_path / "run.parquet"
    dataset = "quadratic[dim_x=10,dim_y=10,n_samples=100,constraint=none]"
    result = benchopt(
        "run", ".", "--no-plot", "--no-html", "--no-display", "--no-cache",
        "-n", "5", "-r", "1", "--timeout", "60", "--output", str(output),
        "-d", dataset, "-s", "F2SA[inner_step=1e6]", "-s", "F2SA")
    assert result.returncode == 0, (result.stdout[-3000:]
                                    + result.stderr[-3000:])
    frame = pd.read_parquet(output).sort_values("stop_val")
    runs = {name.split(",inner_step=")[1].split(",")[0]: run
            for name, run in frame.groupby("solver_name")}
    diverged, sound = runs["1000000.0"], runs["None"]
    # the diverged run: its start kept, then one flagged row that ends it
    assert diverged["objective_diverged"].tolist() == [0, 1]
    last = diverged.iloc[-1]
    assert np.isfinite(last["objective_value"])
    assert last["objective_value"] == diverged.iloc[0]["objective_value"]
    assert np.isfinite(last["objective_inner_distance"])
    # the sound run is untouched: its whole budget, never flagged
    assert sound["objective_diverged"].eq(0).all()
    assert sound["stop_val"].max() >= 5
