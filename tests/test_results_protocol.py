"""The hand-written parts of docs/results.md state no number the code does
not hold: the protocol's numbers are the constants of
benchmark_utils/claims (each checked here), the repetitions rule holds for
every experiment on its committed evidence's cost, and the sections'
introductions leave budgets to the generated Evidence lines."""
import math
import re

import pytest
import yaml

from benchmark_utils.claims import (
    experiments,
    provenance,
    rank_tests,
    readings,
    recheck,
    sections,
    stats,
)
from benchmark_utils.tuning.config_io import EVALUATION_SEED
from benchmark_utils.tuning.header import TUNING_SEED

from conftest import one_line

PAGE = sections.RESULTS_PAGE
GENERATED = re.compile(r"<!-- claims:begin (\S+) -->.*?<!-- claims:end \1 -->",
                       re.S)
WORDS = {0.1: "a tenth"}


def hand_written():
    """The page without its generated sections, one line per line."""
    return GENERATED.sub("", PAGE.read_text())


def protocol():
    page = hand_written()
    return one_line(page[page.index("## Protocol"):
                      page.index("## Where the methods stand")])


def test_every_cheap_experiment_runs_the_stated_repetitions():
    cheap = experiments.CHEAP_CPU_MINUTES * 60
    for exp in experiments.EXPERIMENTS.values():
        path = exp.folder / "meta.yml"
        assert path.is_file(), f"{exp.name} has no evidence ({path})"
        meta = yaml.safe_load(path.read_text())
        # the CPU time of the runs computed, scaled to all of them (runs
        # read from benchopt's cache cost nothing)
        computed = meta["runs"] - meta.get("cached_runs", 0)
        at_usual = (meta["cpu_seconds"] * meta["runs"] / computed
                    / meta["config"]["n-repetitions"]
                    * experiments.REPETITIONS)
        if exp.source == "long":
            assert exp.repetitions == experiments.REPETITIONS, exp.name
        elif at_usual < cheap:
            assert exp.repetitions >= experiments.CHEAP_REPETITIONS, (
                f"{exp.name}: {at_usual / 60:.1f} CPU-minutes at "
                f"{experiments.REPETITIONS} repetitions, run at "
                f"{exp.repetitions}")
        else:
            assert exp.repetitions >= experiments.REPETITIONS, exp.name


def test_the_protocols_numbers_are_the_codes():
    usual, many = experiments.REPETITIONS, experiments.CHEAP_REPETITIONS
    # the largest family whose first Holm threshold a paired test passes
    largest = math.floor(stats.ALPHA / 2.0 ** (2 - usual))
    assert stats.paired_by_design(usual, largest)
    assert not stats.paired_by_design(usual, largest + 1)
    assert stats.paired_by_design(many, 100_000)
    margin = stats.LOSS_MARGIN.size
    phrases = [
        f"**Repetitions:** {usual} per method; at least {many} for",
        f"(under {experiments.CHEAP_CPU_MINUTES} CPU-minutes at {usual} "
        "repetitions",
        f"a longer run (`NAME_long`, below) keeps {usual}",
        f"benchopt seed {EVALUATION_SEED} (the tuning used seed "
        f"{TUNING_SEED}",
        f"a safety cap {provenance.SAMPLE_CAP_FACTOR}x above",
        f"{margin:.0%} of the smaller of the two medians",
        f"where less than {math.log10(1 + margin):.2f} decade is not visible",
        f"{stats.RATE_MARGIN.size} (one percentage point)",
        f"2^(2 - n) <= {stats.ALPHA} / k",
        f"any family at {many} repetitions, up to {largest} tests at "
        f"{usual}",
        f"both exact up to {rank_tests.MAX_EXACT} values in all",
        f"the {1 - stats.ALPHA:.0%} percentile bootstrap interval",
        f"detected at {stats.POWER:.0%} power",
        f"the **early point**, {WORDS[readings.EARLY_FRACTION]} of the "
        "paper's axis budget (`readings.EARLY_FRACTION`)",
        f"at {experiments.LONGER_FACTOR}x its sample budget",
        f"changed by more than {recheck.SPEED_TOLERANCE:.0%} against",
        f"at or below its {recheck.INNER_TOLERANCE_FLOOR:.0e} floor",
    ]
    text = protocol()
    missing = [p for p in phrases if one_line(p) not in text]
    assert not missing, missing


@pytest.mark.parametrize("budget", [
    "10^6 samples drawn", "5 x 10^7 samples", "200 s", "10^4 tasks",
    "4 minutes"])
def test_an_introduction_stating_a_budget_fails(budget):
    assert BUDGET.search(f"The tuned steps, at {budget}:")


# a budget or horizon: a number, then a unit of one
BUDGET = re.compile(r"\d[\d,^. x]*\s*(samples|tasks|iterations|s\b|seconds|"
                    r"minutes|CPU)")


def test_the_introductions_leave_budgets_to_the_evidence_lines():
    page = hand_written()
    text = page[page.index("## Where the methods stand"):]
    lines = [line for line in text.splitlines()
             if not line.startswith("#")]
    body = re.sub(r"`[^`]*`", "", one_line("\n".join(lines)))
    assert not BUDGET.search(body), BUDGET.search(body)
    factors = re.findall(r"at (\d+)x the sample budget", body)
    assert factors
    assert set(factors) == {str(experiments.LONGER_FACTOR)}
