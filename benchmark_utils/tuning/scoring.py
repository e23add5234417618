"""Score the grid points of one solver from benchopt's result file, and
select one.

A run's score is read on the upper level only, never a test metric; lower
is better:

* general family: ``F(x) - F*`` (``objective_upper_gap``) where the
  dataset certifies ``F*`` (the column is finite on the dataset), else
  ``F(x) = f(x, y*(x))`` (``objective_value``, the validation loss on
  hyper-cleaning);
* simple family: ``max(|f(x) - f*|, g(x) - g*)`` where ``f*`` is certified,
  else ``f(x) + (g(x) - g*)``: a point of the grid cannot buy upper value
  by leaving the lower level's solution set;
* general family with ``--score levels``, for a problem whose upper value
  can be bought by leaving the lower level (Abolfazli et al. 2023's matrix
  completion, whose Fig. 2 plots f(x_k, y_k) and ||grad_y g(x_k, y_k)||):
  ``max(f(x_k, y_k) / f(x_0, y_0), ||grad_y g(x_k, y_k)|| / ||grad_y
  g(x_0, y_0)||)`` (``objective_upper_value_current``,
  ``objective_inner_grad_norm``, each relative to the run's start), so
  neither level is bought with the other.

``--criterion final`` (default) reads it at the run's last evaluation (a
fixed iteration: the budget is ``max-runs`` evaluations, no timeout), or,
where the config sets a budget in samples (``sample_budget``,
:mod:`benchmark_utils.sample_budget`), on the run's curve at that many
samples (interpolated between the two evaluations around it; a run that
stops short of it scores +inf);
``curve`` takes the mean over the run's evaluations of its log, written as
its exponential (the geometric mean of the curve), for noisy methods whose
last value is a lottery. A run flagged ``objective_diverged``, with a
non-finite score, or missing from the file (benchopt drops a run that
raised) scores +inf. A grid point's score on a dataset is the median over
the tuning seeds, its range their [min, max].

Selection (:func:`rank`), over every point run:

* **eligible**: finite on every dataset and every seed; a point that
  diverged, erred or was dropped anywhere never wins;
* **aggregate**: the geometric mean over datasets of (median / the best
  eligible median on that dataset), its range the same mean of the
  seeds' minima and of their maxima. Chosen over the worst rank because
  it is a fixed number per point: dividing by each dataset's best scales
  every point alike, so the order of two points never depends on which
  other points were run, and the selection is transitive (widening cannot
  cycle); and because one dataset's ratio r counts as its D-th root (two
  datasets: a ratio of 100 on one weighs as 10), no dataset dominates,
  while a point bad everywhere loses to one bad on one dataset only;
* **no gain**: a point improves on its start when, on every dataset, the
  median over its runs of their gain (the run's start, its first
  evaluation scored alike, minus its score) exceeds the seeds' spread
  (the range of its runs' scores); a point that does not (too small a
  step to move the method, or one that makes it worse) is
  not a choice. Where no eligible point improves, the eligible points stay
  the candidates for the flat rule of
  :mod:`~benchmark_utils.tuning.search` (it widens), and the ranking says
  so (``working`` False): the solver is reported "no working step found
  here", and every claim about it reads "not testable here"
  (:mod:`benchmark_utils.claims.verdicts`);
* **best**: the candidate (eligible, improving) with the lowest
  aggregate, the **leader**; **ties**: the candidates whose aggregate
  lies within the leader's seed range (``aggregate <= leader's high``),
  so a choice never gives up a gain the seeds' noise does not explain;
* **choice among ties**: the default (the grid's centre, the solver's
  resolved default) if it ties; else the smallest product of the tuned
  steps' ratios to the centre (``grids.step_log_ratio``); then nearest the
  centre in decades, the lower aggregate, the smaller values: one point,
  deterministically. No eligible point: the default, else the point
  nearest it.

Scores at or below zero (a gap at its floor) count as ``SCORE_FLOOR``.
"""
import math
from dataclasses import dataclass, field

import numpy as np
from benchopt.results import read_results

from benchmark_utils.sample_budget import SAMPLE_COLUMNS, value_at_samples
from benchmark_utils.tuning.grids import log_distance, step_log_ratio

RUN_KEYS = ["dataset_name", "solver_name", "idx_rep"]
CRITERIA = ("final", "curve")
SCORES = ("upper", "levels")
# --score levels: the general family's two levels as the run's iterate
# has them, each relative to the run's start
LEVEL_COLUMNS = ("objective_upper_value_current", "objective_inner_grad_norm")
# two aggregates closer than this (relative) tie even where the seeds'
# ranges are single values (one seed)
TIE_TOLERANCE = 1e-12
# the criteria are gaps and losses, >= 0: a score at or below zero (a gap
# at its floor) counts as this, so that ratios and logs stay finite
SCORE_FLOOR = 1e-300
# a point within this many decades of the centre on every tuned parameter
# is the default (the rounding to 3 significant digits moves it < 0.003)
DEFAULT_TOLERANCE = 0.01


@dataclass
class PointScores:
    """One grid point: its run scores per dataset (one per repetition)."""
    point: dict
    runs: dict = field(default_factory=dict)    # dataset -> [score, ...]
    # dataset -> [the score of each run's start (first evaluation), ...],
    # aligned with ``runs``; empty where unknown (not judged)
    starts: dict = field(default_factory=dict)

    def median(self, dataset):
        return float(np.median(self.runs[dataset]))

    def spread(self, dataset):
        return min(self.runs[dataset]), max(self.runs[dataset])

    def improves(self, datasets):
        """On every dataset the runs' median gain on their own start
        exceeds the seeds' spread (module doc, "no gain"); True where the
        starts are unknown (not judged)."""
        for dataset in datasets:
            runs, starts = self.runs[dataset], self.starts.get(dataset)
            if not starts or len(starts) != len(runs):
                continue
            if not all(math.isfinite(v) for v in (*runs, *starts)):
                return False
            gain = np.median(np.subtract(starts, runs))
            if gain <= max(runs) - min(runs):
                return False
        return True

    def finite(self, datasets):
        """Finite on every dataset of ``datasets`` and every seed."""
        return all(dataset in self.runs and self.runs[dataset]
                   and all(math.isfinite(v) for v in self.runs[dataset])
                   for dataset in datasets)


def _column(df, name):
    return df[name] if name in df.columns else None


def _certified(df, column):
    """Whether ``column`` is finite somewhere on these rows: the dataset
    certifies the reference the column is measured against."""
    values = _column(df, column)
    return values is not None and np.isfinite(
        values.astype(float)).any()


def levels_score(row, start):
    """``--score levels``: the larger of the two levels' ratios to the
    run's start (module doc)."""
    ratios = []
    for column in LEVEL_COLUMNS:
        value, first = (float(r.get(column, math.nan)) for r in (row, start))
        ratios.append(value / first if first > 0 else math.nan)
    return max(ratios) if all(math.isfinite(r) for r in ratios) else math.inf


def run_score(final, family, certified, start=None):
    """The score of one run from its last row (a mapping of columns);
    ``start``: its first row, for ``--score levels`` (None: upper)."""
    if final.get("objective_diverged", 0):
        return math.inf
    if start is not None and family == "general":
        return levels_score(final, start)
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


def criterion(family, certified, kind="final", score="upper"):
    """The criterion in words (for the tuned config's header)."""
    if family == "general" and score == "levels":
        text = ("max(f(x_k, y_k) / f(x_0, y_0), ||grad_y g(x_k, y_k)|| / "
                "||grad_y g(x_0, y_0)||) (objective_upper_value_current, "
                "objective_inner_grad_norm)")
    elif family == "general":
        text = ("F(x) - F* (objective_upper_gap)" if certified
                else "F(x) (objective_value)")
    else:
        text = ("max(|f(x) - f*|, g(x) - g*)" if certified
                else "f(x) + (g(x) - g*)")
    if kind == "curve":
        return (f"curve: exp(mean over the evaluations of log {text}), "
                "the geometric mean of the curve")
    return f"final {text}"


def budget_score(rows, family, certified, sample_budget, start=None):
    """``--criterion final`` under a sample budget: the score on the run's
    curve (its rows) at ``sample_budget`` samples drawn; +inf where the
    curve stops short of it."""
    samples = sum(rows[column].astype(float) for column in SAMPLE_COLUMNS)
    values = [run_score(row.to_dict(), family, certified, start)
              for _, row in rows.iterrows()]
    value = value_at_samples(list(samples), values, sample_budget)
    return math.inf if value is None else value


def curve_score(rows, family, certified, start=None):
    """``--criterion curve``: exp of the mean over a run's evaluations
    (its rows) of the log of their score; +inf if one is not finite."""
    logs = []
    for _, row in rows.iterrows():
        score = run_score(row.to_dict(), family, certified, start)
        if math.isinf(score):
            return math.inf
        logs.append(math.log(max(score, SCORE_FLOOR)))
    return math.exp(float(np.mean(logs))) if logs else math.inf


def _matches(row, point):
    return all(math.isclose(float(row[f"p_solver_{name}"]), value,
                            rel_tol=1e-9) for name, value in point.items())


def score_points(df, points, family, n_repetitions, kind="final",
                 sample_budget=None, score="upper"):
    """``(scores, criteria)``: a :class:`PointScores` per grid point (in
    ``points``' order) from the result table ``df`` of one solver's runs,
    and the criterion used on each dataset; ``kind``: ``final`` or
    ``curve``; ``sample_budget``: the config's, if any; ``score``:
    ``upper`` or ``levels`` (module doc)."""
    if kind not in CRITERIA:
        raise ValueError(f"the criterion must be one of {CRITERIA}, got "
                         f"{kind!r}")
    if score not in SCORES:
        raise ValueError(f"the score must be one of {SCORES}, got "
                         f"{score!r}")
    scores = [PointScores(dict(point)) for point in points]
    criteria = {}
    df = df.reset_index(drop=True)
    for dataset, rows in df.groupby("dataset_name", sort=False):
        reference = ("objective_upper_gap" if family == "general"
                     else "objective_upper_gap_abs")
        certified = _certified(rows, reference)
        criteria[dataset] = criterion(family, certified, kind, score) + (
            f" at {sample_budget} samples" if sample_budget and kind ==
            "final" else "")
        found = [[] for _ in points]
        for _, run in rows.groupby(RUN_KEYS, sort=False):
            # the whole last row (``groupby.last`` would skip a NaN, i.e.
            # score a run whose last value is NaN on an earlier value)
            run = run.sort_values("stop_val", kind="stable")
            final = run.iloc[-1].to_dict()
            index = next((i for i, point in enumerate(points)
                          if _matches(final, point)), None)
            if index is None:
                continue
            if "objective_diverged" in run.columns:
                final["objective_diverged"] = run["objective_diverged"].max()
            first = run.iloc[0].to_dict()
            start = first if score == "levels" else None
            # the run's start scored alike (a curve that never moves
            # scores its start)
            begin = run_score(first, family, certified, start)
            if final.get("objective_diverged", 0):
                value = math.inf
            elif kind == "curve":
                value = curve_score(run, family, certified, start)
            elif sample_budget is not None:
                value = budget_score(run, family, certified, sample_budget,
                                     start)
            else:
                value = run_score(final, family, certified, start)
            found[index].append((final["idx_rep"], value, begin))
        for entry, runs in zip(scores, found, strict=True):
            # a run benchopt dropped (it raised) loses
            runs = sorted(runs)
            missing = n_repetitions - len(runs)
            entry.runs[dataset] = [v for _, v, _ in runs] + [math.inf] * \
                missing
            entry.starts[dataset] = [b for _, _, b in runs] + [math.nan] * \
                missing
    return scores, criteria


def read_scores(parquet, points, family, n_repetitions, kind="final",
                sample_budget=None, score="upper"):
    return score_points(read_results(str(parquet)), points, family,
                        n_repetitions, kind, sample_budget, score)


def _floored(value):
    return max(value, SCORE_FLOOR)


def _geometric_mean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values))


@dataclass
class Ranking:
    """The selection over a solver's points (module doc), index-aligned
    with the list of :class:`PointScores` it ranks."""
    datasets: list
    best_scores: dict       # dataset -> best eligible median (or None)
    eligible: list
    aggregate: list         # geometric mean of ratios to the best (inf)
    low: list
    high: list
    default: list           # whether each point is the default
    leader: int | None      # lowest aggregate (None: none eligible)
    tied: list              # indices tied with the leader
    chosen: int
    no_gain: list = field(default_factory=list)     # per point
    candidates: list = field(default_factory=list)  # indices: may be chosen
    working: bool = True    # some eligible point improves on its start


def is_default(point, center):
    return all(abs(math.log10(point[name] / center[name]))
               < DEFAULT_TOLERANCE for name in point)


def rank(scores, center):
    """The :class:`Ranking` of ``scores`` (a list of :class:`PointScores`)
    around the grid's ``center``."""
    datasets = list(dict.fromkeys(d for s in scores for d in s.runs))
    eligible = [bool(datasets) and s.finite(datasets) for s in scores]
    best = {}
    for dataset in datasets:
        medians = [_floored(s.median(dataset))
                   for s, ok in zip(scores, eligible, strict=True) if ok]
        best[dataset] = min(medians) if medians else None
    aggregate, low, high = [], [], []
    for entry, ok in zip(scores, eligible, strict=True):
        if not ok:
            aggregate.append(math.inf)
            low.append(math.inf)
            high.append(math.inf)
            continue
        spreads = [entry.spread(d) for d in datasets]
        aggregate.append(_geometric_mean(
            [_floored(entry.median(d)) / best[d] for d in datasets]))
        low.append(_geometric_mean(
            [_floored(lo) / best[d] for (lo, _), d in zip(
                spreads, datasets, strict=True)]))
        high.append(_geometric_mean(
            [_floored(hi) / best[d] for (_, hi), d in zip(
                spreads, datasets, strict=True)]))
    default = [is_default(s.point, center) for s in scores]
    no_gain = [ok and not s.improves(datasets)
               for s, ok in zip(scores, eligible, strict=True)]

    def order(i):
        point = scores[i].point
        return (not default[i], step_log_ratio(point, center),
                log_distance(point, center), aggregate[i],
                tuple(point[name] for name in sorted(point)))
    improving = [i for i, ok in enumerate(eligible) if ok and not no_gain[i]]
    candidates = improving or [i for i, ok in enumerate(eligible) if ok]
    if not candidates:
        chosen = min(range(len(scores)), key=lambda i: (
            not default[i], log_distance(scores[i].point, center),
            tuple(scores[i].point[n] for n in sorted(scores[i].point))))
        return Ranking(datasets, best, eligible, aggregate, low, high,
                       default, None, [], chosen, no_gain, [], False)
    leader = min(candidates, key=lambda i: (aggregate[i], order(i)))
    # within the leader's seed range: a tie never gives up a measured gain
    limit = high[leader] * (1 + TIE_TOLERANCE)
    tied = [i for i in candidates if aggregate[i] <= limit]
    chosen = min(tied, key=order)
    return Ranking(datasets, best, eligible, aggregate, low, high, default,
                   leader, tied, chosen, no_gain, candidates,
                   bool(improving))


def select(scores, center):
    """Index of the selected point (:func:`rank`)."""
    return rank(scores, center).chosen
