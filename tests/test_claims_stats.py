"""The verdict rule of docs/results.md (benchmark_utils.claims.stats): it
finds a real difference, gives none between samples of one distribution
(at most alpha + 0.02 of the time, single verdict, ties and diverged
runs included), counts a diverged run as the worst, and corrects a family
by Holm; a run's curve is read at a target the way the tuning reads it
(benchmark_utils.claims.curves)."""
import re
import subprocess
import sys

import numpy as np
import pytest
import scipy.stats

from benchmark_utils.claims import stats
from benchmark_utils.claims.curves import value_at

from conftest import ROOT

ALPHA = stats.ALPHA


def test_the_rule_finds_a_real_shift():
    rng = np.random.default_rng(0)
    a, b = rng.normal(1.0, 0.2, 10), rng.normal(2.0, 0.2, 10)
    result = stats.compare(a, b)
    assert result.better == "a" and result.p_value < 1e-3
    assert result.ci_high < 0 and result.difference < 0
    # the same values as a score (higher is better): b wins
    assert stats.compare(a, b, higher_is_better=True).better == "b"
    assert stats.compare(b, a).better == "b"


def test_identical_samples_give_no_verdict():
    values = np.random.default_rng(1).lognormal(0.0, 1.0, 10)
    result = stats.compare(values, values.copy())
    assert result.better is None and result.favours is None
    assert result.p_value == 1.0 and result.difference == 0.0
    assert result.ci_low <= 0 <= result.ci_high


def test_the_interval_contains_the_true_difference():
    rng = np.random.default_rng(3)
    result = stats.compare(rng.normal(1.0, 0.3, 10), rng.normal(1.5, 0.3, 10),
                           seed=3)
    assert result.ci_low <= -0.5 <= result.ci_high
    assert result.ci_low <= result.difference <= result.ci_high


def test_the_interval_vetoes_a_rank_difference_with_equal_medians():
    # b ranks above a (p = 0.010) but the medians are the same value
    a = [0.0] * 4 + [1.0] * 6
    b = [1.0] * 6 + [2.0] * 4
    result = stats.compare(a, b)
    assert result.p_value < 0.02 and result.difference == 0.0
    assert result.better is None


def test_a_diverged_run_is_the_worst_value():
    finite = np.linspace(1.0, 2.0, 10)
    diverged = [np.nan] * 6 + [np.inf, 2.5, 3.0, 4.0]
    result = stats.compare(finite, diverged)
    assert result.better == "a" and result.median_b == np.inf
    assert result.difference == -np.inf
    # where higher is better a NaN is -inf, still the worst
    score = stats.compare(finite, [np.nan] * 7 + [0.1, 0.2, 0.3],
                          higher_is_better=True)
    assert score.median_b == -np.inf and score.better == "a"
    # two mostly diverged methods: equal infinite medians differ by 0
    both = stats.compare([np.nan] * 8 + [1.0, 2.0], [np.inf] * 9 + [3.0])
    assert both.difference == 0.0 and both.better is None


def test_a_value_not_reached_is_refused():
    with pytest.raises(ValueError, match="did not reach"):
        stats.compare([1.0, None, 2.0], [1.0, 2.0, 3.0])


@pytest.mark.parametrize("ties", [False, True])
def test_the_p_value_is_scipys_exact_one(ties):
    rng = np.random.default_rng(4)
    for _ in range(3):
        if ties:
            a, b = rng.integers(0, 4, (2, 10)).astype(float)
            a[:2] = np.inf
            method = scipy.stats.PermutationMethod(n_resamples=np.inf)
        else:
            a, b = rng.normal(size=10), rng.normal(size=9)
            method = "exact"
        expected = scipy.stats.mannwhitneyu(a, b, method=method).pvalue
        assert stats.rank_sum_p_values(a, b)[0] == pytest.approx(expected)
    # many values: scipy's asymptotic p-value
    a, b = rng.normal(size=(2, 40))
    assert stats.rank_sum_p_values(a, b)[0] == pytest.approx(
        scipy.stats.mannwhitneyu(a, b, method="asymptotic").pvalue)


def test_holm_on_known_p_values():
    # thresholds 0.05/4, 0.05/3, 0.05/2, 0.05/1 in increasing p order
    assert stats.holm([0.01, 0.04, 0.012, 0.03]).tolist() == [
        True, False, True, False]
    assert stats.holm([0.03, 0.02, 0.04]).tolist() == [False] * 3
    assert stats.holm([0.001, 0.02, 0.04]).tolist() == [True, True, True]
    # step-down: a failing p stops every larger one (0.04 <= 0.05/1)
    assert stats.holm([0.01, 0.03, 0.04, 0.02]).tolist() == [
        True, False, False, False]
    assert stats.holm([0.05]).tolist() == [True]
    assert stats.holm([[0.01, 0.2], [0.03, 0.02]]).tolist() == [
        [True, False], [True, True]]


def test_a_family_is_holm_corrected():
    rng = np.random.default_rng(7)
    a, b = rng.normal(1.0, 0.2, 10), rng.normal(1.25, 0.2, 10)
    one = stats.compare(a, b)
    assert one.better == "a" and 0.05 / 8 < one.p_value <= 0.05
    strong, null = stats.compare(a, a + 1.0), stats.compare(a, a)
    assert stats.family_verdicts([one, strong]) == ["a", "a"]
    # among 8 verdicts, 0.0185 is above 0.05/8 (the smallest p-value's
    # threshold) and so are the nulls': no verdict at all
    assert stats.family_verdicts([one] + [null] * 7) == [None] * 8
    assert stats.family_verdicts([strong, one] + [null] * 6) == (
        ["a"] + [None] * 7)


@pytest.mark.parametrize("distribution", sorted(stats.DISTRIBUTIONS))
def test_the_false_positive_rate_is_at_most_alpha(distribution):
    single = stats.false_positive_rate(distribution=distribution,
                                       trials=2000, n_boot=2000)
    assert single <= ALPHA + 0.02
    family = stats.false_positive_rate(
        distribution=distribution, n_verdicts=8, trials=500, n_boot=2000)
    assert family <= ALPHA + 0.03


def test_the_command_prints_the_rates():
    printed = subprocess.run(
        [sys.executable, "-m", "benchmark_utils.claims.stats"], cwd=ROOT,
        capture_output=True, text=True, check=True, timeout=300).stdout
    rows = [line for line in printed.splitlines()
            if line.startswith("| ") and not line.startswith("| values")]
    assert len(rows) == len(stats.DISTRIBUTIONS)
    for row in rows:
        single, family = map(float, re.findall(r"\| (\d\.\d+)", row))
        assert single <= ALPHA + 0.02 and family <= ALPHA + 0.02, row


def test_a_curve_is_interpolated_in_log_between_evaluations():
    # halfway between 100 and 1: the geometric mean, 10
    assert value_at([0, 10, 20], [100.0, 100.0, 1.0], 15) == (
        pytest.approx(10.0))
    # a value <= 0: linear
    assert value_at([0, 10], [1.0, -1.0], 5) == pytest.approx(0.0)


def test_an_exact_hit_is_the_logged_value():
    x, y = [0, 3, 7], [0.3, 0.1 + 0.2, 1e-7]
    assert value_at(x, y, 3) == y[1]
    assert value_at(x, y, 7) == y[2]
    # the start's value at the start's x only; the last of repeated x
    assert value_at(x, y, 0) == 0.3
    assert value_at([0, 0, 5], [9.0, 8.0, 1.0], 0) == 8.0


def test_a_target_off_the_curve_is_not_reached():
    assert value_at([1, 10], [5.0, 1.0], 11) is None
    assert value_at([1, 10], [5.0, 1.0], 0.5) is None
    assert value_at([], [], 1) is None
    with pytest.raises(ValueError, match="goes back"):
        value_at([0, 5, 3], [1.0, 1.0, 1.0], 4)
