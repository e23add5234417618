"""This benchmark's changes to how benchopt 1.10 writes its report.

benchopt has no setting for either, so :func:`install` replaces a few of
its plotting functions. It runs when benchopt loads the benchmark's
custom plots (``plots/*.py`` import :mod:`.plot_helpers`, which calls it),
which ``benchopt run`` and ``benchopt plot`` do before writing anything:

- HTML: every page benchopt renders (a run's page, the benchmark's page
  and the index of ``benchopt plot --all``) goes through
  :func:`~benchmark_utils.report.offline.inline_assets`, so it carries its
  scripts and styles and renders offline, as one file
  (docs/report_offline.md); a run's page first gets this benchmark's own
  script and style (:func:`add_view_fixes`: each figure shows its own
  scale whatever was clicked before, readable ticks on short log axes,
  the table in scientific notation with full headers, every view tab in
  sight; docs/report.md);
- ``--no-html``: :func:`get_figures` writes the figures of a run into one
  folder named after its result file (``outputs/<run>/``; the next run no
  longer overwrites them), under file names of letters, digits, ``_``
  and ``-`` only, with the legend outside the axes, to the right of a
  widened figure (the curves of 20 solvers stay visible).
"""
import functools
import math
import re
import warnings
from pathlib import Path

from benchmark_utils.report.offline import inline_assets

# this benchmark's script and style for a run's page (add_view_fixes)
VIEW_FIXES = Path(__file__).with_name("report_views")
# what marks a run's page: its figures' data
RUN_PAGE = "window._plots"
# where the run's name travels from benchopt's read_results to get_figures
RUN_NAME = "benchopt_run_name"
# the legend's font size, and how many entries one column holds at most
LEGEND_FONTSIZE = 10
LEGEND_ROWS = 18
TABLE_SKIP = "cannot be rendered with matplotlib"


def install():
    """Route benchopt's report writers through this module (idempotent)."""
    from benchopt import plotting
    from benchopt.plotting import generate_html

    if getattr(plotting, "_bilevel_report_hooks", False):
        return
    for name in ("render_all_results", "render_benchmark", "render_index",
                 "read_results", "get_figures"):
        module = generate_html if name.startswith("render") else plotting
        if not callable(getattr(module, name, None)):
            raise RuntimeError(
                f"benchopt's {module.__name__}.{name} is gone: "
                "benchmark_utils/report/hooks.py needs an update for this "
                "benchopt version (requirements.txt pins benchopt 1.10.0)")
    generate_html.render_all_results = _offline(
        generate_html.render_all_results, many=True)
    generate_html.render_benchmark = _offline(generate_html.render_benchmark)
    generate_html.render_index = _offline(generate_html.render_index)
    plotting.read_results = _named_run(plotting.read_results)
    plotting.get_figures = get_figures
    plotting._bilevel_report_hooks = True


def _offline(render, many=False):
    @functools.wraps(render)
    def offline_render(*args, **kwargs):
        pages = render(*args, **kwargs)
        if many:
            return [inline_assets(add_view_fixes(page)) for page in pages]
        return inline_assets(pages)
    return offline_render


def add_view_fixes(page):
    """A run's page with ``report_views.css`` at the end of its head and
    ``report_views.js`` at the end of its body, after benchopt's
    ``result.js`` (whose functions it changes); other pages as they are."""
    if RUN_PAGE not in page:
        return page
    style, script = (VIEW_FIXES.with_suffix(suffix).read_text(encoding="utf-8")
                     for suffix in (".css", ".js"))
    head, body = page.rfind("</head>"), page.rfind("</body>")
    if not 0 <= head < body:
        raise RuntimeError("a run page without </head> and </body>: "
                           "benchmark_utils/report/hooks.py needs an update "
                           "for this benchopt version")
    return (page[:head] + f'<style data-bilevel="report_views">{style}'
            f'</style>\n' + page[head:body]
            + f'<script data-bilevel="report_views">{script}</script>\n'
            + page[body:])


def _named_run(read_results):
    """benchopt's ``read_results``, with the result file's stem stored in
    the frame's ``attrs`` for :func:`get_figures`."""
    @functools.wraps(read_results)
    def read_named_results(fname, *args, **kwargs):
        df = read_results(fname, *args, **kwargs)
        df.attrs[RUN_NAME] = Path(fname).stem
        return df
    return read_named_results


def file_name(text):
    """``text`` in letters, digits, ``_`` and ``-`` only (a bracket or
    comma separates, ``=`` reads ``-``, a dot ``p``): ``toy[mu=1,r=0.5]``
    -> ``toy_mu-1_r-0p5``."""
    text = text.replace("=", "-").replace(".", "p")
    text = re.sub(r"[^A-Za-z0-9_-]+", "_", text)
    return re.sub(r"_{2,}", "_", text).strip("_-") or "figure"


def get_figures(benchmark, df, output_dir, kinds):
    """benchopt's ``--no-html`` figures (its ``get_figures``), saved as
    ``output_dir / <run> / <figure>.pdf`` (see the module docstring; a
    frame not read by benchopt's ``read_results`` has no run name and its
    figures go into ``output_dir``)."""
    from benchopt.plotting.helpers import update_plot_data_style

    run = df.attrs.get(RUN_NAME)
    folder = Path(output_dir) / file_name(run) if run else Path(output_dir)
    folder.mkdir(parents=True, exist_ok=True)
    plot_data, _ = benchmark.get_plot_data(df, kinds)
    plot_data = update_plot_data_style(plot_data, plotly=False)
    names = set()
    figs = []
    for plot_name, figures in plot_data.items():
        if plot_name not in kinds:
            continue
        kind_figs = []
        for key, data in figures.items():
            fig = _draw(key, data)
            if fig is None:
                continue
            legend_outside(fig)
            name = file_name(key)
            name = next(f"{name}-{i}" if i else name for i in range(1000)
                        if (f"{name}-{i}" if i else name) not in names)
            names.add(name)
            path = folder / f"{name}.pdf"
            fig.savefig(path, bbox_inches="tight")
            print(f"Save {key} as: {path}")
            kind_figs.append(fig)
        figs.append(kind_figs)
    return figs


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
        raise NotImplementedError(
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
