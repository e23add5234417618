"""The README and the docs/ pages hold together: every relative markdown
link points to an existing file, the README stays short (issue 23: at most
300 lines) and its Quick start keeps the two commands CI runs."""
import re

import pytest

from conftest import ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
EXTERNAL = ("http://", "https://", "mailto:")
QUICK_START = [
    "python -m pip install -r requirements.txt && python -m benchopt run .",
    "python -m pip install -r requirements.txt && python -m pytest tests",
]


def _relative_links(page):
    """The targets of a page's relative links, outside fenced code blocks."""
    targets, in_fence = [], False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        for target in LINK.findall(line):
            if not target.startswith(EXTERNAL + ("#",)):
                targets.append(target)
    return targets


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_relative_links_resolve(page):
    missing = [target for target in _relative_links(page)
               if not (page.parent / target.split("#")[0]).exists()]
    assert not missing, f"{page.relative_to(ROOT)}: broken links {missing}"


def test_readme_is_short():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 300, f"README.md has {len(lines)} lines"


def test_readme_quick_start_commands():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for command in QUICK_START:
        assert f"```bash\n{command}\n```" in readme, command


def test_the_solver_reference_is_generated_from_the_code():
    """docs/defaults.md is the solvers' docstrings, parameters and step
    rules as the code declares them (no default typed twice)."""
    from benchmark_utils.report.solver_reference import (
        COMMAND,
        PAGE,
        benchmark_solvers,
        page,
    )
    assert PAGE.read_text(encoding="utf-8") == page(benchmark_solvers()), (
        f"docs/defaults.md is stale: run {COMMAND}")
