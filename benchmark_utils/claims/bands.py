"""The curves of a claim's figure (the claims' pages, html_report.py, and
a comparison's page, compare/page.py): each repetition's curve, a grid
over both methods' span (log where they span decades), and the median
with its q20-q80 band over the repetitions at each grid point."""
import numpy as np

from benchmark_utils.report.plot_helpers import (
    QUANTILES,
    X_DECADES,
    Y_DECADES,
    spans,
)

GRID = 200


def run_curves(rows, metric, column):
    """Each repetition's ``(x, y)``, ordered by iteration, cut before the
    row flagged diverged (the first evaluation after a divergence), its
    non-finite values dropped."""
    curves = []
    ordered = rows.sort_values(["dataset", "rep", "iteration"])
    for _, run in ordered.groupby(["dataset", "rep"], sort=True):
        flagged = np.flatnonzero(run["diverged"].to_numpy() == 1)
        stop = flagged[0] if len(flagged) else len(run)
        x = run[column].to_numpy(dtype=float)[:stop]
        y = run[metric].to_numpy(dtype=float)[:stop]
        keep = np.isfinite(x) & np.isfinite(y)
        curves.append((x[keep], y[keep]))
    return curves


def grid_and_scales(curve_sets):
    """``(grid, log_x, log_y)`` for the curves of both methods: log x
    where their positive x span two decades, log y where every value
    (left after that) is positive and they span one."""
    xs = np.concatenate([x for curves in curve_sets for x, _ in curves])
    log_x = spans(xs[xs > 0], X_DECADES)
    ys = np.concatenate([y[x > 0] if log_x else y
                         for curves in curve_sets for x, y in curves])
    log_y = spans(ys, Y_DECADES)
    if log_x:
        xs = xs[xs > 0]
    if xs.size == 0:
        return np.array([]), log_x, log_y
    grid = (np.geomspace if log_x else np.linspace)(xs.min(), xs.max(),
                                                    GRID)
    return grid, log_x, log_y


def band_on_grid(curves, grid, log_x, log_y):
    """``(q20, median, q80)`` over the repetitions at each grid x, each
    curve interpolated (in log x and log y where those axes are log)
    over its own span only; NaN where no curve reaches."""
    def scale(values, log):
        return np.log(values) if log else values

    stack = np.full((len(curves), len(grid)), np.nan)
    for i, (x, y) in enumerate(curves):
        if log_x:
            x, y = x[x > 0], y[x > 0]
        if x.size == 0:
            continue
        inside = (grid >= x[0]) & (grid <= x[-1])
        stack[i, inside] = np.interp(scale(grid[inside], log_x),
                                     scale(x, log_x), scale(y, log_y))
    quantiles = column_quantiles(stack, (QUANTILES[0], 0.5, QUANTILES[1]))
    return np.exp(quantiles) if log_y else quantiles


def column_quantiles(stack, levels):
    """``np.nanquantile(stack, levels, axis=0)`` (its linear rule, NaN
    where a column has no value) in whole-array operations: numpy's loops
    over the columns one by one, a tenth of the report's build."""
    count = np.isfinite(stack).sum(axis=0)
    ordered = np.sort(stack, axis=0)            # NaN last
    columns = np.arange(stack.shape[1])
    rows = []
    for level in levels:
        position = level * np.maximum(count - 1, 0)
        low = np.floor(position).astype(int)
        high = np.minimum(low + 1, np.maximum(count - 1, 0))
        below, above = ordered[low, columns], ordered[high, columns]
        rows.append(np.where(count > 0, below + (above - below)
                             * (position - low), np.nan))
    return np.array(rows).reshape(len(levels), stack.shape[1])
