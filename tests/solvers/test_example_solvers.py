"""The commented examples of docs/examples (a solver per family and a
dataset, for newcomers) load the way benchopt loads a class given by path,
run through the real lifecycle, and make progress."""
import pytest
import torch
from benchopt.utils.dynamic_modules import _load_class_from_module
from torch.func import grad as func_grad

import conftest
from conftest import QUICK_REGRESSION, ROOT, name_tables, run_solver

EXAMPLES = ROOT / "docs" / "examples"


@pytest.fixture
def example(monkeypatch):
    """Load an example file and make it findable by name in run_solver."""
    def load(filename, class_name="Solver"):
        loaded = _load_class_from_module(ROOT, EXAMPLES / filename,
                                         class_name)
        original = conftest.component
        monkeypatch.setattr(
            conftest, "component", lambda kind, name: loaded
            if name == loaded.name else original(kind, name))
        return loaded.name
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


def _example_problem(example):
    name = example("dataset.py", "Dataset")
    return name, conftest.make_problem(name, n_samples=60, n_features=6)


def test_dataset_example_builds_a_consistent_problem(example):
    _, P = _example_problem(example)
    assert P.family == "general" and (P.n_lower, P.n_upper) == (30, 30)
    assert P.X.contains(P.x0) and P.mu_g > 0 and P.L_g >= P.L_g_full
    x = P.X.random_point(torch.Generator().manual_seed(0),
                         dtype=torch.float64)
    # y*(x) is the minimizer: grad_y g vanishes there
    y_star = P.inner_solution(x)
    assert float(P.grad_g_y(x, y_star).norm()) < 1e-12
    # the hypergradient is the gradient of F(x) = f(x, y*(x))
    def F(a):
        return P.f(a, P.inner_solution(a))
    assert torch.allclose(P.hypergradient(x), func_grad(F)(x), atol=1e-10)
    # a batch value is the mean over the batch
    batch = torch.arange(P.n_lower)
    assert torch.allclose(P.g(x, y_star, batch=batch), P.g(x, y_star))


def test_dataset_example_runs_with_the_general_example(example):
    dataset, _ = _example_problem(example)
    solver = example("general_solver.py")
    records, run = run_solver(solver, dataset,
                              dict(n_samples=60, n_features=6), n_iter=200,
                              eval_at=[0])
    start, end = records
    assert end["fw_gap"] < start["fw_gap"] / 3
    assert end["inner_distance"] < start["inner_distance"] / 2
    assert run.problem.X.contains(run.x)


@pytest.mark.parametrize("filename", ["simple_solver.py",
                                      "general_solver.py"])
def test_an_example_copied_into_solvers_keeps_the_name_tables(filename):
    """Every parameter of an example is a name of docs/steps.md's shared
    table: copied into solvers/ (docs/adding.md), it shares each name
    with a shipped solver in the one meaning the table gives, and the
    layout test still passes."""
    loaded = _load_class_from_module(ROOT, EXAMPLES / filename, "Solver")
    shared, _ = name_tables()
    assert set(loaded.parameters) <= shared, sorted(
        set(loaded.parameters) - shared)


def test_a_shared_name_of_one_solver_is_an_examples():
    """The shared table holds the names two shipped solvers share, and a
    name of one shipped solver only where a docs example shares it (the
    layout test leaves such a name to this one)."""
    examples = {name for filename in ("simple_solver.py", "general_solver.py")
                for name in _load_class_from_module(
                    ROOT, EXAMPLES / filename, "Solver").parameters}
    users = {}
    for solver in conftest.benchmark().get_solvers():
        for name in solver.parameters:
            users.setdefault(name, []).append(solver.name)
    shared, _ = name_tables()
    alone = {name for name in shared if len(users.get(name, [])) == 1}
    assert alone <= examples, sorted(alone - examples)
