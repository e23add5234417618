"""The layers of benchmark_utils import only downwards (docs/architecture.md,
"Layers"), read from every import statement of the code, function-level
and relative imports included: no arrow runs back up, no cycle between
topics; the plugins (datasets, solvers, plots) and objective.py import
no layer above theirs."""
import ast

import pytest

from conftest import ROOT, python_script

# bottom first; a topic imports only topics of lower layers
LAYERS = (
    ("progress", "budget"),
    ("checks", "code_digest"),
    ("numerics", "sets"),
    ("data",),
    ("metrics",),
    ("problems",),
    ("references", "counting", "sample_budget"),
    ("solvers",),
    ("tuning", "report"),
    ("claims",),
    ("tune", "compare"),
)
LAYER_OF = {topic: level for level, topics in enumerate(LAYERS)
            for topic in topics}
# the top-level folders (and objective.py) and what they may not import
FORBIDDEN = {
    "datasets": {"tuning", "solvers", "counting", "report", "budget", "tune",
                 "claims", "progress", "compare"},
    "solvers": {"tuning", "report", "budget", "tune", "claims", "progress",
                "compare"},
    "plots": {"tuning", "solvers", "budget", "tune", "claims", "compare"},
    "objective.py": {"report", "tune", "claims", "compare"},
}


def absolute(node, path):
    """The module an ``ImportFrom`` node names, a relative one resolved
    from the package of the file at ``path``."""
    if not node.level:
        return node.module or ""
    package = path.relative_to(ROOT).with_suffix("").parts[:-1]
    base = package[:len(package) - node.level + 1]
    return ".".join([*base, *([node.module] if node.module else [])])


def imported_topics(path):
    """The benchmark_utils topics (first name after ``benchmark_utils.``)
    that the file at ``path`` imports."""
    topics = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names = []
        if isinstance(node, ast.ImportFrom):
            module = absolute(node, path)
            names = [module] if module != "benchmark_utils" else [
                f"benchmark_utils.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        topics |= {name.split(".")[1] for name in names
                   if name.startswith("benchmark_utils.")}
    return topics


def _shared_modules():
    return sorted((ROOT / "benchmark_utils").rglob("*.py"))


def topic_of(path):
    return path.relative_to(ROOT / "benchmark_utils").parts[0].removesuffix(
        ".py")


def test_every_topic_has_a_layer():
    topics = {topic_of(path) for path in _shared_modules()} - {"__init__"}
    assert topics <= set(LAYER_OF), sorted(topics - set(LAYER_OF))


@pytest.mark.parametrize("path", _shared_modules(),
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_a_shared_module_imports_only_lower_layers(path):
    topic = topic_of(path)
    if topic == "__init__":
        return
    upward = {other for other in imported_topics(path) - {topic}
              if LAYER_OF[other] >= LAYER_OF[topic]}
    assert not upward, (f"{topic} (layer {LAYER_OF[topic]}) imports "
                        f"{sorted(upward)}")


@pytest.mark.parametrize("folder", sorted(FORBIDDEN))
def test_plugins_do_not_import_the_run_layer(folder):
    paths = ([ROOT / folder] if folder.endswith(".py")
             else sorted((ROOT / folder).glob("*.py")))
    assert paths
    for path in paths:
        bad = imported_topics(path) & FORBIDDEN[folder]
        assert not bad, f"{path.name} imports {sorted(bad)}"


def test_a_relative_import_is_read_as_its_absolute_module(tmp_path):
    """``from ..references import cache`` in a problem module is the
    references topic (an upward import the layer test must see)."""
    path = ROOT / "benchmark_utils" / "problems" / "example.py"
    node = ast.parse("from ..references import cache").body[0]
    assert absolute(node, path) == "benchmark_utils.references"
    node = ast.parse("from . import base").body[0]
    assert absolute(node, path) == "benchmark_utils.problems"


def test_the_check_reads_function_level_imports(tmp_path):
    module = tmp_path / "module.py"
    module.write_text("def f():\n    from benchmark_utils.tuning import x\n"
                      "    import benchmark_utils.solvers.base\n")
    assert imported_topics(module) == {"tuning", "solvers"}


# benchopt's modules a run may import: its public classes and settings
# (the Benchmark class of its debugging guide, the data path of its
# datasets guide), no internal
RUN_PATH_BENCHOPT = {"benchopt", "benchopt.stopping_criterion",
                     "benchopt.config", "benchopt.benchmark"}


def test_a_run_imports_no_other_benchopt_internals():
    """What every solver and dataset of a run imports (the evidence's code,
    claims/provenance.py) names no benchopt module beyond
    RUN_PATH_BENCHOPT: the seed comes from the solver's public get_seed,
    never from benchopt.utils.run_context."""
    from benchmark_utils.claims import provenance
    read, listing = provenance._tree_reader(ROOT)
    names = set()
    for folder in ("solvers", "datasets"):
        for path in listing(folder):
            names |= provenance._declared_names(read(path))
    config = {"solver": sorted(names), "dataset": sorted(names)}
    used = {}
    for path in provenance.code_files(config, read, listing):
        for node in ast.walk(ast.parse(read(path))):
            modules = ([alias.name for alias in node.names]
                       if isinstance(node, ast.Import) else [node.module]
                       if isinstance(node, ast.ImportFrom) else [])
            for module in modules:
                if module and module.split(".")[0] == "benchopt":
                    if module == "benchopt.utils" and isinstance(
                            node, ast.ImportFrom):
                        module += "." + node.names[0].name
                    used.setdefault(module, path)
    assert "benchopt.utils.run_context" not in used
    assert set(used) <= RUN_PATH_BENCHOPT, {
        m: p for m, p in used.items() if m not in RUN_PATH_BENCHOPT}


# the calls a module of the benchmark makes when imported: a table built
# from another
CALLS_ON_IMPORT = {("benchmark_utils/claims/experiments.py",
                    "EXPERIMENTS.update")}


def test_nothing_runs_on_import():
    """No module of a run or a report calls anything at its top level
    beyond CALLS_ON_IMPORT: checks, hooks and patches run at benchopt's
    public hooks (the objective's is_installed, get_data, a plot's plot)
    or in the benchmark's commands."""
    found = set()
    files = [ROOT / "objective.py"] + [
        path for folder in ("benchmark_utils", "solvers", "datasets", "plots")
        for path in (ROOT / folder).rglob("*.py")]
    for path in files:
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.Expr) and isinstance(node.value,
                                                         ast.Call):
                found.add((path.relative_to(ROOT).as_posix(),
                           ast.unparse(node.value.func)))
    assert found == CALLS_ON_IMPORT


# libraries a few code paths use, each loaded where it is used: imported at
# a run module's top, each would add 0.1-0.6 s to the start of every
# benchopt process (the tuning, the claims and the suite start hundreds)
LOADED_ON_USE = ("sklearn", "scipy.stats", "scipy.optimize", "scipy.linalg",
                 "optuna", "cvxpy")


def test_a_run_loads_its_heavy_libraries_on_use():
    """Importing the objective, every solver and every dataset (what
    benchopt does at every start) loads none of LOADED_ON_USE."""
    script = (
        "import importlib.util, pathlib, sys\n"
        "import objective\n"
        "for folder in ('solvers', 'datasets'):\n"
        "    for path in sorted(pathlib.Path(folder).glob('*.py')):\n"
        "        spec = importlib.util.spec_from_file_location(\n"
        "            f'{folder}.{path.stem}', path)\n"
        "        spec.loader.exec_module(\n"
        "            importlib.util.module_from_spec(spec))\n"
        f"print(sorted(set(sys.modules) & set({LOADED_ON_USE!r})))\n")
    result = python_script(script)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "[]", result.stdout
