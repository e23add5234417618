"""Helpers shared by the custom plots in ``plots/``.

Datasets are offered under short, file-safe labels (benchopt builds each
figure's key, hence its ``--no-html`` file name, from the option values),
and solvers are shown under short labels (:mod:`.labels`).
"""
from typing import NamedTuple

import matplotlib
import numpy as np
import pandas as pd

from benchmark_utils.report.finish import register
from benchmark_utils.report.labels import short_labels
from benchmark_utils.report.styles import assign_styles

# benchopt keeps every matplotlib figure of ``benchopt plot --no-html`` open
# to return them all, so past 20 figures matplotlib warns about memory on
# each new one; the report's figures are few and small (one per dataset,
# metric and x-axis of its family), so the warning would only be noise.
matplotlib.rcParams["figure.max_open_warning"] = 0

# the dataset option's only value when a run has no dataset for a plot: the
# HTML report needs every plot to have a figure, which then says so
NO_DATASET = "none"
# the band drawn around every median curve and given next to every median of
# the final-values table: 20 % and 80 % quantiles over repetitions, those of
# the time band of benchopt's objective_curve
QUANTILES = (0.2, 0.8)
# significant digits of a band's values in the report (see solver_curve)
BAND_DIGITS = 4
# the final-values table's numbers: 3 significant digits in scientific
# notation (a gap of 3e-9 and a tolerance of 1e-12 stay readable), whole
# numbers below WHOLE as they are; the page's script formats the medians
# the same way (report_views.js), table_number the spread column
SIGNIFICANT, WHOLE = 3, 1e5
# an x-axis is logarithmic where its values span at least this many decades,
# a y-axis (gaps, norms, errors) from one decade
X_DECADES, Y_DECADES = 2, 1


class Spread(NamedTuple):
    """A statistic over repetitions: its median and its quantile band."""
    median: object
    low: object
    high: object


def over_repetitions(df, column):
    """Median and :data:`QUANTILES` band of ``column`` per stop_val over
    repetitions: a :class:`Spread` of three series on the same index.

    Repetitions that stopped earlier (a timeout) are carried forward, as in
    benchopt's own objective_curve, so every statistic uses every run; with
    one repetition the band is the curve itself (zero width).
    """
    if column == "stop_val":     # the iteration axis: the index itself
        index = pd.Index(sorted(df["stop_val"].unique()), name="stop_val")
        counts = pd.Series(index.to_numpy(dtype=float), index=index)
        return Spread(counts, counts, counts)
    table = df.pivot_table(index="stop_val", columns="idx_rep",
                           values=column, aggfunc="last").ffill()
    low, high = QUANTILES
    return Spread(table.median(axis=1), table.quantile(low, axis=1),
                  table.quantile(high, axis=1))


def dataset_labels(df):
    """``{short file-safe label: full dataset name}`` of the run."""
    labels = short_labels(df["dataset_name"].unique(), file_safe=True)
    return {label: name for name, label in labels.items()}


def solver_labels(df):
    """``{full solver name: short label}`` of the run."""
    return short_labels(df["solver_name"].unique())


def dataset_option(family):
    """The ``dataset`` option of a family's plots: the labels of the
    datasets on which every metric of ``family`` is defined."""
    def datasets(df):
        labels = [label for label, name in dataset_labels(df).items()
                  if family.has_dataset(df[df["dataset_name"] == name])]
        return labels or [NO_DATASET]
    return datasets


def finish_the_report(df):
    """Called first by every custom plot's ``plot`` with its data
    (benchopt's public hook, run by ``benchopt run`` and ``benchopt plot``
    before they write a report): when the command ends, the pages of the
    result file of ``df`` get their scripts and styles inline (they render
    offline) and its --no-html figures go into one folder per run
    (finish.py). Once per command."""
    register(df)


def dataset_rows(df, dataset, objective):
    """The rows of the dataset labelled ``dataset`` (None for
    :data:`NO_DATASET`)."""
    if dataset == NO_DATASET:
        return None
    name = dataset_labels(df)[dataset]
    return df[(df["dataset_name"] == name)
              & (df["objective_name"] == objective)]


def solver_styles(df):
    """``{short label: {"color", "marker"}}`` of every solver of the run
    (:func:`.styles.assign_styles`): the solvers run on one dataset share
    its figures, so they get distinct colours, the palette's most distinct
    ones, and a solver has one style in every figure of the run; the HTML
    and the ``--no-html`` figures draw the same marker
    (:func:`.styles.matplotlib_markers`)."""
    labels = solver_labels(df)
    groups = ([{labels[s] for s in solvers.unique()} for _, solvers
               in df.groupby("dataset_name")["solver_name"]]
              if "dataset_name" in df else [set(labels.values())])
    return assign_styles(sorted(set(labels.values())), groups)


def solver_spreads(df, rows, columns):
    """``(short label, [Spread of each column])`` of every solver in
    ``rows`` (one dataset of ``df``) that reports the first column (see
    :func:`over_repetitions`)."""
    labels = solver_labels(df)
    for solver, runs in rows.groupby("solver_name"):
        if runs[columns[0]].notna().any():
            yield labels[solver], [over_repetitions(runs, column)
                                   for column in columns]


def solver_curve(style, label, x, y, band=None, resolved=""):
    """One solver's curve (pandas series ``x``, ``y``), in its ``style``
    (its entry of :func:`solver_styles`); ``band``, a pair of
    series, is drawn as a shaded area around it (``y_low`` and ``y_high``,
    which both of benchopt's renderers fill, the HTML under its "quantiles"
    toggle). The band keeps :data:`BAND_DIGITS` significant digits, as many
    as the HTML's tooltips show: at full precision it would double the
    report's size. ``resolved``: the solver's resolved steps, which the
    HTML's tooltip shows (report_views.js)."""
    curve = {"x": x.tolist(), "y": y.tolist(), "label": label, **style}
    if resolved:
        curve["resolved"] = resolved
    if band is not None:
        curve["y_low"], curve["y_high"] = (
            [float(f"{value:.{BAND_DIGITS}g}") for value in side]
            for side in band)
    return curve


def table_number(value):
    """``value`` as the final-values table prints it (see
    :data:`SIGNIFICANT`): ``6.11e-02``, ``1.00e-12``, ``316``, ``nan``."""
    value = float(value)
    if value.is_integer() and abs(value) < WHOLE:
        return str(int(value))
    return f"{value:.{SIGNIFICANT - 1}e}"


def message_curves(message):
    """The curves of a figure without data: one empty curve whose legend
    says why (an empty figure would leave both renderers a blank)."""
    return [{"x": [], "y": [], "color": "gray", "marker": 0,
             "label": message}]


def no_dataset_curves(family):
    return message_curves(
        f"no dataset of the {family.name} family in this run")


def scale_of(curves, log_y, x_decades=X_DECADES):
    """benchopt's scale name for these curves: an axis is logarithmic where
    all its values are positive (a log axis would drop the others, the
    start of a count among them) and span at least ``x_decades`` (x) or
    :data:`Y_DECADES` (y, where ``log_y`` allows it) decades. Each figure
    gets its own, and every view shows its figure's (config.yml sets no
    scale; see docs/report.md)."""
    # the band counts: a log axis must hold it too
    x, y = _values(curves, "x"), _values(curves, "y", "y_low", "y_high")
    use_x = spans(x, x_decades)
    use_y = log_y and spans(y, Y_DECADES)
    return {(True, True): "loglog", (True, False): "semilog-x",
            (False, True): "semilog-y", (False, False): "linear"}[
                (use_x, use_y)]


def spans(values, decades):
    """Whether ``values`` are all positive and span ``decades``."""
    return (values.size > 0 and bool((values > 0).all())
            and _decades(values) >= decades)


def _values(curves, *keys):
    values = np.array([v for curve in curves for key in keys
                       for v in curve.get(key, ())], dtype=float)
    return values[np.isfinite(values)]


def _decades(positive):
    if positive.size == 0:
        return 0.0
    return float(np.log10(positive.max() / positive.min()))
