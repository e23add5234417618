// Open benchopt report pages in headless Chromium with the network cut off
// and say what rendered. Driven by tools/check_report_offline.py, which
// finds Chromium and puppeteer-core and prints the summary; usable alone:
//
//   NODE_PATH=<dir>/node_modules node tools/check_report_offline.cjs \
//       /usr/bin/chromium outputs/benchopt_run_x.html [more.html ...]
//
// Two locks on the network: Chromium resolves no host name
// (--host-resolver-rules="MAP * ~NOTFOUND"), and every request whose URL is
// not file:, data:, blob: or about: is recorded and aborted. A result page
// is drawn for every entry of its "Chart type" menu in turn (setState, as
// the menu does); a benchmark or index page is checked for its DataTables
// tables and Font Awesome icons. One JSON object per page on stdout.
"use strict";
const path = require("path");
const puppeteer = require("puppeteer-core");

const LOCAL = /^(file|data|blob|about):/;
const SETTLE_MS = 300;
const DRAW_TIMEOUT_MS = 15000;
// window widths at which every saved-view tab must be in sight
const TAB_WIDTHS = [1600, 1000];

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// what the page shows now: plots, traces, axis titles, table rows; a
// scatter figure's axis types, how many tick labels each axis shows and the
// curves whose first point (the start) lies off the x-axis; a table's
// headers cut short and its numbers printed as fixed zeros (page.evaluate
// sends this function alone: its helpers live inside it)
function snapshot() {
  const visible = (el) => el && el.offsetParent !== null;
  const plots = [...document.querySelectorAll(".js-plotly-plot")]
    .filter((el) => visible(el) && el.querySelector("svg.main-svg"));
  const text = (sel) => plots.flatMap((p) => [...p.querySelectorAll(sel)])
    .map((el) => el.textContent.trim()).filter((t) => t);
  const table = document.getElementById("table_container");

  const axesOf = (gd) => {
    const layout = gd && gd._fullLayout;
    if (!layout || !layout.xaxis || !layout.yaxis) return {};
    const x = layout.xaxis;
    const [lo, hi] = [Math.min(...x.range), Math.max(...x.range)];
    const shown = (v) => (x.type === "log"
      ? v > 0 && Math.log10(v) >= lo && Math.log10(v) <= hi
      : v >= lo && v <= hi);
    const curves = (gd.data || []).filter((t) => t.mode === "lines+markers" &&
      t.visible === true && t.x && t.x.length);
    // the scale the figure's data asks for (plot_helpers.scale_of)
    const scale = (getPlotData() || {}).scale;
    const wanted = { loglog: ["log", "log"], "semilog-x": ["log", "linear"],
                     "semilog-y": ["linear", "log"], linear: ["linear", "linear"] };
    const [wantX, wantY] = wanted[scale] || [x.type, layout.yaxis.type];
    return {
      axes: { x: x.type, y: layout.yaxis.type },
      scale_mismatch: wantX !== x.type || wantY !== layout.yaxis.type
        ? `the data asks for ${scale}` : null,
      ticks: { x: text(".xtick text").length, y: text(".ytick text").length },
      start_hidden: curves.filter((t) => !shown(t.x[0])).map((t) => t.name),
    };
  };
  const tableFormat = (grid) => {
    if (!grid) return {};
    const heads = [...grid.querySelectorAll(".gridjs-th-content")];
    const cells = [...grid.querySelectorAll(".gridjs-table tbody td")]
      .map((td) => td.textContent.trim());
    return {
      headers_cut: heads.filter((el) => el.scrollWidth > el.clientWidth + 1 ||
        el.scrollHeight > el.clientHeight + 1).map((el) => el.textContent),
      fixed_zeros: cells.filter((t) => /^-?0\.0+$/.test(t)).length,
      scientific: cells.filter((t) => /^-?\d(\.\d+)?e[+-]\d+$/.test(t)).length,
    };
  };

  return {
    plots: plots.length,
    traces: plots.reduce(
      (n, p) => n + p.querySelectorAll(".scatterlayer .trace, .barlayer .trace, .boxlayer .trace").length, 0),
    xtitle: text(".xtitle"),
    ytitle: text(".ytitle"),
    title: text(".gtitle"),
    table_rows: visible(table)
      ? table.querySelectorAll(".gridjs-table tbody tr").length : 0,
    table_columns: visible(table)
      ? table.querySelectorAll(".gridjs-th").length : 0,
    ...axesOf(plots[0]),
    ...tableFormat(visible(table) ? table : null),
  };
}

// every saved-view tab lies inside the window and inside its (unscrolled)
// bar, so a reader sees and can click each one
function tabsShown() {
  const nav = document.getElementById("view-tabs");
  const bar = nav.getBoundingClientRect();
  const tabs = [...nav.querySelectorAll("span.view")];
  const hidden = tabs.filter((tab) => {
    const r = tab.getBoundingClientRect();
    return !(r.width > 0 && r.left >= Math.max(0, bar.left) - 1 &&
      r.right <= Math.min(window.innerWidth, bar.right) + 1 &&
      r.top >= bar.top - 1 && r.bottom <= bar.bottom + 1);
  }).map((tab) => tab.textContent.trim());
  return { total: tabs.length, hidden };
}

// run `action` in the page, then wait until a plot or a table shows
async function drawn(page, action, arg) {
  try {
    await page.evaluate(action, arg);
  } catch (error) {
    return { error: String(error).split("\n")[0] };
  }
  const start = Date.now();
  let shot;
  do {
    await sleep(SETTLE_MS);
    shot = await page.evaluate(snapshot);
  } while (!(shot.plots || shot.table_rows) &&
           Date.now() - start < DRAW_TIMEOUT_MS);
  return shot;
}

async function checkResultPage(page) {
  const kinds = await page.$$eval("#plot_kind option", (opts) => [
    ...new Set(opts.map((o) => o.value))]);
  const saved = await page.$$eval("#view-tabs span.view",
    (spans) => spans.map((s) => s.textContent.trim()));
  const views = {};
  // every entry of the "Chart type" menu, as the menu sets it
  for (const kind of kinds) {
    views[kind] = await drawn(page, (k) => setState({ plot_kind: k }), kind);
  }
  // every saved view, clicked as a reader does
  const click = (j) => document.querySelectorAll("#view-tabs span.view")[j]
    .click();
  for (const [i, name] of saved.entries()) {
    views[`view: ${name}`] = await drawn(page, click, i);
    // a window resize while the view shows (a table included): the page's
    // errors listener catches a resize of a hidden or non-plot div
    await page.evaluate(() => window.dispatchEvent(new Event("resize")));
    await sleep(200);
  }
  // the same views again, in the reverse order, after a scale chosen by
  // hand: each must show the axes it showed the first time
  await drawn(page, () => setState({ scale: "linear" }));
  const history = [];
  for (const [i, name] of [...saved.entries()].reverse()) {
    const again = await drawn(page, click, i);
    const first = views[`view: ${name}`];
    if (JSON.stringify(again.axes) !== JSON.stringify(first.axes)) {
      history.push(`${name}: ${JSON.stringify(first.axes)} then ` +
                   JSON.stringify(again.axes));
    }
  }
  // a view saved with a scale (as "Save as view" saves one) shows it,
  // reached from another chart type or from its own
  const own = await page.evaluate(() => {
    const curves = Object.keys(window._plots).filter((kind) =>
      Object.values(window._plots[kind])[0].type === "scatter");
    const name = "check: saved with a linear scale";
    window.metadata.plot_configs[name] = { plot_kind: curves[0],
                                           scale: "linear" };
    const tab = document.createElement("span");
    tab.className = "view";
    tab.textContent = name;
    tab.onclick = () => setConfig(tab);
    document.getElementById("view-tabs").appendChild(tab);
    return curves;
  });
  const clickOwn = () => [...document.querySelectorAll("#view-tabs span.view")]
    .pop().click();
  for (const kind of [...own.slice(1), own[0]]) {
    await drawn(page, (k) => setState({ plot_kind: k }), kind);
    const shot = await drawn(page, clickOwn);
    if (!shot.axes || shot.axes.x !== "linear" || shot.axes.y !== "linear") {
      history.push(`a view saved as linear, clicked from ${kind}: ` +
                   JSON.stringify(shot.axes));
    }
  }
  await page.evaluate(() => [...document.querySelectorAll(
    "#view-tabs span.view")].pop().remove());
  const tabs = {};
  for (const width of TAB_WIDTHS) {
    await page.setViewport({ width, height: 1000 });
    await sleep(SETTLE_MS);
    tabs[width] = await page.evaluate(tabsShown);
  }
  await page.setViewport({ width: TAB_WIDTHS[0], height: 1000 });
  const all = Object.values(views);
  const shown = all.filter((v) => v.plots > 0 || v.table_rows > 0).length;
  const traces = all.reduce((n, v) => n + (v.traces || 0), 0);
  const total = kinds.length + saved.length;
  const problems = [
    ...history.map((h) => `axes depend on the click history: ${h}`),
    ...Object.entries(tabs).filter(([, t]) => t.hidden.length).map(
      ([w, t]) => `view tabs out of sight at ${w} px: ${t.hidden.join(", ")}`),
    ...Object.entries(views).flatMap(([name, v]) => [
      ...(v.start_hidden || []).map((c) => `${name}: start of ${c} off the x-axis`),
      ...(v.scale_mismatch ? [`${name}: axes ${JSON.stringify(v.axes)}, ${v.scale_mismatch}`] : []),
      ...["x", "y"].filter((a) => v.axes && v.axes[a] === "log" &&
        v.ticks[a] < 2).map((a) => `${name}: ${v.ticks[a]} tick label on log ${a}`),
      ...(v.headers_cut || []).map((h) => `${name}: header cut: ${h}`),
      ...(v.fixed_zeros ? [`${name}: ${v.fixed_zeros} cells print 0.0...`] : []),
    ]),
  ];
  return { views, kinds: kinds.length, saved_views: saved.length, total,
           drawn: shown, traces, tabs, problems,
           ok: kinds.length > 0 && shown === total && problems.length === 0 };
}

async function checkIndexPage(page) {
  await sleep(1000);
  const info = await page.evaluate(() => ({
    tables: document.querySelectorAll("table.summary, table").length,
    datatables: document.querySelectorAll(".dataTables_wrapper").length,
    icons: document.querySelectorAll("svg.svg-inline--fa").length,
    icons_left: document.querySelectorAll("i.fa, i.fas, i.fab").length,
  }));
  return { ...info, ok: info.datatables > 0 && info.icons > 0 };
}

async function checkPage(browser, file) {
  const page = await browser.newPage();
  await page.setViewport({ width: 1600, height: 1000 });
  const blocked = [];
  const failed = [];
  const errors = [];
  await page.setRequestInterception(true);
  page.on("request", (request) => {
    if (LOCAL.test(request.url())) {
      request.continue();
    } else {
      blocked.push(request.url());
      request.abort("blockedbyclient");
    }
  });
  page.on("requestfailed", (request) => {
    if (LOCAL.test(request.url())) {
      failed.push(`${request.url().slice(0, 120)} ${request.failure()?.errorText}`);
    }
  });
  page.on("pageerror", (error) => errors.push(String(error).slice(0, 300)));
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text().slice(0, 300));
  });
  const url = "file://" + path.resolve(file);
  await page.goto(url, { waitUntil: "load", timeout: 60000 });
  const libraries = await page.evaluate(() => ({
    Plotly: typeof window.Plotly === "object" ? window.Plotly.version : null,
    gridjs: typeof window.gridjs === "object",
    anime: typeof window.anime === "function",
    jQuery: typeof window.jQuery === "function" ? window.jQuery.fn.jquery : null,
    DataTable: typeof window.jQuery === "function" &&
      typeof window.jQuery.fn.dataTable === "function",
  }));
  const isResult = await page.$("#plot_kind") !== null;
  const result = isResult ? await checkResultPage(page) : await checkIndexPage(page);
  await page.close();
  return {
    file, page: isResult ? "result" : "benchmark", libraries, ...result,
    blocked, failed_local: failed, errors,
    ok: result.ok && blocked.length === 0 && errors.length === 0,
  };
}

async function main() {
  const [chromium, ...files] = process.argv.slice(2);
  if (!chromium || files.length === 0) {
    console.error("usage: check_report_offline.cjs CHROMIUM FILE.html [...]");
    process.exit(2);
  }
  const browser = await puppeteer.launch({
    executablePath: chromium,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--no-first-run",
           "--host-resolver-rules=MAP * ~NOTFOUND",
           "--allow-file-access-from-files"],
  });
  let ok = true;
  try {
    for (const file of files) {
      const report = await checkPage(browser, file);
      ok = ok && report.ok;
      console.log(JSON.stringify(report));
    }
  } finally {
    await browser.close();
  }
  process.exit(ok ? 0 : 1);
}

main().catch((error) => {
  console.error(error);
  process.exit(2);
});
