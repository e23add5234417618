"""The finished report: what this benchmark does to the pages and figures
benchopt 1.10 writes, after it has written them.

benchopt has no setting for either, and this benchmark replaces none of
its functions: when ``benchopt run`` or ``benchopt plot`` draws the
benchmark's custom plots (each ``plot`` of ``plots/*.py`` first calls
:func:`.plot_helpers.finish_the_report` with its data, hence
:func:`register`), a handler is registered that runs when the command
ends (``atexit``) and finishes the pages or figures of the result files it
plotted (:func:`finish_outputs`). Those files are known from the run, not
guessed: ``benchopt plot``'s is the file benchopt's own
``Benchmark.get_result_files`` gives for its arguments; ``benchopt run``'s
is the result file whose ``run_date`` (the stamp benchopt writes into each
result file) is the plotted data's (:func:`result_files`). The pages follow
from it by benchopt's naming: ``<benchmark>_<result>.html`` and the
benchmark's page ``<benchmark>.html`` (:func:`pages_of`).

- HTML: the pages of the plotted result files (each run's page, and the
  benchmark's page, the index of runs) get their scripts and styles
  inline, so each renders
  offline as one file (:func:`~benchmark_utils.report.offline.inline_assets`,
  docs/report_offline.md); a run's page first gets this benchmark's own
  script and style (:func:`add_view_fixes`: each figure its own scale,
  readable log ticks, the table in scientific notation, the resolved steps
  in the tooltips, the start apart and few markers; docs/report.md), its
  saved views of one application open on that application's dataset
  (:mod:`.views`) and its chart types without data leave its menus, with
  their saved views (:mod:`.empty_views`); the index of runs gets a
  style that fits its table to the page (:func:`add_index_style`);
- ``--no-html``: the run's figures are redrawn into one folder named after
  its result file (``outputs/<run>/``, so the next run no longer
  overwrites them), under file names of letters, digits, ``_`` and ``-``
  only, with the legend outside the axes (the curves of 20 solvers stay
  visible), each solver's marker the one of the HTML
  (:func:`~benchmark_utils.report.styles.matplotlib_markers`), the start
  and the markers drawn as in the HTML (:mod:`.curve_marks`) and no figure
  without data (:mod:`.empty_views`); the copies benchopt wrote next to
  the result file are removed.

Where benchopt's output is not what this expects (a page without its
``</head>`` / ``</body>``, a script still loaded from the network), the
command fails with the reason and exit code 1: the feature never turns
itself off silently (tests/test_report_offline.py runs ``benchopt run``
and ``benchopt plot`` end to end).
"""
import atexit
import math
import os
import re
import sys
import warnings
from pathlib import Path
from urllib.parse import quote

import click

from benchmark_utils.report.curve_marks import thin_markers, with_start_apart
from benchmark_utils.report.empty_views import has_data, without_empty_kinds
from benchmark_utils.report.offline import inline_assets
from benchmark_utils.report.styles import matplotlib_markers
from benchmark_utils.report.views import with_view_datasets

# this benchmark's script and style for a run's page (add_view_fixes)
VIEW_FIXES = Path(__file__).with_name("report_views")
# what marks a run's page: its figures' data
RUN_PAGE = "window._plots"
# what marks a page this module finished (a run's page, the index)
FINISHED = 'data-bilevel="report_views"'
INDEX_FINISHED = 'data-bilevel="report_index"'
# this benchmark's style for the index of runs (add_index_style)
INDEX_STYLE = Path(__file__).with_name("report_index.css")
# what marks the index of runs: its table of runs
INDEX_PAGE = '<table class="summary display" id="summary">'
# the legend's font size, and how many entries one column holds at most
LEGEND_FONTSIZE = 10
LEGEND_ROWS = 18
TABLE_SKIP = "cannot be rendered with matplotlib"
# the commands whose output is finished
COMMANDS = ("run", "plot")


class ReportFinishError(RuntimeError):
    """benchopt's output is not what this module finishes."""


def register(df):
    """In a ``benchopt run`` or ``benchopt plot`` plotting ``df``: finish
    its output when the command ends (one handler per command; nothing
    elsewhere)."""
    context = click.get_current_context(silent=True)
    if context is None or context.command.name not in COMMANDS:
        return
    dates = context.meta.get("bilevel_report_finish")
    if dates is None:
        dates = context.meta["bilevel_report_finish"] = set()
        atexit.register(_finish_command, dict(context.params),
                        context.command.name, dates)
    dates.update(df["run_date"].unique())


def _finish_command(params, command, dates):
    from benchopt.benchmark import Benchmark

    if command == "run" and not params.get("plot", True):
        return
    try:
        benchmark = Benchmark(Path(params["benchmark"]))
        finish_outputs(benchmark, result_files(benchmark, params, command,
                                               dates),
                       html=params.get("html", True))
    # every failure: Python prints an exception raised in an atexit hook,
    # ignores it and exits 0 (a page still loading from the network,
    # offline.OfflineReportError, would pass as finished)
    except Exception as error:  # noqa: BLE001
        print(f"\nThe report could not be finished: {error}",
              file=sys.stderr, flush=True)
        sys.stderr.flush()
        os._exit(1)


def result_files(benchmark, params, command, dates):
    """The result files the command plotted: ``benchopt plot``'s as
    benchopt resolves its arguments; ``benchopt run``'s, the result file
    (in the output folder, or beside an explicit ``--output`` path) whose
    ``run_date`` is one of ``dates``, the plotted data's. ReportFinishError
    where none is."""
    if command == "plot":
        return [Path(f) for f in benchmark.get_result_files(
            params.get("filename"))[:1]]
    folders = {Path(benchmark.get_output_folder())}
    output = str(params.get("output") or "None")
    if os.sep in output or (os.altsep and os.altsep in output):
        folders.add(Path(output).parent)
    found = sorted(path for folder in folders for pattern in (
        "*.parquet", "*.csv") for path in folder.glob(pattern)
        if set(_run_dates(path)) & set(dates))
    if not found:
        raise ReportFinishError(
            f"no result file in {', '.join(map(str, sorted(folders)))} "
            "holds the plotted run (its run_date)")
    return found


def _run_dates(path):
    """The ``run_date`` values of a result file; none where it has no such
    column or cannot be read (benchopt writes the column into every result
    file it saves, so such a file is not the run's, and a damaged file
    beside it does not stop the run's report)."""
    import pandas as pd

    try:
        if path.suffix == ".parquet":
            return pd.read_parquet(path, columns=["run_date"])[
                "run_date"].unique()
        return pd.read_csv(path, usecols=["run_date"])["run_date"].unique()
    except (KeyError, ValueError, OSError):
        return ()


def pages_of(benchmark, results):
    """The pages benchopt writes for ``results``: each result's page
    ``<benchmark>_<result>.html`` and the benchmark's ``<benchmark>.html``
    (benchopt.plotting.generate_html's naming), in its output folder."""
    folder = Path(benchmark.get_output_folder())
    return [folder / quote(f"{benchmark.name}_{Path(r).stem}.html")
            for r in results] + [folder / f"{benchmark.name}.html"]


def finish_outputs(benchmark, results, html=True):
    """Finish the pages (``html``) or the figures of the result files
    ``results`` that benchopt wrote into the benchmark's output folder;
    see the module doc. Returns the files written."""
    folder = Path(benchmark.get_output_folder())
    written = []
    if html:
        for page in pages_of(benchmark, results):
            if not page.is_file():
                raise ReportFinishError(
                    f"benchopt wrote no page {page.name}: benchmark_utils/"
                    "report/finish.py needs an update for this benchopt "
                    "version")
            finish_page(page)
            written.append(page)
        return written
    for result in results:
        written += write_figures(benchmark, result, folder,
                                 remove_copies=True)
    return written


def finish_page(path):
    """Rewrite the page at ``path`` finished (idempotent)."""
    page = path.read_text(encoding="utf-8")
    if FINISHED in page or INDEX_FINISHED in page:
        return
    page = add_index_style(add_view_fixes(page))
    path.write_text(inline_assets(page), encoding="utf-8")


def add_view_fixes(page):
    """A run's page with ``report_views.css`` at the end of its head and
    ``report_views.js`` at the end of its body, after benchopt's
    ``result.js`` (whose functions it changes), without its chart types
    that have no data (:func:`.empty_views.without_empty_kinds`) and its
    views of one application opening on its dataset
    (:func:`.views.with_view_datasets`); other pages as they are."""
    if RUN_PAGE not in page:
        return page
    page = with_view_datasets(without_empty_kinds(page))
    style, script = (VIEW_FIXES.with_suffix(suffix).read_text(encoding="utf-8")
                     for suffix in (".css", ".js"))
    head, body = page.rfind("</head>"), page.rfind("</body>")
    if not 0 <= head < body:
        raise ReportFinishError(
            "a run page without </head> and </body>: benchmark_utils/report/"
            "finish.py needs an update for this benchopt version")
    return (page[:head] + f'<style {FINISHED}>{style}'
            f'</style>\n' + page[head:body]
            + f'<script {FINISHED}>{script}</script>\n'
            + page[body:])


def add_index_style(page):
    """The index of runs (benchopt's page of the benchmark, ``<name>.html``)
    with ``report_index.css`` at the end of its head: its table fits the
    page; other pages as they are."""
    if INDEX_PAGE not in page:
        return page
    head = page.rfind("</head>")
    if head < 0:
        raise ReportFinishError(
            "an index page without </head>: benchmark_utils/report/"
            "finish.py needs an update for this benchopt version")
    style = INDEX_STYLE.read_text(encoding="utf-8")
    return (page[:head] + f"<style {INDEX_FINISHED}>{style}</style>\n"
            + page[head:])


def file_name(text):
    """``text`` in letters, digits, ``_`` and ``-`` only (a bracket or
    comma separates, ``=`` reads ``-``, a dot ``p``): ``toy[mu=1,r=0.5]``
    -> ``toy_mu-1_r-0p5``."""
    text = text.replace("=", "-").replace(".", "p")
    text = re.sub(r"[^A-Za-z0-9_-]+", "_", text)
    return re.sub(r"_{2,}", "_", text).strip("_-") or "figure"


def write_figures(benchmark, result, output_dir, remove_copies=False):
    """The ``--no-html`` figures of the result file ``result``, saved as
    ``output_dir / <run> / <figure>.pdf`` (module doc); with
    ``remove_copies``, the copies benchopt just wrote of them in
    ``output_dir`` (its ``<figure key>.pdf``) are removed. Returns the
    paths written."""
    from benchopt.plotting.helpers import update_plot_data_style
    from benchopt.results import read_results

    df = read_results(result)
    kinds = benchmark.get_plot_config()["plots"]
    folder = Path(output_dir) / file_name(Path(result).stem)
    folder.mkdir(parents=True, exist_ok=True)
    plot_data, _ = benchmark.get_plot_data(df, kinds)
    # the markers of the HTML, as matplotlib draws them
    plot_data = update_plot_data_style(matplotlib_markers(plot_data),
                                       plotly=False)
    names, written = set(), []
    for plot_name, figures in plot_data.items():
        if plot_name not in kinds:
            continue
        for key, data in figures.items():
            if remove_copies:
                # benchopt.plotting.generate_matplotlib's file name
                (Path(output_dir) / f"{key}").with_suffix(".pdf").unlink(
                    missing_ok=True)
            if not has_data(data):
                continue
            fig = _draw(key, with_start_apart(data))
            if fig is None:
                continue
            thin_markers(fig)
            legend_outside(fig)
            name = file_name(key)
            name = next(f"{name}-{i}" if i else name for i in range(1000)
                        if (f"{name}-{i}" if i else name) not in names)
            names.add(name)
            path = folder / f"{name}.pdf"
            fig.savefig(path, bbox_inches="tight")
            _close(fig)
            written.append(path)
    print(f"Figures of {Path(result).name} in: {folder}")
    return written


def _close(fig):
    import matplotlib.pyplot as plt
    plt.close(fig)


def _draw(key, data):
    """The matplotlib figure benchopt draws for one figure's data (None
    for a table, with benchopt's warning)."""
    from benchopt.plotting import generate_matplotlib as mpl

    draw = {"scatter": mpl.get_plot_scatter,
            "bar_chart": mpl.get_plot_barchart,
            "boxplot": mpl.get_plot_boxplot,
            "image": mpl.get_plot_image}.get(data["type"])
    if data["type"] == "table":
        warnings.warn(f"Plot '{key}' (type 'table') {TABLE_SKIP}; "
                      "skipping.", UserWarning, stacklevel=3)
        return None
    if draw is None:
        raise ReportFinishError(
            f"Plot type {data['type']} not implemented for matplotlib.")
    return draw(data)


def legend_outside(fig):
    """Move each axis' legend to the right of its axes (upper left corner
    at the axes' upper right), in columns of at most
    :data:`LEGEND_ROWS` entries, and widen the figure by its width."""
    for ax in fig.axes:
        legend = ax.get_legend()
        if legend is None:
            continue
        handles = legend.legend_handles
        labels = [text.get_text() for text in legend.get_texts()]
        legend.remove()
        legend = ax.legend(handles, labels, loc="upper left",
                           bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0,
                           fontsize=LEGEND_FONTSIZE, frameon=False,
                           ncol=math.ceil(len(labels) / LEGEND_ROWS))
        fig.canvas.draw()
        box = legend.get_window_extent()
        width, height = fig.get_size_inches()
        fig.set_size_inches(width + box.width / fig.dpi + 0.2,
                            max(height, box.height / fig.dpi + 0.5))
    fig.tight_layout()
