"""Where the shipped methods stand across the experiments: a performance
profile (Dolan and Moré 2002) on the committed evidence.

A problem is one dataset of one experiment run at tuned steps (the
paper-steps and longer siblings repeat a figure and are left out). A
method's value on it is the median over its repetitions of the tuning's
score (:func:`working.run_score`: F - F* or F on the general family,
max(|f - f*|, g - g*) or f + (g - g*) on the simple one, the levels'
score on matrix completion; lower is better) at the point its method
table is read (:func:`readings.table_point`: the budget, or the CPU
horizon); a run that diverged before it or stopped short counts as a
failure (an infinite ratio). Its ratio is that value over the best
method's on the problem, and the profile gives, for each method, the
share of its problems on which the ratio is at most tau. A problem whose
best value is not positive is left out (a ratio needs a positive best),
and so named.
"""
import math

import numpy as np

from benchmark_utils.claims import results
from benchmark_utils.claims.experiments import EXPERIMENTS
from benchmark_utils.claims.readings import point_text, table_point
from benchmark_utils.claims.verdicts import per_run, select
from benchmark_utils.claims.working import run_score

TAUS = (1.0, 1.1, 2.0, 10.0)
SCORE = "_score"


def _with_score(rows, score):
    """``rows`` with the tuning's score of every evaluation (column
    ``SCORE``), each read against its run's first row."""
    rows = rows.sort_values(["rep", "iteration"]).copy()
    columns = set(rows.columns)
    values = np.empty(len(rows))
    position = 0
    for _, run in rows.groupby("rep", sort=True):
        first = run.iloc[0]
        for _, row in run.iterrows():
            values[position] = run_score(row, columns, score, first)[1]
            position += 1
    rows[SCORE] = values
    return rows


def method_value(rows, score, axis, target):
    """The median over the repetitions of the score at the point (inf
    where the median run failed: diverged or stopped short)."""
    values = [math.inf if v is None or not np.isfinite(v) else v
              for v in per_run(_with_score(rows, score), SCORE, axis,
                               target)]
    return float(np.median(values))


def problems():
    """``[(experiment name, dataset, point words, {method label:
    value})]`` for every tuned experiment with evidence."""
    found = []
    for exp in EXPERIMENTS.values():
        if exp.source != "tuned" or not (exp.folder / "meta.yml").is_file():
            continue
        runs = results.read(exp.folder)[0]
        axis, target = table_point(exp, runs)
        for dataset in sorted(runs["dataset"].unique()):
            rows = runs[runs["dataset"] == dataset]
            values = {m.label: method_value(select(rows, m), exp.score,
                                            axis, target)
                      for m in exp.methods}
            found.append((exp.name, dataset, point_text(axis, target),
                          values))
    return found


def profile(found):
    """``({method: [share at each tau]}, {method: problems}, skipped)``:
    the ratios to each problem's best value, a failure's infinite."""
    shares, counts, skipped = {}, {}, []
    ratios = {}
    for name, dataset, _, values in found:
        best = min(values.values())
        if not (np.isfinite(best) and best > 0):
            skipped.append(f"{name} ({dataset})")
            continue
        for method, value in values.items():
            ratios.setdefault(method, []).append(value / best)
    for method, rs in ratios.items():
        rs = np.asarray(rs)
        counts[method] = len(rs)
        shares[method] = [float(np.mean(rs <= tau)) for tau in TAUS]
    return shares, counts, skipped


def profile_lines(found=None):
    """The profile as a markdown table, best share first."""
    found = problems() if found is None else found
    shares, counts, skipped = profile(found)
    lines = ["| method | problems | " + " | ".join(
        "best (tau = 1)" if tau == 1 else f"within {tau:g}x of the best"
        for tau in TAUS) + " |", "|---" * (2 + len(TAUS)) + "|"]
    for method in sorted(shares, key=lambda m: (
            [-s for s in shares[m]], -counts[m], m)):
        lines.append(f"| {method} | {counts[method]} | " + " | ".join(
            f"{s:.2f}" for s in shares[method]) + " |")
    if skipped:
        lines += ["", "Left out (best value not positive): "
                  + ", ".join(skipped) + "."]
    return lines


def section_lines():
    """docs/results.md's profile: what it counts, then the table."""
    found = problems()
    experiments = sorted({name for name, *_ in found})
    return [
        f"A performance profile (Dolan and Moré 2002) over the "
        f"{len(found)} problems (an experiment's dataset at tuned steps) "
        f"of {len(experiments)} experiments with evidence ("
        + ", ".join(f"`{name}`" for name in experiments) + "): for each "
        "method, the share of its problems on which the median of its "
        "tuning's score (lower is better) at its method table's point is "
        "at most tau times the best method's; a run that diverged or "
        "stopped short is a failure, within no tau "
        "(`benchmark_utils/claims/profile.py`).", "",
        *profile_lines(found)]
