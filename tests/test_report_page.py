"""The finished pages: window resizes, the saved views' datasets, the index.

Synthetic general-family runs (no solver runs) are plotted as ``benchopt
plot`` plots them (``plot_benchmark`` into a temporary output folder) and
finished as the command finishes them (benchmark_utils/report/finish.py).
Checked on the pages written:

- resizing the window while a table is shown raised "Resize must be
  passed a displayed plot div element" (benchopt refits its hidden plot
  div): every ``Plotly.Plots.resize`` / ``Plotly.relayout`` of the page
  goes through the page's guard, which acts only on a displayed plot div
  (read from the scripts), and, where Node.js is found, a window resize is
  dispatched on each saved view with the page's own scripts (benchopt's
  result.js and report_views.js, with a stand-in DOM and plotly that fails
  as plotly does on a hidden or undrawn div); tools/
  check_report_offline.py draws the views in headless Chromium;
- the saved views of one application open on its dataset (docs/report.md),
  on the menu's first entry where the run has none of it;
- the index of runs fits its table to the page (its style).
"""
import json
import re
import shutil
import subprocess

import pandas as pd
import pytest
import yaml
from benchopt.benchmark import Benchmark
from benchopt.plotting import plot_benchmark

from benchmark_utils.report import finish
from benchmark_utils.report.empty_views import (
    PLOTS,
    empty_kinds,
    without_empty_kinds,
)
from benchmark_utils.report.views import METADATA, VIEW_DATASETS

from conftest import ROOT

# in the order of a plain run's menus: coreset_toy first
DATASETS = ("coreset_toy", "hyper_cleaning[p=0.3]", "hyper_cleaning[p=0.1]",
            "quadratic[dim_x=2]")
SCRIPT = re.compile(r"<script\b([^>]*)>(.*?)</script\s*>", re.S | re.I)
SELECT = re.compile(r'<select id="change_([^"]+)"[^>]*>(.*?)</select>', re.S)
OPTION = re.compile(r'<option value="([^"]*)"')
RESIZES = r"Plotly\.(?:Plots\.resize|relayout)"
CALL = re.compile(RESIZES + r"\s*\(")
GUARD = re.compile(r"Plotly\.(Plots\.resize|relayout) = guarded\(Plotly\.\1\)")


def general_run(datasets, solvers=("SOBA", "F2SA"), n_evals=4):
    """A general-family result frame: hypergradient norm, F gap, inner
    distance, test accuracy and the counters, one repetition."""
    rows = [{"dataset_name": dataset, "objective_name": "Bilevel",
             "solver_name": solver, "idx_rep": 0, "stop_val": it,
             "time": 1e-5 + 0.1 * it,
             "objective_hypergrad_norm": 1.0 / (1 + it),
             "objective_upper_gap_abs": 2.0 / (1 + it) ** 2,
             "objective_inner_distance": 0.5 / (1 + it),
             "objective_test_accuracy": 0.5 + 0.1 * it,
             "objective_n_samples_upper": 10 * it,
             "objective_n_samples_lower": 20 * it,
             "objective_n_grad_evals": 3 * it, "objective_n_hvp": it,
             "objective_diverged": 0.0}
            for dataset in datasets for solver in solvers
            for it in range(n_evals)]
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    """``{"run": page, "other_run": page, "index": page}``: the finished
    pages of a run of :data:`DATASETS`, of a run without hyper-cleaning, and
    the index of runs (the benchmark's page)."""
    folder = tmp_path_factory.mktemp("pages")
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(Benchmark, "get_output_folder",
                            lambda self: folder)
        for name, datasets in (("run", DATASETS),
                               ("other_run", DATASETS[3:])):
            general_run(datasets).to_parquet(folder / f"{name}.parquet")
            plot_benchmark(folder / f"{name}.parquet", Benchmark(ROOT),
                           display=False, html=True)
        finish.finish_outputs(Benchmark(ROOT), [
            folder / "run.parquet", folder / "other_run.parquet"], html=True)
    name = Benchmark(ROOT).name
    return {"run": folder / f"{name}_run.html",
            "other_run": folder / f"{name}_other_run.html",
            "index": folder / f"{name}.html"}


def read(page):
    return page.read_text(encoding="utf-8")


def saved_views(html):
    start = html.index(METADATA) + len(METADATA)
    return json.JSONDecoder().raw_decode(html, start)[0]["plot_configs"]


def menus(html):
    """``{state key: the entries of its menu}`` of the page's sidebar."""
    return {key: OPTION.findall(options)
            for key, options in SELECT.findall(html) if key != "scale"}


def page_scripts(html):
    """``[(attributes, text)]`` of the page's scripts, but the vendored
    libraries."""
    return [(attrs, text) for attrs, text in SCRIPT.findall(html)
            if "data-vendored" not in attrs]


def code_of(script):
    """``script`` without its comments (roughly: a ``//`` in a string
    cuts its line too)."""
    return re.sub(r"/\*.*?\*/|//[^\n]*", "", script, flags=re.S)


def test_views_of_an_application_open_on_its_dataset(pages):
    html = read(pages["run"])
    views, menu = saved_views(html), menus(html)
    docs = (ROOT / "docs" / "report.md").read_text(encoding="utf-8")
    for name, dataset in VIEW_DATASETS.items():
        # docs/report.md says which
        assert re.search(rf'\| "{name}" \| `{dataset}`', docs), name
        key = f"{views[name]['plot_kind']}_dataset"
        # the first instance of the dataset in the view's menu, not the
        # first entry (coreset_toy)
        first = [label for label in menu[key]
                 if label.startswith(dataset + "[")][0]
        assert menu[key][0] == "coreset_toy"
        assert views[name][key] == first, name
    # the other views keep the dataset on screen
    assert "general_curve_dataset" not in views[
        "general: stationarity vs samples"]
    # a run without hyper-cleaning: the menu's first entry
    other = read(pages["other_run"])
    for name in VIEW_DATASETS:
        kind = saved_views(other)[name]["plot_kind"]
        assert (saved_views(other)[name][f"{kind}_dataset"]
                == menus(other)[f"{kind}_dataset"][0])


KIND_MENU = re.compile(r'<select id="plot_kind"[^>]*>(.*?)</select>', re.S)
VIEW_MENU = re.compile(r'<select id="tabs"[^>]*>(.*?)</select>', re.S)
VIEW_TAB = re.compile(
    r'<span onclick="setConfig\(this\)"[^>]*>\s*(.*?)\s*</span>', re.S)
# the chart types with data in a run of general-family problems only
GENERAL_KINDS = ["general_curve", "task_curve", "final_values"]


def test_chart_types_without_data_leave_the_page(pages):
    """A run of general problems only showed the simple family's chart
    types and saved views, each an empty figure titled "none": they leave
    its chart-type menus (both: wide and small screens), its view tabs and
    menu, and its saved views."""
    html = read(pages["other_run"])
    kinds = KIND_MENU.findall(html)
    assert len(kinds) == 2
    for menu in kinds:
        assert OPTION.findall(menu) == GENERAL_KINDS
    views = saved_views(html)
    assert views and all(view["plot_kind"] in GENERAL_KINDS
                         for view in views.values())
    config = yaml.safe_load((ROOT / "config.yml").read_text())
    dropped = [name for name, view in config["plot_configs"].items()
               if view["plot_kind"] not in GENERAL_KINDS]
    assert dropped and not set(dropped) & set(views)
    assert VIEW_TAB.findall(html) == list(views)
    [view_menu] = VIEW_MENU.findall(html)
    assert OPTION.findall(view_menu) == ["no_selected_view", *views]
    # the script that opens the page still finds every option menu
    assert 'id="change_simple_curve_dataset"' in html


def test_a_page_with_data_in_every_chart_type_keeps_them_all():
    plots = {"simple_curve": {"a": {"type": "scatter", "data": [
        {"x": [1], "y": [1]}]}}, "final_values": {"b": {
            "type": "table", "data": [["SOBA", 1.0]]}}}
    page = (f"<script>{PLOTS}{json.dumps(plots)};\n"
            f'{METADATA}{{"plot_configs": {{}}}};</script>')
    assert without_empty_kinds(page) == page
    assert empty_kinds(plots) == []
    plots["simple_curve"]["a"]["data"][0]["x"] = []
    assert empty_kinds(plots) == ["simple_curve"]


def _depth(code):
    """How many braces are open at the end of ``code`` (strings and
    comments are not read: a rough count, enough for these scripts)."""
    return code.count("{") - code.count("}")


def test_every_resize_and_relayout_is_of_a_displayed_plot(pages):
    """The page's script replaces ``Plotly.Plots.resize`` and
    ``Plotly.relayout``, before anything is drawn, by versions that act only
    on a drawn plot div on screen; every call of either in the page's
    scripts reaches them (through the global ``Plotly``, inside a function
    that runs later, or after the replacement) and nothing keeps the
    originals."""
    scripts = [(attrs, code_of(text))
               for attrs, text in page_scripts(read(pages["run"]))]
    [fixes] = [text for attrs, text in scripts if finish.FINISHED in attrs]
    guards = list(GUARD.finditer(fixes))
    assert sorted(guard.group(1) for guard in guards) == [
        "Plots.resize", "relayout"]
    check = fixes[fixes.index("const displayedPlot"):guards[0].start()]
    assert "_fullLayout" in check and "offsetParent !== null" in check
    installed = max(guard.end() for guard in guards)
    assert installed < fixes.index("Plotly.react = ")
    calls = 0
    for _, text in scripts:
        for call in CALL.finditer(text):
            calls += 1
            if text is fixes:
                assert call.start() > installed
            else:
                assert _depth(text[:call.start()]) > 0, text[call.start():][
                    :80]
        # no other use of them: no reference to the originals is kept
        rest = GUARD.sub("", text) if text is fixes else text
        assert not re.search(RESIZES + r"\b(?!\s*\()", rest)
    # benchopt's resizeFig and applyLogDtick, readableTicks
    assert calls >= 3


RESIZE_HARNESS = r"""
const vm = require("vm");
const {scripts, defaults, views} = JSON.parse(
  require("fs").readFileSync(process.argv[2], "utf8"));
class Element {
  constructor(id) {
    Object.assign(this, {id, style: {}, value: "", checked: false,
      textContent: "", offsetWidth: 800, offsetHeight: 500,
      offsetParent: null, classList: {add() {}, remove() {},
                                      contains: () => false}});
  }
  addEventListener() {} appendChild() {} setAttribute() {}
  querySelectorAll() { return []; } on() {} removeListener() {}
}
const elements = {};
const byId = (id) => (elements[id] = elements[id] || new Element(id));
const body = byId("body");
let problems = [], resized = [];
// plotly refuses a hidden div, or one it has not drawn into
const plot = (gd) => Boolean(gd && gd.offsetParent !== null && gd._fullLayout);
const refuse = (what, gd) => problems.push(`${what} of ${gd && gd.id}`);
const Plotly = {
  react: (gd) => Promise.resolve(gd), purge() {},
  relayout: (gd) => { if (!plot(gd)) refuse("relayout", gd);
                      return Promise.resolve(gd); },
  Plots: {resize: (gd) => {
    resized.push(gd && gd.id);
    if (!plot(gd)) refuse("Resize must be passed a displayed plot div", gd);
    return Promise.resolve(gd); }},
};
const listeners = {};
const context = {Element, Plotly, console, gridjs: {Grid: function () {}},
  document: {getElementById: byId, addEventListener() {}, body,
             querySelector: () => byId("query"),
             getElementsByClassName: () => []},
  addEventListener: (type, fn) => (listeners[type] ||= []).push(fn),
  setTimeout: (fn) => { fn(); return 0; }, clearTimeout() {}};
context.window = context;
vm.createContext(context);
scripts.forEach((code) => vm.runInContext(code, context));
(async () => {
  let state = {...defaults};
  const results = [];
  for (const [name, view] of views) {
    state = {...state, ...view};
    context._state = {...state};
    const table = vm.runInContext("isChart('table')", context);
    const scatter = vm.runInContext("isChart('scatter')", context);
    // what setState leaves on screen (result.js): a table hides the plot
    // divs; renderPlot purges both, shows plot_container and draws into
    // plot_with_legend_container (scatter) or plot_container
    for (const id of ["plot_container", "plot_with_legend_container"]) {
      byId(id).offsetParent = null;
      if (!table) delete byId(id)._fullLayout;
    }
    const drawn = table ? null
      : scatter ? "plot_with_legend_container" : "plot_container";
    if (drawn) {
      byId("plot_container").offsetParent = body;
      Object.assign(byId(drawn), {offsetParent: body, _fullLayout: {}});
    }
    problems = []; resized = [];
    (listeners.resize || []).forEach((fn) => fn({type: "resize"}));
    await new Promise((resolve) => setImmediate(resolve));
    results.push({name, drawn, resized, problems});
  }
  console.log(JSON.stringify(results));
})();
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="no Node.js")
def test_a_window_resize_on_each_view_raises_no_error(pages, tmp_path):
    html = read(pages["run"])
    scripts = [text for attrs, text in page_scripts(html)
               if "window._plots" in text or "const setState" in text
               or finish.FINISHED in attrs]
    assert len(scripts) == 3
    defaults = {key: entries[0] for key, entries in menus(html).items()}
    defaults.update(hidden_curves=[], scale="linear")
    task = tmp_path / "page.json"
    task.write_text(json.dumps({"scripts": scripts, "defaults": defaults,
                                "views": list(saved_views(html).items())}))
    harness = tmp_path / "resize.cjs"
    harness.write_text(RESIZE_HARNESS)
    done = subprocess.run(["node", str(harness), str(task)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(done.stdout)
    assert len(results) == len(saved_views(html))
    assert [r for r in results if r["problems"]] == []
    # the figure on screen is refitted, once; a table, nothing
    assert any(r["drawn"] is None for r in results)
    for result in results:
        drawn = [result["drawn"]] if result["drawn"] else []
        assert result["resized"] == drawn, result


def test_the_index_of_runs_fits_its_table_to_the_page(pages):
    html = read(pages["index"])
    [style] = re.findall(
        rf"<style {finish.INDEX_FINISHED}>(.*?)</style>", html, re.S)
    assert html.index(style) < html.index("</head>")
    rules = {" ".join(selector.split()): " ".join(body.split())
             for selector, body in re.findall(
                 r"([^{}]+)\{([^}]*)\}", re.sub(r"/\*.*?\*/", "", style,
                                                flags=re.S))}
    assert "table-layout: fixed" in rules["#summary"]
    assert "width: 100% !important" in rules["#summary"]
    assert "max-width: 100%" in rules["#summary"]
    cells = rules["#summary th, #summary td"]
    assert "overflow-wrap: anywhere" in cells
    assert "word-break: break-word" in cells
    # only the index gets it, once
    assert finish.INDEX_FINISHED not in read(pages["run"])
    finish.finish_page(pages["index"])
    assert read(pages["index"]) == html
