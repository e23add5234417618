"""``python -m benchmark_utils.claims report``: the claims' offline HTML
pages, built from the committed evidence in results/. One page per paper
and an index; every experiment with evidence on its paper's page with its
claims' verdicts (the same as docs/results.md's tables) and one inline
figure per claim; nothing loaded from the network, so the pages open
offline; and the same bytes on every build, so a rebuild shows no
spurious change."""
import html
import re

import numpy as np
import pytest

from benchmark_utils.claims import (
    bands,
    html_report,
    results,
    sections,
    verdicts,
)
from benchmark_utils.claims.__main__ import main
from benchmark_utils.claims.experiments import EXPERIMENTS

# a src or href (also xlink:href) that would load something from the web
REMOTE = re.compile(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", re.I)
VERDICT = re.compile(r'<strong class="v-[a-z-]+">([a-z ()]+)</strong>')


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The pages, built once through the command line."""
    folder = tmp_path_factory.mktemp("claims")
    assert main(["report", "--output", str(folder)]) == 0
    return folder


def _with_evidence(exps):
    return [e for e in exps if (e.folder / "meta.yml").is_file()]


def test_one_page_per_paper_and_an_index(built):
    papers = html_report.papers()
    expected = {f"{html_report.slug(p)}.html" for p in papers}
    assert "abolfazli_et_al_2023.html" in expected
    assert {p.name for p in built.iterdir()} == expected | {"index.html"}
    assert _with_evidence(EXPERIMENTS.values()), "no committed evidence"
    index = (built / "index.html").read_text()
    for paper in papers:
        assert f'href="{html_report.slug(paper)}.html"' in index


@pytest.mark.parametrize("paper", sorted(html_report.papers()))
def test_each_experiment_with_its_verdicts_and_figures(built, paper):
    text = (built / f"{html_report.slug(paper)}.html").read_text()
    assert f"<h1>{paper}</h1>" in text
    exps = html_report.papers()[paper]
    for exp in exps:
        part = text.split(f'id="{exp.name}"')[1].split("<h2 ")[0]
        if exp not in _with_evidence(exps):
            assert "meta.yml</code> is missing" in part
            continue
        assert (f"python -m benchmark_utils.claims run {exp.name}"
                in part)
        runs, _, _ = results.read(exp.folder)
        # the claims table's verdicts are docs/results.md's, in its order
        words = re.findall(r"\*\*([a-z ()]+)\*\*",
                           "\n".join(sections.claim_table(exp, runs)))
        table = part.split("<h3>")[0]
        assert VERDICT.findall(table) == words
        figures = part.split("<figure>")[1:]
        assert len(figures) == len(exp.claims)
        verdicts = html_report.paper_axis_verdicts(exp, runs)
        for claim, verdict, figure in zip(exp.claims, verdicts, figures,
                                          strict=True):
            assert re.search(r"<svg\b", figure) and "</svg>" in figure
            caption = figure.split("<figcaption>")[1]
            assert caption.startswith(html.escape(claim.text))
            assert "Verdict: <strong class" in figure
            assert VERDICT.findall(figure)[-1] == verdict.decided
            # the verdict in the figure's own title too
            assert f">{verdict.decided}: " in figure.split("</svg>")[0]


def test_nothing_is_loaded_from_the_network(built):
    for page in built.iterdir():
        text = page.read_text()
        assert not REMOTE.search(text), (page.name, REMOTE.search(text)[0])
        assert "<script" not in text and "<link" not in text, page.name
        assert "<image" not in text and "@import" not in text, page.name


def test_an_experiment_without_evidence_is_named(tmp_path, monkeypatch):
    exp = next(iter(EXPERIMENTS.values()))
    monkeypatch.setattr(type(exp), "folder",
                        property(lambda self: tmp_path / "none"))
    text, verdicts = html_report.experiment_html(exp)
    assert verdicts is None
    assert f"results/{exp.name}/meta.yml</code> is missing" in text
    assert "<svg" not in text


def test_markdown_pipe_tables_become_html_tables():
    converted = html_report.markdown_html([
        "Evidence: `results/x/` (a < b).", "",
        "| claim | verdict |", "|---|---|",
        "| a & b | **not confirmed** |"])
    assert converted == (
        "<p>Evidence: <code>results/x/</code> (a &lt; b).</p>\n<table>\n"
        "<thead><tr><th>claim</th><th>verdict</th></tr></thead>\n<tbody>\n"
        '<tr><td>a &amp; b</td><td><strong class="v-not-confirmed">'
        "not confirmed</strong></td></tr>\n</tbody>\n</table>")


def test_an_on_par_verdict_is_coloured_as_confirmed():
    """'confirmed (on par)' (parity shown) keeps a valid class, the colour
    of 'confirmed'; 'not testable here' has its own."""
    assert html_report.verdict_html("confirmed (on par)") == (
        '<strong class="v-confirmed">confirmed (on par)</strong>')
    assert 'class="v-not-testable-here"' in html_report.verdict_html(
        "not testable here")
    assert 'class="v-not-confirmed"' in html_report.verdict_html(
        "not confirmed")
    for decided in verdicts.VERDICTS:   # every verdict a run can write
        assert html_report.inline(f"**{decided}**") == (
            html_report.verdict_html(decided))


def test_one_paper_is_built_alone_with_the_same_bytes(built, tmp_path,
                                                     capsys):
    """``--paper`` builds the pages of the papers whose name contains it
    (a quick path from a paper to its figures), the same bytes as the
    full build (every page is built by the same code, so one shows it);
    an unknown name is refused in one line listing the papers."""
    assert main(["report", "--paper", "abolfazli", "--output",
                 str(tmp_path)]) == 0
    page = "abolfazli_et_al_2023.html"
    assert {p.name for p in tmp_path.iterdir()} == {page, "index.html"}
    assert "<svg" in (tmp_path / page).read_text()
    assert (tmp_path / page).read_bytes() == (built / page).read_bytes()
    assert main(["report", "--paper", "nobody", "--output",
                 str(tmp_path / "other")]) == 1
    error = capsys.readouterr().err
    assert "--paper 'nobody' matches none of the papers" in error
    assert "Abolfazli et al. 2023" in error
    assert not (tmp_path / "other").exists()


def test_a_pipe_inside_a_claim_stays_in_its_cell():
    """||grad_y g|| in a claim's text: escaped on the page (GitHub splits
    a cell at a bare pipe), one cell in the HTML."""
    row = f"| {sections.cell('lower ||grad_y g||')} | **confirmed** |"
    assert row == r"| lower \|\|grad_y g\|\| | **confirmed** |"
    assert html_report._cells(row) == ["lower ||grad_y g||",
                                       "**confirmed**"]


def test_the_bands_quantiles_are_numpys():
    """column_quantiles gives np.nanquantile's values (its linear rule),
    NaN in a column no curve reaches."""
    rng = np.random.default_rng(0)
    stack = rng.standard_normal((7, 40)) * 10.0 ** rng.uniform(-5, 5, 40)
    stack[rng.random(stack.shape) < 0.4] = np.nan
    stack[:, 3] = np.nan
    levels = (0.2, 0.5, 0.8)
    with np.errstate(all="ignore"), pytest.warns(RuntimeWarning):
        expected = np.nanquantile(stack, levels, axis=0)
    got = bands.column_quantiles(stack, levels)
    assert np.isnan(got[:, 3]).all()
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=0)
