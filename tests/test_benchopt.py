"""benchopt's own design checks, and a short end-to-end ``benchopt run``."""
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import yaml

from conftest import ROOT, benchmark

QUICK_CONFIG = yaml.safe_load((ROOT / "configs" / "quick.yml").read_text())
SIMPLE_NAMES = {solver.name for solver in benchmark().get_solvers()
                if solver.family == "simple"}
# every simple-family solver of the default run, with its quick parameters
SIMPLE_SOLVERS = [entry for entry in QUICK_CONFIG["solver"]
                  if entry.split("[")[0] in SIMPLE_NAMES]
QUICK_DATASETS = ["regression[n_samples=150,n_features=80]",
                  "dictionary_learning[n_samples=60,n_init_iter=1000]"]
CONTRACT_COLUMNS = [
    "objective_value", "objective_lower_gap", "objective_upper_gap",
    "objective_upper_gap_abs", "objective_test_error",
    "objective_recovery_rate", "objective_n_samples_upper",
    "objective_n_samples_lower", "objective_n_grad_evals",
    "objective_n_hvp", "objective_n_lmo", "objective_n_projections",
    "objective_diverged",
]


def benchopt(*args, timeout=900):
    # pytest-benchmark, when installed, owns a fixture named ``benchmark``
    # that shadows benchopt's own; ``benchopt test`` needs it disabled
    env = dict(os.environ, PYTEST_ADDOPTS="-p no:benchmark")
    return subprocess.run(
        [sys.executable, "-m", "benchopt", *args], cwd=ROOT, env=env,
        capture_output=True, text=True, timeout=timeout)


def test_benchopt_design_checks():
    result = benchopt("test", ".", "--skip-install", "-q", "-x")
    assert result.returncode == 0, (result.stdout[-5000:]
                                    + result.stderr[-5000:])


def run_parquet(folder, solvers, datasets, n_runs, n_reps):
    """A short ``benchopt run`` of these solvers and datasets, as a frame."""
    output = folder / "run.parquet"
    args = ["run", ".", "--no-plot", "--no-html", "--no-display", "-n",
            str(n_runs), "-r", str(n_reps), "--timeout", "20", "--output",
            str(output)]
    for solver in solvers:
        args += ["-s", solver]
    for dataset in datasets:
        args += ["-d", dataset]
    result = benchopt(*args)
    assert result.returncode == 0, (result.stdout[-5000:]
                                    + result.stderr[-5000:])
    return pd.read_parquet(output)


@pytest.fixture(scope="module")
def short_run(tmp_path_factory):
    return run_parquet(tmp_path_factory.mktemp("simple"), SIMPLE_SOLVERS,
                       QUICK_DATASETS, n_runs=6, n_reps=2)


def test_short_run_has_contract_columns(short_run):
    missing = [c for c in CONTRACT_COLUMNS if c not in short_run.columns]
    assert not missing


def test_short_run_curves_are_finite(short_run):
    assert set(short_run["solver_name"].str.split("[").str[0]) == {
        entry.split("[")[0] for entry in SIMPLE_SOLVERS}
    assert short_run["solver_name"].nunique() == len(SIMPLE_SOLVERS)
    assert short_run["dataset_name"].nunique() == 2
    for (dataset, solver), run in short_run.groupby(
            ["dataset_name", "solver_name"]):
        assert run["idx_rep"].nunique() == 2
        assert run["stop_val"].max() >= 5, (dataset, solver)
        columns = ["objective_value", "objective_lower_gap",
                   "objective_n_samples_upper", "objective_n_lmo"]
        if dataset.startswith("regression"):
            columns += ["objective_upper_gap_abs", "objective_test_error"]
        else:
            columns += ["objective_recovery_rate"]
        assert np.isfinite(run[columns].to_numpy()).all(), (dataset, solver)
        assert (run["objective_diverged"] == 0).all()
        # the x-axis counters grow along the curve
        for _, rep in run.groupby("idx_rep"):
            samples = rep.sort_values("stop_val")["objective_n_samples_upper"]
            assert samples.is_monotonic_increasing


GENERAL_NAMES = {solver.name for solver in benchmark().get_solvers()
                 if solver.family == "general"}
GENERAL_SOLVERS = [entry for entry in QUICK_CONFIG["solver"]
                   if entry.split("[")[0] in GENERAL_NAMES]
GENERAL_DATASETS = [entry for entry in QUICK_CONFIG["dataset"]
                    if entry.split("[")[0] not in {"regression",
                                                   "dictionary_learning"}]
# (solver, dataset) pairs the default run skips, each with its reason
EXPECTED_SKIPS = {
    ("IBCG", "quadratic[constraint=none]"),    # IBCG needs an LMO on X
    ("IBCG", "hyper_cleaning"),                 # X is the whole space
    # the coordinate-wise A_t-weighted projection is exact only on boxes
    ("BiAdam", "quadratic[constraint=l2_ball]"),
    ("BiAdam", "matrix_completion"),
    ("BiAdam", "coreset_toy"),
    ("VR-BiAdam", "quadratic[constraint=l2_ball]"),
    ("VR-BiAdam", "matrix_completion"),
    ("VR-BiAdam", "coreset_toy"),
    # SBFW is projection-free: it needs a bounded X with an LMO
    ("SBFW", "quadratic[constraint=none]"),
    ("SBFW", "hyper_cleaning"),
    ("IBCG", "hyper_representation"),           # X is the whole space
    # Without-BO fixes x at the problem's single_level_x, which only
    # hyper-cleaning declares (its uniform weights)
    ("Without-BO", "quadratic[constraint=none]"),
    ("Without-BO", "quadratic[constraint=l2_ball]"),
    ("Without-BO", "quadratic[constraint=box]"),
    ("Without-BO", "matrix_completion"),
    ("Without-BO", "coreset_toy"),
    ("Without-BO", "hyper_representation"),
    ("SBFW", "hyper_representation"),
}


@pytest.fixture(scope="module")
def general_run(tmp_path_factory):
    return run_parquet(tmp_path_factory.mktemp("general"), GENERAL_SOLVERS,
                       GENERAL_DATASETS, n_runs=5, n_reps=1)


def test_general_run_covers_every_supported_pair(general_run):
    def label(dataset):
        base = dataset.split("[")[0]
        if base == "quadratic":
            constraint = dataset.split("constraint=")[1].split(",")[0]
            return f"quadratic[constraint={constraint}]"
        return base
    ran = {(solver.split("[")[0], label(dataset)) for solver, dataset in
           general_run[["solver_name", "dataset_name"]].to_numpy()}
    instances = {label(d) for d in general_run["dataset_name"]}
    assert len(instances) == 7        # 3 quadratic constraints + 4 apps
    solvers = {entry.split("[")[0] for entry in GENERAL_SOLVERS}
    expected = {(s, d) for s in solvers for d in instances} - EXPECTED_SKIPS
    assert ran == expected


def test_general_run_curves_are_finite(general_run):
    for (dataset, solver), run in general_run.groupby(
            ["dataset_name", "solver_name"]):
        assert run["stop_val"].max() >= 4, (dataset, solver)
        gap = ("objective_hypergrad_norm" if "objective_hypergrad_norm" in
               run and run["objective_hypergrad_norm"].notna().all()
               else "objective_fw_gap")
        columns = ["objective_value", gap, "objective_inner_distance",
                   "objective_inner_grad_norm", "objective_n_samples_lower"]
        assert np.isfinite(run[columns].to_numpy(dtype=float)).all(), (
            dataset, solver)
        assert (run["objective_diverged"] == 0).all()
        samples = run.sort_values("stop_val")["objective_n_samples_lower"]
        assert samples.is_monotonic_increasing


def test_general_run_records_each_solvers_resolved_steps(general_run):
    """Every row of a real ``benchopt run`` carries the steps its solver
    ran with, as finite numbers with their source: the x and y steps of
    every solver that has them (a curve can be rerun from its rows)."""
    for (dataset, solver), run in general_run.groupby(
            ["dataset_name", "solver_name"]):
        name = solver.split("[")[0]
        cls = next(c for c in benchmark().get_solvers() if c.name == name)
        for rule in cls.step_rules:
            values = run[f"objective_resolved_{rule.name}"].to_numpy(float)
            sources = run[f"objective_resolved_{rule.name}_source"]
            assert np.isfinite(values).all(), (dataset, solver, rule.name)
            assert sources.str.match(
                r"^(given|tuned: |default: |derived: )").all(), (
                    dataset, solver, rule.name, sources.iloc[0])
        for step in ("outer_step", "inner_step"):
            if step in cls.parameters:
                assert f"objective_resolved_{step}" in run, (solver, step)


# The general solvers' defaults through a real ``benchopt run`` on the
# quick quadratic, with an iteration budget (15 evaluations: benchopt's
# callback grows the stop value 1.5x, so the last is iteration 316;
# the timeout is far above what these runs take): every method with an
# outer update lowers its stationarity measure at least tenfold, the
# hypergradient norm on the whole space, the Frank-Wolfe gap on a ball for
# the projection-free ones.
NO_OUTER_UPDATE = {"Without-BO"}
# F2SA's regime-(a) steps decay as (k + k0)^(-5/7): fourfold by then (as
# its own seeded test asserts), tenfold later
FACTOR = {"F2SA": 4}
PROJECTION_FREE = {"IBCG", "SBFW"}
QUICK_QUADRATIC = next(entry for entry in QUICK_CONFIG["dataset"]
                       if entry.startswith("quadratic"))


@pytest.fixture(scope="module")
def quadratic_run(tmp_path_factory):
    solvers = [s for s in GENERAL_SOLVERS
               if s.split("[")[0] not in NO_OUTER_UPDATE]
    return run_parquet(tmp_path_factory.mktemp("quadratic"), solvers,
                       [QUICK_QUADRATIC], n_runs=15, n_reps=1)


def test_general_defaults_reach_tenfold_in_a_benchopt_run(quadratic_run):
    checked = set()
    for (dataset, solver), run in quadratic_run.groupby(
            ["dataset_name", "solver_name"]):
        name = solver.split("[")[0]
        if name in PROJECTION_FREE:
            if "constraint=l2_ball" not in dataset:
                continue
            metric = "objective_fw_gap"
        elif "constraint=none" in dataset:
            metric = "objective_hypergrad_norm"
        else:
            continue
        run = run.sort_values("stop_val")
        start, end = run[metric].iloc[0], run[metric].iloc[-1]
        assert (run["objective_diverged"] == 0).all(), solver
        assert run["stop_val"].iloc[-1] >= 200, solver
        assert end <= start / FACTOR.get(name, 10), (solver, start, end)
        checked.add(name)
    assert checked == {s.split("[")[0] for s in GENERAL_SOLVERS} - (
        NO_OUTER_UPDATE)


@pytest.mark.parametrize("chosen, given, expected", [
    ("15,300", (100, 100), (15, 300)),  # a plain run: the benchmark's budget
    ("15,", (100, 37), (15, 37)),       # --timeout 37 given: as given
    (",30", (5, None), (5, 30)),        # -n 5 given
    (None, (100, 100), (100, 100)),     # no run announced: benchopt's values
])
def test_the_criterion_applies_the_announced_budget(monkeypatch, chosen,
                                                    given, expected):
    from benchmark_utils.budget import ENVIRONMENT_KEY
    if chosen is None:
        monkeypatch.delenv(ENVIRONMENT_KEY, raising=False)
    else:
        monkeypatch.setenv(ENVIRONMENT_KEY, chosen)
    criterion = benchmark().get_benchmark_objective().stopping_criterion
    runner = criterion.get_runner_instance(max_runs=given[0],
                                           timeout=given[1])
    assert (runner.max_runs, runner.timeout) == expected


def test_plain_run_ends_at_the_iteration_its_steps_were_tuned_at():
    # configs/tuned/default_*.yml were tuned at 316 iterations, and so is
    # tests/solvers/test_hyper_cleaning_progress.py's budget
    from benchmark_utils.budget import FIRST_CONTACT_MAX_RUNS
    from benchmark_utils.tuning.runner import final_iteration
    assert final_iteration(FIRST_CONTACT_MAX_RUNS) == 316
