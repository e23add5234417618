"""End-of-budget values of every solver on one dataset: a table.

For each solver, its last evaluation over repetitions (the numbers of
``python -m benchmark_utils.report.summary``): each quantity has two
columns, the median (a number, which the table sorts) and next to it the
spread ``[q20, q80]``, the 20 % and 80 % quantiles (the band of the curves;
one repetition gives ``[m, m]``), both in scientific notation with 3
significant digits (``plot_helpers.table_number``; whole numbers below
1e5 as they are), headers in full. A counter has its spread
column only where it varies for some solver (a wall-clock budget): under an
iteration budget the median says it all. First the measures of
progress and task metrics the dataset reports, then the budget it spent
(samples, oracle calls, LMOs, projections, infeasible cuts, divergence
flag) and the time, then every step the solver ran with and its source
(given, tuned, default rule, derived; benchmark_utils/solvers/steps.py),
and last the solver's full parameters (the other plots show short
labels). Columns no solver reports on this dataset are left out.
"""
import pandas as pd
from benchopt import BasePlot

from benchmark_utils.report.families import is_counter
from benchmark_utils.report.plot_helpers import (
    dataset_labels,
    dataset_rows,
    solver_labels,
    table_number,
)
from benchmark_utils.report.resolved import is_resolved, table_text
from benchmark_utils.report.summary import (
    final_spreads,
    last_evaluations,
    spread_header,
)


class Plot(BasePlot):
    name = "final_values"
    type = "table"
    options = {"dataset": lambda df: list(dataset_labels(df)),
               "objective": ...}

    def plot(self, df, dataset, objective):
        return self._table(df, dataset, objective)[1]

    def get_metadata(self, df, dataset, objective):
        names = []
        for column, with_spread in self._table(df, dataset, objective)[0]:
            name = ("time (s)" if column == "time"
                    else column.replace("objective_", ""))
            names += [name, f"{name} {spread_header()}"][:1 + with_spread]
        # the full name, with spaces where the HTML title may wrap
        return {"title": dataset_labels(df)[dataset].replace(",", ", "),
                "columns": ["solver", *names, "resolved steps",
                            "parameters"],
                "default_order_ascending": True, "default_order_column": 0}

    def _table(self, df, dataset, objective):
        """``([(column, with spread)], rows)``: the table's columns and
        rows (computed once for a figure's metadata and data)."""
        key = (id(df), dataset, objective)
        if getattr(self, "_last", (None,))[0] != key:
            self._last = (key, *_final_table(df, dataset, objective))
        return self._last[1:]


def _final_table(df, dataset, objective):
    rows = dataset_rows(df, dataset, objective)
    reported = [c for c in rows.columns
                if c.startswith("objective_") and c != "objective_name"
                and not is_resolved(c) and rows[c].notna().any()]
    # measures of progress first, then the budget spent, then the time
    columns = ([c for c in reported if not is_counter(c)]
               + [c for c in reported if is_counter(c)] + ["time"])
    labels = solver_labels(df)
    spreads = {solver: final_spreads(last, columns) for solver, last
               in last_evaluations(rows).groupby("solver_name")}
    layout = [(column, not is_counter(column) or any(
        solver[column].high > solver[column].low
        for solver in spreads.values())) for column in columns]
    table = []
    for solver, spread in spreads.items():
        cells = [labels[solver]]
        for column, with_spread in layout:
            cells.append(float(spread[column].median))
            if with_spread:
                cells.append(spread_cell(spread[column]))
        steps = table_text(rows[rows["solver_name"] == solver])
        table.append([*cells, steps, solver])
    return layout, table


def spread_cell(spread):
    """``"[q20, q80]"`` in the table's numbers (empty where no repetition
    reports the column)."""
    if pd.isna(spread.median):
        return ""
    return f"[{table_number(spread.low)}, {table_number(spread.high)}]"
