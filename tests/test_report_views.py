"""Views that never mislead (issue 23, item 4; issue 43, item 12): the
figures' data.

Synthetic result frames (no solver runs) go through benchopt's own
``get_plot_data`` and the checks read the figures the HTML would draw:
every count axis starts at 1 with the value at the start, each figure's
scale comes from its data (task errors over decades on a log axis, rates
linear) and no view of config.yml imposes one, a y-axis names the metric
of its menu, up to 30 solvers get distinct colours and markers, the same
in every figure and in the HTML and the ``--no-html`` PDFs alike, the
curves of one figure (the benchmark's 24 general solvers) colours far
apart, on a log x-axis the start is a marker apart from the rest of its
curve and a curve has few markers, spread along x, in the PDFs and in the
page's script (run in Node.js where it is found), and the table
prints numbers in scientific notation. What only a browser shows (the
axes after clicks in another order, tick labels, full headers, every view
tab in sight) is checked by tools/check_report_offline.py, run by
tests/test_report_offline.py where Chromium is found.
"""
import json
import re
import shutil
import subprocess
from pathlib import Path

import benchopt
import matplotlib
import numpy as np
import pandas as pd
import pytest
import yaml
from benchopt.plotting.helpers import update_plot_data_style

from benchmark_utils.report import finish
from benchmark_utils.report.curve_marks import (
    MARKER_BINS,
    START_APART,
    marked,
)
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
# the least CIEDE2000 distance between two curves' colours of one figure
# (styles.PALETTE: its first 24 colours are 19.0 apart or more)
MIN_DELTA_E = 19
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


def stacked_run(n_stacked=40):
    """One repetition of two simple-family solvers: SBCGI evaluates
    ``n_stacked`` times within 1 % of its warm start's :data:`WARM_START`
    samples (as SBCGI and SBCGF on dictionary learning), SDBGD every 300
    samples; both make one LMO call per iteration."""
    rows = []
    for solver, first, step in (("SBCGI", WARM_START, 2), ("SDBGD", 0, 300)):
        for it in range(n_stacked + 1):
            samples = 0 if it == 0 else first + step * it
            rows.append({
                "dataset_name": SIMPLE_DATASET, "objective_name": "Bilevel",
                "solver_name": solver, "idx_rep": 0, "stop_val": it,
                "time": 1e-5 + 0.01 * it,
                "objective_lower_gap": 9.1 / (1 + it) ** 2,
                "objective_upper_gap_abs": 3.0 / (1 + it),
                "objective_n_samples_upper": samples // 2,
                "objective_n_samples_lower": samples - samples // 2,
                "objective_n_grad_evals": samples, "objective_n_lmo": it,
                "objective_diverged": 0.0})
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
    # the metric of the menu, and the column that plays it here
    assert figure["ylabel"] == "task_metric: " + column.replace(
        "objective_", "")
    assert figure["scale"] == scale
    assert TASK.log_y(column) == (column != "objective_test_accuracy")


def test_a_y_label_names_the_metric_its_menu_shows():
    """Where no F* is known (data hyper-cleaning) the general family's
    upper_gap is the value F(x): the menu says upper_gap, the axis said
    value. Every curve's y-axis now names its menu's metric, and the
    column that plays it where its name differs."""
    frame = _rename_general(simple_run(), upper="objective_value")
    by_kind = figures(frame, ["general_curve", "task_curve"])
    labels = {}
    for kind_figures in by_kind.values():
        for key, figure in kind_figures.items():
            [axis] = [name for name in X_AXES if key.endswith(f"_{name}")]
            metric = key.removesuffix(f"_{axis}").split("_Bilevel_")[1]
            assert figure["ylabel"].split(": ")[0] == metric, key
            labels[metric] = figure["ylabel"]
    assert labels["upper_gap"] == "upper_gap: value"
    assert labels["inner_distance"] == "inner_distance"
    assert labels["stationarity"] == "stationarity: hypergrad_norm"


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
    # the colours are far apart (CIEDE2000), the first ones the most
    assert _closest(PALETTE[:24]) > MIN_DELTA_E
    assert _closest(PALETTE) > 16.5
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


def test_every_solver_in_a_figure_gets_a_distinct_colour():
    """A plain run: the benchmark's 24 general solvers share the figures
    of a general dataset, its 7 simple ones those of a simple dataset. In
    every figure any two curves' colours are at least MIN_DELTA_E apart
    (CIEDE2000): MRBO, VR-BiAdam and VRBO read as three alike magentas
    (11.5 apart), the closest pair of the run's colours 8.5 apart."""
    solvers = benchmark().get_solvers()
    names = {family: [s.name for s in solvers if s.family == family]
             for family in ("general", "simple")}
    assert len(names["general"]) >= 21
    # every solver runs as SDBGD does (AID-FP in the general run)
    runs = {"simple": simple_run().query("solver_name == 'SDBGD'"),
            "general": _rename_general(simple_run()).query(
                "solver_name == 'AID-FP'")}
    frame = pd.concat([runs[family].assign(solver_name=name)
                       for family, family_names in names.items()
                       for name in family_names], ignore_index=True)
    checked = 0
    for kind_figures in figures(frame, ["simple_curve", "general_curve",
                                        "task_curve"]).values():
        for key, figure in kind_figures.items():
            colors = [curve["color"] for curve in figure["data"]]
            assert len(colors) == len(set(colors)), key
            assert _closest(colors) > MIN_DELTA_E, key
            checked += len(colors) >= 21
    assert checked >= 5
    styles = solver_styles(frame)
    magentas = [styles[name]["color"] for name in ("MRBO", "VR-BiAdam",
                                                   "VRBO")]
    assert _closest(magentas) > MIN_DELTA_E


def _rename_general(frame, upper="objective_upper_gap_abs"):
    """``frame`` (:func:`simple_run`) as a general-family run: SBCGI is
    SOBA, SDBGD is AID-FP, the gaps and counts those of the family, the
    upper-level metric named ``upper``."""
    general = frame.assign(dataset_name=GENERAL_DATASET,
                           solver_name=frame["solver_name"].map(
                               {"SBCGI": "SOBA", "SDBGD": "AID-FP"}))
    return general.rename(columns={
        "objective_lower_gap": "objective_hypergrad_norm",
        "objective_upper_gap_abs": upper,
        "objective_n_lmo": "objective_n_hvp",
        "objective_test_error": "objective_inner_distance"})


def test_a_solver_has_one_style_in_every_figure():
    frame = simple_run()
    general = _rename_general(frame)
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


def test_the_pdfs_draw_the_start_apart_on_a_log_axis_and_few_markers(
        tmp_path, monkeypatch):
    """On a log x-axis (samples + 1, from 1 to 10^4) the segment from the
    start to the first evaluation read as data: the start is a marker of
    its own (a gap after it) and the band starts at the first evaluation;
    a linear x-axis (LMO calls + 1, 1 to 41) and the trade-off of the two
    gaps (measured both) keep the segment. SBCGI's 40 evaluations within
    1 % of 10^4 samples stacked 40 markers: each curve now has at most
    MARKER_BINS, spread along x."""
    result = tmp_path / "run.parquet"
    stacked_run().to_parquet(result)
    bench = benchmark()
    monkeypatch.setattr(bench, "get_plot_config", lambda: {
        "plots": ["simple_curve", "gap_tradeoff"]})
    drawn = []
    monkeypatch.setattr(finish, "_close", drawn.append)
    try:
        written = finish.write_figures(bench, result, tmp_path)
        axes = {path.stem: fig.axes[0]
                for path, fig in zip(written, drawn, strict=True)}
        log = axes["simple_curve_regression_Bilevel_lower_gap_samples"]
        assert log.get_xscale() == "log"
        sbcgi = _line(log, "SBCGI")
        x = sbcgi.get_xdata()
        assert x[0] == 1.0 and np.isnan(x[1])
        assert x[2] == WARM_START + 2 + 1.0
        marked = sbcgi.get_markevery()
        assert 0 in marked and len(marked) <= MARKER_BINS
        # one or two markers on the 40 evaluations of the stack
        assert len([i for i in marked if i >= 2]) <= 2
        assert len(_line(log, "SDBGD").get_markevery()) <= MARKER_BINS
        # no band reaches back to the start
        assert all(path.vertices[:, 0][np.isfinite(path.vertices[:, 0])]
                   .min() > 1.0 for band in log.collections
                   for path in band.get_paths())
        linear = axes["simple_curve_regression_Bilevel_lower_gap_lmo_calls"]
        assert linear.get_xscale() == "linear"
        assert list(_line(linear, "SBCGI").get_xdata()[:2]) == [1.0, 2.0]
        tradeoff = axes["gap_tradeoff_regression_Bilevel"]
        assert not np.isnan(_line(tradeoff, "SBCGI").get_xdata()).any()
    finally:
        matplotlib.pyplot.close("all")


def _line(ax, label):
    [line] = [line for line in ax.get_lines() if line.get_label() == label]
    return line


def test_marked_points_are_the_first_of_each_part_of_the_x_range():
    # a start, a stack of 20 points within 1 % of 4 decades, a spread tail
    positions = [0.0, *np.linspace(4.0, 4.004, 20), 4.5, 5.0]
    assert marked(positions, bins=12) == [0, 1, 21, 22]
    assert marked([2.0, 2.0, 2.0]) == [0]
    assert marked([0.0, None, float("nan"), 1.0], bins=4) == [0, 3]
    assert marked([]) == []
    # on the figure's range, not the curve's
    assert marked([5.0, 5.1, 5.2], bins=10, low=0.0, high=10.0) == [0]


MARKS_HARNESS = r"""
const vm = require("vm");
const {scripts, figure, scales} = JSON.parse(
  require("fs").readFileSync(process.argv[2], "utf8"));
const element = () => ({style: {}, addEventListener() {}, appendChild() {},
                        classList: {add() {}, remove() {}}});
const drawn = [];
const Plotly = {
  react: (gd, data, layout) => {
    drawn.push({scale: layout.xaxis.type, data});
    return Promise.resolve(gd); },
  relayout: () => Promise.resolve(), purge() {},
  Plots: {resize: () => Promise.resolve()},
};
const context = {Plotly, console, gridjs: {Grid: function () {}},
  screen: {availHeight: 1000}, addEventListener() {},
  document: {getElementById: element, addEventListener() {},
             querySelector: element, querySelectorAll: () => []},
  setTimeout: (fn) => { fn(); return 0; }, clearTimeout() {}};
context.window = context;
vm.createContext(context);
scripts.forEach((code) => vm.runInContext(code, context));
context._plots = {simple_curve: {simple_curve: figure}};
(async () => {
  for (const scale of scales) {
    context._state = {plot_kind: "simple_curve", scale,
      with_quantiles: true, suboptimal_curve: false, relative_curve: false,
      hidden_curves: []};
    await vm.runInContext("Plotly.react({on() {}, removeListener() {}}, " +
      "getScatterData(), getScatterChartLayout())", context);
  }
  console.log(JSON.stringify(drawn));
})();
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="no Node.js")
def test_the_page_draws_the_start_apart_on_a_log_axis_and_few_markers(
        tmp_path):
    """The HTML draws as the PDFs: benchopt's own traces of a figure
    (result.js' getScatterData), through this benchmark's script, on the
    log x-axis of the figure's data and on a linear one (the Scale menu)."""
    figure = figures(stacked_run(), ["simple_curve"])["simple_curve"][
        "simple_curve_regression_Bilevel_lower_gap_samples"]
    static = Path(benchopt.__file__).parent / "plotting" / "html" / "static"
    scripts = [(static / "result.js").read_text(),
               (ROOT / "benchmark_utils" / "report"
                / "report_views.js").read_text()]
    task = tmp_path / "marks.json"
    task.write_text(json.dumps({"scripts": scripts, "figure": figure,
                                "scales": ["loglog", "linear"]}))
    harness = tmp_path / "marks.cjs"
    harness.write_text(MARKS_HARNESS)
    done = subprocess.run(["node", str(harness), str(task)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    log, linear = json.loads(done.stdout)
    assert (log["scale"], linear["scale"]) == ("log", "linear")
    first = WARM_START + 2 + 1.0
    for drawn in (log, linear):
        curve, low, high = [trace for trace in drawn["data"]
                            if trace["legendgroup"] == "SBCGI"]
        assert curve["mode"] == "lines+markers"
        # benchopt gives every point a marker of size 10
        sizes = curve["marker"]["size"]
        sizes = sizes if isinstance(sizes, list) else [sizes] * len(
            curve["x"])
        assert len(sizes) == len(curve["x"])
        shown = [i for i, size in enumerate(sizes) if size]
        assert shown[0] == 0 and len(shown) <= MARKER_BINS
        # the stack: one or two markers
        assert len([i for i, x in enumerate(curve["x"])
                    if x and x >= first and i in shown]) <= 2
    curve, low, high = [t for t in log["data"] if t["legendgroup"] == "SBCGI"]
    # a gap after the start, the band from the first evaluation
    assert curve["x"][:3] == [1.0, None, first]
    assert curve["y"][1] is None and curve["marker"]["size"][1] == 0
    assert low["x"][0] == high["x"][0] == first
    curve, low, high = [t for t in linear["data"]
                        if t["legendgroup"] == "SBCGI"]
    assert curve["x"][:2] == low["x"][:2] == [1.0, first]


def test_table_numbers_in_scientific_notation_and_headers_in_full():
    assert table_number(0.0611) == "6.11e-02"
    assert table_number(1e-12) == "1.00e-12"
    assert table_number(316.0) == "316"
    assert table_number(100063) == "1.00e+05"
    assert table_number(float("nan")) == "nan"
    [table] = figures(simple_run(), ["final_values"])["final_values"].values()
    columns = table["columns"]
    # full names: the metric's name with its spread, nothing cut
    assert {"lower_gap", "lower_gap q20-q80", "upper_gap_abs q20-q80",
            "samples (upper + lower)", "time (s)"} <= set(columns)
    for row in table["data"]:
        cells = dict(zip(columns, row, strict=True))
        # a tolerance, in the details, in the table's numbers
        assert "inner_tolerance 1.00e-12;" in cells.pop("details")
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
    # the HTML thins and splits its curves as the PDFs do (curve_marks)
    assert f"const MARKER_BINS = {MARKER_BINS};" in script
    assert f'const START_APART = "{START_APART}";' in script
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


def _closest(colors):
    """The smallest CIEDE2000 distance between two of ``colors`` (hex, or
    ``rgba(...)`` as benchopt hands them to plotly)."""
    lab = _lab(np.array([_rgb(color) for color in colors]))
    distance = _ciede2000(lab[:, None], lab[None])
    np.fill_diagonal(distance, np.inf)
    return distance.min()


def _rgb(color):
    return np.array(matplotlib.colors.to_rgb(color))


def _ciede2000(lab1, lab2):
    """CIEDE2000 colour difference (Sharma, Wu & Dalal 2005) of CIELAB
    arrays, broadcast."""
    (l1, a1, b1), (l2, a2, b2) = np.moveaxis(lab1, -1, 0), np.moveaxis(
        lab2, -1, 0)
    mean_c = (np.hypot(a1, b1) + np.hypot(a2, b2)) / 2
    g = 0.5 * (1 - np.sqrt(mean_c ** 7 / (mean_c ** 7 + 25 ** 7)))
    a1, a2 = (1 + g) * a1, (1 + g) * a2
    c1, c2 = np.hypot(a1, b1), np.hypot(a2, b2)
    h1 = np.degrees(np.arctan2(b1, a1)) % 360
    h2 = np.degrees(np.arctan2(b2, a2)) % 360
    dh = h2 - h1
    dh = np.where(dh > 180, dh - 360, np.where(dh < -180, dh + 360, dh))
    dh = np.where(c1 * c2 == 0, 0, dh)
    d_hue = 2 * np.sqrt(c1 * c2) * np.sin(np.radians(dh / 2))
    mean_l, mean_c = (l1 + l2) / 2, (c1 + c2) / 2
    total = h1 + h2
    mean_h = np.where(c1 * c2 == 0, total, np.where(
        np.abs(h1 - h2) <= 180, total / 2,
        np.where(total < 360, total + 360, total - 360) / 2))
    t = (1 - 0.17 * np.cos(np.radians(mean_h - 30))
         + 0.24 * np.cos(np.radians(2 * mean_h))
         + 0.32 * np.cos(np.radians(3 * mean_h + 6))
         - 0.20 * np.cos(np.radians(4 * mean_h - 63)))
    rotation = (-2 * np.sqrt(mean_c ** 7 / (mean_c ** 7 + 25 ** 7))
                * np.sin(np.radians(60 * np.exp(-((mean_h - 275) / 25) ** 2))))
    s_l = 1 + 0.015 * (mean_l - 50) ** 2 / np.sqrt(20 + (mean_l - 50) ** 2)
    s_c, s_h = 1 + 0.045 * mean_c, 1 + 0.015 * mean_c * t
    dl, dc, dhh = (l2 - l1) / s_l, (c2 - c1) / s_c, d_hue / s_h
    return np.sqrt(dl ** 2 + dc ** 2 + dhh ** 2 + rotation * dc * dhh)
