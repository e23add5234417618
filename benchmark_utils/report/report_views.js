// This benchmark's changes to benchopt 1.10's run page (result.js), added
// after it by benchmark_utils/report/finish.py; docs/report.md says what a
// reader sees.
//
// 1. A view's axes do not depend on what was clicked before. benchopt sets
//    the scale a figure's data asks for only when the chart type changes,
//    and a view's configured scale otherwise, so a view showed other axes
//    on a second click. Here every figure shows its own scale (chosen from
//    its data in Python): whenever the figure on screen changes (chart type,
//    dataset, metric, x-axis) and whenever a view is clicked (a view that
//    names a scale, one saved with "Save as view", gets that scale). The
//    Scale menu still changes the figure on screen.
// 2. A log axis over less than three decades gets tick labels at 1, 2 and 5
//    of each decade (every digit under one decade): benchopt labels whole
//    decades only, which left one label, or none.
// 3. The final-values table prints numbers in scientific notation, with 3
//    significant digits ("Float Precision" counts them): benchopt prints 4
//    fixed decimals, so a tolerance or a small gap read 0.0000.
// 4. A curve's tooltip also gives the steps the solver ran with and their
//    sources (the curve's "resolved" field, benchmark_utils/report/
//    resolved.py), so a reader can rerun it with explicit numbers.
// 5. Resizing the window while a table is shown raised "Resize must be
//    passed a displayed plot div element": benchopt refits its plot div on
//    every resize, hidden or not. Every Plotly.Plots.resize and
//    Plotly.relayout of the page now acts only on a displayed plot div.
// 6. On a log x-axis a curve plot's start (count 0 drawn at 1, or a few
//    microseconds) is a marker of its own: a gap after it, and its band
//    from the first evaluation on; the segment to its next point, decades
//    away, read as data (benchmark_utils/report/curve_marks.py).
// 7. A curve carries a marker only at its first point in each of
//    MARKER_BINS equal parts of the figure's x-range as drawn, so many
//    evaluations within a short span of x no longer stack their markers;
//    its line and tooltips keep every evaluation (curve_marks.py, which
//    the PDFs follow).
(function () {
  "use strict";

  // -- 5. resize and relayout only a displayed plot ------------------------
  // (installed first, before any figure is drawn: the page draws on load)
  // a div plotly has drawn into (_fullLayout) and that is on screen (no
  // display: none on it or above it)
  const displayedPlot = (gd) => {
    const div = typeof gd === "string" ? document.getElementById(gd) : gd;
    return Boolean(div && div._fullLayout && div.offsetParent !== null);
  };
  const guarded = (action) => function (gd, ...args) {
    return displayedPlot(gd) ? action.call(this, gd, ...args)
      : Promise.resolve(gd);
  };
  Plotly.Plots.resize = guarded(Plotly.Plots.resize);
  Plotly.relayout = guarded(Plotly.relayout);

  // -- 1. each figure's own scale ------------------------------------------
  let current;            // the state benchopt's setState reads and writes
  let viewClicked = false;
  let viewScale = null;    // the scale the clicked view names, if any

  // the figure a state shows, as benchopt's getPlotData finds it
  const figureOf = (state) => {
    const kind = state && state.plot_kind;
    if (!kind || !window._plots || !(kind in window._plots)) return [null, null];
    const options = Object.keys(state).filter((key) => key.startsWith(kind));
    const key = [kind, ...options.map((option) => state[option])].join("_");
    return [key, window._plots[kind][key]];
  };

  Object.defineProperty(window, "_state", {
    configurable: true,
    get: () => current,
    set: (next) => {
      const [key, figure] = figureOf(next);
      const [previous] = figureOf(current);
      if (viewClicked && viewScale) {
        // read-only on this state: benchopt would then set the figure's
        // scale when the chart type changes (its assignment is ignored)
        Object.defineProperty(next, "scale", {
          value: viewScale, writable: false, enumerable: true,
          configurable: true });
      } else if (figure && figure.scale &&
                 (viewClicked || key !== previous)) {
        next.scale = figure.scale;
      }
      viewClicked = false;
      viewScale = null;
      current = next;
    },
  });

  // a view tab (or the small screens' view menu) is about to call setConfig
  const viewEvent = (event) => {
    const item = event.target.closest &&
      event.target.closest("#view-tabs .view, #tabs");
    if (item) {
      const name = item.tagName === "SELECT" ? item.value : item.textContent;
      const view = ((window.metadata || {}).plot_configs || {})[name] || {};
      viewClicked = true;
      viewScale = view.scale || null;
      setTimeout(() => { viewClicked = false; viewScale = null; });
    }
  };
  document.addEventListener("click", viewEvent, true);
  document.addEventListener("change", viewEvent, true);

  // -- 2. readable ticks on short log axes ---------------------------------
  const LABELLED_DECADES = 3;
  const SUPERSCRIPT = (exponent) => String(exponent).replace("-", "\u2212");

  const tickText = (value) => {
    if (value >= 1e-3 && value < 1e4) return String(Number(value.toPrecision(3)));
    const [mantissa, exponent] = value.toExponential(1).split("e");
    const digits = String(Number(mantissa));
    const power = `10<sup>${SUPERSCRIPT(Number(exponent))}</sup>`;
    return digits === "1" ? power : `${digits}\u00d7${power}`;
  };

  const DIGITS = [1, 2, 3, 4, 5, 6, 7, 8, 9];

  // the values step x 10^k (k integer) within [low, high] (powers of ten)
  const stepsWithin = (low, high, steps) => {
    const values = [];
    for (let k = Math.floor(low); k <= Math.ceil(high); k++) {
      for (const step of steps) {
        const exponent = k + Math.log10(step);
        if (exponent >= low - 1e-9 && exponent <= high + 1e-9) {
          values.push(Number((step * 10 ** k).toPrecision(6)));
        }
      }
    }
    return values;
  };

  // labelled tick values of a log axis spanning [low, high]
  const logTicks = (low, high) => {
    const values = stepsWithin(low, high, high - low < 1 ? DIGITS : [1, 2, 5]);
    if (values.length >= 2) return values;
    // narrower than one step: four evenly spread values
    return [0, 1, 2, 3].map((i) => Number(
      (10 ** (low + (i + 0.5) * (high - low) / 4)).toPrecision(2)));
  };

  const readableTicks = (gd) => {
    const layout = gd._fullLayout;
    if (!layout) return;
    const update = {};
    ["xaxis", "yaxis"].forEach((name) => {
      const axis = layout[name];
      const own = gd.layout && gd.layout[name];
      if (!axis || !own || axis.type !== "log" || !axis.range) return;
      const [low, high] = [Math.min(...axis.range), Math.max(...axis.range)];
      if (high - low >= LABELLED_DECADES) {
        if (own.tickmode === "array") {  // zoomed out again
          update[`${name}.tickmode`] = "auto";
          update[`${name}.tickvals`] = null;
          update[`${name}.ticktext`] = null;
          update[`${name}.minor`] = { ...own.minor, tickmode: "auto",
                                       tickvals: undefined };
        }
        return;
      }
      const values = logTicks(low, high);
      if (own.tickmode !== "array" ||
          JSON.stringify(own.tickvals) !== JSON.stringify(values)) {
        update[`${name}.tickmode`] = "array";
        update[`${name}.tickvals`] = values;
        update[`${name}.ticktext`] = values.map(tickText);
        // unlabelled ticks at the other digits (plotly would draw its minor
        // ticks of a labelled array densely, as a black bar); a new object:
        // benchopt's axes share theirs
        update[`${name}.minor`] = {
          ...own.minor, tickmode: "array",
          tickvals: stepsWithin(low, high, DIGITS)
            .filter((value) => !values.includes(value)),
        };
      }
    });
    if (Object.keys(update).length) Plotly.relayout(gd, update);
  };

  // after every figure benchopt draws, and after every zoom or relayout
  const react = Plotly.react;
  Plotly.react = function (gd, ...args) {
    withResolvedSteps(args[0]);
    withMarks(args[0], args[1]);
    return Promise.resolve(react.call(this, gd, ...args)).then((result) => {
      if (!gd._bilevelTicks) gd._bilevelTicks = () => readableTicks(gd);
      gd.removeListener("plotly_relayout", gd._bilevelTicks);
      gd.on("plotly_relayout", gd._bilevelTicks);
      readableTicks(gd);
      return result;
    });
  };

  // -- 4. the resolved steps in the tooltips -------------------------------
  const withResolvedSteps = (traces) => {
    const figure = figureOf(current)[1];
    if (!Array.isArray(traces) || !figure || !Array.isArray(figure.data)) {
      return;
    }
    const steps = {};
    figure.data.forEach((curve) => {
      if (curve.resolved) steps[curve.label] = curve.resolved;
    });
    traces.forEach((trace) => {
      const resolved = steps[trace.name];
      if (resolved && typeof trace.hovertemplate === "string" &&
          trace.hovertemplate.startsWith(trace.name + " ")) {
        trace.hovertemplate = trace.name + " <br> " + resolved + " <br> " +
          trace.hovertemplate.slice(trace.name.length + " <br> ".length);
      }
    });
  };

  // -- 6. and 7. the start apart on a log x-axis, few markers ---------------
  const MARKER_BINS = 12;  // curve_marks.MARKER_BINS
  const START_APART = "start_apart";  // curve_marks.START_APART
  const finite = (value) => typeof value === "number" && Number.isFinite(value);

  // the indices that carry a marker: a curve's first point in each of
  // MARKER_BINS equal parts of [low, high] (curve_marks.marked)
  const marked = (positions, low, high) => {
    const width = (high - low) / MARKER_BINS || 1;
    const seen = new Set();
    const indices = new Set();
    positions.forEach((position, index) => {
      if (!finite(position)) return;
      const part = Math.min(Math.max(
        Math.floor((position - low) / width), 0), MARKER_BINS - 1);
      if (!seen.has(part)) {
        seen.add(part);
        indices.add(index);
      }
    });
    return indices;
  };

  const withMarks = (traces, layout) => {
    if (!Array.isArray(traces)) return;
    const logX = Boolean(layout && layout.xaxis && layout.xaxis.type === "log");
    const drawn = (value) => (!finite(value) ? NaN
      : logX ? (value > 0 ? Math.log10(value) : NaN) : value);
    // benchopt's median curves; their bands are "lines" of the same group
    const curves = traces.filter((trace) => trace.mode === "lines+markers" &&
      Array.isArray(trace.x) && trace.x.length);
    const all = curves.flatMap((trace) => trace.x.map(drawn)).filter(finite);
    if (!all.length) return;
    const low = all.reduce((a, b) => Math.min(a, b));
    const high = all.reduce((a, b) => Math.max(a, b));
    curves.forEach((trace) => {
      const keep = marked(trace.x.map(drawn), low, high);
      const size = (trace.marker && trace.marker.size) || 10;
      trace.marker = { ...trace.marker,
        size: trace.x.map((_, index) => (keep.has(index) ? size : 0)) };
    });
    const figure = figureOf(current)[1];
    if (!logX || !figure || !figure[START_APART]) return;
    const groups = new Set(curves.filter((trace) => trace.x.length > 1)
      .map((trace) => trace.legendgroup));
    traces.forEach((trace) => {
      if (!Array.isArray(trace.x) || trace.x.length < 2 ||
          !groups.has(trace.legendgroup)) return;
      if (trace.mode === "lines+markers") {
        // a gap (null) after the start: its marker stays, its segment goes
        const gap = (values) => [values[0], null, ...values.slice(1)];
        trace.x = gap(trace.x);
        trace.y = gap(trace.y);
        trace.marker.size = gap(trace.marker.size);
        trace.marker.size[1] = 0;
      } else if (trace.mode === "lines") {
        // the band, from the first evaluation on
        trace.x = trace.x.slice(1);
        trace.y = trace.y.slice(1);
      }
    });
  };

  // -- 3. the table's numbers ----------------------------------------------
  const WHOLE = 1e5;  // plot_helpers.WHOLE
  tableFloatPrecision = 3;  // plot_helpers.SIGNIFICANT
  const scientific = (value) => {
    if (!Number.isFinite(value)) return String(value);
    if (Number.isInteger(value) && Math.abs(value) < WHOLE) return String(value);
    // 6.11e-02, as Python writes it (plot_helpers.table_number)
    return value.toExponential(Math.max(0, tableFloatPrecision - 1))
      .replace(/e([+-])(\d)$/, "e$10$2");
  };
  const Grid = gridjs.Grid;
  gridjs.Grid = function (config) {
    (config.columns || []).forEach((column) => {
      const format = column.formatter;
      if (format) {
        column.formatter = (cell, ...rest) => (typeof cell === "number"
          ? scientific(cell) : format(cell, ...rest));
      }
    });
    return new Grid(config);
  };
  gridjs.Grid.prototype = Grid.prototype;
})();
