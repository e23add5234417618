"""Where a curve's line and markers go, so that neither reads as data.

- **The start apart on a log x-axis.** Every curve of a budget (counts + 1,
  time) starts at its value at the start, at x = 1 (or a few microseconds),
  and its next point lies where its first evaluation spent its budget: a
  warm start puts it decades away. On a log axis the straight segment
  between them reads as a measured trajectory over those decades, which
  nothing measured; there the start is a marker of its own, not joined to
  the rest of the curve (a gap after it), and the band begins at the first
  evaluation. A linear axis keeps the segment: there it spans the budget
  spent before the first evaluation at its true scale, from a start at
  (nearly) 0. Figures whose x is no budget (``gap_tradeoff``: both
  coordinates are measured) keep it too; the curve plots ask for it with
  :data:`START_APART` in their metadata.
- **Few markers.** A solver that evaluates many times within a short span
  of x (SBCGI and SBCGF after their warm start, on a log axis) piled its
  markers into a column. Each curve carries a marker only at its first
  point in each of :data:`MARKER_BINS` equal parts of the figure's x-range
  (as drawn: log10 on a log axis), so at most that many, spread along x;
  the line and the tooltips keep every evaluation.

The HTML applies both when it draws, on the axis shown (the Scale menu may
change it: report_views.js, the same rule); the ``--no-html`` PDFs
(:func:`.finish.write_figures`) through :func:`with_start_apart` and
:func:`thin_markers`.
"""
import math

import numpy as np

# the metadata key of a figure whose start is drawn apart on a log x-axis
START_APART = "start_apart"
# parts of the x-range with at most one marker per curve
# (report_views.js has the same number)
MARKER_BINS = 12
LOG_X = ("semilog-x", "loglog")


def marked(positions, bins=MARKER_BINS, low=None, high=None):
    """Indices of the points of a curve at ``positions`` (x as drawn) that
    carry a marker: its first point in each of ``bins`` equal parts of
    [``low``, ``high``] (the curve's own range by default). Points without
    a finite position (a gap) carry none."""
    finite = [p for p in positions if _finite(p)]
    if not finite:
        return []
    low = min(finite) if low is None else low
    high = max(finite) if high is None else high
    width = (high - low) / bins or 1.0
    seen, indices = set(), []
    for index, position in enumerate(positions):
        if not _finite(position):
            continue
        part = min(max(int((position - low) // width), 0), bins - 1)
        if part not in seen:
            seen.add(part)
            indices.append(index)
    return indices


def _finite(value):
    return value is not None and math.isfinite(value)


def with_start_apart(figure):
    """A copy of the scatter ``figure`` (benchopt's plot data) where, on a
    log x-axis of a figure that asks for it (:data:`START_APART`), each
    curve has a gap (NaN) after its start and its band starts at its first
    evaluation (NaN at the start); other figures as they are."""
    if not (figure.get(START_APART) and figure.get("scale") in LOG_X):
        return figure
    curves = []
    for curve in figure["data"]:
        curve = dict(curve)
        if len(curve.get("x", ())) > 1:
            for key in ("x", "y"):
                curve[key] = [curve[key][0], math.nan, *curve[key][1:]]
            for key in ("y_low", "y_high"):
                if key in curve:
                    curve[key] = [math.nan, math.nan, *curve[key][1:]]
        curves.append(curve)
    return {**figure, "data": curves}


def thin_markers(fig):
    """Each curve of the matplotlib figure ``fig`` with markers at the
    points :func:`marked` picks over its axes' x-range, as drawn."""
    for ax in fig.axes:
        log = ax.get_xscale() == "log"
        lines = [line for line in ax.get_lines() if len(line.get_xdata())]
        positions = [_drawn(line.get_xdata(), log) for line in lines]
        values = [p[np.isfinite(p)] for p in positions]
        values = np.concatenate(values) if values else np.array([])
        if not values.size:
            continue
        for line, drawn in zip(lines, positions, strict=True):
            indices = marked(drawn.tolist(), low=values.min(),
                             high=values.max())
            if indices:
                line.set_markevery(indices)


def _drawn(x, log):
    """x as the axis draws it (log10 on a log axis; NaN where it cannot)."""
    x = np.asarray(x, dtype=float)
    if not log:
        return x
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x > 0, np.log10(np.where(x > 0, x, 1.0)), np.nan)
