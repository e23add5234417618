"""Convergence curves of one family against its oracle counts.

Cao et al. 2023 and Giang-Tran et al. 2025 plot gaps against stochastic
oracle queries (samples); Kwon et al. 2023 and Abolfazli et al. 2023 plot
gradient norms, Frank-Wolfe gaps and inner distances against samples or
time. A subclass names its :class:`~benchmark_utils.report.families.Family`;
each figure is one dataset of that family, one metric role and one x-axis,
with the median over repetitions of every solver and its 20-80 % quantile
band, a shaded area (repetitions that stopped earlier are carried forward,
as in benchopt's objective_curve). The band is vertical, the spread of the
metric across repetitions at each evaluation, drawn at the median count.
"""
from benchopt import BasePlot

from benchmark_utils.report.curve_marks import START_APART
from benchmark_utils.report.families import X_AXES
from benchmark_utils.report.plot_helpers import (
    dataset_option,
    dataset_rows,
    finish_the_report,
    message_curves,
    no_dataset_curves,
    scale_of,
    solver_curve,
    solver_labels,
    solver_spreads,
    solver_styles,
)
from benchmark_utils.report.resolved import hover_text


def family_curve_options(family):
    """The ``options`` of a family's curve plot (benchopt draws one figure
    per combination)."""
    return {"dataset": dataset_option(family), "objective": ...,
            "metric": list(family.metrics), "X_axis": list(family.x_axes)}


def metric_label(metric, column):
    """The y-axis label: the metric the menu shows, and the column that
    plays it on this dataset where its name differs (``upper_gap: value``
    where no F* is known), so the axis never names another metric than the
    menu."""
    name = column.replace("objective_", "") if column else metric
    return metric if name == metric else f"{metric}: {name}"


class FamilyCurvePlot(BasePlot):
    """Base of the ``plots/*_curve.py`` plots; subclasses set ``name``,
    ``family`` and ``options = family_curve_options(family)``."""
    type = "scatter"
    family = None

    def plot(self, df, dataset, objective, metric, X_axis):
        finish_the_report(df)
        return self._curves(df, dataset, objective, metric, X_axis)[1]

    def get_metadata(self, df, dataset, objective, metric, X_axis):
        column, curves = self._curves(df, dataset, objective, metric, X_axis)
        return {"title": dataset, "xlabel": X_AXES[X_axis].label,
                "ylabel": metric_label(metric, column),
                "scale": scale_of(curves, log_y=self.family.log_y(column)),
                # every x-axis here is a budget (curve_marks)
                START_APART: True}

    def _curves(self, df, dataset, objective, metric, X_axis):
        # benchopt asks for a figure's metadata, then its data: compute once
        key = (id(df), dataset, objective, metric, X_axis)
        if getattr(self, "_last", (None,))[0] != key:
            self._last = (key, *self._compute(df, dataset, objective, metric,
                                              X_axis))
        return self._last[1:]

    def _compute(self, df, dataset, objective, metric, X_axis):
        rows = dataset_rows(df, dataset, objective)
        if rows is None:
            return None, no_dataset_curves(self.family)
        column = self.family.resolve(rows, metric)
        axis = X_AXES[X_axis]
        styles = solver_styles(df)
        labels = solver_labels(df)
        steps = {labels[solver]: hover_text(runs)
                 for solver, runs in rows.groupby("solver_name")}
        curves = []
        for label, (y, *counts) in solver_spreads(
                df, rows, [column, *axis.columns]):
            # on the metric's evaluations (a count logged where the metric
            # is not would leave x longer than y)
            x = sum(count.median for count in counts).reindex(y.median.index)
            if not (x > 0).any():
                # it makes no call of this kind: a vertical line at 0 would
                # read as instant convergence
                continue
            curves.append(solver_curve(styles[label], label, x + axis.offset,
                                       y.median, band=(y.low, y.high),
                                       resolved=steps[label]))
        if not curves:
            curves = message_curves(f"no solver here makes {axis.label}")
        return column, curves
