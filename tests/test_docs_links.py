"""The README and the docs/ pages hold together: every relative markdown
link points to an existing file and every link to a heading to a heading
of its page, the README stays short (issue 23, then issue 44: at most 250
lines), its Quick start keeps the two commands CI runs, and no table cell
is a wall of text (issue 44: at most 400 characters; longer detail goes
to a section below the table)."""
import re

import pytest

from conftest import ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
EXTERNAL = ("http://", "https://", "mailto:")
HEADING = re.compile(r"#{1,6} (.*)")
# a GitHub table cell ends at every pipe not escaped, in code spans too
CELL_SEPARATOR = re.compile(r"(?<!\\)\|")
MAX_CELL = 400
README_LINES = 250
QUICK_START = [
    "python -m pip install -r requirements.txt && python -m benchopt run .",
    "python -m pip install -r requirements.txt && python -m pytest tests",
]


def _prose_lines(page):
    """A page's lines outside fenced code blocks, with their numbers."""
    in_fence = False
    lines = page.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines, 1):
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
            continue
        if not in_fence:
            yield number, line


def _relative_links(page):
    """The targets of a page's relative links, outside fenced code blocks."""
    return [target for _, line in _prose_lines(page)
            for target in LINK.findall(line)
            if not target.startswith(EXTERNAL + ("#",))]


def _anchors(page):
    """The anchors GitHub gives a page's headings: lower case, punctuation
    but hyphens and underscores dropped, spaces as hyphens, a repeated one
    suffixed -1, -2, ..."""
    anchors, seen = set(), {}
    for _, line in _prose_lines(page):
        match = HEADING.match(line)
        if match:
            anchor = re.sub(r"[^\w\- ]", "", match.group(1).strip().lower())
            anchor = anchor.replace(" ", "-")
            count = seen.get(anchor, 0)
            seen[anchor] = count + 1
            anchors.add(f"{anchor}-{count}" if count else anchor)
    return anchors


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_relative_links_resolve(page):
    missing = [target for target in _relative_links(page)
               if not (page.parent / target.split("#")[0]).exists()]
    assert not missing, f"{page.relative_to(ROOT)}: broken links {missing}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_links_to_headings_resolve(page):
    """A link ``page.md#anchor`` (or ``#anchor`` within the page) names a
    heading of that page, so a page split or a renamed heading cannot leave
    a link pointing to the top of a page."""
    missing = []
    for _, line in _prose_lines(page):
        for target in LINK.findall(line):
            path, _, anchor = target.partition("#")
            if target.startswith(EXTERNAL) or not anchor:
                continue
            linked = page.parent / path if path else page
            if linked.suffix == ".md" and linked.exists() \
                    and anchor not in _anchors(linked):
                missing.append(target)
    assert not missing, f"{page.relative_to(ROOT)}: no such heading {missing}"


def test_readme_is_short():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_LINES, f"README.md has {len(lines)} lines"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_table_cells_are_short(page):
    """No table cell of README.md or docs/*.md (the generated defaults.md
    and results.md included) holds more than MAX_CELL characters."""
    long_cells = [
        (number, len(cell.strip()), cell.strip()[:60])
        for number, line in _prose_lines(page)
        if line.lstrip().startswith("|")
        for cell in CELL_SEPARATOR.split(line.strip().strip("|"))
        if len(cell.strip()) > MAX_CELL]
    assert not long_cells, (
        f"{page.relative_to(ROOT)}: cells over {MAX_CELL} characters "
        f"(line, length, start): {long_cells}")


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


def test_the_architecture_gives_each_package_its_job_in_two_lines():
    """docs/architecture.md's tree: every package and module at the top of
    benchmark_utils/ is there, and none takes more than two lines (its
    modules' parts are in their docstrings)."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    tree = text.split("```")[1].splitlines()
    start = next(i for i, line in enumerate(tree)
                 if line.startswith("benchmark_utils/"))
    entries, name = {}, None
    for line in tree[start + 1:]:
        if not line.startswith("  "):
            break
        if not line.startswith("   "):
            name = line.split()[0]
        entries[name] = entries.get(name, 0) + 1
    top = {path.name + ("/" if path.is_dir() else "")
           for path in (ROOT / "benchmark_utils").iterdir()
           if not path.name.startswith("__")
           and (path.is_dir() or path.suffix == ".py")}
    assert set(entries) == top
    assert max(entries.values()) <= 2, entries
