"""The code stays readable at a glance (the conventions of docs/adding.md):
short solver docstrings, short modules, one name per step role,
no attributes kept only for tests."""
import ast
import inspect
import re
from pathlib import Path

import pytest

from benchmark_utils.solvers.steps import DEFAULTS_HEADING, written_doc

from conftest import ROOT, benchmark, name_tables

STEP_LETTERS = {"alpha", "beta", "gamma", "lam", "xi"}
TEST_ONLY_ATTRIBUTES = {"depths", "depth"}
# general solvers whose x never moves (or is searched, not stepped): no x
# step, so no outer_step
NO_X_STEP = {"Without-BO", "Optuna"}
# general solvers whose y step is no base value of its own: Optuna solves
# y by L-BFGS (lbfgs_first_step), SUSTAIN steps y by a ratio of the x
# step's schedule (inner_step_ratio)
NO_Y_STEP = {"Optuna": "lbfgs_first_step", "SUSTAIN": "inner_step_ratio"}


def _solvers():
    return sorted(benchmark().get_solvers(), key=lambda s: s.name)


@pytest.mark.parametrize("solver", _solvers(), ids=lambda s: s.name)
def test_solver_docstring_is_short(solver):
    lines = written_doc(inspect.getdoc(solver)).splitlines()
    assert len(lines) <= 30, f"{solver.name}: {len(lines)} docstring lines"


@pytest.mark.parametrize("solver", _solvers(), ids=lambda s: s.name)
def test_solver_defaults_are_written_once(solver):
    # the docstring's defaults are generated from the declarations
    # (steps.defaults_paragraph): none written by hand beside them, and the
    # generated paragraph names every step, size and parameter
    doc = inspect.getdoc(solver)
    assert "Defaults" not in written_doc(doc), (
        f"{solver.name}: a hand-written defaults paragraph; the defaults "
        "are generated from step_rules, size_rules and parameters")
    generated = doc[len(written_doc(doc)):]
    assert generated.strip().startswith(DEFAULTS_HEADING), solver.name
    names = ([rule.name for rule in solver.step_rules]
             + [rule.name for rule in solver.size_rules]
             + list(solver.parameters))
    missing = [n for n in names if f"``{n}``" not in generated]
    assert not missing, f"{solver.name}: {missing} not in its defaults"


# an integer parameter no loop reads: Optuna's guard against large x,
# checked in skip_problem before any size is resolved
NOT_A_SIZE = {("Optuna", "max_dim_x")}
# methods that may read a size's parameter: the checks and skips (run
# before the sizes are resolved) and those a step's default rule calls
# (the steps are resolved first)
BEFORE_SIZES = re.compile(
    r"_?check|skip|uses_start_curvature|lower_smoothness")


@pytest.mark.parametrize("solver", _solvers(), ids=lambda s: s.name)
def test_every_integer_a_loop_reads_is_a_declared_size(solver):
    # an integer parameter (a number of inner steps, terms or samples) is
    # declared in size_rules, resolved into self.sizes and recorded; the
    # loop never reads it as a plain parameter
    sizes = {rule.parameter or rule.name for rule in solver.size_rules}
    declared = sizes | {rule.name for rule in solver.step_rules}
    plain = [name for name, values in solver.parameters.items()
             if any(isinstance(v, int) and not isinstance(v, bool)
                    for v in values)
             and name not in declared
             and (solver.name, name) not in NOT_A_SIZE]
    assert not plain, f"{solver.name}: {plain} are not in size_rules"
    files = {inspect.getfile(c) for c in solver.__mro__[:-1]}
    files = {f for f in files if f.startswith(str(ROOT))}
    read = [(Path(f).name, method) for f in sorted(files)
            for method in _methods_reading(Path(f).read_text(), sizes)
            if not BEFORE_SIZES.match(method)]
    assert not read, f"{solver.name}: {read} read a size as a parameter"


def _methods_reading(source, names):
    """The methods of ``source`` that read ``self.<name>`` for a name of
    ``names``."""
    pattern = re.compile(r"\bself\.(" + "|".join(names) + r")\b")
    return [node.name for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.FunctionDef) and names
            and pattern.search(ast.get_source_segment(source, node))]


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
    if solver.name in NO_Y_STEP:
        assert "inner_step" not in parameters, solver.name
        assert parameters.get(NO_Y_STEP[solver.name]) == [None], solver.name
    else:
        assert parameters.get("inner_step") == [None], solver.name
    letters = STEP_LETTERS & set(parameters)
    assert not letters, f"{solver.name} names a step {sorted(letters)}"


# names of one role each (docs/adding.md): a Neumann series' terms are
# ``neumann_terms``, a horizon ``horizon``; these names meant either before
# (``step``: the simple family's x step, now ``outer_step`` as in the
# general family)
RETIRED_NAMES = {"K", "Q", "n_terms", "t0", "beta_factor", "warm_start",
                 "step", "step_exponent", "warm_start_gamma0"}
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


@pytest.mark.parametrize("solver", _solvers(), ids=lambda s: s.name)
def test_a_step_is_declared_once(solver):
    """A step is declared in ``step_rules`` only (a size in
    ``size_rules``): benchopt's ``parameters`` entry follows from it
    (steps.step_parameters, steps.size_parameters) and whether its default
    reads the problem's constants from its rule's ``needs``, so no dict
    literal of the solver's files lists it again, nor an assigned tuple or
    list of names (the retired ``defaults_from_problem``)."""
    steps = {rule.name for rule in solver.step_rules if rule.parameter}
    sizes = {rule.parameter or rule.name for rule in solver.size_rules}
    for klass in solver.__mro__:
        try:
            path = Path(inspect.getsourcefile(klass)).resolve()
        except TypeError:
            continue
        if ROOT.resolve() not in path.parents:
            continue
        literal = {key.value for node in ast.walk(ast.parse(
            path.read_text())) if isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Dict)
            and any(getattr(target, "id", "").endswith(
                ("parameters", "_PARAMETERS")) for target in node.targets)
            for key in node.value.keys if isinstance(key, ast.Constant)}
        assert not (steps | sizes) & literal, (
            path.name, sorted((steps | sizes) & literal))
        listed = {item.value for node in ast.walk(ast.parse(
            path.read_text())) if isinstance(node, ast.Assign)
            and isinstance(node.value, (ast.Tuple, ast.List))
            for item in node.value.elts if isinstance(item, ast.Constant)}
        assert not steps & listed, (path.name, sorted(steps & listed))


def test_every_parameter_name_has_one_meaning_in_the_tables():
    """Every solver parameter is in docs/steps.md's "one name, one
    meaning" tables: a name two solvers share in the shared table, a
    name of one solver in the one-solver table with that solver, and
    every name there is a solver's; no solver parameter takes a dataset's
    or the objective's name (benchopt would print both in one run's
    names)."""
    users = {}
    for solver in _solvers():
        for name in solver.parameters:
            users.setdefault(name, []).append(solver.name)
    shared_names = {name for name, solvers in users.items()
                    if len(solvers) > 1}
    shared, own = name_tables()
    where = "docs/steps.md's parameter-name tables"
    missing = shared_names - shared
    assert not missing, f"shared names missing from the first of {where}: " \
        f"{sorted(missing)}"
    assert not set(own) & shared_names, sorted(set(own) & shared_names)
    expected = {name: solvers[0] for name, solvers in users.items()
                if len(solvers) == 1 and name not in shared}
    wrong = sorted(name for name in own if expected.get(name) != own[name])
    assert own == expected, (
        f"a name of one solver needs its row (name, solver, meaning) in the "
        f"second of {where}: missing {sorted(set(expected) - set(own))}, "
        f"stale or of another solver {wrong}")
    assert not shared - set(users), sorted(shared - set(users))
    others = {name for component in (*benchmark().get_datasets(),
                                     benchmark().get_benchmark_objective())
              for name in component.parameters}
    assert not others & set(users), sorted(others & set(users))


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


def test_the_long_files_handed_out_first_exist():
    """conftest.LONG_FILES orders the workers' work: a renamed or removed
    file would silently drop out of it."""
    from conftest import LONG_FILES

    names = [path.name for path in (ROOT / "tests").rglob("test_*.py")]
    assert len(set(LONG_FILES)) == len(LONG_FILES)
    assert all(names.count(name) == 1 for name in LONG_FILES), LONG_FILES
