"""A paper's claims decided on an experiment's committed evidence.

A :class:`Claim` compares two methods (each a set of substrings of
benchopt's solver name, so one entry of a config) on one metric, read on
each repetition's curve at a point of the paper's axis
(:func:`read_point`): an iteration or a sample count (the budget), or,
for a paper that plots time, the earliest time every run of the two
methods reached (so no run is read past its end: equal time, on this
machine); and at equal samples: the sample budget, or, without one, the
earliest sample count every run of the two reached. A run whose curve
stops before the point is "not reached", one that diverged at or before
it "diverged"; both count as the worst value. The verdict is the rule of
:mod:`benchmark_utils.claims.stats`, Holm-corrected over the claims of
the paper (its family).
"""
import dataclasses
import math

from benchmark_utils.claims import stats
from benchmark_utils.claims.curves import value_at

AXIS_COLUMNS = {"iterations": "iteration", "samples": "samples",
                "time": "time", "grad_evals": "grad_evals", "hvp": "hvp",
                "lmo": "lmo"}


@dataclasses.dataclass(frozen=True)
class Method:
    """A config entry: its label and the parts of its solver name, the
    first its start (``"BiAdam["`` is not ``"VR-BiAdam["``), the others
    substrings; ``at_iteration`` reads it at that iteration instead of
    the claim's point (a claim about a method's own progress: its start,
    or its first iterate after a warm start, against its value at the
    point)."""
    label: str
    parts: tuple
    at_iteration: int | None = None

    def selects(self, solver_name):
        first, *others = self.parts
        return solver_name.startswith(first) and all(
            part in solver_name for part in others)


@dataclasses.dataclass(frozen=True)
class Claim:
    text: str               # the paper's words, with its figure
    metric: str             # a column of runs.csv.gz
    a: Method
    b: Method
    relation: str = "better"    # "better": a better than b;
    # "on_par": a at least on par with b (not confirmed only where b is
    # better by the rule; confirmed otherwise, saying whether a was ahead)
    higher_is_better: bool = False
    dataset: str = ""       # a substring of the dataset name ("": any)
    key: str = ""           # the same claim in a sibling experiment whose
    # methods are other entries (a paper's two steps for one tuned entry);
    # "" : the metric, methods, dataset and relation say it


CONFIRMED, NOT_CONFIRMED, INCONCLUSIVE = ("confirmed", "not confirmed",
                                          "inconclusive")
# an "on par" claim: confirmed when the method is ahead or no difference
# is found
AHEAD, ON_PAR = "confirmed (ahead)", "confirmed (no difference found)"
VERDICTS = (CONFIRMED, NOT_CONFIRMED, INCONCLUSIVE, AHEAD, ON_PAR)


def select(runs, method, dataset=""):
    """The rows of ``method``'s runs (on datasets containing
    ``dataset``)."""
    rows = runs[runs["solver"].map(method.selects)]
    if dataset:
        rows = rows[rows["dataset"].str.contains(dataset, regex=False)]
    names = rows["solver"].unique()
    if len(names) != 1:
        raise ValueError(f"{method.label}: {len(names)} solver entries "
                         f"match {method.parts} ({list(names)[:3]})")
    return rows


def per_run(rows, metric, axis, target):
    """The metric at ``target`` on the ``axis`` of each repetition's
    curve, in repetition order: NaN where the run may have diverged
    before it (its flagged row is the first evaluation at or past it, or
    earlier), None where its curve stopped before it."""
    column = AXIS_COLUMNS[axis]
    values = []
    for _, run in rows.sort_values(["rep", "iteration"]).groupby("rep"):
        x = run[column].to_numpy(dtype=float)
        flagged = x[run["diverged"].to_numpy() == 1]
        # the flagged row is the first evaluation after the divergence:
        # it may have happened before the point if that row is the first
        # evaluation at or past it
        after = x[x >= target]
        if len(flagged) and flagged[0] <= (after[0] if len(after)
                                           else math.inf):
            values.append(math.nan)
            continue
        values.append(value_at(x, run[metric].to_numpy(dtype=float),
                               target))
    return values


def common_end(axis, *row_sets):
    """The earliest point on ``axis`` (time, samples...) every run of these
    rows reached (its end), over the runs that did not diverge (a diverged
    run counts as the worst value from its divergence on, whatever the
    point); a row set None (a method read at a fixed iteration) is left
    out."""
    column = AXIS_COLUMNS[axis]
    ends = []
    for rows in row_sets:
        if rows is None:
            continue
        runs = rows.groupby("rep").agg(end=(column, "max"),
                                       diverged=("diverged", "max"))
        kept = runs[runs["diverged"] == 0]
        ends.append((kept if len(kept) else runs)["end"].min())
    return min(ends)


def read_point(claim, runs, axis, target):
    """``(a values, b values, target)`` of a claim on ``axis`` at
    ``target`` (None: the two methods' common end, :func:`common_end`)."""
    rows = [select(runs, m, claim.dataset) for m in (claim.a, claim.b)]
    if target is None:
        target = common_end(axis, *(r if m.at_iteration is None else None
                                    for m, r in zip((claim.a, claim.b), rows,
                                                    strict=True)))
    a, b = (per_run(r, claim.metric, axis, target) if m.at_iteration is None
            else per_run(r, claim.metric, "iterations", m.at_iteration)
            for m, r in zip((claim.a, claim.b), rows, strict=True))
    return a, b, target


def _diverged(values):
    return sum(v is not None and math.isnan(v) for v in values)


def _not_reached_as_nan(values):
    # "not reached" counts as the worst value, as a diverged run does:
    # stats.worst_filled turns NaN into it
    return [math.nan if v is None else v for v in values]


@dataclasses.dataclass(frozen=True)
class Verdict:
    claim: Claim
    axis: str
    target: float
    comparison: stats.Comparison
    decided: str            # "confirmed", "not confirmed", "inconclusive"
    not_reached: tuple      # (a's, b's) repetitions that did not reach
    diverged: tuple         # (a's, b's) repetitions diverged by then


def decide(claims, runs, axis, target, alpha=stats.ALPHA):
    """The :class:`Verdict` of each claim of one family (module doc)."""
    read = [read_point(c, runs, axis, target) for c in claims]
    comparisons = [stats.compare(_not_reached_as_nan(a),
                                 _not_reached_as_nan(b),
                                 higher_is_better=c.higher_is_better)
                   for c, (a, b, _) in zip(claims, read, strict=True)]
    winners = stats.family_verdicts(comparisons, alpha)
    verdicts = []
    for claim, (a, b, point), comparison, winner in zip(
            claims, read, comparisons, winners, strict=True):
        if claim.relation == "on_par":
            decided = (NOT_CONFIRMED if winner == "b" else
                       AHEAD if winner == "a" else ON_PAR)
        else:
            decided = (INCONCLUSIVE if winner is None else CONFIRMED
                       if winner == "a" else NOT_CONFIRMED)
        verdicts.append(Verdict(
            claim, axis, point, comparison, decided,
            (a.count(None), b.count(None)),
            (_diverged(a), _diverged(b))))
    return verdicts
