"""``python -m benchmark_utils.claims report``: the claims as offline HTML
pages, one per paper, with the curves each verdict was read on.

docs/results.md gives every verdict as numbers read at one point; a
reader who doubts one wants the two methods' whole curves beside it, to
see whether the point is representative (curves that cross just after
it, a band that is wide everywhere, runs that stop early). The pages add
those curves and nothing else: the evidence line and the tables are
:func:`benchmark_utils.claims.sections.section`'s markdown converted to
HTML (so the pages cannot disagree with docs/results.md), and each
figure's verdict and dashed line come from
:func:`benchmark_utils.claims.verdicts.decide` on the paper's axis, the
family the claims table decides.

Each curve is drawn as the median over the repetitions with a q20-q80
band, every repetition interpolated on one grid of x (log-spaced where the
positive x span two decades: the start, x = 0, cannot sit on a log axis,
so such curves begin at their first positive x); at each x the median is
over the repetitions whose curve reaches it, and a diverged run's curve
ends at its divergence (the tables say how many of each). The pages load
nothing (inline SVG and style, no script) so they open offline, and
carry no date but the evidence's own: rebuilding them from the same
``results/`` gives the same bytes.
"""
import collections
import html
import io
import re
import sys
import textwrap
import unicodedata

import matplotlib
from matplotlib.figure import Figure
from matplotlib.ticker import LogFormatter, LogLocator, NullLocator

from benchmark_utils.claims import causes, readings, results, sections
from benchmark_utils.claims.bands import (
    band_on_grid,
    grid_and_scales,
    run_curves,
)
from benchmark_utils.claims.experiments import EXPERIMENTS
from benchmark_utils.claims.verdicts import (
    AXIS_COLUMNS,
    VERDICTS,
    select,
)
from benchmark_utils.tuning.defaults import ROOT

DEFAULT_OUTPUT = ROOT / "outputs" / "claims"
COLORS = ("#1f77b4", "#d62728")
AXIS_LABELS = {"iterations": "iterations",
               "samples": "samples drawn (upper + lower)",
               "time": "time (s)",
               "cpu_time": "CPU time of the iterations (s)"}
# fixed ids and text kept as text: the same bytes on every build, and
# pages a tenth the size of glyphs drawn as paths
SVG_RC = {"svg.hashsalt": "benchmark_utils.claims", "svg.fonttype": "none",
          # a fixed title height: matplotlib otherwise measures every
          # tick label to lift the title clear of them (an eighth of the
          # build)
          "axes.titley": 1.02}
STYLE = """
body{font-family:sans-serif;max-width:72em;margin:auto;padding:1em;
line-height:1.4;color:#222}
table{border-collapse:collapse;margin:1em 0;font-size:90%}
th,td{border:1px solid #ccc;padding:.25em .5em;text-align:left;
vertical-align:top}
th{background:#f3f3f3}
code{background:#f3f3f3;padding:0 .2em}
.v-confirmed{color:#1a7f37}.v-not-confirmed{color:#cf222e}
.v-inconclusive{color:#9a6700}.v-not-testable-here{color:#57606a}
figure{margin:1.5em 0}figure svg{max-width:100%;height:auto}
figcaption{font-size:90%;color:#444;max-width:60em}
""".strip()


def slug(paper):
    """The file name stem of a paper's page: ``abolfazli_et_al_2023``
    (accents dropped, so the name is plain ASCII on every filesystem)."""
    plain = unicodedata.normalize("NFKD", paper).encode(
        "ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "_", plain.lower()).strip("_")


def papers(wanted=None):
    """``{paper: [experiments]}`` in the order of EXPERIMENTS; ``wanted``:
    only the papers whose name contains it (any case), ValueError naming
    the papers where none does."""
    grouped = {}
    for exp in EXPERIMENTS.values():
        grouped.setdefault(exp.paper, []).append(exp)
    if wanted is None:
        return grouped
    chosen = {paper: exps for paper, exps in grouped.items()
              if wanted.lower() in paper.lower()}
    if not chosen:
        raise ValueError(f"--paper {wanted!r} matches none of the papers: "
                         + "; ".join(grouped))
    return chosen


# ---- sections.py's markdown as HTML (paragraphs and pipe tables) ----

def verdict_html(decided):
    """A verdict in bold, coloured by its kind ("confirmed (on par)" as
    "confirmed")."""
    kind = decided.split(" (")[0].replace(" ", "-")
    return f'<strong class="v-{kind}">{decided}</strong>'


def _strong(match):
    """Bold text; a verdict coloured, to find the verdicts at a
    glance."""
    word = match[1]
    return (verdict_html(word) if word in VERDICTS
            else f"<strong>{word}</strong>")


def inline(text):
    """Escaped text with markdown's ``code`` and **bold** (a verdict word
    also coloured by its class)."""
    text = html.escape(text, quote=False)
    text = re.sub(r"`([^`]*)`", r"<code>\1</code>", text)
    return re.sub(r"\*\*([^*]+)\*\*", _strong, text)


def _cells(line):
    r"""A pipe-table row's cells; a cell's own pipes come escaped (``\|``,
    as GitHub's tables need: sections.cell)."""
    return [cell.strip().replace("\\|", "|") for cell in re.split(
        r"(?<!\\)\|", line.strip().removeprefix("|").removesuffix("|"))]


def table_html(rows):
    """A markdown pipe table (header, separator, body rows) as HTML."""
    head = "".join(f"<th>{inline(c)}</th>" for c in _cells(rows[0]))
    body = "\n".join("<tr>" + "".join(f"<td>{inline(c)}</td>"
                                      for c in _cells(row)) + "</tr>"
                     for row in rows[2:])
    return (f"<table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}\n"
            "</tbody>\n</table>")


def markdown_html(lines):
    """Blocks separated by blank lines: a block of ``|`` lines is a table,
    any other a paragraph (all that sections.py writes)."""
    out, block = [], []
    for line in [*lines, ""]:
        if line.strip():
            block.append(line)
            continue
        if block and all(b.lstrip().startswith("|") for b in block):
            out.append(table_html(block))
        elif block:
            out.append(f"<p>{inline(' '.join(block))}</p>")
        block = []
    return "\n".join(out)


# ---- the figures ----

def claim_svg(exp, runs, claim, verdict):
    """The claim's two methods' curves of its metric against the paper's
    axis (module doc), as an inline ``<svg>`` element."""
    axis = readings.claim_axes(exp, runs)[0][0]
    column = AXIS_COLUMNS[axis]
    # a claim on a method's own progress draws its curve once
    methods = ((claim.a,) if claim.a.parts == claim.b.parts
               else (claim.a, claim.b))
    curve_sets = [run_curves(select(runs, m, claim.dataset), claim.metric,
                             column) for m in methods]
    grid, log_x, log_y = grid_and_scales(curve_sets)
    decided = verdict.decided if verdict else "not decided on this axis"
    with matplotlib.rc_context(SVG_RC):
        fig = Figure(figsize=(6.4, 4.0))
        ax = fig.add_subplot()
        for method, curves, color in zip(methods, curve_sets,
                                         COLORS[:len(methods)], strict=True):
            q20, median, q80 = band_on_grid(curves, grid, log_x, log_y)
            ax.fill_between(grid, q20, q80, color=color, alpha=0.2,
                            linewidth=0)
            ax.plot(grid, median, color=color,
                    label=f"{method.label} (median, q20-q80)")
        if verdict and verdict.comparison is not None and (
                verdict.target > 0 or not log_x):
            ax.axvline(verdict.target, color="black", linestyle="--",
                       linewidth=1, label="decided at "
                       + readings.point_text(axis, verdict.target))
        ax.set_xscale("log" if log_x else "linear")
        ax.set_yscale("log" if log_y else "linear")
        for log, axis in ((log_x, ax.xaxis), (log_y, ax.yaxis)):
            if log:     # ticks at 1, 2, 5 per decade, labelled in plain
                # text, no minor ticks: mathtext's parser and the minor
                # ticks took most of the report's build
                axis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
                axis.set_major_formatter(LogFormatter(labelOnlyBase=False))
                axis.set_minor_locator(NullLocator())
        ax.set_xlabel(AXIS_LABELS.get(axis, column))
        ax.set_ylabel(claim.metric)
        ax.set_title(textwrap.fill(f"{decided}: {claim.text}", 80),
                     fontsize=9)
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=7)
        # fixed margins, not bbox_inches="tight": that draws it twice
        fig.subplots_adjust(left=0.12, right=0.97, bottom=0.12, top=0.88)
        return inline_svg(fig)


def inline_svg(fig):
    """``fig`` as an inline ``<svg>`` element: no XML prolog, DOCTYPE,
    date or metadata (the same bytes on every build)."""
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", metadata={"Date": None,
                                                "Creator": None})
    svg = buffer.getvalue()
    svg = svg[svg.index("<svg"):]
    return re.sub(r"\s*<metadata>.*?</metadata>", "", svg, flags=re.S)


def paper_axis_verdicts(exp, runs):
    """The claims' verdicts on the paper's axis (readings.claim_axes'
    first reading), from the family the claims table decides."""
    axis = readings.claim_axes(exp, runs)[0][0]
    return [v for v in causes.experiment_verdicts(exp, runs)
            if v.axis == axis and not v.early]


# ---- the pages ----

def figure_html(exp, runs, claim, verdict):
    """The claim's figure with a caption saying what is drawn, so the
    figure reads without docs/results.md beside it."""
    a, b = claim.a.label, claim.b.label
    where = ("none: the claim is not decided on this axis" if not verdict
             else "none: not testable here" if verdict.comparison is None
             else "where the claim is decided ("
             + readings.point_text(verdict.axis, verdict.target) + ")")
    decided = (verdict_html(verdict.decided) if verdict
               else "not decided on this axis")
    return (f"<figure>\n{claim_svg(exp, runs, claim, verdict)}\n"
            f"<figcaption>{html.escape(claim.text)}: {html.escape(a)} "
            f"(a) against {html.escape(b)} (b), {claim.metric} against "
            f"{exp.axis}; median over the repetitions whose curve reaches "
            "each x, band q20-q80 (a diverged run's curve ends at its "
            f"divergence); dashed line: {where}. Verdict: {decided}."
            "</figcaption>\n</figure>")


def evidence_date(meta):
    """The evidence's own date, the page's only one (so rebuilding keeps
    its bytes), and whether its tree differed from the commit named."""
    text = (f"Evidence written {meta.get('date')} by benchopt "
            f"{meta.get('benchopt')}")
    if meta.get("uncommitted_changes"):
        text += ", from a tree with uncommitted changes to the commit"
    return f"<p>{html.escape(text)}.</p>"


def experiment_html(exp):
    """``(html, verdicts)`` of one experiment's part of its paper's page;
    verdicts is None where it has no committed evidence."""
    head = (f'<h2 id="{exp.name}">{html.escape(exp.figure)} '
            f"<code>{exp.name}</code></h2>")
    if not (exp.folder / "meta.yml").is_file():
        return (f"{head}\n<p>No committed evidence: "
                f"<code>results/{exp.name}/meta.yml</code> is missing "
                f"(<code>python -m benchmark_utils.claims run {exp.name}"
                "</code> writes it).</p>"), None
    runs, _, meta = results.read(exp.folder)
    # no markers; the rule is not above on this page
    markdown = sections.section(exp).replace(
        "the rule above", "the rule of docs/results.md").splitlines()[1:-1]
    verdicts = paper_axis_verdicts(exp, runs) if exp.claims else []
    parts = [head, markdown_html(markdown), evidence_date(meta)]
    if exp.claims:
        parts.append(f"<h3>The claims on the paper's axis "
                     f"({exp.axis})</h3>")
        parts += [figure_html(exp, runs, claim, verdict)
                  for claim, verdict in zip(exp.claims, verdicts,
                                            strict=True)]
    return "\n".join(parts), verdicts


def page(title, body, style=STYLE):
    """A whole page: its style inline, nothing to load."""
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n'
            f'<meta charset="utf-8">\n<title>{html.escape(title)}</title>\n'
            f"<style>\n{style}\n</style>\n</head>\n<body>\n{body}\n"
            "</body>\n</html>\n")


def summary(verdicts):
    """The index's word on one experiment: its verdicts counted."""
    if verdicts is None:
        return "no committed evidence yet"
    if not verdicts:
        return "no claim (the methods side by side)"
    counts = collections.Counter(v.decided if v else "not decided"
                                 for v in verdicts)
    return f"{len(verdicts)} claim(s): " + ", ".join(
        f"{n} {word}" for word, n in sorted(counts.items()))


INTRO = ("Built by <code>python -m benchmark_utils.claims report</code> "
         "from the committed evidence in <code>results/</code>; the rule "
         "that decides each claim and the protocol are in "
         "docs/results.md, whose generated sections give the same tables.")


def build(output=DEFAULT_OUTPUT, paper=None):
    """Write one page per paper (``paper``: only those whose name contains
    it) and ``index.html`` into ``output``; the index's path."""
    chosen = papers(paper)
    results.make_folder(output)
    items = []
    for paper, exps in chosen.items():
        name = f"{slug(paper)}.html"
        parts, listed = [], []
        for exp in exps:
            text, verdicts = experiment_html(exp)
            if verdicts is None:
                # said where it is run too, not only inside the page
                print(f"claims report: results/{exp.name}/ has no "
                      "committed evidence; its part of the page says so "
                      f"(`python -m benchmark_utils.claims run {exp.name}` "
                      "writes it)", file=sys.stderr)
            parts.append(text)
            listed.append(f'<li><a href="{name}#{exp.name}">'
                          f"{html.escape(exp.figure)}</a>: "
                          f"{summary(verdicts)}</li>")
        body = (f'<p><a href="index.html">All papers</a></p>\n'
                f"<h1>{html.escape(paper)}</h1>\n<p>{INTRO}</p>\n"
                + "\n".join(parts))
        (output / name).write_text(page(f"{paper}: claims", body),
                                   encoding="utf-8")
        listing = "\n".join(listed)
        items.append(f'<li><a href="{name}">{html.escape(paper)}</a>\n'
                     f"<ul>\n{listing}\n</ul></li>")
    index = output / "index.html"
    listing = "\n".join(items)
    index.write_text(page("The papers' claims", (
        f"<h1>The papers' claims, re-decided</h1>\n<p>{INTRO}</p>\n"
        f"<ul>\n{listing}\n</ul>")), encoding="utf-8")
    return index
