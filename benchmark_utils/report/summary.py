"""Print the end-of-budget numbers of a benchopt run, per solver.

    python -m benchmark_utils.report.summary outputs/<run>.parquet \
        [metric ...] [--min-max]

For each dataset and solver: the last logged value of each metric, as its
median over repetitions with its spread, ``median [q20, q80]`` (the band
of the report's curves; ``--min-max`` gives the min-max range instead, the
span Cao et al. 2023, App. F.3, plot around their mean), and the median
time and samples at that point. A repetition that stopped earlier counts
with its last value. Used to write the numbers of docs/results.md (the
papers' claims); the report's final-values table gives the same numbers.
"""
import sys

import pandas as pd

from benchmark_utils.report.labels import short_labels
from benchmark_utils.report.plot_helpers import QUANTILES, Spread

DEFAULT_METRICS = ("objective_lower_gap", "objective_upper_gap_abs",
                   "objective_upper_value", "objective_test_error",
                   "objective_recovery_rate", "objective_n_infeasible")
MIN_MAX = (0.0, 1.0)


def last_evaluations(df):
    """The last logged row of every (dataset, solver, repetition)."""
    return df.sort_values("stop_val").groupby(
        ["dataset_name", "solver_name", "idx_rep"]).tail(1)


def final_spreads(last, columns, quantiles=QUANTILES):
    """``{column: Spread}`` of the last evaluations ``last`` (one solver),
    each a median and a ``quantiles`` range over repetitions (NaN where no
    repetition reports the column)."""
    low, high = quantiles
    return {column: Spread(last[column].median(),
                           last[column].quantile(low),
                           last[column].quantile(high))
            for column in columns}


def spread_text(spread, with_median=True):
    """``"median [low, high]"``, or the bracket alone; empty where there is
    no value. Counts print whole, other values with 4 significant
    digits."""
    if pd.isna(spread.median):
        return ""
    band = f"[{_number(spread.low)}, {_number(spread.high)}]"
    return f"{_number(spread.median)} {band}" if with_median else band


def _number(value):
    if float(value).is_integer() and abs(value) < 1e7:
        return str(int(value))
    return f"{value:.4g}"


def spread_header(quantiles=QUANTILES):
    """What a spread is called in a header: ``q20-q80`` or ``min-max``."""
    if tuple(quantiles) == MIN_MAX:
        return "min-max"
    return "-".join(f"q{100 * q:g}" for q in quantiles)


def summarize(df, metrics=DEFAULT_METRICS, quantiles=QUANTILES):
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
        for metric, spread in final_spreads(runs, metrics,
                                            quantiles).items():
            if not pd.isna(spread.median):
                row[metric.replace("objective_", "")] = spread_text(spread)
        rows.append(row)
    return pd.DataFrame(rows)


if __name__ == "__main__":
    args = [arg for arg in sys.argv[1:] if arg != "--min-max"]
    spread = MIN_MAX if "--min-max" in sys.argv else QUANTILES
    frame = pd.read_parquet(args[0])
    chosen = tuple(args[1:]) or DEFAULT_METRICS
    print(f"median [{spread_header(spread)}] over repetitions")
    with pd.option_context("display.width", 250, "display.max_columns", 20,
                           "display.max_colwidth", 60):
        print(summarize(frame, chosen, spread).to_string(index=False))
