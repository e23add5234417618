"""The two levels in one panel: upper-level gap against lower-level gap.

A simple-bilevel method must drive both gaps down; each curve follows one
solver's median trajectory over repetitions (from its first evaluation to
its last), so a reader sees at once which methods trade lower-level
feasibility for upper-level progress. Datasets without a certified f* (a
nonconvex upper level) use the upper-level value instead.
"""
from benchopt import BasePlot

from benchmark_utils.report.plot_helpers import median_over_repetitions


class Plot(BasePlot):
    name = "gap_tradeoff"
    type = "scatter"
    options = {"dataset": ..., "objective": ...}

    def plot(self, df, dataset, objective):
        df = df.query("dataset_name == @dataset and objective_name == @objective")
        y_column = self._y_column(df)
        curves = []
        for solver, df_solver in df.groupby("solver_name"):
            if "objective_lower_gap" not in df_solver or \
                    df_solver["objective_lower_gap"].isna().all():
                continue
            x = median_over_repetitions(df_solver, "objective_lower_gap")
            y = median_over_repetitions(df_solver, y_column)
            curves.append({"x": x.tolist(), "y": y.tolist(), "label": solver,
                           **self.get_style(solver)})
        return curves

    @staticmethod
    def _y_column(df):
        column = "objective_upper_gap_abs"
        if column in df and not df[column].isna().all():
            return column
        return "objective_upper_value"

    def get_metadata(self, df, dataset, objective):
        df = df.query("dataset_name == @dataset and objective_name == @objective")
        return {
            "title": f"{objective}\nData: {dataset}",
            "xlabel": "lower_gap",
            "ylabel": self._y_column(df).replace("objective_", ""),
        }
