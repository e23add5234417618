"""The performance profile of docs/results.md
(benchmark_utils/claims/profile.py): ratios to each problem's best value,
failures never within any tau, problems without a positive best left out
and named; a method's value is the median of its runs' scores at the
point, a diverged run counting as a failure."""
import math

import pandas as pd
import pytest

from benchmark_utils.claims import profile


def found(*problems):
    return [(f"exp{i}", "d", "samples 10", values)
            for i, values in enumerate(problems)]


def test_shares_are_the_ratios_to_each_problems_best():
    shares, counts, skipped = profile.profile(found(
        {"A": 1.0, "B": 1.05, "C": 30.0},
        {"A": 3.0, "B": 2.0, "C": math.inf}))
    assert counts == {"A": 2, "B": 2, "C": 2} and skipped == []
    # taus 1, 1.1, 2, 10: A best once, 1.5x once; B 1.05x once, best once
    assert shares["A"] == [0.5, 0.5, 1.0, 1.0]
    assert shares["B"] == [0.5, 1.0, 1.0, 1.0]
    # 30x once and a failure: within no tau
    assert shares["C"] == [0.0, 0.0, 0.0, 0.0]


def test_a_problem_without_a_positive_best_is_left_out_and_named():
    shares, counts, skipped = profile.profile(found(
        {"A": 0.0, "B": 1.0}, {"A": 1.0, "B": 2.0}))
    assert skipped == ["exp0 (d)"] and counts == {"A": 1, "B": 1}
    lines = profile.profile_lines(found({"A": 0.0, "B": 1.0},
                                        {"A": 1.0, "B": 2.0}))
    assert lines[2].startswith("| A | 1 | 1.00")
    assert "exp0 (d)" in lines[-1]


def runs(finals, diverged=()):
    rows = []
    for rep, final in enumerate(finals):
        for i, (x, v) in enumerate(((0, 10.0), (10, final))):
            rows.append({"rep": rep, "iteration": i, "samples": x,
                         "value": v, "diverged": int(rep in diverged
                                                     and i == 1)})
    return pd.DataFrame(rows)


def test_a_methods_value_is_the_median_score_a_divergence_a_failure():
    assert profile.method_value(runs([1.0, 2.0, 3.0]), "upper", "samples",
                                10) == pytest.approx(2.0)
    # one of three diverged: the median is the worse finite value
    assert profile.method_value(runs([1.0, 2.0, 3.0], diverged=(0,)),
                                "upper", "samples", 10) == pytest.approx(3.0)
    assert profile.method_value(runs([1.0, 2.0, 3.0], diverged=(0, 1)),
                                "upper", "samples", 10) == math.inf
