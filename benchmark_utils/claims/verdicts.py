"""A paper's claims decided on an experiment's committed evidence.

A :class:`Claim` compares two methods (each a set of substrings of
benchopt's solver name, so one entry of a config) on one metric, read on
each repetition's curve at a point of the paper's axis
(:meth:`Reader.point`): an iteration or a sample count (the budget), or,
for a paper that plots time, the experiment's horizon in CPU seconds
that every run was continued to (or, without one, the earliest time
every run of the two methods reached: no run is read past its end); and
at equal samples: the sample budget, or, without one, the earliest
sample count every run of the two reached; a claim of speed
(``Claim.early``) also at an early point of the paper's axis. A run
whose curve stops before the point is "not reached", one that diverged
at or before it "diverged"; both count as the worst value. The verdict
is the rule of :mod:`benchmark_utils.claims.stats` (paired by
repetition, on the repetitions both ran) with the metric's
smallest difference that matters, Holm-corrected over one family: every
claim of the experiment at every reading (the paper's axis, equal
samples and the early point together, :func:`decide`).

A claim needs two working methods: a method whose runs do not improve on
their start beyond the seeds' spread here (:func:`~benchmark_utils.claims.
working.progress`, on the
tuning's score) makes every claim about it **not testable here**, with
the reason; such a claim is not tested and not in the family. A claim
about a method's own progress (one side read at a fixed iteration) is
always tested, and so is every claim at a paper's own steps (where a
method that does not move is the paper's finding, not a failed tuning).
"""
import dataclasses
import math

import numpy as np

from benchmark_utils.claims import stats
from benchmark_utils.claims.curves import value_at
from benchmark_utils.claims.working import progress, stats_number

AXIS_COLUMNS = {"iterations": "iteration", "samples": "samples",
                "time": "time", "cpu_time": "cpu_time",
                "grad_evals": "grad_evals", "hvp": "hvp", "lmo": "lmo"}


@dataclasses.dataclass(frozen=True)
class Method:
    """A config entry: its label and the parts of its solver name, the
    first its start (``"BiAdam["`` is not ``"VR-BiAdam["``), the others
    substrings of the name whose closing bracket reads as a comma (so
    ``"outer_step=0.01,"`` is a whole parameter wherever it sorts);
    ``at_iteration`` reads it at that iteration instead of
    the claim's point (a claim about a method's own progress: its start,
    or its first iterate after a warm start, against its value at the
    point)."""
    label: str
    parts: tuple
    at_iteration: int | None = None

    def selects(self, solver_name):
        first, *others = self.parts
        name = solver_name.removesuffix("]") + ","
        return solver_name.startswith(first) and all(
            part in name for part in others)


@dataclasses.dataclass(frozen=True)
class Claim:
    text: str               # the paper's words, with its figure
    metric: str             # a column of runs.csv.gz
    a: Method
    b: Method
    relation: str = "better"    # "better": a better than b by more than
    # the margin; "on_par": a at least on par with b (not worse by more
    # than the margin: a non-inferiority test, stats module doc)
    higher_is_better: bool = False
    dataset: str = ""       # a substring of the dataset name ("": any)
    key: str = ""           # the same claim in a sibling experiment whose
    # methods are other entries (a paper's two steps for one tuned entry);
    # "" : the metric, methods, dataset and relation say it
    margin: stats.Margin | None = None  # None: the metric's (stats.MARGINS)
    early: bool = False     # a claim of speed ("converges faster"): also
    # read at the early point of the paper's axis (decide's ``early``)

    @property
    def smallest_difference(self):
        return self.margin or stats.margin_for(self.metric)


CONFIRMED, NOT_CONFIRMED, INCONCLUSIVE = ("confirmed", "not confirmed",
                                          "inconclusive")
# an "on par" claim: confirmed when parity within the margin is shown,
# "ahead" where a is also better by more than the margin
AHEAD, ON_PAR = "confirmed (ahead)", "confirmed (on par)"
NOT_TESTABLE = "not testable here"
VERDICTS = (CONFIRMED, NOT_CONFIRMED, INCONCLUSIVE, AHEAD, ON_PAR,
            NOT_TESTABLE)


def select(runs, method, dataset=""):
    """The rows of ``method``'s runs (on datasets containing
    ``dataset``)."""
    # the names are few and the rows many: match each name once
    names = [n for n in runs["solver"].unique() if method.selects(n)]
    mask = runs["solver"].isin(names)
    if dataset:
        datasets = [d for d in runs["dataset"].unique() if dataset in d]
        mask &= runs["dataset"].isin(datasets)
    rows = runs[mask]
    names = rows["solver"].unique()
    if len(names) != 1:
        raise ValueError(f"{method.label}: {len(names)} solver entries "
                         f"match {method.parts} ({list(names)[:3]})")
    return rows


def _runs(rows, *columns):
    """Each repetition's arrays of ``columns`` (and the diverged flags),
    in repetition order, each run ordered by iteration; ValueError for
    rows of several datasets (two runs, never one curve)."""
    if "dataset" in rows and rows["dataset"].nunique() > 1:
        raise ValueError("read the runs of one dataset at a time")
    ordered = rows.sort_values(["rep", "iteration"])
    cuts = np.flatnonzero(np.diff(ordered["rep"].to_numpy())) + 1
    flags = ordered["diverged"].to_numpy() == 1
    return [tuple(np.split(a, cuts)) for a in (*(ordered[c].to_numpy(
        dtype=float) for c in columns), flags)]


def per_run(rows, metric, axis, target):
    """The metric at ``target`` on the ``axis`` of each repetition's
    curve, in repetition order: NaN where the run may have diverged
    before it (its flagged row, the first evaluation after the
    divergence, is the first at or past it, or earlier), None where its
    curve stopped before it."""
    values = []
    for x, y, flags in zip(*_runs(rows, AXIS_COLUMNS[axis], metric),
                           strict=True):
        flagged = x[flags]
        after = x[x >= target]
        if len(flagged) and flagged[0] <= (after[0] if len(after)
                                           else math.inf):
            values.append(math.nan)
            continue
        values.append(value_at(x, y, target))
    return values


def run_end(axis, rows):
    """The earliest end on ``axis`` of these rows' runs that did not
    diverge (of all of them where every one did)."""
    x, flags = _runs(rows, AXIS_COLUMNS[axis])
    ends = np.array([run.max() for run in x])
    diverged = np.array([run.any() for run in flags])
    return (ends[~diverged] if (~diverged).any() else ends).min()


def common_end(axis, *row_sets):
    """The earliest point on ``axis`` (time, samples...) every run of these
    rows reached (its end), over the runs that did not diverge (a diverged
    run counts as the worst value from its divergence on, whatever the
    point)."""
    return min(run_end(axis, rows) for rows in row_sets)


class Reader:
    """Each method's rows, values and end read once, the values of a claim
    at a reading paired by repetition (:meth:`point`)."""

    def __init__(self, runs):
        self.runs, self._cache = runs, {}

    def _once(self, key, compute):
        if key not in self._cache:
            self._cache[key] = compute()
        return self._cache[key]

    def rows(self, method, dataset):
        return self._once(("rows", method.parts, dataset),
                          lambda: select(self.runs, method, dataset))

    def end(self, method, dataset, axis):
        return self._once(("end", method.parts, dataset, axis),
                          lambda: run_end(axis, self.rows(method, dataset)))

    def values(self, method, dataset, metric, axis, target):
        if method.at_iteration is not None:
            axis, target = "iterations", method.at_iteration
        return self._once(
            ("values", method.parts, dataset, metric, axis, target),
            lambda: per_run(self.rows(method, dataset), metric, axis,
                            target))

    def point(self, claim, axis, target):
        """``(a values, b values, target)`` of a claim (target None: the
        common end): paired, on the repetitions both methods ran."""
        methods = (claim.a, claim.b)
        if target is None:
            target = min(self.end(m, claim.dataset, axis) for m in methods
                         if m.at_iteration is None)
        a, b = ({rep: value for rep, value in zip(
            sorted(self.rows(m, claim.dataset)["rep"].unique()), self.values(
                m, claim.dataset, claim.metric, axis, target), strict=True)}
            for m in methods)
        both = [rep for rep in a if rep in b]
        return [a[rep] for rep in both], [b[rep] for rep in both], target


def _diverged(values):
    return sum(v is not None and math.isnan(v) for v in values)


def _not_reached_as_nan(values):
    # "not reached" counts as the worst value, as a diverged run does:
    # stats.worst_filled turns NaN into it
    return [math.nan if v is None else v for v in values]


def untestable(claim, runs, score, cache):
    """The reason ``claim`` is not testable here (a method of it does not
    work: :func:`progress`), or ""; a claim with a side read at a fixed
    iteration (about a method's own progress) is not judged."""
    if claim.a.at_iteration is not None or claim.b.at_iteration is not None:
        return ""
    reasons = []
    for method in (claim.a, claim.b):
        key = (method.parts, claim.dataset)
        if key not in cache:
            cache[key] = progress(select(runs, method, claim.dataset), score)
        if not cache[key].works:
            reasons.append(f"{method.label} does not improve on its start "
                           f"beyond the seeds' spread here ("
                           f"{cache[key].text()})")
    return "; ".join(reasons)


@dataclasses.dataclass(frozen=True)
class Verdict:
    claim: Claim
    axis: str
    target: float | None
    comparison: stats.Comparison | None   # None: not testable here
    decided: str            # one of VERDICTS
    not_reached: tuple      # (a's, b's) repetitions that did not reach
    diverged: tuple         # (a's, b's) repetitions diverged by then
    reason: str = ""        # why not testable here
    family: int = 0         # the number of tests in its Holm family
    early: bool = False     # read at the early point (decide)

    @property
    def detectable(self):
        """The difference its test would have found with 80% power
        (:func:`benchmark_utils.claims.stats.detectable`)."""
        if self.comparison is None:
            return math.nan
        return stats.detectable(self.comparison, self.family)


@dataclasses.dataclass(frozen=True)
class Effect:
    """The progress the paper reports for its winning method, which the
    instance must show for any claim of the experiment to be testable:
    ``method``'s ``metric`` ends (median over runs) at most ``at_most``
    times its start, as ``paper`` says; ``command`` tests it where this
    machine cannot."""
    method: Method
    metric: str
    at_most: float
    paper: str
    command: str = ""


def effect_shown(effect, runs):
    """The reason the instance does not show the paper's ``effect`` (an
    :class:`Effect`: its method's
    metric, end over start, median over runs, at most ``at_most``), or
    ""."""
    if effect is None:
        return ""
    ratios = []
    for _, run in select(runs, effect.method).sort_values(
            ["rep", "iteration"]).groupby(["dataset", "rep"]):
        values = run[effect.metric].to_numpy(dtype=float)
        ratios.append(values[-1] / values[0] if run["diverged"].max() == 0
                      else math.inf)
    ratio = float(np.median(ratios))
    if ratio <= effect.at_most:
        return ""
    return (f"the instance does not show the paper's effect ({effect.paper}):"
            f" here {effect.method.label}'s {effect.metric} ends at a median "
            f"{stats_number(ratio)} of its start (at most {effect.at_most:g}"
            f" needed); {effect.command}")


def decide(claims, runs, readings, score="upper", judge_progress=True,
           no_effect="", early=None):
    """The :class:`Verdict` of each claim at each reading ``(axis,
    target)`` (target None: the two methods' common end), in that order,
    then of each claim of speed (``Claim.early``) at the ``early``
    reading, where there is one: one Holm family over every test at
    stats.ALPHA (module doc); ``score``: the tuning's (``upper`` or
    ``levels``), for the working check; ``judge_progress`` False: every
    claim is tested (a paper's own steps); ``no_effect``: the reason the
    instance cannot show the paper's effect (every claim is then not
    testable, :func:`effect_shown`)."""
    cache, read, reader = {}, [], Reader(runs)
    tasks = [(claim, axis, target, False) for axis, target in readings
             for claim in claims]
    if early is not None:
        tasks += [(claim, *early, True) for claim in claims if claim.early]
    for claim, axis, target, at_early in tasks:
        reason = no_effect or (untestable(claim, runs, score, cache)
                               if judge_progress else "")
        if reason:
            read.append((claim, axis, target, None, reason, at_early))
            continue
        a, b, point = reader.point(claim, axis, target)
        read.append((claim, axis, point, (a, b), "", at_early))
    family = sum(values is not None for _, _, _, values, *_ in read)
    # the test is chosen by the design (n pairs, the family's size)
    comparisons = [None if values is None else stats.compare(
        *map(_not_reached_as_nan, values),
        higher_is_better=claim.higher_is_better, relation=claim.relation,
        margin=claim.smallest_difference,
        paired=stats.paired_by_design(len(values[0]), family))
        for claim, _, _, values, *_ in read]
    winners = iter(stats.family_verdicts(
        [c for c in comparisons if c is not None]))
    verdicts = []
    for (claim, axis, point, values, reason, at_early), comparison in zip(
            read, comparisons, strict=True):
        if comparison is None:
            verdicts.append(Verdict(claim, axis, point, None, NOT_TESTABLE,
                                    (0, 0), (0, 0), reason, family,
                                    at_early))
            continue
        winner = next(winners)
        a, b = values
        if claim.relation == "on_par":
            decided = (NOT_CONFIRMED if winner == "b" else INCONCLUSIVE
                       if winner is None else AHEAD if stats.beyond_margin(
                           comparison) else ON_PAR)
        else:
            decided = (INCONCLUSIVE if winner is None else CONFIRMED
                       if winner == "a" else NOT_CONFIRMED)
        verdicts.append(Verdict(
            claim, axis, point, comparison, decided,
            (a.count(None), b.count(None)),
            (_diverged(a), _diverged(b)), "", family, at_early))
    return verdicts
