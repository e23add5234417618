"""The committed evidence of an experiment (benchmark_utils/claims/
results.py): a benchopt result table compacts to the evaluations, counters,
metrics and resolved parameters the claims are computed from, and reads
back unchanged to the digits it keeps."""
import pandas as pd
import pytest
import yaml

from benchmark_utils.claims import results

from conftest import ROOT


def benchopt_rows():
    rows = []
    for solver, step in (("SOBA[batch_size=64]", 0.05),
                         ("stocBiO[neumann_terms=11]", 0.1)):
        for rep in range(2):
            for it, gap in ((0, 20.0), (1, 3.0), (2, 0.123456789)):
                rows.append({
                    "base_seed": 0, "objective_name": "Bilevel",
                    "dataset_name": "quadratic[dim_x=10]",
                    "solver_name": solver, "idx_rep": rep, "stop_val": it,
                    "time": 0.001 * it, "p_solver_batch_size": 64,
                    "objective_upper_gap": gap + rep,
                    "objective_value": gap + 1.0,
                    "objective_n_samples_upper": 64 * it,
                    "objective_n_samples_lower": 128 * it,
                    "objective_n_grad_evals": 300 * it,
                    "objective_n_hvp": 10 * it,
                    "objective_diverged": 0,
                    "objective_budget_reached": 0,
                    "objective_resolved_outer_step": step,
                    "objective_resolved_outer_step_source": "default: 0.05",
                    "platform": "Linux"})
    return pd.DataFrame(rows)


def test_a_result_table_compacts_and_reads_back(tmp_path):
    df = benchopt_rows()
    config = {"solver": ["SOBA[batch_size=64]"], "n-repetitions": 2}
    folder = tmp_path / "results" / "example"
    results.write(folder, df, config=config, command="benchopt run .",
                  root=ROOT, cpu_seconds=12.3)
    runs, params, meta = results.read(folder)
    assert list(runs.columns[:6]) == ["dataset", "solver", "rep",
                                      "iteration", "time", "samples"]
    assert {"upper_gap", "value", "grad_evals", "hvp", "diverged"} <= set(
        runs.columns)
    # bookkeeping and platform columns are not evidence
    assert not {"platform", "budget_reached", "p_solver_batch_size",
                "resolved_outer_step"} & set(runs.columns)
    assert len(runs) == 12 and runs["samples"].max() == 384
    # 6 significant digits kept
    assert runs["value"].min() == pytest.approx(1.12346, rel=1e-9)
    assert len(params) == 4
    assert set(params.loc[params["solver"].str.startswith("stocBiO"),
                          "outer_step"]) == {0.1}
    assert params["outer_step_source"].iloc[0] == "default: 0.05"
    assert meta["config"] == config and meta["cpu_seconds"] == 12
    assert meta["runs"] == 4 and meta["evaluations"] == 12
    assert len(meta["commit"]) == 40
    # what a reviewer edits, the reader sees
    text = yaml.safe_load((folder / "meta.yml").read_text())
    assert text["command"] == "benchopt run ."


def test_a_resumed_run_states_what_its_cpu_time_counts():
    """A run resumed from benchopt's cache measured only the runs it
    computed: the section says so, and the estimates (claims list,
    compare's plan) scale the measured time to all the runs."""
    whole = {"cpu_seconds": 300, "runs": 80}
    assert results.all_runs_cpu_seconds(whole) == 300
    assert results.cost_statement(whole) == "300 CPU-seconds"
    resumed = {**whole, "cached_runs": 20}
    assert results.all_runs_cpu_seconds(resumed) == 400
    assert results.cost_statement(resumed).startswith(
        "300 CPU-seconds for the 60 of its 80 runs it computed (20 from "
        "benchopt's cache")
