"""The overall progress line of a ``benchopt run``
(benchmark_utils/progress.py): one per finished run, done / total, the
dataset, the time elapsed and an estimate of what is left, in at most 100
columns. The end-to-end test fails when benchopt stops calling the hook."""
import os
import re
import subprocess
import sys

from benchmark_utils import progress

from conftest import ROOT


def test_the_line_fits_and_estimates_what_is_left():
    text = progress.line(57, 182, 3, 8, 130.0)
    assert text == ("[overall] run 57/182 (31%), dataset 3/8, 2 min 10 s "
                    "elapsed, about 4 min 45 s left")
    assert len(progress.line(99999, 100000, 999, 1000, 1e6)) <= 100
    assert progress.line(4, 4, 1, 1, 3.0).endswith("3 s elapsed")
    assert progress.duration(7322) == "2 h 2 min"


def test_a_run_prints_one_overall_line_per_run(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "benchopt", "run", ".", "--no-plot", "-d",
         "coreset_toy", "-s", "IBCG", "-s", "SBFW", "-r", "2", "-n", "3",
         "--output", str(tmp_path / "run")],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
        env=dict(os.environ, PYTEST_ADDOPTS="-p no:benchmark"))
    assert result.returncode == 0, result.stderr[-2000:]
    lines = re.findall(r"\[overall\] run (\d+)/(\d+) \(\d+%\), dataset "
                       r"1/1", result.stdout + result.stderr)
    assert lines == [(str(k), "4") for k in range(1, 5)]
