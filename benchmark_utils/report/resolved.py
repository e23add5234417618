"""The resolved steps of a run in the report: every value a solver ran
with and its source (benchmark_utils/solvers/steps.py), read from the
result file's ``objective_resolved_<name>`` and ``..._source`` columns."""
import pandas as pd

PREFIX = "objective_resolved_"
SOURCE = "_source"


def is_resolved(column):
    """Whether a result column is a resolved step or its source (not a
    metric: no curve, no spread)."""
    return column.startswith(PREFIX)


def resolved_steps(runs):
    """``[(name, value, source)]`` of one solver's rows (every repetition
    resolves the same values: the first row that has them)."""
    names = [c[len(PREFIX):] for c in runs.columns
             if is_resolved(c) and not c.endswith(SOURCE)
             and runs[c].notna().any()]
    steps = []
    for name in names:
        row = runs[runs[PREFIX + name].notna()].iloc[0]
        source = row.get(PREFIX + name + SOURCE)
        steps.append((name, float(row[PREFIX + name]),
                      "" if pd.isna(source) else str(source)))
    return steps


def hover_text(runs):
    """``outer_step 0.05 (tuned), inner_step 0.2 (default)``: the curve's
    tooltip line."""
    return ", ".join(f"{name} {value:.4g} ({source.split(':')[0]})"
                     for name, value, source in resolved_steps(runs))


def table_text(runs):
    """Every resolved step with its full source, for the final-values
    table: ``outer_step=0.05 (tuned: configs/tuned/...); ...``."""
    return "; ".join(f"{name}={value:.6g} ({source})"
                     for name, value, source in resolved_steps(runs))
