"""A run dispatched on a dask LocalCluster (benchopt's ``--parallel-config``
with the shipped ``configs/parallel/dask_local.yml``) gives the sequential
run's parquet: every ``objective_*`` column equal, for fixed seeds. Only
the times may differ (docs/parallel.md)."""
import os
import subprocess
import sys

import pandas as pd
import pytest

from conftest import ROOT

pytest.importorskip("distributed", reason="the dask backend needs "
                    "`pip install dask distributed`")

CONFIG = ROOT / "configs" / "parallel" / "dask_local.yml"
# two solvers x one small dataset, a few evaluations: seeds are benchopt's
# defaults (global seed 0, per-repetition seeds from it)
RUN = ["--no-plot", "--no-html", "--no-display", "--no-cache", "-n", "3",
       "-r", "1", "--timeout", "60",
       "-s", "IR-SCG", "-s", "SBCGI[warm_start_samples=1000]",
       "-d", "regression[n_samples=90,n_features=45]"]
KEY = ["solver_name", "idx_rep", "stop_val"]


def benchopt(*args, timeout=300):
    env = dict(os.environ, PYTEST_ADDOPTS="-p no:benchmark")
    return subprocess.run([sys.executable, "-m", "benchopt", *args],
                          cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout)


def run(output, *extra):
    result = benchopt("run", ".", *RUN, *extra, "--output", str(output))
    assert result.returncode == 0, (result.stdout[-3000:]
                                    + result.stderr[-3000:])
    return pd.read_parquet(output).sort_values(KEY).reset_index(drop=True)


def test_dask_run_equals_sequential_run(tmp_path):
    sequential = run(tmp_path / "sequential.parquet")
    parallel = run(tmp_path / "dask.parquet", "--parallel-config",
                   str(CONFIG), "-j", "2")
    assert set(sequential["solver_name"].str.split("[").str[0]) == {
        "IR-SCG", "SBCGI"}
    assert len(sequential) == len(parallel) > 2
    # every metric and counter, the CPU clock aside (like benchopt's time)
    columns = [c for c in sequential.columns if c.startswith("objective_")
               and c != "objective_cpu_time"]
    assert "objective_lower_gap" in columns and "objective_n_lmo" in columns
    assert sorted(columns) == sorted(c for c in parallel.columns
                                     if c.startswith("objective_")
                                     and c != "objective_cpu_time")
    pd.testing.assert_frame_equal(sequential[KEY + columns],
                                  parallel[KEY + columns], check_exact=True)
