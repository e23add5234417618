"""Sizes whose arrays cannot fit the machine's memory are refused before
any run, naming the parameter, the memory needed and the memory there is
(benchmark_utils/checks/memory.py)."""
from types import SimpleNamespace

import pytest

from benchmark_utils.checks import memory
from benchmark_utils.checks.run_list import RunListError, check_run_list

from conftest import component

HUGE = [
    ("dataset", "quadratic", {"n_samples": 10 ** 12, "constraint": "none"},
     "n_samples=1000000000000 makes arrays of about"),
    # the dense dim x dim matrices of the default generator
    ("dataset", "quadratic", {"dim_x": 10 ** 5, "dim_y": 10 ** 5,
                              "n_samples": 1000, "constraint": "none"},
     "dim_y=100000 makes arrays of about"),
    ("dataset", "quadratic", {"n_samples": 10 ** 9, "constraint": "none",
                              "generator": "benchmark_bilevel"},
     "n_samples=1000000000 makes arrays of about"),
    ("dataset", "dictionary_learning", {"n_samples": 10 ** 9},
     "n_samples=1000000000 makes arrays of about"),
    ("dataset", "regularization_selection", {"n_train": 10 ** 9},
     "n_train=1000000000 makes arrays of about"),
]


@pytest.mark.parametrize("kind, name, params, message", HUGE,
                         ids=[f"{case[1]}-{i}" for i, case in enumerate(HUGE)])
def test_a_size_beyond_the_memory_is_refused_before_any_run(kind, name,
                                                            params, message):
    instance = component(kind, name).get_instance(**params)
    with pytest.raises(ValueError, match=message) as raised:
        instance.check_parameters()
    assert "of memory this machine has available: choose a smaller" in str(
        raised.value)
    grid = {key: [value] for key, value in params.items()}
    selection = [(component(kind, name), grid)]
    with pytest.raises(RunListError, match=message):
        check_run_list(*((selection, []) if kind == "dataset"
                         else ([], selection)))


def test_the_message_gives_the_memory_needed_and_available():
    with pytest.raises(ValueError) as raised:
        memory.check_fits("n_samples", 10, 2 ** 40, available=2 ** 30)
    assert str(raised.value) == (
        "n_samples=10 makes arrays of about 24.0 TiB, more than the 1.0 GiB "
        "of memory this machine has available: choose a smaller n_samples")
    assert memory.check_fits("n_samples", 10, 10, available=2 ** 30) == 10
    assert memory.available_bytes() > 0


def test_directions_beyond_the_problems_memory_are_refused():
    """PZOBO's directions below the size cap (steps.MAX_SIZE) can still
    exceed the memory once the problem's sizes are known."""
    solver = component("solver", "PZOBO").get_instance(n_directions=10 ** 6)
    solver.check_parameters()
    problem = SimpleNamespace(dim_x=10 ** 5, dim_y=10 ** 5)
    with pytest.raises(ValueError, match="n_directions=1000000 makes arrays "
                                         "of about"):
        solver.check_with_problem(problem)
