"""The verdict rule of docs/results.md (benchmark_utils.claims.stats): it
finds a real difference beyond the smallest difference that matters,
shows parity by a non-inferiority test (never by a failure to reject),
gives a false "better" or a false "on par" at most alpha + 0.02 of the
time (ties and diverged runs included), counts a diverged run as the
worst, corrects a family by Holm, and states the difference an
undecided test could have detected at 80% power (checked by
simulation); a run's curve is read at a target the way the tuning reads
it (benchmark_utils.claims.curves)."""
import dataclasses
import math
import re

import numpy as np
import pytest
import scipy.stats

from benchmark_utils.claims import rank_tests, sections, simulation, stats
from benchmark_utils.claims.curves import value_at

ALPHA = stats.ALPHA
NO_MARGIN = stats.Margin("absolute", 0.0, "the rank test alone")


def two_sided(tails):
    """The two-sided p-value of one row's ``(less, greater)`` tails."""
    return float(rank_tests.two_sided(tails)[0])


def test_the_rule_finds_a_real_shift():
    rng = np.random.default_rng(0)
    a, b = rng.normal(1.0, 0.2, 10), rng.normal(2.0, 0.2, 10)
    result = stats.compare(a, b)
    # every pair favours a: the smallest p-value 10 pairs can give
    assert result.better == "a" and result.p_value == pytest.approx(2 ** -9)
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
    result = stats.compare(a, b, margin=NO_MARGIN)
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
def test_the_signed_rank_p_value_is_scipys(ties):
    rng = np.random.default_rng(4)
    for n in (10, 12, 30):     # exact up to 20 pairs, normal over
        if ties:
            # ties, zeros (dropped) and infinite differences
            d = rng.integers(-3, 4, n).astype(float)
            d[:2] = np.inf
            method = scipy.stats.PermutationMethod(n_resamples=np.inf)
        else:
            d, method = rng.normal(size=n), "exact"
        if n > rank_tests.MAX_EXACT // 2:
            method = "approx"
        for side, tail in zip(("less", "greater"),
                              rank_tests.signed_rank_tails(d), strict=True):
            assert tail[0] == pytest.approx(scipy.stats.wilcoxon(
                d, method=method, alternative=side).pvalue)
    # no nonzero difference: nothing to test
    assert two_sided(rank_tests.signed_rank_tails(np.zeros(10))) == 1.0


@pytest.mark.parametrize("ties", [False, True])
def test_the_rank_sum_p_value_is_scipys(ties):
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
        assert two_sided(rank_tests.rank_sum_tails(a, b)) == pytest.approx(
            expected)
    # many values: scipy's asymptotic p-value
    a, b = rng.normal(size=(2, 40))
    assert two_sided(rank_tests.rank_sum_tails(a, b)) == pytest.approx(
        scipy.stats.mannwhitneyu(a, b, method="asymptotic").pvalue)


def test_the_test_is_chosen_by_the_design():
    """Paired where a result one seed contradicts can pass the family's
    first Holm threshold (module doc), else unpaired; the verdict says
    which, and reads the same either way on a clear difference."""
    assert stats.paired_by_design(10, 12)
    assert not stats.paired_by_design(10, 13)
    assert stats.paired_by_design(30, 10_000)
    rng = np.random.default_rng(8)
    a, b = rng.normal(1.0, 0.2, 10), rng.normal(2.0, 0.2, 10)
    paired, unpaired = (stats.compare(a, b, paired=p) for p in (True, False))
    assert paired.paired and not unpaired.paired
    assert paired.better == unpaired.better == "a"
    # unpaired, 10 against 10: the smallest p-value is 2 / C(20, 10)
    assert unpaired.p_value == pytest.approx(2 / math.comb(20, 10))


def test_a_method_that_runs_the_same_on_every_seed_is_on_par():
    """Pairing by seed: the same values on every seed (a copy of a method)
    show parity even where the seeds' spread dwarfs the margin."""
    values = np.random.default_rng(6).lognormal(0.0, 2.0, 10)
    copy = stats.compare(values, values.copy(), relation="on_par")
    assert copy.better == "a" and copy.ci_low == copy.ci_high == 0.0
    assert copy.p_value == pytest.approx(2 ** -9)
    # paired: seeds in another order are other pairs
    shuffled = stats.compare(values, values[::-1].copy(), relation="on_par")
    assert shuffled.better is None
    with pytest.raises(ValueError, match="paired"):
        stats.compare(values, values[:9])


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
    one = stats.compare(a, b, margin=NO_MARGIN)
    assert one.better == "a" and 0.05 / 8 < one.p_value <= 0.05
    strong = stats.compare(a, a + 1.0, margin=NO_MARGIN)
    null = stats.compare(a, a, margin=NO_MARGIN)
    assert stats.family_verdicts([one, strong]) == ["a", "a"]
    # among 8 verdicts, 0.0185 is above 0.05/8 (the smallest p-value's
    # threshold) and so are the nulls': no verdict at all
    assert stats.family_verdicts([one] + [null] * 7) == [None] * 8
    assert stats.family_verdicts([strong, one] + [null] * 6) == (
        ["a"] + [None] * 7)


def test_a_difference_within_the_margin_is_not_better():
    # a 5% shift, tight seeds: the rank test alone finds it, the 10%
    # margin does not
    rng = np.random.default_rng(2)
    b = rng.normal(1.0, 0.005, 10)
    assert stats.compare(0.95 * b, b, margin=NO_MARGIN).better == "a"
    result = stats.compare(0.95 * b, b)
    assert result.better is None and result.margin == pytest.approx(
        0.1 * np.median(0.95 * b))
    # accuracies: one percentage point, absolute
    acc = stats.compare(b - 0.5, b - 0.505, higher_is_better=True,
                        margin=stats.margin_for("test_accuracy"))
    assert acc.margin == 0.01 and acc.better is None


def test_parity_is_shown_by_a_non_inferiority_test():
    rng = np.random.default_rng(5)
    b = rng.normal(1.0, 0.01, 10)
    # within 2% of b with tight seeds: parity shown
    on_par = stats.compare(1.02 * b, b, relation="on_par")
    assert on_par.better == "a" and on_par.ci_high < on_par.margin
    # noisy seeds around the same median: no difference found, but no
    # parity shown either
    noisy = stats.compare(rng.normal(1.0, 0.5, 10), rng.normal(1.0, 0.5, 10),
                          relation="on_par")
    assert noisy.better is None
    # 30% worse: not on par (b better by more than the margin)
    worse = stats.compare(1.3 * b, b, relation="on_par")
    assert worse.better == "b" and worse.ci_low > worse.margin


def test_the_pages_error_rates_are_at_most_alpha():
    """The rates docs/results.md states (stats.TRIALS a cell, n = 10 and
    30; the committed-page check regenerates them from the rule, so a rule
    whose error rate exceeds alpha fails here once the page is rewritten)
    are at most alpha, every distribution, scenario and family size."""
    text = sections.RESULTS_PAGE.read_text()
    table = text[text.index(sections.BEGIN.format(sections.RATES)):
                 text.index(sections.END.format(sections.RATES))]
    rows = [line for line in table.splitlines() if line.startswith("| ")
            and not line.startswith("| values")]
    assert len(rows) == 2 * len(simulation.DISTRIBUTIONS)
    for row in rows:
        rates = list(map(float, re.findall(r"\| (\d\.\d+)", row)))
        assert len(rates) in (5, 7) and max(rates) <= ALPHA, row


def test_the_recorded_rates_are_the_current_rules():
    """The page's rates come from their record while its digest is the
    rule's code's (claims check reads them there): the record is the
    current code's, and one of its cells, computed afresh, is the same."""
    lines = simulation.recorded_lines()
    assert lines is not None, "the rule changed: python -m " \
        "benchmark_utils.claims write recomputes the rates"
    first = next(line for line in lines if line.startswith("| normal"))
    stated = float(re.findall(r"\| (\d\.\d+)", first)[0])
    assert f"{simulation.error_rate('same', 10, 1):.3f}" == f"{stated:.3f}"


def test_a_record_of_another_rule_is_not_read(tmp_path):
    record = tmp_path / "rates.yml"
    assert simulation.recorded_lines(record) is None
    simulation.record_lines(["| a | 0.010 |"], record)
    assert simulation.recorded_lines(record) == ["| a | 0.010 |"]
    record.write_text(record.read_text().replace(
        simulation.rule_digest(), "0" * 16))
    assert simulation.recorded_lines(record) is None


def test_the_detectable_difference_is_found_with_80_percent_power():
    """Normal seeds shifted by what detectable() states for 10 pairs in
    a family of 8: the rule (Holm's first threshold, its loss margin
    being absolute here) finds it in about 80% of trials."""
    rng = np.random.default_rng(11)
    margin = stats.Margin("absolute", 0.05, "made up")
    probe = stats.compare(rng.normal(1.0, 0.2, 10), rng.normal(1.0, 0.2, 10),
                          margin=margin)
    # independent seeds: the differences' sd is 0.2 sqrt(2)
    shift = stats.detectable(
        dataclasses.replace(probe, spread=0.2 * np.sqrt(2)), family_size=8)
    a = rng.normal(1.0, 0.2, (400, 10))
    b = rng.normal(1.0 + shift, 0.2, (400, 10))
    p_a, p_b = stats.one_sided_p_values(a, b, 0.05)
    found = np.mean(2 * np.minimum(p_a, p_b) <= ALPHA / 8)
    assert 0.65 <= found <= 0.92
    # too few finite values to measure a spread: nothing stated
    bad = stats.compare([np.nan] * 9 + [1.0], [1.0] * 10)
    assert stats.detectable(bad, 1) == np.inf
    # too few pairs for any p-value to pass the family's first threshold:
    # 2^-9 <= 0.05 / 25, not 0.05 / 26
    assert stats.detectable(probe, 25) < np.inf
    assert stats.detectable(probe, 26) == np.inf


def test_the_command_prints_the_rates(capsys):
    simulation.main(["--trials", "100"])
    printed = capsys.readouterr().out
    rows = [line for line in printed.splitlines()
            if line.startswith("| ") and not line.startswith("| values")]
    assert len(rows) == len(simulation.DISTRIBUTIONS)
    for row in rows:
        rates = list(map(float, re.findall(r"\| (\d\.\d+)", row)))
        assert len(rates) == 5
        assert all(rate <= ALPHA + 0.04 for rate in rates), row


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
