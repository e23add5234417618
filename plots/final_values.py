"""End-of-budget values of every solver on one dataset: a table.

For each solver, its last evaluation over repetitions (the numbers of
``python -m benchmark_utils.report.summary``). The columns are those the
curves show (:mod:`benchmark_utils.report.table_columns`, at most 16): the
family's measures of progress and the task metric, the counts of the
x-axes, the time, the divergence flag where a solver diverged. A metric
and the time have two columns, the median (a number, which the table
sorts) and next to it the spread ``[q20, q80]``, the 20 % and 80 %
quantiles (the band of the curves; one repetition gives ``[m, m]``), both
in scientific notation with 3 significant digits
(``plot_helpers.table_number``; whole numbers below 1e5 as they are),
headers in full; a count has its median. The last column, ``details``,
gives the rest: every other metric and counter the dataset reports (its
spread where the repetitions differ), every step the solver ran with and
its source (given, tuned, default rule, derived;
benchmark_utils/solvers/steps.py) and the solver's full parameters (the
other plots show short labels).
"""
import pandas as pd
from benchopt import BasePlot

from benchmark_utils.report.plot_helpers import (
    dataset_labels,
    dataset_rows,
    finish_the_report,
    solver_labels,
    table_number,
)
from benchmark_utils.report.resolved import table_text
from benchmark_utils.report.summary import last_evaluations, spread_header
from benchmark_utils.report.table_columns import (
    detail_columns,
    details_text,
    main_columns,
    spread_of,
)


class Plot(BasePlot):
    name = "final_values"
    type = "table"
    options = {"dataset": lambda df: list(dataset_labels(df)),
               "objective": ...}

    def plot(self, df, dataset, objective):
        finish_the_report(df)
        return self._table(df, dataset, objective)[1]

    def get_metadata(self, df, dataset, objective):
        names = []
        for column in self._table(df, dataset, objective)[0]:
            names += [column.header,
                      f"{column.header} {spread_header()}"][:1 + column.spread]
        # the full name, with spaces where the HTML title may wrap
        return {"title": dataset_labels(df)[dataset].replace(",", ", "),
                "columns": ["solver", *names, "details"],
                "default_order_ascending": True, "default_order_column": 0}

    def _table(self, df, dataset, objective):
        """``([TableColumn], rows)``: the table's columns and rows
        (computed once for a figure's metadata and data)."""
        key = (id(df), dataset, objective)
        if getattr(self, "_last", (None,))[0] != key:
            self._last = (key, *_final_table(df, dataset, objective))
        return self._last[1:]


def _final_table(df, dataset, objective):
    rows = dataset_rows(df, dataset, objective)
    layout = main_columns(rows)
    others = detail_columns(rows, layout)
    labels = solver_labels(df)
    table = []
    for solver, last in last_evaluations(rows).groupby("solver_name"):
        cells = [labels[solver]]
        for column in layout:
            spread = spread_of(last, column.columns)
            cells.append(float(spread.median))
            if column.spread:
                cells.append(spread_cell(spread))
        steps = table_text(rows[rows["solver_name"] == solver])
        details = [details_text(last, others, table_number),
                   f"steps: {steps}" if steps else "",
                   f"parameters: {solver}"]
        table.append([*cells, " | ".join(part for part in details if part)])
    return layout, table


def spread_cell(spread):
    """``"[q20, q80]"`` in the table's numbers (empty where no repetition
    reports the column)."""
    if pd.isna(spread.median):
        return ""
    return f"[{table_number(spread.low)}, {table_number(spread.high)}]"
