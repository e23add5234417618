"""benchopt run's own options (benchmark_utils/checks/run_options.py):
each bad value named with its valid range, read as benchopt's run reads
it (the command line, else the --config file); the end-to-end refusal is
in tests/test_run_list_checks.py."""
import pytest
from click.core import ParameterSource

from benchmark_utils.checks.run_options import (
    effective_options,
    option_errors,
)

GOOD = {"max_runs": 100, "n_repetitions": None, "timeout": None,
        "n_jobs": 1, "output": "None"}


@pytest.mark.parametrize("name, value, message", [
    ("max_runs", 0, "--max-runs (-n) must be an integer in [1, 1000000], "
     "got 0"),
    ("max_runs", "abc", "--max-runs (-n) must be an integer in [1, "
     "1000000], got 'abc'"),
    ("max_runs", 2.5, "--max-runs (-n) must be an integer in [1, 1000000], "
     "got 2.5"),
    # past int64: benchopt would take it and run to the time cap
    ("max_runs", 10**20, "--max-runs (-n) must be an integer in [1, "
     "1000000], got 100000000000000000000"),
    ("n_repetitions", 0, "--n-repetitions (-r) must be an integer in [1, "),
    ("n_repetitions", 10**7, "--n-repetitions (-r) must be an integer in "),
    ("timeout", "-5", "--timeout must be a duration of at least 1 s"),
    # benchopt rounds a number down to whole seconds: 0 ends every run
    ("timeout", "0.5", "--timeout must be a duration of at least 1 s"),
    ("timeout", "soon", "--timeout must be a duration of at least 1 s"),
    ("n_jobs", 0, "--n-jobs (-j) must be a nonzero integer"),
    ("output", "/proc/x", "--output /proc/x: no file can be created in /proc"),
])
def test_a_bad_value_is_named_with_its_range(name, value, message):
    errors = option_errors({**GOOD, name: value})
    assert len(errors) == 1 and errors[0].startswith(message), errors


@pytest.mark.parametrize("name, value", [
    ("timeout", "100"), ("timeout", "10min"), ("timeout", 5),
    ("n_jobs", -1), ("n_repetitions", 3), ("max_runs", 1),
    ("max_runs", 10**6)])
def test_valid_values_pass(name, value):
    assert option_errors({**GOOD, name: value}) == []


def test_an_output_folder_is_created_and_only_it_must_be_writable(
        tmp_path):
    target = tmp_path / "new" / "run.parquet"
    assert option_errors({**GOOD, "output": str(target)}) == []
    assert target.parent.is_dir()
    # a bare name goes to the benchmark's outputs/ folder; benchopt adds
    # .parquet, so a folder of that name is no obstacle (outputs/tuning/)
    (tmp_path / "outputs" / "tuning").mkdir(parents=True)
    assert option_errors({**GOOD, "output": "tuning"}, tmp_path) == []


class Context:
    """The part of click's context the check reads."""

    def __init__(self, params, given=()):
        self.params, self.given = params, set(given)

    def get_parameter_source(self, name):
        return (ParameterSource.COMMANDLINE if name in self.given
                else ParameterSource.DEFAULT)


def test_the_config_file_counts_where_the_command_line_gives_nothing():
    context = Context(dict(GOOD))
    options = effective_options(context, {"max-runs": "abc", "n_jobs": 0})
    assert options["max_runs"] == "abc" and options["n_jobs"] == 0
    assert len(option_errors(options)) == 2
    # a value on the command line wins over the file's
    context = Context({**GOOD, "max_runs": 5}, given=["max_runs"])
    assert effective_options(context, {"max-runs": 0})["max_runs"] == 5
