"""The commented example solvers of docs/examples (one per family, for
newcomers) load the way benchopt loads a solver given by path, run through
the real lifecycle, and make progress."""
import pytest
from benchopt.utils.dynamic_modules import _load_class_from_module

import conftest
from conftest import QUICK_REGRESSION, ROOT, run_solver

EXAMPLES = ROOT / "docs" / "examples"


@pytest.fixture
def example(monkeypatch):
    """Load an example file and make it findable by name in run_solver."""
    def load(filename):
        solver_class = _load_class_from_module(ROOT, EXAMPLES / filename,
                                               "Solver")
        original = conftest.component
        monkeypatch.setattr(
            conftest, "component", lambda kind, name: solver_class
            if name == solver_class.name else original(kind, name))
        return solver_class.name
    return load


def test_simple_example_reduces_both_levels(example):
    name = example("simple_solver.py")
    records, solver = run_solver(name, "regression", QUICK_REGRESSION,
                                 n_iter=200, eval_at=[0])
    start, end = records
    assert end["lower_gap"] < start["lower_gap"] / 4
    assert end["upper_value"] < start["upper_value"] / 4
    assert solver.problem.Z.contains(solver.x)


@pytest.mark.parametrize("constraint", ["none", "box"])
def test_general_example_reduces_stationarity(example, constraint):
    name = example("general_solver.py")
    records, _ = run_solver(name, "quadratic",
                            dict(dim_x=5, dim_y=4, n_samples=30,
                                 constraint=constraint), n_iter=200,
                            eval_at=[0])
    start, end = records
    key = "hypergrad_norm" if constraint == "none" else "fw_gap"
    assert end[key] < start[key] / 3
    assert end["inner_distance"] < start["inner_distance"] / 2
