"""Convergence curves against oracle calls: the papers' x-axis.

Papers 000 and 001 plot gaps against "stochastic oracle queries" (samples);
this plot puts any metric against any of the counting view's counters, the
iteration count or time, with the median over repetitions (repetitions that
stopped earlier are carried forward, as in benchopt's objective_curve).
"""
from benchopt import BasePlot

from benchmark_utils.report.plot_helpers import median_over_repetitions

X_AXES = {
    "samples (upper + lower)": ("objective_n_samples_upper",
                                "objective_n_samples_lower"),
    "upper-level samples": ("objective_n_samples_upper",),
    "lower-level samples": ("objective_n_samples_lower",),
    "gradient evaluations": ("objective_n_grad_evals",),
    "LMO calls": ("objective_n_lmo",),
    "projections": ("objective_n_projections",),
    "Hessian-vector products": ("objective_n_hvp",),
    "iterations": ("stop_val",),
    "time": ("time",),
}


class Plot(BasePlot):
    name = "oracle_curve"
    type = "scatter"
    options = {
        "dataset": ...,
        "objective": ...,
        "objective_column": ...,
        "X_axis": list(X_AXES),
    }

    def plot(self, df, dataset, objective, objective_column, X_axis):
        df = df.query("dataset_name == @dataset and objective_name == @objective")
        curves = []
        for solver, df_solver in df.groupby("solver_name"):
            if df_solver[objective_column].isna().all():
                continue
            y = median_over_repetitions(df_solver, objective_column)
            x = sum(median_over_repetitions(df_solver, column)
                    if column != "stop_val" else y.index.to_series()
                    for column in X_AXES[X_axis])
            curves.append({"x": x.tolist(), "y": y.tolist(), "label": solver,
                           **self.get_style(solver)})
        return curves

    def get_metadata(self, df, dataset, objective, objective_column, X_axis):
        return {
            "title": f"{objective}\nData: {dataset}",
            "xlabel": X_axis,
            "ylabel": objective_column.replace("objective_", ""),
        }
