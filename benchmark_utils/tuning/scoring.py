"""Score the grid points of one solver from benchopt's result file, and
select one.

A run's score is read at its last evaluation (a fixed iteration: the
budget is ``max-runs`` evaluations, no timeout), on the upper level only,
never a test metric; lower is better:

* general family: ``F(x) - F*`` (``objective_upper_gap``) where the
  dataset certifies ``F*`` (the column is finite on the dataset), else
  ``F(x) = f(x, y*(x))`` (``objective_value``, the validation loss on
  hyper-cleaning);
* simple family: ``max(|f(x) - f*|, g(x) - g*)`` where ``f*`` is certified,
  else ``f(x) + (g(x) - g*)``: a point of the grid cannot buy upper value
  by leaving the lower level's solution set.

A run flagged ``objective_diverged``, with a non-finite score, or missing
from the file (benchopt drops a run that raised) scores +inf. A grid
point's score on a dataset is the median over the tuning repetitions.
Selection: the lowest median; with several datasets, the lowest median
over datasets of (score / the score of the point nearest the default on
that dataset); ties go to the point nearest the default (in decades).
"""
import math
from dataclasses import dataclass, field

import numpy as np
from benchopt.results import read_results

from benchmark_utils.tuning.grids import log_distance

RUN_KEYS = ["dataset_name", "solver_name", "idx_rep"]
# two medians closer than this (relative) are a tie
TIE_TOLERANCE = 1e-12


@dataclass
class PointScores:
    """One grid point: its run scores per dataset (one per repetition)."""
    point: dict
    runs: dict = field(default_factory=dict)    # dataset -> [score, ...]

    def median(self, dataset):
        return float(np.median(self.runs[dataset]))

    def spread(self, dataset):
        return min(self.runs[dataset]), max(self.runs[dataset])


def _column(df, name):
    return df[name] if name in df.columns else None


def _certified(df, column):
    """Whether ``column`` is finite somewhere on these rows: the dataset
    certifies the reference the column is measured against."""
    values = _column(df, column)
    return values is not None and np.isfinite(
        values.astype(float)).any()


def run_score(final, family, certified):
    """The score of one run from its last row (a mapping of columns)."""
    if final.get("objective_diverged", 0):
        return math.inf
    if family == "general":
        column = "objective_upper_gap" if certified else "objective_value"
        score = float(final.get(column, math.nan))
    else:
        lower = float(final.get("objective_lower_gap", math.nan))
        if certified:
            upper = abs(float(final.get("objective_upper_gap", math.nan)))
            score = max(upper, lower)
        else:
            score = float(final.get("objective_upper_value",
                                    math.nan)) + lower
    return score if math.isfinite(score) else math.inf


def criterion(family, certified):
    """The criterion in words (for the tuned config's header)."""
    if family == "general":
        return ("final F(x) - F* (objective_upper_gap)" if certified
                else "final F(x) (objective_value)")
    return ("final max(|f(x) - f*|, g(x) - g*)" if certified
            else "final f(x) + (g(x) - g*)")


def final_rows(df):
    """The last evaluation of each run (dataset, solver, repetition): the
    whole row (``groupby.last`` would skip a NaN, i.e. score a run whose
    last value is NaN on an earlier value)."""
    df = df.reset_index(drop=True)
    last = df.groupby(RUN_KEYS)["stop_val"].idxmax()
    return df.loc[last.values].sort_values("idx_rep")


def _matches(row, point):
    return all(math.isclose(float(row[f"p_solver_{name}"]), value,
                            rel_tol=1e-9) for name, value in point.items())


def score_points(df, points, family, n_repetitions):
    """``(scores, criteria)``: a :class:`PointScores` per grid point (in
    ``points``' order) from the result table ``df`` of one solver's grid,
    and the criterion used on each dataset."""
    scores = [PointScores(dict(point)) for point in points]
    criteria = {}
    for dataset, rows in df.groupby("dataset_name", sort=False):
        reference = ("objective_upper_gap" if family == "general"
                     else "objective_upper_gap_abs")
        certified = _certified(rows, reference)
        criteria[dataset] = criterion(family, certified)
        finals = final_rows(rows)
        diverged = rows.groupby(RUN_KEYS)["objective_diverged"].max() \
            if "objective_diverged" in rows.columns else None
        for entry in scores:
            mine = finals[[_matches(row, entry.point)
                           for _, row in finals.iterrows()]]
            runs = []
            for _, row in mine.iterrows():
                final = row.to_dict()
                if diverged is not None:
                    key = tuple(row[k] for k in RUN_KEYS)
                    final["objective_diverged"] = diverged.get(key, 0)
                runs.append(run_score(final, family, certified))
            # a run benchopt dropped (it raised) loses
            runs += [math.inf] * (n_repetitions - len(runs))
            entry.runs[dataset] = runs
    return scores, criteria


def read_scores(parquet, points, family, n_repetitions):
    return score_points(read_results(str(parquet)), points, family,
                        n_repetitions)


def _reference(scores, dataset, center):
    """The score that a dataset's scores are divided by: that of the point
    nearest the default, or the best finite positive one where that one
    is not finite and positive."""
    nearest = min(scores, key=lambda s: log_distance(s.point, center))
    value = nearest.median(dataset)
    if math.isfinite(value) and value > 0:
        return value
    finite = [s.median(dataset) for s in scores
              if math.isfinite(s.median(dataset)) and s.median(dataset) > 0]
    return min(finite) if finite else None


def selection_scores(scores, center):
    """The number each grid point is selected by: its median score on a
    single dataset; with several, the median over datasets of its median
    divided by the dataset's reference (:func:`_reference`)."""
    datasets = list(scores[0].runs) if scores else []
    if len(datasets) == 1:
        return [s.median(datasets[0]) for s in scores]
    references = {d: _reference(scores, d, center) for d in datasets}
    ratios = []
    for entry in scores:
        values = [entry.median(d) / references[d] if references[d]
                  else math.inf for d in datasets]
        ratios.append(float(np.median(values)))
    return ratios


def select(scores, center):
    """Index of the selected grid point: the lowest selection score, ties
    (and the all-infinite case) to the point nearest the default."""
    values = selection_scores(scores, center)
    best = min(values)

    def tied(value):
        if math.isinf(best):
            return True
        return math.isclose(value, best, rel_tol=TIE_TOLERANCE,
                            abs_tol=0.0) or value == best
    candidates = [i for i, value in enumerate(values) if tied(value)]
    return min(candidates,
               key=lambda i: log_distance(scores[i].point, center))
