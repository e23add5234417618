"""The two levels in one panel: upper-level gap against lower-level gap.

A simple-bilevel method must drive both gaps down; each curve follows one
solver's median trajectory over repetitions (from its first evaluation to
its last), so a reader sees at once which methods trade lower-level
feasibility for upper-level progress. It has no band: both coordinates
spread over repetitions, and a band along one of them would understate
the spread (the curve plots of each gap draw theirs). Only simple-family
datasets have these two gaps; where no f* is certified (a nonconvex upper
level) the upper-level value stands in for the upper gap.
"""
from benchopt import BasePlot

from benchmark_utils.report.families import SIMPLE
from benchmark_utils.report.plot_helpers import (
    dataset_option,
    dataset_rows,
    finish_the_report,
    no_dataset_curves,
    scale_of,
    solver_curve,
    solver_spreads,
    solver_styles,
)

LOWER_GAP = "objective_lower_gap"


class Plot(BasePlot):
    name = "gap_tradeoff"
    type = "scatter"
    options = {"dataset": dataset_option(SIMPLE), "objective": ...}

    def plot(self, df, dataset, objective):
        finish_the_report(df)
        rows = dataset_rows(df, dataset, objective)
        if rows is None:
            return no_dataset_curves(SIMPLE)
        y_column = SIMPLE.resolve(rows, "upper_gap")
        styles = solver_styles(df)
        return [solver_curve(styles[label], label, x.median, y.median)
                for label, (x, y)
                in solver_spreads(df, rows, [LOWER_GAP, y_column])]

    def get_metadata(self, df, dataset, objective):
        rows = dataset_rows(df, dataset, objective)
        y_column = (SIMPLE.resolve(rows, "upper_gap") if rows is not None
                    else "upper_gap")
        return {"title": dataset, "xlabel": "lower_gap",
                "ylabel": y_column.replace("objective_", ""),
                # both axes are gaps: logarithmic from one decade
                "scale": scale_of(self.plot(df, dataset, objective),
                                  log_y=True, x_decades=1)}
