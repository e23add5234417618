"""The overall progress line of a ``benchopt run``
(benchmark_utils/progress.py): one per run as it starts, its number of at
most the run list's, the time elapsed and an estimate of what is left, in
at most 100 columns, counted across the run's processes through
benchopt's public hooks only."""
import json
import os
import re
import subprocess
import sys

from benchmark_utils import progress

from conftest import ROOT


def test_the_line_fits_and_estimates_what_is_left():
    text = progress.line(57, 182, 130.0)
    assert text == ("[overall] run 57 of at most 182, 2 min 10 s elapsed, "
                    "up to about 4 min 52 s left")
    assert len(progress.line(99999, 100000, 1e6)) <= 100
    assert progress.line(1, 4, 3.0) == ("[overall] run 1 of at most 4, 3 s "
                                        "elapsed")
    # with two workers the two runs started last are running: no estimate
    # before a run has finished
    assert progress.line(2, 4, 3.0, workers=2).endswith("3 s elapsed")
    assert progress.line(3, 4, 3.0, workers=2).endswith(
        "up to about 9 s left")
    assert progress.duration(7322) == "2 h 2 min"


def test_a_counter_file_that_is_gone_prints_nothing(capsys, monkeypatch,
                                                    tmp_path):
    # a worker on another machine, or after the command ended: no file is
    # made, nothing printed
    monkeypatch.setenv(progress.ENV, json.dumps(
        {"file": str(tmp_path / "gone"), "total": 4, "workers": 1,
         "start": 0.0}))
    progress.run_started()
    assert capsys.readouterr().err == ""
    assert not (tmp_path / "gone").exists()


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
    lines = re.findall(r"\[overall\] run (\d+) of at most (\d+)",
                       result.stderr)
    assert sorted(lines, key=lambda found: int(found[0])) == [
        (str(k), "4") for k in range(1, 5)]
