"""Views that never mislead (issue 23, item 4): the figures' data.

Synthetic result frames (no solver runs) go through benchopt's own
``get_plot_data`` and the checks read the figures the HTML would draw:
every count axis starts at 1 with the value at the start, each figure's
scale comes from its data (task errors over decades on a log axis, rates
linear) and no view of config.yml imposes one, up to 30 solvers get
distinct colours and markers, the same in every figure and in the HTML
and the ``--no-html`` PDFs alike, and the table
prints numbers in scientific notation. What only a browser shows (the
axes after clicks in another order, tick labels, full headers, every view
tab in sight) is checked by tools/check_report_offline.py, run by
tests/test_report_offline.py where Chromium is found.
"""
import re
from pathlib import Path

import benchopt
import matplotlib
import numpy as np
import pandas as pd
import pytest
import yaml
from benchopt.plotting.helpers import update_plot_data_style

from benchmark_utils.report import finish
from benchmark_utils.report.families import TASK, X_AXES
from benchmark_utils.report.plot_helpers import (
    SIGNIFICANT,
    WHOLE,
    scale_of,
    solver_styles,
    table_number,
)
from benchmark_utils.report.styles import MARKERS, PALETTE

from conftest import ROOT, benchmark

CONFIG = yaml.safe_load((ROOT / "config.yml").read_text())
SIMPLE_DATASET = "regression[n_samples=150]"
GENERAL_DATASET = "quadratic[dim_x=2,dim_y=2]"
# SBCGI's warm start: 10^4 samples before its first iteration
WARM_START = 10_000
SCIENTIFIC = re.compile(r"-?\d\.\d{%d}e[+-]\d\d" % (SIGNIFICANT - 1))
# plotly's marker symbols by number, as benchopt's page draws its legends
SYMBOLS = dict((int(n), name) for name, n in re.findall(
    r"'?([a-z0-9-]+)'?: \{\s*n: (\d+),", (
        Path(benchopt.__file__).parent / "plotting" / "html" / "static"
        / "symbols.js").read_text()))
# the matplotlib marker of each plotly symbol's shape (filled)
SAME_SHAPE = {"circle": "o", "square": "s", "diamond": "D", "cross": "P",
              "x": "X", "triangle-up": "^", "triangle-down": "v",
              "triangle-left": "<", "triangle-right": ">",
              "pentagon": "p", "hexagon": "h", "hexagon2": "H",
              "octagon": "8", "star": "*"}


def simple_run(task_values=(117.0, 2.1, 0.3, 0.004)):
    """Two simple-family solvers, two repetitions: SBCGI pays a warm start
    of :data:`WARM_START` samples (its lower gap falls from 9.1 to 0.02),
    SDBGD starts at once; the task metric (test error) takes
    ``task_values``."""
    rows = []
    for solver, first in (("SBCGI", WARM_START), ("SDBGD", 0)):
        for rep in range(2):
            for it, task in enumerate(task_values):
                samples = 0 if it == 0 else first + 100 * it
                rows.append({
                    "dataset_name": SIMPLE_DATASET,
                    "objective_name": "Bilevel", "solver_name": solver,
                    "idx_rep": rep, "stop_val": it,
                    "time": 1e-5 + 0.1 * it,
                    "objective_lower_gap": 9.1 if it == 0 else 0.02 / it,
                    "objective_upper_gap_abs": 3.0 / (1 + it),
                    "objective_test_error": task,
                    "objective_inner_tolerance": 1e-12,
                    "objective_n_samples_upper": samples // 2,
                    "objective_n_samples_lower": samples - samples // 2,
                    "objective_n_grad_evals": samples,
                    "objective_n_lmo": it, "objective_diverged": 0.0})
    return pd.DataFrame(rows)


def figures(frame, kinds):
    return benchmark().get_plot_data(frame, kinds)[0]


def curves(figure):
    return {curve["label"]: curve for curve in figure["data"]}


def test_every_count_axis_starts_at_one_with_the_value_at_the_start():
    frame = simple_run()
    by_kind = figures(frame, ["simple_curve", "task_curve"])
    count_axes = [name for name, axis in X_AXES.items() if axis.offset]
    assert set(count_axes) == {"samples", "grad_evals", "lmo_calls", "hvp",
                               "iterations"}
    checked = 0
    for kind_figures in by_kind.values():
        for key, figure in kind_figures.items():
            [axis] = [name for name in X_AXES if key.endswith(f"_{name}")]
            if axis == "time":
                assert figure["xlabel"] == "time (s)"
                # the start is timed: positive, on a log axis too
                assert all(c["x"][0] > 0 for c in figure["data"]), key
                continue
            assert figure["xlabel"].endswith(" + 1"), key
            for curve in figure["data"]:
                assert curve["x"][0] == 1.0, key
                checked += 1
    assert checked >= 6
    # SBCGI is drawn from its value at the start, 10^4 samples before its
    # first iteration, not flat at its first measured value
    samples = by_kind["simple_curve"][
        "simple_curve_regression_Bilevel_lower_gap_samples"]
    assert samples["scale"] == "loglog"
    sbcgi = curves(samples)["SBCGI"]
    assert sbcgi["x"][:2] == [1.0, WARM_START + 100 + 1.0]
    assert sbcgi["y"][:2] == pytest.approx([9.1, 0.02])


def test_scale_comes_from_each_figures_data_and_no_view_sets_one():
    for name, view in CONFIG["plot_configs"].items():
        assert "scale" not in view, name
        if view["plot_kind"] != "final_values":
            # a view resets what would change its axes
            assert view["suboptimal_curve"] is False, name
            assert view["relative_curve"] is False, name
            assert view["hidden_curves"] == [], name
    # counts from 1 (the start) to 10^4: a log x-axis
    counts = {"x": [1, 11, 1e4 + 1], "y": [9.1, 1e-2, 1e-4]}
    assert scale_of([counts], log_y=True) == "loglog"
    assert scale_of([counts], log_y=False) == "semilog-x"
    # a zero (an x the start would sit at) or a negative value: linear
    assert scale_of([{"x": [0, 10, 1e4], "y": [1, 2, 3]}], True) == "linear"
    assert scale_of([{"x": [1, 2, 3], "y": [1.0, -1e-3, 1e-4]}],
                    True) == "linear"
    # less than a decade on y: linear, where a log axis shows one label
    assert scale_of([{"x": [1, 1e3], "y": [0.3, 0.9]}], True) == "semilog-x"
    assert scale_of([{"x": [], "y": []}], log_y=True) == "linear"


@pytest.mark.parametrize("values, column, scale", [
    # regression's test error, 117 at the start then 2.1 to 0.004
    ((117.0, 2.1, 0.3, 0.004), "objective_test_error", "loglog"),
    # an error within a decade
    ((0.5, 0.3, 0.2, 0.1), "objective_test_error", "semilog-x"),
    # accuracies and rates stay linear, even over decades
    ((0.01, 0.3, 0.6, 0.9), "objective_test_accuracy", "semilog-x"),
])
def test_task_metric_axis_is_logarithmic_for_errors_over_decades(
        values, column, scale):
    frame = simple_run(values).rename(columns={"objective_test_error":
                                               column})
    [figure] = [figure for key, figure in figures(
        frame, ["task_curve"])["task_curve"].items()
        if key.endswith("_samples")]
    assert figure["ylabel"] == column.replace("objective_", "")
    assert figure["scale"] == scale
    assert TASK.log_y(column) == (column != "objective_test_accuracy")


def test_thirty_solvers_get_thirty_colours_and_markers_in_every_figure():
    # AID-FP and Without-BO shared a colour: benchopt's 20 colours, given
    # in order of first drawing over all figures
    names = ["AID-FP", "Without-BO", *(f"S{i:02d}" for i in range(28))]
    frame = pd.DataFrame({"solver_name": names})
    styles = solver_styles(frame)
    assert len(styles) == 30
    colors = [style["color"] for style in styles.values()]
    assert len(set(colors)) == 30
    assert styles["AID-FP"]["color"] != styles["Without-BO"]["color"]
    # neighbours (in the order colours are handed out) differ in marker
    ordered = [styles[label] for label in sorted(styles)]
    assert all(a["marker"] != b["marker"]
               for a, b in zip(ordered, ordered[1:], strict=False))
    # the colours are far apart (CIE76 distance in CIELAB)
    lab = _lab(np.array([[int(c[i:i + 2], 16) / 255 for i in (1, 3, 5)]
                         for c in PALETTE]))
    distance = np.linalg.norm(lab[:, None] - lab[None], axis=-1)
    np.fill_diagonal(distance, np.inf)
    assert distance.min() > 27
    # every solver of the benchmark has its own colour
    everyone = solver_styles(pd.DataFrame(
        {"solver_name": [s.name for s in benchmark().get_solvers()]}))
    assert len({style["color"] for style in everyone.values()}) == len(
        everyone) == len(benchmark().get_solvers())
    # the markers are distinct shapes, each drawn by both renderers
    shapes = [SYMBOLS[m] for m in MARKERS]
    assert len(set(shapes)) == len(MARKERS)
    assert set(shapes) <= set(SAME_SHAPE)
    # past 30, a colour comes back with another marker
    many = solver_styles(pd.DataFrame({"solver_name": [
        f"S{i:03d}" for i in range(90)]}))
    pairs = {(s["color"], s["marker"]) for s in many.values()}
    assert len(pairs) == 90


def test_a_solver_has_one_style_in_every_figure():
    frame = simple_run()
    general = frame.assign(dataset_name=GENERAL_DATASET,
                           solver_name=frame["solver_name"].map(
                               {"SBCGI": "SOBA", "SDBGD": "AID-FP"}))
    general = general.rename(columns={
        "objective_lower_gap": "objective_hypergrad_norm",
        "objective_n_lmo": "objective_n_hvp",
        "objective_test_error": "objective_inner_distance"})
    both = pd.concat([frame, general], ignore_index=True)
    styles = solver_styles(both)
    seen = {}
    for kind_figures in figures(both, ["simple_curve", "general_curve",
                                       "gap_tradeoff"]).values():
        for figure in kind_figures.values():
            for curve in figure["data"]:
                style = (curve["color"], curve["marker"])
                assert seen.setdefault(curve["label"], style) == style
    assert {label: (s["color"], s["marker"]) for label, s
            in styles.items()} == seen
    assert len(set(seen.values())) == 4


def test_the_pdfs_draw_each_solver_with_the_marker_and_colour_of_the_html(
        tmp_path, monkeypatch):
    """Twelve solvers (every marker shape): each curve of the ``--no-html``
    figures (finish.write_figures) has the colour and the marker shape of
    the same solver in the HTML (benchopt's data for plotly)."""
    frame = simple_run()
    frame = pd.concat([frame.assign(solver_name=frame["solver_name"] + f"-{i}")
                       for i in range(6)], ignore_index=True)
    result = tmp_path / "run.parquet"
    frame.to_parquet(result)
    kinds = ["simple_curve", "gap_tradeoff"]
    html = update_plot_data_style(figures(frame, kinds))
    in_html = {curve["label"]: (curve["color"], curve["marker"])
               for kind_figures in html.values()
               for figure in kind_figures.values()
               for curve in figure["data"]}
    assert len(in_html) == 12
    assert {marker for _, marker in in_html.values()} == set(MARKERS)
    drawn = []
    bench = benchmark()
    monkeypatch.setattr(bench, "get_plot_config", lambda: {"plots": kinds})
    monkeypatch.setattr(finish, "_close", drawn.append)
    try:
        finish.write_figures(bench, result, tmp_path)
        lines = [line for fig in drawn for ax in fig.axes
                 for line in ax.get_lines()
                 if not line.get_label().startswith("_")]
        assert len(drawn) > 10 and len(lines) >= 12 * len(drawn)
        for line in lines:
            color, symbol = in_html[line.get_label()]
            assert line.get_marker() == SAME_SHAPE[SYMBOLS[symbol]], (
                line.get_label(), SYMBOLS[symbol], line.get_marker())
            rgb = [float(v) for v in color[5:-1].split(",")[:3]]
            np.testing.assert_allclose(
                np.array(matplotlib.colors.to_rgb(line.get_color())) * 255,
                rgb, atol=1)
    finally:
        matplotlib.pyplot.close("all")


def test_table_numbers_in_scientific_notation_and_headers_in_full():
    assert table_number(0.0611) == "6.11e-02"
    assert table_number(1e-12) == "1.00e-12"
    assert table_number(316.0) == "316"
    assert table_number(100063) == "1.00e+05"
    assert table_number(float("nan")) == "nan"
    [table] = figures(simple_run(), ["final_values"])["final_values"].values()
    columns = table["columns"]
    # full names: the metric's name with its spread, nothing cut
    assert {"inner_tolerance", "inner_tolerance q20-q80", "lower_gap",
            "upper_gap_abs q20-q80", "n_samples_upper"} <= set(columns)
    for row in table["data"]:
        cells = dict(zip(columns, row, strict=True))
        assert cells["inner_tolerance q20-q80"] == "[1.00e-12, 1.00e-12]"
        for name, cell in cells.items():
            if name.endswith("q20-q80"):
                low, high = cell.strip("[]").split(", ")
                assert all(SCIENTIFIC.fullmatch(v) or v.isdigit()
                           for v in (low, high)), (name, cell)


def test_the_page_script_formats_as_python_does():
    script = (ROOT / "benchmark_utils" / "report"
              / "report_views.js").read_text()
    assert f"tableFloatPrecision = {SIGNIFICANT};" in script
    assert f"const WHOLE = {WHOLE:.0e}".replace("e+0", "e") in script
    assert "</script" not in script and "<!--" not in script


def test_only_a_run_page_gets_the_view_fixes():
    page = ('<html><head><style>x{}</style></head><body><script>'
            'window._plots = {};\nwindow.metadata = {"plot_configs": {}};'
            '</script><script>/* result.js */</script>'
            '</body></html>')
    fixed = finish.add_view_fixes(page)
    assert fixed.index('<style data-bilevel="report_views">') < fixed.index(
        "</head>")
    # after benchopt's result.js, whose functions it changes
    assert (fixed.index("/* result.js */")
            < fixed.index('<script data-bilevel="report_views">')
            < fixed.index("</body>"))
    other = "<html><head></head><body>runs</body></html>"
    assert finish.add_view_fixes(other) == other


def _lab(rgb):
    """sRGB in [0, 1] -> CIELAB (D65)."""
    linear = np.where(rgb <= 0.04045, rgb / 12.92,
                      ((rgb + 0.055) / 1.055) ** 2.4)
    xyz = linear @ np.array([[0.4124, 0.3576, 0.1805],
                             [0.2126, 0.7152, 0.0722],
                             [0.0193, 0.1192, 0.9505]]).T
    xyz /= np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz),
                 xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.stack([116 * f[:, 1] - 16, 500 * (f[:, 0] - f[:, 1]),
                     200 * (f[:, 1] - f[:, 2])], axis=-1)
