"""The overall progress line of a ``benchopt run``
(benchmark_utils/progress.py): one per run as it starts, started / total,
the share done, the time elapsed and an estimate of what is left, in at
most 100 columns, counted across the run's processes through benchopt's
public hooks only."""
import os
import re
import subprocess
import sys

from benchmark_utils import progress

from conftest import ROOT


def test_the_line_fits_and_estimates_what_is_left():
    text = progress.line(57, 182, 130.0)
    assert text == ("[overall] run 57/182, 31% done, 2 min 10 s elapsed, "
                    "about 4 min 52 s left")
    assert len(progress.line(99999, 100000, 1e6)) <= 100
    assert progress.line(1, 4, 3.0) == ("[overall] run 1/4, 0% done, 3 s "
                                        "elapsed")
    assert progress.duration(7322) == "2 h 2 min"


def test_outside_a_counted_run_nothing_is_printed(capsys, monkeypatch):
    monkeypatch.delenv(progress.ENV, raising=False)
    progress.run_started()
    assert capsys.readouterr().err == ""


def test_a_run_prints_one_overall_line_per_run(tmp_path):
    # 1 dataset x 2 solvers x 2 repetitions, each run once; with -j 2 they
    # start in two worker processes, counted in one sequence
    result = subprocess.run(
        [sys.executable, "-m", "benchopt", "run", ".", "--no-plot",
         "--no-cache", "-d", "coreset_toy", "-s", "IBCG", "-s", "SBFW",
         "-r", "2", "-n", "3", "-j", "2", "--output", str(tmp_path / "run")],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
        env=dict(os.environ, PYTEST_ADDOPTS="-p no:benchmark"))
    assert result.returncode == 0, result.stderr[-2000:]
    lines = re.findall(r"\[overall\] run (\d+)/(\d+), (\d+)% done",
                       result.stderr)
    assert sorted(lines, key=lambda found: int(found[0])) == [
        (str(k), "4", str(25 * (k - 1))) for k in range(1, 5)]
