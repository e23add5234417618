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

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// what the page shows now: plots, traces, axis titles, table rows
function snapshot() {
  const visible = (el) => el && el.offsetParent !== null;
  const plots = [...document.querySelectorAll(".js-plotly-plot")]
    .filter((el) => visible(el) && el.querySelector("svg.main-svg"));
  const text = (sel) => plots.flatMap((p) => [...p.querySelectorAll(sel)])
    .map((el) => el.textContent.trim()).filter((t) => t);
  const table = document.getElementById("table_container");
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
  };
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
  for (const [i, name] of saved.entries()) {
    views[`view: ${name}`] = await drawn(page, (j) => document
      .querySelectorAll("#view-tabs span.view")[j].click(), i);
  }
  const shown = Object.values(views)
    .filter((v) => v.plots > 0 || v.table_rows > 0).length;
  const traces = Object.values(views).reduce((n, v) => n + (v.traces || 0), 0);
  const total = kinds.length + saved.length;
  return { views, kinds: kinds.length, saved_views: saved.length, total,
           drawn: shown, traces, ok: kinds.length > 0 && shown === total };
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
