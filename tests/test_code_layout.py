"""The code stays readable at a glance (the conventions of docs/adding.md):
short solver docstrings, short modules, one name per step role,
no attributes kept only for tests."""
import ast
import inspect

import pytest

from conftest import ROOT, benchmark

STEP_LETTERS = {"alpha", "beta", "gamma", "lam", "xi"}
TEST_ONLY_ATTRIBUTES = {"depths", "depth"}
# general solvers whose x never moves (or is searched, not stepped): no x
# step, so no outer_step
NO_X_STEP = {"Without-BO", "Optuna"}


def _solvers():
    return sorted(benchmark().get_solvers(), key=lambda s: s.name)


@pytest.mark.parametrize("solver", _solvers(), ids=lambda s: s.name)
def test_solver_docstring_is_short(solver):
    lines = inspect.getdoc(solver).splitlines()
    assert len(lines) <= 30, f"{solver.name}: {len(lines)} docstring lines"


@pytest.mark.parametrize("solver", [s for s in _solvers()
                                    if s.family == "general"],
                         ids=lambda s: s.name)
def test_general_solver_steps_are_role_named(solver):
    parameters = solver.parameters
    if solver.name in NO_X_STEP:
        # no placeholder parameter that must stay None
        assert "outer_step" not in parameters, solver.name
    else:
        assert parameters.get("outer_step") == [None], solver.name
    assert parameters.get("inner_step") == [None], solver.name
    letters = STEP_LETTERS & set(parameters)
    assert not letters, f"{solver.name} names a step {sorted(letters)}"


# names of one role each (docs/adding.md): a Neumann series' terms are
# ``neumann_terms``, a horizon ``horizon``; these names meant either before
RETIRED_NAMES = {"K", "Q", "n_terms", "t0", "beta_factor", "warm_start"}
# roles of the role-named steps (a StepRule's role says it)
STEP_ROLES = {"outer_step": "x step", "inner_step": "step"}


@pytest.mark.parametrize("solver", _solvers(), ids=lambda s: s.name)
def test_steps_are_named_by_role(solver):
    """Every ``*_step`` parameter is a float (None: its declared default
    rule), declared once in ``step_rules`` with the role its name says; no
    retired name of two roles is left."""
    rules = {rule.name: rule for rule in solver.step_rules}
    parameters = solver.parameters
    assert not RETIRED_NAMES & set(parameters), sorted(
        RETIRED_NAMES & set(parameters))
    for name, values in parameters.items():
        if not name.endswith("_step"):
            continue
        assert all(v is None or isinstance(v, float) for v in values), (
            name, values)
        assert name in rules and rules[name].parameter, name
        assert STEP_ROLES.get(name, "step") in rules[name].role, (
            name, rules[name].role)
    for name in rules:
        assert name in parameters or not rules[name].parameter, name


@pytest.mark.parametrize(
    "path", sorted((ROOT / "benchmark_utils").rglob("*.py")),
    ids=lambda p: str(p.relative_to(ROOT)))
def test_module_is_at_most_400_lines(path):
    assert len(path.read_text().splitlines()) <= 400


@pytest.mark.parametrize(
    "path", sorted([*(ROOT / "solvers").glob("*.py"),
                    *(ROOT / "benchmark_utils" / "solvers").glob("*.py")]),
    ids=lambda p: str(p.relative_to(ROOT)))
def test_no_attribute_kept_for_tests(path):
    tree = ast.parse(path.read_text())
    assigned = {target.attr for node in ast.walk(tree)
                if isinstance(node, (ast.Assign, ast.AugAssign))
                for target in (node.targets if isinstance(node, ast.Assign)
                               else [node.target])
                if isinstance(target, ast.Attribute)
                and isinstance(target.value, ast.Name)
                and target.value.id == "self"}
    assert not assigned & TEST_ONLY_ATTRIBUTES, sorted(
        assigned & TEST_ONLY_ATTRIBUTES)
