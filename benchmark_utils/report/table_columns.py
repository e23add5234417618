"""The columns of the final-values table, and what goes to its details.

A result holds some 20 metrics and counters per dataset; with a spread
column each, a steps column and the parameters, the table had over 30
columns, wider than any page, the ones a reader compares lost among them.
The table shows what the curves show (:mod:`.families`): the dataset's
family's measures of progress and its task metric, each with its spread,
the counts of its x-axes (summed as the axes sum them: samples are upper
+ lower), the time with its spread, and the divergence flag where a solver
diverged: with the solver and the details, 16 columns at most (the general
family: 3 metrics and a task metric with their spreads, 3 counts).
Every other reported column (the other metrics, the counters' parts and
the other counters, a counter's spread where it varies), the resolved
steps and the full parameters are in the last column, ``details``.
"""
from typing import NamedTuple

import pandas as pd

from benchmark_utils.report.families import (
    GENERAL,
    SIMPLE,
    TASK,
    X_AXES,
    is_counter,
)
from benchmark_utils.report.plot_helpers import QUANTILES, Spread
from benchmark_utils.report.resolved import is_resolved

DIVERGED = "objective_diverged"


class TableColumn(NamedTuple):
    """A column of the table: its ``header``, the result ``columns`` it
    sums (one, but for the samples) and whether a spread column
    follows it."""
    header: str
    columns: tuple
    spread: bool


def family_of(rows):
    """The family (simple or general) whose roles the rows define, or
    None."""
    return next((family for family in (SIMPLE, GENERAL)
                 if family.has_dataset(rows)), None)


def main_columns(rows):
    """The ``[TableColumn]`` the table shows for one dataset's rows (module
    doc)."""
    family = family_of(rows)
    roles = ([(family, role) for role in family.metrics] if family else [])
    metrics = [family.resolve(rows, role)
               for family, role in [*roles, (TASK, "task_metric")]]
    layout = [TableColumn(short(column), (column,), True)
              for column in dict.fromkeys(m for m in metrics if m)]
    for axis in family.x_axes if family else ():
        columns = tuple(c for c in X_AXES[axis].columns if is_counter(c)
                        and c in rows and rows[c].notna().any())
        if columns:
            layout.append(TableColumn(
                X_AXES[axis].label.removesuffix(" + 1"), columns, False))
    layout.append(TableColumn("time (s)", ("time",), True))
    if DIVERGED in rows and (rows[DIVERGED] > 0).any():
        layout.append(TableColumn("diverged", (DIVERGED,), False))
    return layout


def detail_columns(rows, layout):
    """The reported ``objective_*`` columns the table's details give: those
    no column of ``layout`` shows alone."""
    shown = {column.columns[0] for column in layout
             if len(column.columns) == 1}
    return [c for c in rows.columns
            if c.startswith("objective_") and c != "objective_name"
            and not is_resolved(c) and c not in shown
            and rows[c].notna().any()]


def short(column):
    """A result column as the table names it: ``lower_gap``."""
    return column.replace("objective_", "")


def spread_of(last, columns):
    """The :class:`Spread` over the repetitions' last evaluations ``last``
    of the sum of ``columns`` (NaN where no repetition reports them)."""
    values = last[list(columns)].sum(axis=1, min_count=1)
    low, high = QUANTILES
    return Spread(values.median(), values.quantile(low),
                  values.quantile(high))


def details_text(last, columns, number):
    """``"value 1.23e-01 [1.20e-01, 1.25e-01]; n_hvp 300"``: the median of
    each of ``columns`` over ``last`` and, where the repetitions differ, its
    spread, each printed with ``number``."""
    parts = []
    for column in columns:
        spread = spread_of(last, (column,))
        if pd.isna(spread.median):
            continue
        text = f"{short(column)} {number(spread.median)}"
        if spread.high > spread.low:
            text += f" [{number(spread.low)}, {number(spread.high)}]"
        parts.append(text)
    return "; ".join(parts)
