"""Open report pages in headless Chromium with the network blocked.

    python tools/check_report_offline.py [PAGE.html ...] [--json]

With no page, checks the newest run page in outputs/ and the benchmark's
page next to it. Chromium resolves no host name and every request that is
not file:, data:, blob: or about: is aborted and counted (see
tools/check_report_offline.cjs). A run page passes when every "Chart type"
entry and every saved view draws a plot or a table, no request left the
file and the page raised no error, and its views do not mislead: each
saved view shows the axis types its figure's data asks for, and the same
when clicked again in the reverse order after a scale chosen by hand (a
view saved with a scale shows that one, reached from any chart type),
every curve's first point (the start)
lies on its x-axis, every log axis shows at least two tick labels, the
table cuts no header and prints no number as 0.0..., and every view tab
is in sight at 1600 and 1000 px. A benchmark page passes when its
DataTables table and its icons are drawn. Exit status 0 when every page
passes.

Needs Chromium (``apt-get install chromium``, or ``--chromium PATH`` /
``$CHROMIUM``) and Node.js; puppeteer-core (pinned below) is installed by
npm into ``~/.cache/bilevel-report-check`` on first use
(``--no-install`` refuses, and a missing one then is an error).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = Path(__file__).with_suffix(".cjs")
PUPPETEER = "puppeteer-core@24.43.1"
NODE_DIR = Path(os.environ.get(
    "REPORT_CHECK_NODE_DIR",
    Path.home() / ".cache" / "bilevel-report-check"))
BROWSERS = ("chromium", "chromium-browser", "google-chrome",
            "google-chrome-stable")


def find_chromium(path=None):
    """The Chromium executable: ``path``, ``$CHROMIUM`` or the first of
    :data:`BROWSERS` on the PATH (None if none)."""
    for candidate in (path, os.environ.get("CHROMIUM"), *BROWSERS):
        if candidate and shutil.which(candidate):
            return shutil.which(candidate)
    return None


def node_modules(install=True):
    """The node_modules folder holding puppeteer-core (installed there by
    npm if missing and ``install``); None if it is not there."""
    modules = NODE_DIR / "node_modules"
    if (modules / "puppeteer-core").is_dir():
        return modules
    if not install or shutil.which("npm") is None:
        return None
    NODE_DIR.mkdir(parents=True, exist_ok=True)
    print(f"installing {PUPPETEER} into {NODE_DIR}", file=sys.stderr)
    subprocess.run(["npm", "install", "--prefix", str(NODE_DIR), "--no-audit",
                    "--no-fund", "--silent", PUPPETEER], check=True)
    return modules


def check(pages, chromium=None, install=True, timeout=300):
    """One dict per page (see the .cjs script), in order."""
    browser = find_chromium(chromium)
    modules = node_modules(install)
    if browser is None or modules is None or shutil.which("node") is None:
        raise RuntimeError(
            "needs Chromium, Node.js and puppeteer-core (found: "
            f"chromium={browser}, node={shutil.which('node')}, "
            f"puppeteer-core={modules})")
    env = dict(os.environ, NODE_PATH=str(modules))
    run = subprocess.run(
        ["node", str(SCRIPT), browser, *map(str, pages)], env=env,
        capture_output=True, text=True, timeout=timeout)
    reports = [json.loads(line) for line in run.stdout.splitlines()
               if line.startswith("{")]
    if len(reports) != len(pages):
        raise RuntimeError(f"the browser check failed (rc {run.returncode})"
                           f":\n{run.stdout[-2000:]}\n{run.stderr[-2000:]}")
    return reports


def default_pages():
    """The newest run page of outputs/ and the benchmark page beside it."""
    from benchopt.benchmark import Benchmark

    name = Benchmark(ROOT).name
    outputs = ROOT / "outputs"
    pages = sorted(outputs.glob(f"{name}_*.html"),
                   key=lambda page: page.stat().st_mtime)
    if not pages:
        sys.exit("no report page in outputs/: run `python -m benchopt run .`"
                 " first, or name the pages to check")
    index = outputs / f"{name}.html"
    return [pages[-1], *([index] if index.exists() else [])]


def summary(report):
    """A few lines saying what the page drew offline."""
    lines = [f"{'PASS' if report['ok'] else 'FAIL'} {report['file']} "
             f"({report['page']} page)"]
    libraries = ", ".join(f"{name} {'yes' if value is True else value}"
                          for name, value in report["libraries"].items()
                          if value)
    lines.append(f"  libraries loaded: {libraries or 'none'}")
    if report["page"] == "result":
        lines.append(
            f"  drawn: {report['drawn']} of {report['total']} "
            f"({report['kinds']} chart types, {report['saved_views']} saved "
            f"views), {report['traces']} plotly traces in all")
        for name, view in report["views"].items():
            if "error" in view:
                lines.append(f"    {name}: {view['error']}")
            elif view["table_rows"]:
                lines.append(f"    {name}: table, {view['table_rows']} rows x"
                             f" {view['table_columns']} columns")
            else:
                axes = view.get("axes") or {}
                lines.append(
                    f"    {name}: {view['plots']} plot, {view['traces']} "
                    f"traces, x '{'/'.join(view['xtitle'])}' "
                    f"({axes.get('x')}), y '{'/'.join(view['ytitle'])}' "
                    f"({axes.get('y')})")
        lines.append("  view tabs in sight: " + ", ".join(
            f"{tabs['total'] - len(tabs['hidden'])} of {tabs['total']} at "
            f"{width} px" for width, tabs in report["tabs"].items()))
        lines.append(f"  problems: {len(report['problems'])}" + "".join(
            f"\n    {problem}" for problem in report["problems"]))
    else:
        lines.append(f"  DataTables tables: {report['datatables']}, icons "
                     f"drawn: {report['icons']} (left as <i>: "
                     f"{report['icons_left']})")
    lines.append(f"  network requests blocked: {len(report['blocked'])}"
                 + "".join(f"\n    {url}" for url in report["blocked"]))
    lines.append(f"  page errors: {len(report['errors'])}"
                 + "".join(f"\n    {error}" for error in report["errors"]))
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("pages", nargs="*", type=Path)
    parser.add_argument("--chromium", help="the Chromium executable")
    parser.add_argument("--no-install", action="store_true",
                        help="do not npm-install puppeteer-core if missing")
    parser.add_argument("--json", action="store_true",
                        help="print the raw reports, one JSON per line")
    args = parser.parse_args()
    pages = args.pages or default_pages()
    reports = check(pages, args.chromium, install=not args.no_install)
    for report in reports:
        print(json.dumps(report) if args.json else summary(report))
    sys.exit(0 if all(report["ok"] for report in reports) else 1)


if __name__ == "__main__":
    main()
