"""Every general-family solver of the benchmark (found from the solver
files, so new ones are picked up) runs a few iterations with its defaults
on a small hyper-representation instance without error and reports finite
metrics; one that cannot apply skips with its reason."""
import math

import pytest

from conftest import benchmark, run_solver

GENERAL = sorted(cls.name for cls in benchmark().get_solvers()
                 if getattr(cls, "family", None) == "general")
SMALL = {"n_test_tasks": 8}      # 64 training tasks: every default batch fits


@pytest.mark.parametrize("solver", GENERAL)
def test_solver_runs_on_hyper_representation(solver):
    records, _ = run_solver(solver, "hyper_representation", SMALL, {},
                            n_iter=3)
    end = records[-1]
    for name in ("value", "hypergrad_norm", "inner_distance",
                 "test_accuracy"):
        assert math.isfinite(end[name]), (name, end[name])
