"""Print the end-of-budget numbers of a benchopt run, per solver.

    python -m benchmark_utils.report.summary outputs/<run>.parquet \
        [metric ...] [--min-max] [--width N]

(``--help`` says the same.) One table per dataset, at most ``--width``
characters wide (80 by default; wider tables wrap their columns).

For each dataset and solver: the last logged value of each metric, as its
median over repetitions with its spread, ``median [q20, q80]`` (the band
of the report's curves; ``--min-max`` gives the min-max range instead, the
span Cao et al. 2023, App. F.3, plot around their mean), and the median
time and samples at that point. A repetition that stopped earlier counts
with its last value. Used to write the numbers of docs/results.md (the
papers' claims); the report's final-values table gives the same numbers.
"""
import argparse
import sys

import pandas as pd

from benchmark_utils.report.labels import short_labels
from benchmark_utils.report.plot_helpers import QUANTILES, Spread

# the default metrics, those of each family a run reports: the simple
# family's gaps and task metrics, the general family's value, stationarity
# and task metrics (the columns a dataset does not report are left out)
DEFAULT_METRICS = ("objective_lower_gap", "objective_upper_gap_abs",
                   "objective_upper_value", "objective_test_error",
                   "objective_recovery_rate", "objective_n_infeasible",
                   "objective_value", "objective_upper_gap",
                   "objective_hypergrad_norm", "objective_fw_gap",
                   "objective_test_accuracy", "objective_cleaning_auc")
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


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="python -m benchmark_utils.report.summary",
        description="The last evaluation of every solver of a benchopt "
                    "run, per dataset: median [q20, q80] over repetitions "
                    "of each metric, the median time and samples.")
    parser.add_argument("result", metavar="RESULT",
                        help="a benchopt result file (outputs/<run>.parquet)")
    parser.add_argument("metrics", nargs="*", metavar="METRIC",
                        help="objective_* columns (default: each family's "
                             "value, gaps, stationarity and task metrics)")
    parser.add_argument("--min-max", action="store_true",
                        help="the min-max range instead of q20-q80")
    parser.add_argument("--width", type=int, default=80,
                        help="the widest line printed (default 80)")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    try:
        frame = pd.read_parquet(args.result)
    except (OSError, ValueError) as error:
        print(f"RESULT must be a benchopt result file, got {args.result}: "
              f"{error}", file=sys.stderr)
        return 2
    spread = MIN_MAX if args.min_max else QUANTILES
    table = summarize(frame, tuple(args.metrics) or DEFAULT_METRICS, spread)
    print(f"median [{spread_header(spread)}] over repetitions")
    for dataset, rows in table.groupby("dataset", sort=False):
        rows = rows.drop(columns="dataset").dropna(axis=1, how="all")
        print(f"\n{dataset}")
        print(rows.to_string(index=False, line_width=args.width))
    return 0


if __name__ == "__main__":
    sys.exit(main())
