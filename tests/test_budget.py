"""The budget a run gets: what was given (command line or config file),
benchopt's default values included, is honoured; a run given none gets the
benchmark's budget and is told so on its first line
(benchmark_utils/budget.py)."""
import os
import subprocess
import sys

import joblib
import pytest
from benchopt.cli.main import run as run_command

from benchmark_utils import budget

from conftest import ROOT, benchmark


def context(*args):
    return run_command.make_context("run", [str(ROOT), *args])


@pytest.mark.parametrize("args, given", [
    ((), {"max_runs": False, "timeout": False}),
    (("--max-runs", "100"), {"max_runs": True, "timeout": False}),
    (("-n", "100", "--timeout", "100"), {"max_runs": True, "timeout": True}),
    (("--no-timeout",), {"max_runs": False, "timeout": True}),
])
def test_what_the_command_line_gives_is_read(args, given):
    assert budget.given_budget(context(*args)) == given


def test_a_config_file_gives_a_budget(tmp_path):
    config = tmp_path / "run.yml"
    config.write_text("max-runs: 100\nsolver: [SOBA]\n")
    assert budget.given_budget(context("--config", str(config))) == {
        "max_runs": True, "timeout": False}


def test_the_choice_applies_only_where_none_was_given(monkeypatch):
    monkeypatch.delenv(budget.ENVIRONMENT_KEY, raising=False)
    assert budget.chosen(100, 100) == (100, 100)      # no run announced
    monkeypatch.setenv(budget.ENVIRONMENT_KEY, "15,")
    assert budget.chosen(100, 100) == (15, 100)
    monkeypatch.setenv(budget.ENVIRONMENT_KEY, ",30")
    assert budget.chosen(100, None) == (100, 30)


def test_a_run_given_no_budget_says_so_first(tmp_path):
    """The first line the benchmark prints names the budget and how to ask
    for benchopt's defaults; with --max-runs 100 nothing is chosen."""
    outputs = {}
    for name, extra in (("plain", []), ("explicit", ["-n", "100",
                                                     "--timeout", "100"]),
                        ("max_runs_only", ["-n", "2"])):
        args = [sys.executable, "-m", "benchopt", "run", ".", "--no-plot",
                "-r", "1", "-d", "coreset_toy", "-s",
                "IBCG[batch_size=None]", "--collect",
                "--output", str(tmp_path / name), *extra]
        outputs[name] = subprocess.run(
            args, cwd=ROOT, text=True, capture_output=True, timeout=300,
            env={k: v for k, v in os.environ.items()
                 if k != budget.ENVIRONMENT_KEY})
    lines = [line for line in outputs["plain"].stderr.splitlines() if line]
    assert lines[0] == (
        "Budget chosen by this benchmark, as none was given: 15 evaluations "
        "per run (316 iterations) and a 300 s cap per run against hangs. For "
        "benchopt's defaults, pass them explicitly: --max-runs 100 "
        "--timeout 100.")
    assert "Budget chosen" not in outputs["explicit"].stderr
    # what was given is not said missing
    assert ("Budget chosen by this benchmark, as no --timeout was given: a "
            "300 s cap per run against hangs.") in outputs[
                "max_runs_only"].stderr


def test_the_chosen_budget_is_in_the_cache_key(monkeypatch):
    """A plain run (15 evaluations, keyed by benchopt on its default
    max_runs=100) and a later ``-n 100`` run have different cache keys: the
    second is never served the first's curve (issue: "(cached)" 16 rows)."""
    objective = benchmark().get_benchmark_objective().get_instance()
    monkeypatch.setenv(budget.ENVIRONMENT_KEY, "15,300")
    plain = joblib.hash(objective)
    monkeypatch.setenv(budget.ENVIRONMENT_KEY, ",")
    assert joblib.hash(objective) != plain
    monkeypatch.delenv(budget.ENVIRONMENT_KEY)
    assert joblib.hash(objective) != plain
    rebuilt = objective.__reduce__()
    copy = rebuilt[0](*rebuilt[1])
    copy.__setstate__(rebuilt[2])      # benchopt's round trip to a worker
    assert repr(copy) == "Bilevel"
