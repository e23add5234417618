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
from pathlib import Path

import pandas as pd

from benchmark_utils.checks.names import closest
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
# the columns of a result of this benchmark the summary reads
REQUIRED = ("dataset_name", "solver_name", "idx_rep", "stop_val", "time",
            "objective_n_samples_upper", "objective_n_samples_lower")
# what a reader may not tell apart without a word
COLUMN_NOTES = {
    "upper_gap": "F - F* (signed: below 0 where the reference is off)",
    "upper_gap_abs": "|f - f*| floored at f*'s certified accuracy (the "
                     "log-axis gap)",
    "lower_gap": "g - g* (the simple family's lower level)",
    "value": "F(x) = f(x, y*(x)) with the exact y*(x)",
}


# the narrowest --width: a solver's name and one column
MIN_WIDTH = 20


class SummaryError(ValueError):
    """A result file or metric this summary cannot read."""


class UnknownMetric(SummaryError):
    """A METRIC the result file does not have."""


def check_frame(frame, metrics):
    """SummaryError unless ``frame`` is a non-empty result of this
    benchmark holding every metric of ``metrics`` (given as
    ``objective_x`` or ``x``); the metrics' full names."""
    missing = [c for c in REQUIRED if c not in frame.columns]
    if missing:
        raise SummaryError(f"not a result of this benchmark (no column "
                           f"{', '.join(missing)})")
    if frame.empty:
        raise SummaryError("the result has no evaluations")
    names = [m if m.startswith("objective_") else f"objective_{m}"
             for m in metrics]
    # a metric is a number (or has no value yet): names and recorded
    # sources are not
    numeric = {c for c in frame.columns if c.startswith("objective_")
               and (pd.api.types.is_numeric_dtype(frame[c])
                    or frame[c].isna().all())}
    unknown = [m for m, n in zip(metrics, names, strict=True)
               if n not in numeric]
    if unknown:
        known = sorted(c.removeprefix("objective_") for c in numeric)
        hints = (m + closest(m.removeprefix("objective_"), known)
                 for m in unknown)
        raise UnknownMetric(
            f"{', '.join(hints)}: not a metric of "
            f"this result; its metrics: {', '.join(known)}")
    return names


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


def spread_text(spread, single=False):
    """``"median [low, high]"``; empty where there is no value; ``single``
    (one repetition): the value alone. Counts print whole, other values
    with 4 significant digits."""
    if pd.isna(spread.median):
        return ""
    if single:
        return _number(spread.median)
    band = f"[{_number(spread.low)}, {_number(spread.high)}]"
    return f"{_number(spread.median)} {band}"


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
               "time (s)": runs["time"].median(),
               "samples": (runs["objective_n_samples_upper"]
                           + runs["objective_n_samples_lower"]).median()}
        for metric, spread in final_spreads(runs, metrics,
                                            quantiles).items():
            if not pd.isna(spread.median):
                row[metric.replace("objective_", "")] = spread_text(
                    spread, single=len(runs) == 1)
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
    # a default, so that argparse does not call the list required
    parser.add_argument("metrics", nargs="*", metavar="METRIC", default=[],
                        help="objective_* columns (default: each family's "
                             "value, gaps, stationarity and task metrics)")
    parser.add_argument("--min-max", action="store_true",
                        help="the min-max range instead of q20-q80")
    parser.add_argument("--width", type=_width, default=80,
                        help=f"the widest line printed (default 80, at "
                             f"least {MIN_WIDTH})")
    return parser.parse_args(argv)


def _width(text):
    try:
        width = int(text)
    except ValueError:
        width = None
    if width is None or width < MIN_WIDTH:
        raise argparse.ArgumentTypeError(
            f"must be an integer >= {MIN_WIDTH}, got {text!r}")
    return width


def blocks(rows, width):
    """``rows`` (a dataset's table) as tables at most ``width`` wide where
    the columns allow, each with the solver column: pandas' own wrapping
    leaves the later blocks without it."""
    columns = [c for c in rows.columns if c != "solver"]
    groups, current = [], []
    for column in columns:
        trial = rows[["solver", *current, column]].to_string(index=False)
        if current and max(map(len, trial.splitlines())) > width:
            groups.append(current)
            current = []
        current.append(column)
    groups.append(current)
    return [rows[["solver", *group]].to_string(index=False)
            for group in groups if group]


def main(argv=None):
    args = parse_args(argv)
    path = Path(args.result)
    if not path.is_file():
        print(f"RESULT must be a benchopt result file of this benchmark, "
              f"got {args.result}: "
              + ("a folder" if path.is_dir() else "no such file"),
              file=sys.stderr)
        return 2
    try:
        frame = pd.read_parquet(path)
        metrics = check_frame(frame, args.metrics) or DEFAULT_METRICS
    except UnknownMetric as error:
        print(f"METRIC {error}", file=sys.stderr)
        return 2
    except (OSError, ValueError) as error:
        print(f"RESULT must be a benchopt result file of this benchmark, "
              f"got {args.result}: {error}", file=sys.stderr)
        return 2
    spread = MIN_MAX if args.min_max else QUANTILES
    table = summarize(frame, tuple(metrics), spread)
    single = frame.groupby(["dataset_name", "solver_name"])[
        "idx_rep"].nunique().max() == 1
    print("one repetition: its last value" if single else
          f"median [{spread_header(spread)}] over repetitions")
    for dataset, rows in table.groupby("dataset", sort=False):
        rows = rows.drop(columns="dataset").dropna(axis=1, how="all")
        print(f"\n{dataset}")
        print("\n\n".join(blocks(rows, args.width)))
    notes = [f"  {name}: {note}" for name, note in COLUMN_NOTES.items()
             if name in table.columns]
    if notes:
        print("\ncolumns:\n" + "\n".join(notes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
