"""End-of-budget values of every solver on one dataset: a table.

For each solver, the median over repetitions of its last evaluation (the
numbers of ``python -m benchmark_utils.report.summary``): first the
measures of progress and task metrics the dataset reports, then the
budget it spent (samples, oracle calls, LMOs, projections, infeasible
cuts, divergence flag) and the time, and last the solver's full parameters
(the other plots show short labels). Columns no solver reports on this
dataset are left out.
"""
from benchopt import BasePlot

from benchmark_utils.report.families import is_counter
from benchmark_utils.report.plot_helpers import (
    dataset_labels,
    dataset_rows,
    solver_labels,
)
from benchmark_utils.report.summary import last_evaluations


class Plot(BasePlot):
    name = "final_values"
    type = "table"
    options = {"dataset": lambda df: list(dataset_labels(df)),
               "objective": ...}

    def plot(self, df, dataset, objective):
        rows = dataset_rows(df, dataset, objective)
        columns = self._columns(rows)
        labels = solver_labels(df)
        medians = last_evaluations(rows).groupby("solver_name")[
            columns + ["time"]].median()
        return [[labels[solver], *values.tolist(), solver]
                for solver, values in medians.iterrows()]

    def get_metadata(self, df, dataset, objective):
        columns = self._columns(dataset_rows(df, dataset, objective))
        # the full name, with spaces where the HTML title may wrap
        return {"title": dataset_labels(df)[dataset].replace(",", ", "),
                "columns": (["solver"]
                            + [c.replace("objective_", "") for c in columns]
                            + ["time (s)", "parameters"]),
                "default_order_ascending": True, "default_order_column": 0}

    @staticmethod
    def _columns(rows):
        reported = [c for c in rows.columns
                    if c.startswith("objective_") and c != "objective_name"
                    and rows[c].notna().any()]
        # measures of progress first, then the budget spent
        return ([c for c in reported if not is_counter(c)]
                + [c for c in reported if is_counter(c)])
