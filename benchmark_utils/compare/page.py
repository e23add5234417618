"""The comparison's offline HTML page: where the new method stands (a
performance profile over the compared experiments, the new method among
the shipped ones), its verdict against each method of each experiment,
its curves beside theirs, and the commands that reproduce it.

Curves are drawn as the claims pages draw them
(benchmark_utils/claims/bands.py: median over the repetitions with
a q20-q80 band, a diverged run's curve ended at its divergence), every
method of the experiment on the paper's axis, the new method in black.
The page loads nothing (inline SVG and style, no script).
"""
import collections
import html

import matplotlib
from matplotlib.figure import Figure

from benchmark_utils.claims import profile, readings
from benchmark_utils.claims.bands import (
    band_on_grid,
    grid_and_scales,
    run_curves,
)
from benchmark_utils.claims.html_report import (
    AXIS_LABELS,
    STYLE,
    SVG_RC,
    inline_svg,
    page,
)
from benchmark_utils.claims.sections import dataset_labels
from benchmark_utils.claims.standing import BETTER, PARITY, UNDECIDED, WORSE
from benchmark_utils.claims.verdicts import AXIS_COLUMNS, NOT_TESTABLE, select
from benchmark_utils.report.styles import PALETTE

WORDS = (BETTER, PARITY, WORSE, UNDECIDED, NOT_TESTABLE)
CLASSES = {BETTER: "v-confirmed", WORSE: "v-not-confirmed",
           PARITY: "v-confirmed", UNDECIDED: "v-inconclusive",
           NOT_TESTABLE: "v-not-testable-here"}
EXTRA_STYLE = ("tr.new td{font-weight:bold}"
               ".v-confirmed,.v-not-confirmed{font-weight:bold}")


def problems(results):
    """The profile's problems (claims.profile) over the compared
    experiments: ``results`` is ``[(comparison, runs, methods)]``."""
    found = []
    for comparison, runs, methods in results:
        exp = comparison.exp
        axis, target = readings.table_point(exp, runs)
        for dataset in sorted(runs["dataset"].unique()):
            rows = runs[runs["dataset"] == dataset]
            found.append((exp.name, dataset,
                          readings.point_text(axis, target), {
                              m.label: profile.method_value(
                                  select(rows, m), exp.score, axis, target)
                              for m in methods}))
    return found


def profile_html(found, new_label):
    shares, counts, skipped = profile.profile(found)
    head = "".join(f"<th>{'best' if t == 1 else f'within {t:g}x'}</th>"
                   for t in profile.TAUS)
    rows = []
    for method in sorted(shares, key=lambda m: (
            [-s for s in shares[m]], -counts[m], m)):
        cells = "".join(f"<td>{s:.2f}</td>" for s in shares[method])
        mark = ' class="new"' if method == new_label else ""
        rows.append(f"<tr{mark}><td>{html.escape(method)}</td>"
                    f"<td>{counts[method]}</td>{cells}</tr>")
    note = (f"<p>Left out (best value not positive): "
            f"{html.escape(', '.join(skipped))}.</p>" if skipped else "")
    return (f"<table><tr><th>method</th><th>problems</th>{head}</tr>\n"
            + "\n".join(rows) + "</table>" + note)


def standings_html(standings):
    """One row per other method, one column per metric and axis (the
    point read in each cell's title: a common end differs by pair)."""
    columns = list(dict.fromkeys((s.metric, s.axis) for s in standings))
    table = collections.defaultdict(dict)
    labels = dataset_labels(sorted({s.dataset for s in standings}))
    several = len(labels) > 1
    for s in standings:
        row = f"{s.other} ({labels[s.dataset]})" if several else s.other
        table[row][(s.metric, s.axis)] = s
    head = "".join(f"<th>{html.escape(m)}<br>on {html.escape(a)}</th>"
                   for m, a in columns)
    rows = []
    for other, cells in table.items():
        tds = []
        for column in columns:
            s = cells.get(column)
            if s is None:
                tds.append("<td></td>")
                continue
            title = "read at " + (readings.point_text(s.axis, s.point)
                                  if s.point is not None else "no point")
            title += f"; {s.reason}" if s.reason else ""
            tds.append(f'<td class="{CLASSES[s.word]}" title="'
                       f'{html.escape(title)}">{html.escape(s.word)}</td>')
        rows.append(f"<tr><td>{html.escape(other)}</td>{''.join(tds)}</tr>")
    counts = collections.Counter(s.word for s in standings)
    summary = ", ".join(f"{counts[w]} {w}" for w in WORDS if counts[w])
    return (f"<p>{summary} (a cell's title says where it was read and, "
            "where inconclusive, the difference its test would have "
            "detected).</p>\n"
            f"<table><tr><th>against</th>{head}</tr>\n"
            + "\n".join(rows) + "</table>")


def curves_svg(exp, runs, methods, new_label, metric):
    """Every method's curve of ``metric`` on the paper's axis."""
    axis = readings.claim_axes(exp, runs)[0][0]
    column = AXIS_COLUMNS[axis]
    curve_sets = [run_curves(select(runs, m), metric, column)
                  for m in methods]
    grid, log_x, log_y = grid_and_scales(curve_sets)
    with matplotlib.rc_context(SVG_RC):
        fig = Figure(figsize=(7.2, 4.4))
        ax = fig.add_subplot()
        for index, (method, curves) in enumerate(zip(methods, curve_sets,
                                                     strict=True)):
            new = method.label == new_label
            color = "black" if new else PALETTE[index % len(PALETTE)]
            q20, median, q80 = band_on_grid(curves, grid, log_x, log_y)
            ax.fill_between(grid, q20, q80, color=color,
                            alpha=0.25 if new else 0.1, linewidth=0)
            ax.plot(grid, median, color=color, linewidth=2.2 if new else 1,
                    label=method.label)
        ax.set_xscale("log" if log_x else "linear")
        ax.set_yscale("log" if log_y else "linear")
        ax.set_xlabel(AXIS_LABELS.get(axis, column))
        ax.set_ylabel(metric)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=6, ncol=2)
        fig.subplots_adjust(left=0.11, right=0.98, bottom=0.11, top=0.97)
        return inline_svg(fig)


def experiment_html(part):
    """One experiment's part: what ran (``notes``: HTML), the verdicts,
    the curves."""
    comparison, runs, methods, standings, notes = part
    exp = comparison.exp
    new_label = methods[-1].label
    figures = "\n".join(
        f"<figure>{curves_svg(exp, runs, methods, new_label, metric)}"
        f"<figcaption>{html.escape(metric)} against {exp.axis}: median "
        "over the repetitions, band q20-q80, the new method in black."
        "</figcaption></figure>" for metric in exp.metrics)
    items = "".join(f"<li>{note}</li>" for note in notes)
    return (f'<h2 id="{exp.name}">{html.escape(exp.paper)}, '
            f"{html.escape(exp.figure)} <code>{exp.name}</code></h2>\n"
            f"<ul>{items}</ul>\n{standings_html(standings)}\n{figures}")


def write(path, solver, parts, commands, intro):
    """The page at ``path``; ``parts``: ``[(comparison, runs, methods,
    standings, notes)]``, the new method last in ``methods``."""
    found = problems([(c, r, m) for c, r, m, *_ in parts])
    listing = "".join(f"<li><code>{html.escape(c)}</code></li>"
                      for c in commands)
    body = (f"<h1>Where {html.escape(solver)} stands</h1>\n"
            f"<p>{html.escape(intro)}</p>\n"
            "<h2>Performance profile</h2>\n<p>Over the compared "
            "experiments' problems (an experiment's dataset): for each "
            "method, the share of its problems on which the median of its "
            "tuning's score at the experiment's table point is at most "
            "tau times the best method's (Dolan and Moré 2002; "
            "benchmark_utils/claims/profile.py).</p>\n"
            f"{profile_html(found, parts[0][2][-1].label)}\n"
            + "\n".join(experiment_html(part) for part in parts)
            + f"\n<h2>Reproduce</h2>\n<ul>{listing}</ul>")
    path.write_text(page(f"{solver}: where it stands", body,
                         f"{STYLE}\n{EXTRA_STYLE}"), encoding="utf-8")
    return path
