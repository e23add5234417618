"""perf/anchor_side_by_side.py and the config it reads
(configs/benchmark_bilevel_anchor_work.yml): the config names the solvers
shared with benchmark_bilevel at its work (batch 64, independent
batches, cache_means=False); with JAX and a benchmark_bilevel clone
(``BENCHMARK_BILEVEL_REPO``), a smoke run
prints the table with a finite ratio and the pinning checks."""
import importlib.util
import math
import re
import subprocess
import sys

import pytest

from conftest import ROOT, component

SCRIPT = ROOT / "perf" / "anchor_side_by_side.py"


def load_script():
    spec = importlib.util.spec_from_file_location("anchor_side_by_side",
                                                  SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def skip_without_anchor_repo():
    script = load_script()
    if script.ANCHOR_REPO is None or not script.ANCHOR_REPO.exists():
        pytest.skip(f"no benchmark_bilevel clone: set {script.REPO_VARIABLE}")


def test_config_holds_the_shared_solvers_at_the_anchors_work():
    script = load_script()
    datasets, solvers = script.read_config(script.CONFIG)
    assert set(solvers) == set(script.ANCHOR_FILES)
    for name, params in solvers.items():
        solver = component("solver", name)
        assert set(params) <= set(solver.parameters), name
        solver.get_instance(**params)           # the parameter checks
        # BOME is full batch in the anchor; every other batch is 64
        expected = None if name == "BOME" else 64
        assert params.get("batch_size") == expected, name
    assert solvers["F2SA"]["shared_x_batch"] is False
    assert set(datasets) == {"float32", "float64"}
    for params in datasets.values():
        assert params["cache_means"] is False
        assert params["generator"] == "benchmark_bilevel"


def test_config_dataset_builds_the_anchors_instance():
    script = load_script()
    datasets, _ = script.read_config(script.CONFIG)
    dataset = component("dataset", "quadratic").get_instance(
        **datasets["float32"])
    P = dataset.get_data()["problem"]
    assert (P.n_lower, P.n_upper, P.dim_x, P.dim_y) == (1024, 1024, 100, 100)
    assert not P.cache_means


def test_smoke_run_prints_the_table_and_the_pinning_checks():
    pytest.importorskip("jax")
    skip_without_anchor_repo()
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--solvers", "SOBA",
         "--rounds", "1"], cwd=ROOT, capture_output=True, text=True,
        timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    row = next(line for line in out.splitlines()
               if line.startswith("| SOBA |") and "(" in line)
    cells = [c.strip() for c in row.strip("|").split("|")]
    ratios = [float(r) for r in re.findall(r"\(([^)]+)\)", row)]
    assert len(ratios) == 4 and all(math.isfinite(r) and r > 0
                                    for r in ratios), row
    busy = [int(n) for n in cells[7].split("/")]
    assert all(n >= 1 for n in busy), row
    assert re.search(r"anchor: pid \d+ allowed cores \[\d+\]; busy threads",
                     out)
    assert re.search(r"ours: pid \d+ allowed cores \[\d+\]; busy threads",
                     out)
    assert "threads allowed elsewhere: 0" in out
    assert "not pinned" not in out


def test_curve_comparison_starts_both_sides_at_the_anchors_start():
    # tools/compare_anchor_curves.py: the anchor's own SABA and ours, one
    # seed, one block of 128 iterations; both start at x = -2 (the same
    # F - F*) and both decrease it
    pytest.importorskip("jax")
    skip_without_anchor_repo()
    result = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "compare_anchor_curves.py"),
         "--seeds", "1", "--iterations", "128", "--every", "128",
         "--steps", "default", "--solvers", "SABA"], cwd=ROOT,
        capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    rows = [line for line in result.stdout.splitlines()
            if re.match(r"\| (0|128) \|", line)]
    values = [[float(v) for v in re.findall(r"\| ([0-9.e+-]+) \[", row)]
              for row in rows]
    (anchor0, ours0), (anchor1, ours1) = values
    assert anchor0 == ours0 > 0
    assert 0 < anchor1 < anchor0 / 10 and 0 < ours1 < ours0 / 10
    assert ours1 == pytest.approx(anchor1, rel=0.05)
