"""Every parameter check refuses any value of the wrong kind (a string from a
config typo, None, NaN, a boolean where a number is expected, a list) with
the same ValueError naming the parameter and its valid range, never a
TypeError."""
import numpy as np
import pytest

from benchmark_utils.checks.parameters import (
    check_batch_size,
    check_choice,
    check_in_interval,
    check_int,
    check_nonnegative,
    check_positive,
)

from conftest import component

WRONG_KINDS = ["abc", None, float("nan"), True, False, [1], {"a": 1}]

# (check, extra arguments, what the message says about the valid range)
CHECKS = [
    (check_positive, (), r"a finite number > 0"),
    (check_nonnegative, (), r"a finite number >= 0"),
    (check_int, (1, 5), r"an integer in \[1, 5\]"),
    (check_int, (0, None), r"an integer in \[0, inf\]"),
    (check_batch_size, (10,), r"an integer in \[1, 10\]"),
    (check_in_interval, (0.0, 1.0), r"a number in \[0.0, 1.0\]"),
    (check_in_interval, (0, 1, (False, True)), r"a number in \(0, 1\]"),
    (check_choice, (("mean", "sum"),), r"one of \['mean', 'sum'\]"),
    (check_choice, ({"both": 1, "none": 2},), r"one of \['both', 'none'\]"),
]


@pytest.mark.parametrize("value", WRONG_KINDS, ids=repr)
@pytest.mark.parametrize("check, args, valid", CHECKS,
                         ids=lambda c: getattr(c, "__name__", ""))
def test_wrong_kinds_are_value_errors_naming_parameter_and_range(
        check, args, valid, value):
    with pytest.raises(ValueError,
                       match=rf"^corruption must be {valid}, got "):
        check("corruption", value, *args)


def test_numbers_of_any_numeric_type_are_accepted():
    assert check_positive("gamma", np.float64(0.5)) == 0.5
    assert check_nonnegative("alpha", 0) == 0
    assert check_int("T", np.int64(3), 1) == 3
    assert check_int("T", 3.0, 1) == 3 and type(check_int("T", 3.0, 1)) is int
    assert check_in_interval("p", np.float32(0.25), 0, 0.5) == 0.25
    assert check_choice("norm", 2.0, (1, 2)) == 2.0


def test_out_of_range_numbers_name_the_range():
    with pytest.raises(ValueError, match=r"T must be an integer in \[1, 5\]"):
        check_int("T", 6, 1, 5)
    with pytest.raises(ValueError, match=r"T must be an integer in \[1, 5\]"):
        check_int("T", 2.5, 1, 5)
    with pytest.raises(ValueError, match=r"p must be in \(0, 0.5\), got 0.5"):
        check_in_interval("p", 0.5, 0, 0.5, closed=(False, False))
    with pytest.raises(ValueError, match="gamma must be a finite number > 0"):
        check_positive("gamma", float("inf"))


def test_booleans_match_only_booleans():
    # True == 1 in Python, but cut=1 is a typo, not cut=True
    assert check_choice("cut", True, (True, False)) is True
    with pytest.raises(ValueError,
                       match=r"cut must be one of \[False, True\]"):
        check_choice("cut", 1, (True, False))
    with pytest.raises(ValueError, match="norm must be one of"):
        check_choice("norm", True, (1, 2))


def test_choices_of_mixed_types_are_listed():
    with pytest.raises(ValueError, match=r"must be one of \['a', None\]"):
        check_choice("rule", "b", (None, "a"))


@pytest.mark.parametrize("value", ["abc", None, float("nan")], ids=repr)
def test_dataset_typo_is_a_value_error_naming_the_parameter(value):
    # the audit's case: hyper_cleaning[corruption=abc] gave a TypeError
    with pytest.raises(ValueError, match=r"corruption must be .*\[0"):
        component("dataset", "hyper_cleaning").get_instance(
            corruption=value, n_train=60, n_val=30,
            n_test=30).check_parameters()
