"""The layers of benchmark_utils import only downwards (docs/architecture.md,
"Layers"), read from every import statement of the code, function-level
imports included: no arrow runs back up, no cycle between topics."""
import ast

import pytest

from conftest import ROOT

# bottom first; a topic imports only topics of lower layers
LAYERS = (
    ("checks", "code_digest"),
    ("numerics", "sets"),
    ("data",),
    ("metrics",),
    ("problems",),
    ("references", "counting", "sample_budget"),
    ("solvers",),
    ("tuning", "report", "budget"),
    ("claims",),
    ("tune",),
)
LAYER_OF = {topic: level for level, topics in enumerate(LAYERS)
            for topic in topics}
# the top-level folders and what they may not import
FORBIDDEN = {
    "datasets": {"tuning", "solvers", "counting", "report", "budget", "tune"},
    "solvers": {"tuning", "report", "budget", "tune"},
}


def imported_topics(path):
    """The benchmark_utils topics (first name after ``benchmark_utils.``)
    that the file at ``path`` imports."""
    topics = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names = []
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] if node.module != "benchmark_utils" else [
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
    for path in sorted((ROOT / folder).glob("*.py")):
        bad = imported_topics(path) & FORBIDDEN[folder]
        assert not bad, f"{path.name} imports {sorted(bad)}"


def test_the_check_reads_function_level_imports(tmp_path):
    module = tmp_path / "module.py"
    module.write_text("def f():\n    from benchmark_utils.tuning import x\n"
                      "    import benchmark_utils.solvers.base\n")
    assert imported_topics(module) == {"tuning", "solvers"}
