"""A dataset whose data cannot be built (get_data raises: corrupt files, a
reference that is not what it should be, a damaged cache) is skipped with
its reason, and the runs finished on the other datasets are written
(benchmark_utils/checks/dataset_failures.py)."""
import pandas as pd
import pytest
from benchopt.runner import run_benchmark

from benchmark_utils.problems import matrix_completion

from conftest import ROOT

DATASETS = ["coreset_toy", "matrix_completion[n=10,rank=2]"]
MESSAGE = "simulated damaged data"


@pytest.fixture
def failing_completion(monkeypatch, tmp_path):
    """The second dataset's get_data raises (its problem cannot be built);
    a private benchopt cache, so that nothing is served from an earlier
    run."""
    def broken(self, *args, **kwargs):
        raise OSError(MESSAGE)

    monkeypatch.setattr(matrix_completion.MatrixCompletionBilevel,
                        "__init__", broken)
    monkeypatch.setenv("BENCHOPT_CACHE", str(tmp_path / "cache"))
    return tmp_path


def run(folder):
    output = folder / "run.parquet"
    run_benchmark(
        str(ROOT), solver_names=["IBCG[horizon=10]"], dataset_names=DATASETS,
        max_runs=2, n_repetitions=1, timeout=60, plot_result=False,
        display=False, html=False, show_progress=False,
        output_file=str(output))
    return output


def test_a_failing_dataset_is_skipped_and_finished_runs_are_written(
        failing_completion, capsys):
    output = run(failing_completion)
    printed = capsys.readouterr()
    results = pd.read_parquet(output)
    assert set(results["dataset_name"].str.split("[").str[0]) == {
        "coreset_toy"}
    assert f"get_data failed: OSError: {MESSAGE}" in printed.out
    assert "could not be built" in printed.err      # with its traceback


def test_raise_on_error_stops_at_the_failing_dataset(failing_completion,
                                                     monkeypatch):
    monkeypatch.setenv("BENCHOPT_RAISE_ON_ERROR", "1")
    with pytest.raises(OSError, match=MESSAGE):
        run(failing_completion)
