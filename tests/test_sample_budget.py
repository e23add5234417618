"""The objective's ``sample_budget`` and ``cpu_budget``: a run ends at
its first evaluation past either, a bad value is refused before any run,
and the tuning reads a run's score on its curve at the sample budget."""
import math
import subprocess
import sys

import pandas as pd
import pytest
import yaml

from benchmark_utils.checks.run_list import RunListError, check_run_list
from benchmark_utils.sample_budget import (
    budget_reached,
    check_cpu_budget,
    check_sample_budget,
    value_at_samples,
)
from benchmark_utils.tuning import scoring
from benchmark_utils.tuning.config_io import config_sample_budget

from conftest import ROOT, benchmark, component

BUDGET = 3000


def test_the_value_at_the_budget_is_interpolated_in_log():
    # halfway in samples between 1 and 100: the geometric mean, 10
    assert value_at_samples([0, 100, 200], [50.0, 1.0, 100.0], 150) == (
        pytest.approx(10.0))
    assert value_at_samples([0, 100], [4.0, 2.0], 100) == 2.0
    # a value <= 0 (a gap at its floor): linear
    assert value_at_samples([0, 10], [1.0, 0.0], 5) == pytest.approx(0.5)
    # a curve that stops short of the budget has no value there
    assert value_at_samples([0, 10, 20], [3.0, 2.0, 1.0], 21) is None


@pytest.mark.parametrize("bad", [0, -5, 1.5, "many", True])
def test_a_bad_budget_is_refused_naming_the_parameter(bad):
    with pytest.raises(ValueError, match="sample_budget must be an integer"):
        check_sample_budget(bad)


@pytest.mark.parametrize("bad", [0, -1.0, float("inf"), "long", True])
def test_a_bad_cpu_budget_is_refused_naming_the_parameter(bad):
    with pytest.raises(ValueError, match="cpu_budget must be a finite "
                                         "number > 0"):
        check_cpu_budget(bad)


def test_either_budget_ends_a_run():
    check_cpu_budget(None)
    few = {"n_samples_upper": 1, "n_samples_lower": 1}
    assert budget_reached(few, 10**6, cpu_time=2.0, cpu_budget=2.0)
    assert not budget_reached(few, 10**6, cpu_time=1.9, cpu_budget=2.0)
    # a run reporting no CPU time (benchopt's start row) is not at it
    assert not budget_reached(few, None, cpu_time=None, cpu_budget=2.0)


def test_none_means_no_budget():
    check_sample_budget(None)
    counts = {"n_samples_upper": 10**9, "n_samples_lower": 10**9}
    assert not budget_reached(counts, None)
    assert budget_reached({"n_samples_upper": 5, "n_samples_lower": 5}, 10)
    assert not budget_reached({"n_samples_upper": 5,
                               "n_samples_lower": 4}, 10)


def test_the_run_list_check_refuses_a_bad_budget_before_any_run():
    objective = benchmark().get_benchmark_objective()
    datasets = [(component("dataset", "coreset_toy"), {})]
    with pytest.raises(RunListError,
                       match=r"objective Bilevel\[sample_budget=0\]: "
                             "sample_budget must be an integer"):
        check_run_list(datasets, [], [(objective, {"sample_budget": [0]})])
    check_run_list(datasets, [], [(objective, {"sample_budget": [10]})])


def test_the_config_budget_is_read_from_the_objective_entries():
    assert config_sample_budget(None) is None
    assert config_sample_budget(["Bilevel"]) is None
    assert config_sample_budget(["Bilevel[sample_budget=1e6]"]) == 10**6
    with pytest.raises(ValueError, match="several sample_budget"):
        config_sample_budget(["Bilevel[sample_budget=[10,20]]"])
    with pytest.raises(ValueError, match="sample_budget must be"):
        config_sample_budget(["Bilevel[sample_budget=-1]"])


@pytest.fixture(scope="module")
def budget_run(tmp_path_factory):
    return run_quadratic(tmp_path_factory.mktemp("sample_budget"),
                         f"Bilevel[sample_budget={BUDGET}]",
                         ["SOBA[batch_size=32]", "stocBiO"], max_runs=40)


def run_quadratic(folder, objective, solvers, max_runs):
    """benchopt's result table of ``solvers`` on a small quadratic under
    ``objective`` (its budgets), one repetition."""
    config = folder / "run.yml"
    config.write_text(yaml.safe_dump({
        "objective": [objective],
        "dataset": ["quadratic[dim_x=10,dim_y=10,n_samples=100,"
                    "constraint=none]"],
        "solver": solvers,
        "n-repetitions": 1, "max-runs": max_runs, "timeout": 100,
    }))
    output = folder / "run.parquet"
    subprocess.run([sys.executable, "-m", "benchopt", "run", ".",
                    "--config", str(config), "--no-plot", "--no-cache",
                    "--output", str(output)], cwd=ROOT, check=True,
                   capture_output=True)
    return pd.read_parquet(output)


def test_the_objective_is_named_with_its_budget_only_where_set(budget_run):
    assert set(budget_run["objective_name"]) == {
        f"Bilevel[sample_budget={BUDGET}]"}
    objective = benchmark().get_benchmark_objective()
    assert str(objective.get_instance()) == "Bilevel"


def test_a_run_ends_at_its_first_evaluation_past_the_budget(budget_run):
    assert len(budget_run["solver_name"].unique()) == 2
    for _, run in budget_run.groupby("solver_name"):
        run = run.sort_values("stop_val")
        samples = (run["objective_n_samples_upper"]
                   + run["objective_n_samples_lower"]).tolist()
        assert samples[-1] >= BUDGET > samples[-2]
        assert run["objective_budget_reached"].tolist()[-1] == 1
        assert run["objective_budget_reached"].iloc[:-1].sum() == 0
        # well before the 40 evaluations of max-runs
        assert run["stop_val"].max() < 1000


def test_the_tuning_scores_a_run_at_the_budget(budget_run):
    rows = budget_run[budget_run["solver_name"].str.startswith("SOBA")]
    rows = rows.sort_values("stop_val")
    score = scoring.budget_score(rows, "general", True, BUDGET)
    gaps = rows["objective_upper_gap"].tolist()
    samples = (rows["objective_n_samples_upper"]
               + rows["objective_n_samples_lower"]).tolist()
    assert min(gaps[-2:]) <= score <= max(gaps[-2:])
    assert score == pytest.approx(value_at_samples(samples, gaps, BUDGET))
    # a budget the curve does not reach scores +inf (the point loses)
    assert math.isinf(scoring.budget_score(rows, "general", True,
                                           10 * samples[-1]))


CPU_BUDGET = 0.2


def test_a_run_ends_at_its_first_evaluation_past_the_cpu_budget(
        tmp_path):
    """Every run reaches the horizon on its CPU clock and stops at the
    first evaluation past it, well before the sample cap; the objective's
    name carries the budgets set."""
    run = run_quadratic(
        tmp_path, f"Bilevel[cpu_budget={CPU_BUDGET},sample_budget=100000000]",
        ["SOBA[batch_size=32]"], max_runs=100).sort_values("stop_val")
    assert set(run["objective_name"]) == {
        f"Bilevel[cpu_budget={CPU_BUDGET},sample_budget=100000000]"}
    cpu = run["objective_cpu_time"].tolist()
    assert cpu[-1] >= CPU_BUDGET > cpu[-2]
    assert run["objective_budget_reached"].tolist()[-1] == 1
    assert run["objective_budget_reached"].iloc[:-1].sum() == 0
