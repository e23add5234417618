"""Compare two methods by their per-seed final values: one rule for every
verdict of docs/results.md.

**The smallest difference that matters** (:data:`MARGINS`): each metric
has a margin m, relative (10% of the smaller of the two medians, for
losses and gaps, which the papers plot on log axes where less is not
visible) or absolute (0.01, one percentage point, for accuracies and
rates in [0, 1]). Values are oriented so that lower is better.

**Paired by seed.** Repetition r of every method runs with the same seed
(benchopt's ``get_seed`` on the solver class, the repetition and the base
seed, and each dataset's fixed ``random_state``), so the two values of a
repetition share their instance and their sample stream's seed; the rule
reads the repetitions both methods ran. The test is chosen by the design,
before any value is read (:func:`paired_by_design`): **paired** (per-seed
differences d = a - b, two diverged runs differing by 0) where a result
one seed contradicts can still pass the family's first Holm threshold
(2^(2 - n) <= ALPHA / k for n pairs in a family of k: any family at 30
repetitions, up to 12 tests at 10); otherwise **unpaired** (the two
samples; valid, and conservative where a seed's runs are correlated),
whose smallest p-value, 2 / C(2n, n), leaves room for the largest
families at 10 repetitions, where the paired test's 2^(1 - n) leaves
none. Two methods that run the same on every seed differ by 0 and are
shown on par by the paired test, which no unpaired test of noisy seeds
can do.

**The tests.** Each claim is two one-sided rank tests with a shift of m:
for "a better than b", a + m below b (a better by more than m) and b + m
below a (b better by more than m); for "a at least on par with b", a
non-inferiority test, a - m below b (a not worse by more than m: parity
shown, never a failure to reject) and b + m below a (a worse by more
than m). Paired, the Wilcoxon signed-rank test of the shifted
differences; unpaired, the Mann-Whitney U test of the shifted samples
(both exact, :mod:`benchmark_utils.claims.rank_tests`). Its p-value is
twice the smaller one-sided p-value, Holm-corrected over the family the
caller states (:func:`family_verdicts`); a rejected test decides for its
side only if the 95% bootstrap interval of median(a) - median(b) (the
seeds resampled together where paired) lies beyond that side's boundary
as well (below -m, below m, above m), so that every verdict agrees with
the printed medians. The interval only removes verdicts.
:mod:`benchmark_utils.claims.simulation` measures the rule's false
"better" and false "on par" rates (``python -m
benchmark_utils.claims.simulation`` prints the table); :func:`detectable`
gives, for a verdict left undecided, the difference its test would have
found with 80% power.

Why rank tests: ten seeds, heavy tails (a run that nearly diverges) and
ties (diverged runs, counts, accuracies on a few hundred test images)
leave no room for a normal model; the rank-sum test assumes none under
its null, the signed-rank test only that the shifted differences are
symmetric about their center, and both p-values are exact.

A NaN value (a diverged run) is the worst value: +inf for a loss, -inf
where higher is better; infinite values rank as the worst (tied among
themselves) and stay so when shifted, a median may be infinite, and two
equal infinite medians differ by 0. None (a curve that stopped before
the budget, :func:`benchmark_utils.claims.curves.value_at`) is refused:
the caller decides whether "not reached" counts as diverged or is left
out.
"""
import dataclasses
import math

import numpy as np
import scipy.stats

from benchmark_utils.claims.rank_tests import (
    rank_sum_tails,
    signed_rank_tails,
    two_sided,
)

ALPHA = 0.05
POWER = 0.8         # the power at which detectable() states a difference
N_BOOT = 10000
TRIALS = 20000   # families per simulated rate: std. error 0.0015 at 0.05
_BLOCK = 4_000_000  # array elements per vectorized block (memory bound)
RELATIONS = ("better", "on_par")


@dataclasses.dataclass(frozen=True)
class Margin:
    """The smallest difference that matters for a metric: ``kind``
    "relative" (``size`` times the smaller of the two medians' magnitudes)
    or "absolute" (``size`` in the metric's unit), with its reason."""
    kind: str
    size: float
    reason: str

    def value(self, median_a, median_b):
        """The margin in the metric's unit for these two medians (a
        relative margin of two infinite medians is 0)."""
        if self.kind == "absolute":
            return self.size
        finite = [abs(m) for m in (median_a, median_b) if np.isfinite(m)]
        return self.size * min(finite) if finite else 0.0

    def text(self):
        return (f"{self.size:.0%} of the smaller median"
                if self.kind == "relative" else f"{self.size:g} (absolute)")


LOSS_MARGIN = Margin("relative", 0.10, "losses and gaps fall over decades "
                     "and the papers plot them on log axes, where a 10% "
                     "difference (0.04 decade) is the least a reader sees")
RATE_MARGIN = Margin("absolute", 0.01, "accuracies and rates in [0, 1]: "
                     "one percentage point, a few test images here")
# the accuracies and rates in [0, 1], where higher is better; every other
# metric is a loss or a gap
HIGHER_IS_BETTER = frozenset({"test_accuracy", "recovery_rate",
                              "cleaning_auc", "cleaning_f1"})
# metric -> its margin
MARGINS = dict.fromkeys(sorted(HIGHER_IS_BETTER), RATE_MARGIN)


def margin_for(metric):
    """The :class:`Margin` of ``metric`` (:data:`MARGINS`)."""
    return MARGINS.get(metric, LOSS_MARGIN)


@dataclasses.dataclass(frozen=True)
class Comparison:
    """a against b (module doc): medians (NaN counted as the worst
    value), the difference of medians and its 95% bootstrap interval
    [ci_low, ci_high], the margin (in the metric's unit), the p-value
    (twice the smaller one-sided p-value), ``side`` ("a": a better, or
    for "on par" not worse, by the margin; "b": the other side) whose
    one-sided test is the smaller, ``favours`` (that side where the
    interval lies beyond its boundary too, else None), ``better`` (the
    verdict alone at ``alpha``: ``favours`` where p <= alpha), the
    sample sizes and the relation tested."""
    median_a: float
    median_b: float
    difference: float
    ci_low: float
    ci_high: float
    margin: float
    p_value: float
    side: str
    favours: str | None
    better: str | None
    alpha: float
    higher_is_better: bool
    relation: str = "better"
    n_a: int = 0
    n_b: int = 0
    spread: float = math.nan    # robust sd (:func:`spread`)
    paired: bool = True         # the test (:func:`paired_by_design`)


def worst_filled(values, higher_is_better=False):
    """``values`` as floats with NaN replaced by the worst value (+inf
    for a loss, -inf where higher is better); ValueError on None."""
    values = list(values)
    if any(value is None for value in values):
        raise ValueError("a value is None (its curve did not reach the "
                         "target): count it as diverged (NaN) or leave "
                         "it out before comparing")
    array = np.asarray(values, dtype=float)
    if array.ndim != 1 or array.size == 0:
        raise ValueError(f"expected a non-empty list of values, got "
                         f"shape {array.shape}")
    return np.where(np.isnan(array), -np.inf if higher_is_better
                    else np.inf, array)


def median_difference(median_a, median_b):
    """median_a - median_b, 0 where both are the same (infinite) value."""
    with np.errstate(invalid="ignore"):
        return np.where(median_a == median_b, 0.0, median_a - median_b)


def paired_by_design(n, family_size):
    """Whether ``n`` pairs are tested paired in a family of
    ``family_size`` (module doc): where a result one seed contradicts can
    still pass the family's first Holm threshold (2^(2 - n) <= ALPHA /
    family_size); otherwise unpaired."""
    return 2.0 ** (2 - n) <= ALPHA / max(family_size, 1)


def one_sided_p_values(a, b, margin, relation="better", paired=True):
    """``(p_a, p_b)`` for rows of ``a`` and ``b``, oriented so that lower
    is better, with ``margin`` (one per row, >= 0): p_a tests a + m below
    b ("better": a better by more than m), or a - m below b ("on_par": a
    not worse by more than m); p_b tests b + m below a (b better, or a
    worse, by more than m). Paired: the lower tail of the signed-rank
    statistic of the shifted differences (a - b, 0 where both are the
    same infinite value); else of the shifted sample's rank sum."""
    if relation not in RELATIONS:
        raise ValueError(f"relation must be one of {RELATIONS}, got "
                         f"{relation!r}")
    a, b = np.atleast_2d(a), np.atleast_2d(b)
    m = np.broadcast_to(np.asarray(margin, dtype=float), (len(a),))[:, None]
    shift = m if relation == "better" else -m
    if not paired:
        return (rank_sum_tails(a + shift, b)[0],
                rank_sum_tails(b + m, a)[0])
    d = median_difference(a, b)
    return signed_rank_tails(d + shift)[0], signed_rank_tails(m - d)[0]


def spread(a, b, paired=True):
    """The robust standard deviation (1.4826 MAD, the standard deviation
    where the MAD is 0) of the finite paired differences, or unpaired the
    pooled one of the two samples' finite values; NaN where fewer than 3
    are finite."""
    def robust(x):
        x = x[np.isfinite(x)]
        if len(x) < 3:
            return math.nan
        mad = 1.4826 * np.median(np.abs(x - np.median(x)))
        return float(mad if mad > 0 else np.std(x, ddof=1))
    if paired:
        return robust(median_difference(a, b))
    return float(np.sqrt(np.mean(np.square([robust(a), robust(b)]))))


def compare(a, b, *, higher_is_better=False, relation="better",
            margin=LOSS_MARGIN, paired=True, seed=0):
    """The rule (module doc) on the per-seed values ``a`` and ``b`` of
    two methods (the same seeds, in the same order), as one verdict at
    level ALPHA (a family of verdicts: :func:`family_verdicts`);
    ``margin``: a :class:`Margin`; ``paired``: the test
    (:func:`paired_by_design`)."""
    a = worst_filled(a, higher_is_better)
    b = worst_filled(b, higher_is_better)
    if len(a) != len(b):
        raise ValueError(f"paired values: {len(a)} for a, {len(b)} for b "
                         "(compare the repetitions both methods ran)")
    median_a, median_b = float(np.median(a)), float(np.median(b))
    m = margin.value(median_a, median_b)
    # lower is better from here on
    sign = -1.0 if higher_is_better else 1.0
    low, high = bootstrap_ci(sign * a[None], sign * b[None],
                             rng=np.random.default_rng(seed), paired=paired)
    low, high = float(low[0]), float(high[0])
    p_a, p_b = (float(p[0]) for p in one_sided_p_values(
        sign * a, sign * b, m, relation, paired))
    side = "a" if p_a <= p_b else "b"
    boundary = -m if relation == "better" else m
    favours = ("a" if side == "a" and high < boundary else
               "b" if side == "b" and low > m else None)
    p_value = float(two_sided((p_a, p_b)))
    difference = float(median_difference(median_a, median_b))
    ci = (low, high) if not higher_is_better else (-high, -low)
    return Comparison(
        median_a=median_a, median_b=median_b, difference=difference,
        ci_low=ci[0], ci_high=ci[1], margin=m, p_value=p_value, side=side,
        favours=favours, better=favours if p_value <= ALPHA else None,
        alpha=ALPHA, higher_is_better=higher_is_better, relation=relation,
        n_a=len(a), n_b=len(b), spread=spread(a, b, paired), paired=paired)


def beyond_margin(comparison):
    """Whether the interval puts a ahead of b by more than the margin."""
    c = comparison
    return (c.ci_low > c.margin if c.higher_is_better
            else c.ci_high < -c.margin)


def family_verdicts(comparisons):
    """The rule's verdicts over a family: each "a", "b" or None, its
    p-value Holm-corrected over the family."""
    if not comparisons:
        return []
    rejected = holm([c.p_value for c in comparisons])
    return [c.favours if r else None
            for c, r in zip(comparisons, rejected, strict=True)]


def detectable(comparison, family_size):
    """The difference of medians the comparison's test would detect with
    probability POWER, at the first Holm threshold of its family
    (ALPHA / family_size, one side at half of it): the margin plus
    (t_{1 - alpha'/2} + t_power) s w / sqrt(3 / pi), 3/pi the rank tests'
    efficiency against a normal model, s the comparison's spread, w
    1/sqrt(n) paired (n - 1 degrees of freedom), sqrt(1/n_a + 1/n_b)
    unpaired (n_a + n_b - 2): at 10 pairs the normal quantiles overstate
    the exact test's power (tests/test_claims_stats.py simulates it);
    inf where too few runs are finite to measure s, or too few for any
    p-value to pass that threshold (the smallest: 2^(1 - n) paired,
    2 / C(n_a + n_b, n_a) unpaired)."""
    c, level = comparison, ALPHA / max(family_size, 1)
    if c.paired:
        smallest, w, df = 2.0 ** (1 - c.n_a), 1 / math.sqrt(c.n_a), c.n_a - 1
    else:
        smallest = 2 / math.comb(c.n_a + c.n_b, c.n_a)
        w, df = math.sqrt(1 / c.n_a + 1 / c.n_b), c.n_a + c.n_b - 2
    if not np.isfinite(c.spread) or smallest > level:
        return math.inf
    t = scipy.stats.t.ppf(1 - level / 2, df) + scipy.stats.t.ppf(POWER, df)
    return c.margin + t * c.spread * w / math.sqrt(3 / math.pi)


def holm(p_values):
    """Holm-Bonferroni step-down over the last axis at alpha = ALPHA: the
    smallest of m p-values is rejected if at most alpha/m, the next if at
    most alpha/(m-1), ..., stopping at the first that is not; the
    family-wise error rate stays at most alpha whatever the dependence
    between the hypotheses. Boolean array of the rejected, in the given
    order."""
    p = np.asarray(p_values, dtype=float)
    m = p.shape[-1]
    order = np.argsort(p, axis=-1, kind="stable")
    thresholds = ALPHA / (m - np.arange(m))
    passing = np.take_along_axis(p, order, axis=-1) <= thresholds
    rejected = np.empty(p.shape, dtype=bool)
    np.put_along_axis(rejected, order,
                      np.logical_and.accumulate(passing, axis=-1), axis=-1)
    return rejected


def bootstrap_ci(a, b, *, rng, paired=True):
    """Percentile bootstrap interval (N_BOOT resamples), at level 1 -
    ALPHA, of median(a) - median(b) for each row pair of ``a`` (m, n_a)
    and ``b`` (m, n_b): paired, the same seeds (columns) resampled for
    both; else each sample on its own. Its ends are order statistics of
    the resampled differences (no interpolation, which infinite values
    would turn into NaN; a hair wider). Returns (low, high), each
    (m,)."""
    a, b = np.atleast_2d(a), np.atleast_2d(b)
    low, high = np.empty(len(a)), np.empty(len(a))
    step = max(1, _BLOCK // (N_BOOT * (a.shape[1] + b.shape[1])))
    for start in range(0, len(a), step):
        rows = slice(start, start + step)
        picks = [rng.integers(0, x.shape[1], size=(len(x[rows]), N_BOOT,
                                                   x.shape[1]))
                 for x in ((a,) if paired else (a, b))]
        differences = median_difference(
            _resampled_medians(a[rows], picks[0]),
            _resampled_medians(b[rows], picks[-1]))
        low[rows] = np.quantile(differences, ALPHA / 2, axis=1,
                                method="lower")
        high[rows] = np.quantile(differences, 1 - ALPHA / 2, axis=1,
                                 method="higher")
    return low, high


def _resampled_medians(x, picks):
    """(m, n_boot) medians of rows of ``x`` resampled at ``picks`` (m,
    n_boot, n): ``np.median`` of the picked values, computed on the
    picked values' ranks in their row (small integers, a cheaper
    partition; the same medians to the bit)."""
    m, n = x.shape
    order = np.argsort(x, axis=1, kind="stable")
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(n)[None], axis=1)
    ranks = ranks.astype(np.int8 if n <= 127 else np.int64)
    middle = ((n - 1) // 2, n // 2)
    picked = ranks[np.arange(m)[:, None, None], picks]
    # a radix sort of small integers beats a partition from 20 values on
    picked = (np.sort(picked, axis=2, kind="stable") if n >= 20
              else np.partition(picked, middle, axis=2))
    ordered = np.take_along_axis(x, order, axis=1)
    low, high = (np.take_along_axis(ordered, picked[..., k].astype(np.intp),
                                    axis=1) for k in middle)
    return low if n % 2 else (low + high) / 2
