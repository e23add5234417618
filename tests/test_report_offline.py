"""The report offline, and ``--no-html`` figures per run.

A tiny run (one quadratic, SOBA, three evaluations) is plotted the way
``benchopt run`` / ``benchopt plot`` plot it (``plot_benchmark``, into a
temporary output folder), then finished as those commands finish it when
they end (benchmark_utils/report/finish.py): every page benchopt wrote
carries its scripts and styles (none is loaded from the network; plotly,
gridjs and anime are inline), ``--no-html`` writes the run's figures with
data into one folder named after it with plain file names and legends
outside the axes. ``benchopt plot`` itself is run once end to end: its page is
finished when the command ends, which fails loudly where benchopt's
output is not what the finishing expects. Where
Chromium, Node.js and puppeteer-core are found (tools/
check_report_offline.py), the pages are also opened in headless Chromium
with the network blocked, and their views checked (same axes whatever was
clicked before, readable log ticks, full table headers, every view tab in
sight); elsewhere (CI) that test is skipped.
"""
import hashlib
import re
import subprocess
import sys
import uuid

import matplotlib
import numpy as np
import pytest
from benchopt.benchmark import Benchmark
from benchopt.plotting import plot_benchmark
from benchopt.plotting.generate_matplotlib import get_plot_scatter

from benchmark_utils.report import finish
from benchmark_utils.report.offline import (
    ASSETS,
    DROPPED,
    VENDOR,
    OfflineReportError,
    inline_assets,
    network_loads,
)

from conftest import ROOT, python_script

matplotlib.use("Agg")
RUN = ["run", ".", "--no-display", "-n", "3", "-r", "1",
       "--no-timeout", "-s", "SOBA[batch_size=8]",
       "-d", "quadratic[dim_x=5,dim_y=5,n_samples=40,constraint=none]"]
# a tag that loads from the network: <script src=...>, <link href=...>
NETWORK_SCRIPT = re.compile(r"""<script\b[^>]*\bsrc\s*=\s*["']?(https?:)?//""",
                            re.I)
NETWORK_LINK = re.compile(
    r"""<link\b(?:[^>"']|"[^"]*"|'[^']*')*\bhref\s*=\s*["']?(https?:)?//""",
    re.I)
SAFE_FILE = re.compile(r"[A-Za-z0-9_-]+\.pdf")


@pytest.fixture(scope="module")
def run_file(tmp_path_factory):
    """The tiny run's result file, alone in its output folder. ``benchopt
    run`` wrote it into the benchmark's output folder (benchopt draws a
    page only for a result file there) and plotted it; a copy of the file
    is the fixture's, the file and its page are removed from there when
    the module ends (the page is checked by the test below)."""
    stem = f"test_tiny_run_{uuid.uuid4().hex[:8]}"
    written = ROOT / "outputs" / f"{stem}.parquet"
    output = tmp_path_factory.mktemp("offline") / written.name
    try:
        run = subprocess.run(
            [sys.executable, "-m", "benchopt", *RUN, "--output", stem],
            cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
        output.write_bytes(written.read_bytes())
        yield output
    finally:
        written.unlink(missing_ok=True)
        (ROOT / "outputs" / f"{Benchmark(ROOT).name}_{stem}.html").unlink(
            missing_ok=True)


def test_benchopt_run_finishes_the_page_of_its_own_result(run_file):
    """End to end: when ``benchopt run`` ends, the page of its result
    file (found by its run_date) carries the view fixes and loads nothing
    from the network."""
    page = ROOT / "outputs" / f"{Benchmark(ROOT).name}_{run_file.stem}.html"
    html = page.read_text(encoding="utf-8")
    assert finish.FINISHED in html and network_loads(html) == []


def test_the_run_s_result_file_is_found_by_its_run_date(tmp_path,
                                                        monkeypatch):
    """Of two result files written at the same time, the one holding the
    plotted run's run_date is the run's (never a guess by modification
    time); its pages are its own and the benchmark's, by benchopt's
    naming; no match is an error, not a report left unfinished."""
    import pandas as pd

    monkeypatch.setattr(Benchmark, "get_output_folder",
                        lambda self: tmp_path)
    for name, date in (("mine", "2026-01-01T00:00:00"),
                       ("other", "2026-01-02T00:00:00")):
        pd.DataFrame({"run_date": [date], "x": [1.0]}).to_parquet(
            tmp_path / f"{name}.parquet")
    # a csv without the column and a damaged parquet: not the run's
    (tmp_path / "notes.csv").write_text("a,b\n1,2\n")
    (tmp_path / "damaged.parquet").write_bytes(b"not parquet")
    bench = Benchmark(ROOT)
    found = finish.result_files(bench, {"output": "None"}, "run",
                                {"2026-01-01T00:00:00"})
    assert found == [tmp_path / "mine.parquet"]
    assert finish.pages_of(bench, found) == [
        tmp_path / f"{bench.name}_mine.html", tmp_path / f"{bench.name}.html"]
    with pytest.raises(finish.ReportFinishError, match="run_date"):
        finish.result_files(bench, {"output": "None"}, "run", {"1999"})
    with pytest.raises(finish.ReportFinishError, match="wrote no page"):
        finish.finish_outputs(bench, found)


def plot(run_file, html, monkeypatch):
    """benchopt's plot_benchmark on the run, into the run's folder, then
    the finishing ``benchopt plot`` does when it ends."""
    monkeypatch.setattr(Benchmark, "get_output_folder",
                        lambda self: run_file.parent)
    figures = plot_benchmark(run_file, Benchmark(ROOT), display=False,
                             html=html)
    written = finish.finish_outputs(Benchmark(ROOT), [run_file], html=html)
    return figures, written


@pytest.fixture(scope="module")
def pages(run_file):
    """``{"result": html, "benchmark": html}`` as benchopt writes them."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        plot(run_file, True, monkeypatch)
    name = Benchmark(ROOT).name
    folder = run_file.parent
    return {"result": folder / f"{name}_{run_file.stem}.html",
            "benchmark": folder / f"{name}.html"}


def test_report_pages_load_no_script_or_stylesheet_from_the_network(pages):
    for kind, page in pages.items():
        html = page.read_text(encoding="utf-8")
        assert not NETWORK_SCRIPT.search(html), kind
        assert not NETWORK_LINK.search(html), kind
        assert 'src="//' not in html and 'src="http' not in html, kind
        assert network_loads(html) == [], kind
    result = pages["result"].read_text(encoding="utf-8")
    for file in ("plotly-2.12.1.min.js", "gridjs-6.2.0.umd.js",
                 "gridjs-6.2.0-mermaid.min.css", "anime-2.0.2.min.js"):
        assert f'data-vendored="{file}"' in result
    assert "plotly.js v2.12.1" in result
    # the run's figures are in the page
    assert "general_curve_quadratic_Bilevel_stationarity_samples" in result
    benchmark_page = pages["benchmark"].read_text(encoding="utf-8")
    for file in ("jquery-3.5.1.min.js", "jquery.dataTables-1.10.22.min.js"):
        assert f'data-vendored="{file}"' in benchmark_page


def test_a_network_load_without_a_vendored_copy_fails_loudly():
    plotly = ASSETS[0].url
    page = (f'<html><head><link href="{next(iter(DROPPED))}" rel="preconnect">'
            f'<script src="{plotly}"></script></head><body>'
            '<a href="https://benchopt.github.io">site</a></body></html>')
    inlined = inline_assets(page)
    assert network_loads(inlined) == []
    assert 'data-vendored="plotly-2.12.1.min.js"' in inlined
    assert "https://benchopt.github.io" in inlined  # a link, not a load
    for tag in ('<script src="https://cdn.example.org/lib.js"></script>',
                '<script defer\n  src="//cdn.example.org/lib.js"></script>',
                '<link rel="stylesheet" href="https://cdn.example.org/x.css">',
                '<style>@import url("https://cdn.example.org/x.css");</style>'):
        with pytest.raises(OfflineReportError, match="cdn.example.org"):
            inline_assets(f"<html><head>{tag}</head></html>")


def test_vendored_files_are_the_ones_the_readme_names():
    readme = (VENDOR / "README.md").read_text(encoding="utf-8")
    for asset in ASSETS:
        digest = hashlib.sha256((VENDOR / asset.file).read_bytes())
        assert f"`{asset.file}` | `{asset.npm}`" in readme, asset.file
        assert digest.hexdigest()[:16] in readme, asset.file
    licenses = {path.name for path in (VENDOR / "licenses").iterdir()}
    assert len(licenses) == len({asset.npm for asset in ASSETS})


def test_report_renders_offline_in_headless_chromium(pages):
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import check_report_offline as check
    finally:
        sys.path.pop(0)
    if check.find_chromium() is None or check.node_modules(False) is None:
        pytest.skip("Chromium or puppeteer-core not found "
                    "(tools/check_report_offline.py installs the latter)")
    result, benchmark_page = check.check([pages["result"],
                                          pages["benchmark"]], install=False)
    # views that do not mislead: same axes in any click order, the start on
    # every x-axis, two tick labels per log axis, full table headers, every
    # view tab in sight at 1600 and 1000 px (tests/test_report_views.py)
    assert result["problems"] == [], result["problems"]
    assert all(not tabs["hidden"] for tabs in result["tabs"].values())
    assert result["ok"] and benchmark_page["ok"], (result, benchmark_page)
    assert result["blocked"] == benchmark_page["blocked"] == []
    assert result["libraries"]["Plotly"] == "2.12.1"
    assert result["drawn"] == result["total"] >= 5
    curves = result["views"]["general_curve"]
    assert curves["traces"] > 0 and curves["xtitle"] and curves["ytitle"]
    assert result["views"]["final_values"]["table_rows"] == 1


def test_no_html_writes_one_folder_per_run_with_plain_names(run_file,
                                                            monkeypatch):
    with pytest.warns(UserWarning, match=finish.TABLE_SKIP):
        figures, written = plot(run_file, False, monkeypatch)
    try:
        folder = run_file.parent / run_file.stem
        files = sorted(path.name for path in folder.iterdir())
        # every figure with data: the general family's 3 metrics x 5 axes;
        # benchopt's figures of the simple family and of a task metric (a
        # quadratic has none) only said "none"
        assert len(files) == len(written) == 15 < sum(map(len, figures))
        assert all(name.startswith("general_curve_") for name in files)
        assert all(SAFE_FILE.fullmatch(name) for name in files), files
        assert not list(run_file.parent.glob("*.pdf"))
        assert ("general_curve_quadratic_Bilevel_stationarity_samples.pdf"
                in files)
    finally:
        matplotlib.pyplot.close("all")


def test_file_names_keep_letters_digits_dash_and_underscore():
    assert finish.file_name(
        "general_curve_quadratic[dim_x=10,constraint=box]_Bilevel_hvp"
    ) == "general_curve_quadratic_dim_x-10_constraint-box_Bilevel_hvp"
    assert finish.file_name("toy[mu=1,r=0p5]") == "toy_mu-1_r-0p5"
    assert finish.file_name("run 2.5 (copy)") == "run_2p5_copy"
    assert finish.file_name("[]") == "figure"


def test_legends_of_twenty_solvers_sit_right_of_the_axes():
    rng = np.random.default_rng(0)
    x = [0, 10, 100, 1000]
    figure = get_plot_scatter({
        "title": "quadratic", "xlabel": "samples", "ylabel": "gap",
        "scale": "loglog", "data": [
            {"x": x, "y": list(rng.lognormal(size=4)), "color": f"C{i}",
             "marker": "o", "label": f"SOBA[outer_step={0.01 * i:.2f}]"}
            for i in range(20)]})
    try:
        width = figure.get_size_inches()[0]
        finish.legend_outside(figure)
        [ax] = figure.axes
        figure.canvas.draw()
        legend = ax.get_legend()
        box, axes = legend.get_window_extent(), ax.get_window_extent()
        assert len(legend.get_texts()) == 20
        # right of the axes, inside the figure, widened by about its width
        assert box.x0 >= axes.x1 and box.x1 <= figure.bbox.x1 + 1
        assert box.y0 >= figure.bbox.y0 - 1 and box.y1 <= figure.bbox.y1 + 1
        assert figure.get_size_inches()[0] >= width + box.width / figure.dpi
    finally:
        matplotlib.pyplot.close("all")


def test_benchopt_plot_finishes_its_page_when_it_ends(run_file, tmp_path):
    """End to end: ``benchopt plot`` of the run writes the page into the
    benchmark's output folder; when the command ends the page carries its
    scripts inline and the view fixes (no network load)."""
    outputs = ROOT / "outputs"
    copy = outputs / f"test_finish_{run_file.stem}.parquet"
    outputs.mkdir(exist_ok=True)
    copy.write_bytes(run_file.read_bytes())
    page = outputs / f"{Benchmark(ROOT).name}_{copy.stem}.html"
    try:
        done = subprocess.run(
            [sys.executable, "-m", "benchopt", "plot", ".", "-f",
             str(copy.relative_to(ROOT)), "--no-display", "--html"],
            cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        html = page.read_text(encoding="utf-8")
        assert finish.FINISHED in html
        assert network_loads(html) == []
    finally:
        for path in (copy, page):
            path.unlink(missing_ok=True)


def test_a_failure_to_finish_the_report_exits_1(tmp_path):
    """Any error while finishing (here a page that still loads from the
    network, a RuntimeError) ends the command with exit code 1 and the
    reason, not with Python's "Exception ignored in atexit callback" and
    exit 0."""
    script = (
        "from benchmark_utils.report import finish\n"
        "from benchmark_utils.report.offline import OfflineReportError\n"
        "def fail(*args, **kwargs):\n"
        "    raise OfflineReportError('a script from the network')\n"
        "finish.finish_outputs = fail\n"
        "finish.result_files = lambda *args: []\n"
        "finish._finish_command({'benchmark': '.'}, 'run', set())\n")
    done = python_script(script)
    assert done.returncode == 1, done.stderr
    assert ("The report could not be finished: a script from the network"
            in done.stderr)
