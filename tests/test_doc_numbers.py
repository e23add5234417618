"""Numbers and statements quoted in docs/report.md, re-measured: each test
reads the sentence from the doc and checks it against a seeded run, so a
doc figure cannot go stale silently."""
import re

import pytest
import yaml

from conftest import ROOT, one_line, run_solver

REPORT_DOC = ROOT / "docs" / "report.md"


def doc_text():
    return one_line(REPORT_DOC.read_text())


def test_the_warm_start_example_quotes_a_seeded_run():
    match = re.search(
        r"SBCGI \(defaults\) goes from its start \(lower gap ([0-9.]+), upper"
        r" gap ([0-9.]+)\) at x = 1 to a lower gap of ([0-9.]+) at 1\.0 x "
        r"10\^5 samples", doc_text())
    assert match, "the warm-start sentence of docs/report.md changed"
    start_lower, start_upper, warm_lower = map(float, match.groups())
    records, _ = run_solver("SBCGI", "regression",
                            {"n_samples": 150, "n_features": 80}, {},
                            n_iter=1)
    start, warm = records
    # the doc's numbers are the run's to the digits it writes
    assert start["lower_gap"] == pytest.approx(start_lower, rel=5e-3)
    assert start["upper_gap_abs"] == pytest.approx(start_upper, rel=5e-3)
    assert warm["lower_gap"] == pytest.approx(warm_lower, rel=0.02)
    samples = warm["n_samples_upper"] + warm["n_samples_lower"]
    assert samples == pytest.approx(1.0e5, rel=0.01)


def test_aid_cg_ends_below_its_start_on_the_default_representation():
    assert "except AID-CG (which ends below its start" in doc_text()
    records, _ = run_solver("AID-CG", "hyper_representation", {}, {},
                            n_iter=316)
    start, end = records
    assert end["diverged"] == 0
    assert end["test_accuracy"] < start["test_accuracy"]


def test_the_simulated_tuned_steps_quoted_are_the_tuned_configs():
    """docs/benchmark_bilevel.md's table of our tuned steps is the tuned
    config's (configs/tuned/benchmark_bilevel_simulated.yml)."""
    doc = (ROOT / "docs" / "benchmark_bilevel.md").read_text()
    quoted = dict(re.findall(
        r"^\| (\w+) \| [^|]+ \| ([0-9.]+ / [0-9.]+)", doc, re.M))
    config = yaml.safe_load((ROOT / "configs" / "tuned"
                             / "benchmark_bilevel_simulated.yml").read_text())
    tuned = {}
    for entry in config["solver"]:
        name, _, params = entry.partition("[")
        values = dict(item.split("=") for item in params.rstrip("]")
                      .split(","))
        if "inner_step" in values:      # SUSTAIN has a y-step ratio
            tuned[name] = f"{values['inner_step']} / {values['outer_step']}"
    assert len(quoted) == 8
    for solver, steps in quoted.items():
        assert tuned[solver] == steps, solver
