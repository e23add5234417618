"""Print the end-of-budget numbers of a benchopt run, per solver.

    python -m benchmark_utils.report.summary outputs/<run>.parquet [metric ...]

For each dataset and solver: the last logged value of each metric, the
median over repetitions, with the min-max range (Cao et al. 2023, App.
F.3, plots the mean with the min-max span), and the median time and samples
at that point.
Used to write the README's "Reproducing the papers" numbers.
"""
import sys

import pandas as pd

from benchmark_utils.report.labels import short_labels

DEFAULT_METRICS = ("objective_lower_gap", "objective_upper_gap_abs",
                   "objective_upper_value", "objective_test_error",
                   "objective_recovery_rate", "objective_n_infeasible")


def last_evaluations(df):
    """The last logged row of every (dataset, solver, repetition)."""
    return df.sort_values("stop_val").groupby(
        ["dataset_name", "solver_name", "idx_rep"]).tail(1)


def summarize(df, metrics=DEFAULT_METRICS):
    metrics = [m for m in metrics if m in df.columns]
    last = last_evaluations(df)
    # names without the parameters shared by all runs of a method or dataset
    labels = short_labels(df["solver_name"].unique())
    datasets = short_labels(df["dataset_name"].unique())
    rows = []
    for (dataset, solver), runs in last.groupby(["dataset_name",
                                                 "solver_name"]):
        row = {"dataset": datasets[dataset], "solver": labels[solver],
               "time": runs["time"].median(),
               "samples": (runs["objective_n_samples_upper"]
                           + runs["objective_n_samples_lower"]).median()}
        for metric in metrics:
            values = runs[metric].dropna()
            if len(values):
                row[metric.replace("objective_", "")] = (
                    f"{values.median():.3g} [{values.min():.3g}, "
                    f"{values.max():.3g}]")
        rows.append(row)
    return pd.DataFrame(rows)


if __name__ == "__main__":
    frame = pd.read_parquet(sys.argv[1])
    chosen = tuple(sys.argv[2:]) or DEFAULT_METRICS
    with pd.option_context("display.width", 250, "display.max_columns", 20,
                           "display.max_colwidth", 60):
        print(summarize(frame, chosen).to_string(index=False))
