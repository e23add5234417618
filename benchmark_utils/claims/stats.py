"""Compare two methods by their per-seed final values: one rule for every
verdict of docs/results.md.

**The smallest difference that matters** (:data:`MARGINS`): each metric
has a margin m, relative (10% of the smaller of the two medians, for
losses and gaps, which the papers plot on log axes where less is not
visible) or absolute (0.01, one percentage point, for accuracies and
rates in [0, 1]). Values are oriented so that lower is better.

**The tests.** Each claim is two one-sided Mann-Whitney U tests on
shifted values, the shift being m (under a location shift the shifted
test is exact): for "a better than b", a + m against b (a better by
more than m) and b + m against a (b better by more than m); for "a at
least on par with b", a non-inferiority test, a - m against b (a not
worse by more than m: parity shown, never a failure to reject) and
b + m against a (a worse by more than m). Its p-value is twice the
smaller one-sided p-value (at m = 0 the exact two-sided p-value), Holm-
corrected over the family the caller states
(:func:`family_verdicts`); a rejected test decides for its side only
if the 95% percentile bootstrap interval of median(a) - median(b) lies
beyond that side's boundary as well (below -m, below m, above m), so
that every verdict agrees with the printed medians. The interval only
removes verdicts. :mod:`benchmark_utils.claims.simulation` measures the
rule's false "better" and false "on par" rates (``python -m
benchmark_utils.claims.simulation`` prints the table); :func:`detectable`
gives, for a verdict left undecided, the difference its test would
have found with 80% power.

Why a rank test: ten seeds, heavy tails (a run that nearly diverges) and
ties (diverged runs, counts, accuracies on a few hundred test images)
leave no room for a normal model; the rank test assumes none, and its
p-value is exact up to 20 vs 20 values: counted here
(:func:`rank_sum_tails`, the exact permutation distribution given the
ties, which scipy's takes about a second per tied 10 vs 10 comparison
for; the tests check both agree); over ``MAX_EXACT`` values in all (30
repetitions against 30), scipy's asymptotic p-value with its tie
correction (the exact count per tie pattern would take hours for the
simulated rates at n = 30, which the page shows for this rule). The two
samples are resampled independently (no pairing of seeds is assumed).

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

ALPHA = 0.05
POWER = 0.8         # the power at which detectable() states a difference
N_BOOT = 10000
TRIALS = 4000
MAX_EXACT = 40  # pooled values up to which the p-value is counted exactly
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
    spread: float = math.nan    # pooled robust sd of the finite values


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


def one_sided_p_values(a, b, margin, relation="better"):
    """``(p_a, p_b)`` for rows of ``a`` and ``b``, oriented so that lower
    is better, with ``margin`` (one per row, >= 0): p_a tests a + m
    below b ("better"), or a - m below b ("on_par": a not worse by more
    than m); p_b tests b + m below a (b better, or a worse, by more
    than m). Each is the lower tail of the shifted sample's rank sum."""
    if relation not in RELATIONS:
        raise ValueError(f"relation must be one of {RELATIONS}, got "
                         f"{relation!r}")
    a, b = np.atleast_2d(a), np.atleast_2d(b)
    m = np.broadcast_to(np.asarray(margin, dtype=float), (len(a),))[:, None]
    shift = m if relation == "better" else -m
    p_a = rank_sum_tails(a + shift, b)[0]
    p_b = rank_sum_tails(b + m, a)[0]
    return p_a, p_b


def robust_spread(a, b):
    """The pooled robust standard deviation of the finite values of two
    samples (1.4826 MAD each, their standard deviation where the MAD is
    0); NaN where either has fewer than 3 finite values."""
    spreads = []
    for x in (a, b):
        x = x[np.isfinite(x)]
        if len(x) < 3:
            return math.nan
        mad = 1.4826 * np.median(np.abs(x - np.median(x)))
        spreads.append(mad if mad > 0 else float(np.std(x, ddof=1)))
    return float(np.sqrt(np.mean(np.square(spreads))))


def compare(a, b, *, higher_is_better=False, relation="better",
            margin=LOSS_MARGIN, seed=0):
    """The rule (module doc) on the per-seed values ``a`` and ``b`` of
    two methods, as one verdict at level ALPHA (a family of verdicts:
    :func:`family_verdicts`); ``margin``: a :class:`Margin`."""
    a = worst_filled(a, higher_is_better)
    b = worst_filled(b, higher_is_better)
    median_a, median_b = float(np.median(a)), float(np.median(b))
    m = margin.value(median_a, median_b)
    # lower is better from here on
    sign = -1.0 if higher_is_better else 1.0
    low, high = bootstrap_ci(sign * a[None], sign * b[None],
                             rng=np.random.default_rng(seed))
    low, high = float(low[0]), float(high[0])
    p_a, p_b = (float(p[0]) for p in one_sided_p_values(
        sign * a, sign * b, m, relation))
    side = "a" if p_a <= p_b else "b"
    boundary = -m if relation == "better" else m
    favours = ("a" if side == "a" and high < boundary else
               "b" if side == "b" and low > m else None)
    p_value = min(1.0, 2 * min(p_a, p_b))
    difference = float(median_difference(median_a, median_b))
    ci = (low, high) if not higher_is_better else (-high, -low)
    return Comparison(
        median_a=median_a, median_b=median_b, difference=difference,
        ci_low=ci[0], ci_high=ci[1], margin=m, p_value=p_value, side=side,
        favours=favours, better=favours if p_value <= ALPHA else None,
        alpha=ALPHA, higher_is_better=higher_is_better, relation=relation,
        n_a=len(a), n_b=len(b), spread=robust_spread(a, b))


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
    (z_{1 - alpha'/2} + z_power) s sqrt(1/n_a + 1/n_b) / sqrt(3 / pi),
    s the pooled robust spread, 3/pi the rank test's efficiency against
    a normal model; inf where too few runs are finite to measure s."""
    s = comparison.spread
    if not np.isfinite(s):
        return math.inf
    level = ALPHA / max(family_size, 1)
    z = (scipy.stats.norm.ppf(1 - level / 2) + scipy.stats.norm.ppf(POWER))
    n_a, n_b = comparison.n_a, comparison.n_b
    return comparison.margin + z * s * math.sqrt(
        1 / n_a + 1 / n_b) / math.sqrt(3 / math.pi)


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


def bootstrap_ci(a, b, *, rng):
    """Percentile bootstrap interval (N_BOOT resamples), at level 1 -
    ALPHA, of median(a) - median(b) for each row pair of ``a`` (m, n_a)
    and ``b`` (m, n_b), each sample resampled on its own. Its ends are
    order statistics of the resampled differences (no interpolation,
    which infinite values would turn into NaN; a hair wider). Returns
    (low, high), each (m,)."""
    a, b = np.atleast_2d(a), np.atleast_2d(b)
    low, high = np.empty(len(a)), np.empty(len(a))
    step = max(1, _BLOCK // (N_BOOT * (a.shape[1] + b.shape[1])))
    for start in range(0, len(a), step):
        rows = slice(start, start + step)
        differences = median_difference(
            _resampled_medians(a[rows], N_BOOT, rng),
            _resampled_medians(b[rows], N_BOOT, rng))
        low[rows] = np.quantile(differences, ALPHA / 2, axis=1,
                                method="lower")
        high[rows] = np.quantile(differences, 1 - ALPHA / 2, axis=1,
                                 method="higher")
    return low, high


def _resampled_medians(x, n_boot, rng):
    """(m, n_boot) medians of rows of ``x`` resampled with replacement:
    ``np.median`` of the picked values, computed on the picked values'
    ranks in their row (small integers, a cheaper partition; the same
    medians to the bit)."""
    m, n = x.shape
    picks = rng.integers(0, n, size=(m, n_boot, n))
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


def rank_sum_tails(a, b):
    """``(less, greater)``: for each row of ``a`` (m, n_a) against the
    same row of ``b`` (m, n_b), the probability that the rank sum of a is
    at most / at least the one observed, under its exact distribution
    given the pooled midranks (module doc); asymptotic over
    ``MAX_EXACT`` values."""
    a, b = np.atleast_2d(a), np.atleast_2d(b)
    n_a, n = a.shape[1], a.shape[1] + b.shape[1]
    if n > MAX_EXACT:
        with np.errstate(invalid="ignore"):
            return tuple(np.atleast_1d(scipy.stats.mannwhitneyu(
                a, b, axis=1, method="asymptotic",
                alternative=side).pvalue) for side in ("less", "greater"))
    # midranks doubled: integers, so that sums are exact
    doubled = np.rint(2 * scipy.stats.rankdata(
        np.concatenate([a, b], axis=1), axis=1)).astype(np.int64)
    observed = doubled[:, :n_a].sum(axis=1)
    patterns, which = np.unique(np.sort(doubled, axis=1), axis=0,
                                return_inverse=True)
    which = which.reshape(-1)
    counts = _rank_sum_counts(patterns, n_a)
    total = math.comb(n, n_a)
    less = np.cumsum(counts, axis=1)[which, observed] / total
    greater = np.cumsum(counts[:, ::-1], axis=1)[:, ::-1][which,
                                                          observed] / total
    return less, greater


def rank_sum_p_values(a, b):
    """Two-sided Mann-Whitney U p-values of each row of ``a`` against the
    same row of ``b``: twice the smaller tail, at most 1."""
    less, greater = rank_sum_tails(a, b)
    return np.minimum(1.0, 2 * np.minimum(less, greater))


def _rank_sum_counts(patterns, n_a):
    """``counts[p, s]``: the subsets of ``n_a`` of the doubled midranks
    ``patterns[p]`` whose sum is s (:func:`_count_rank_sums`), each
    pattern counted once per process (without ties every row has the
    same pattern)."""
    missing = [p for p in patterns if (p.tobytes(), n_a) not in _COUNTS]
    if missing:
        unique = np.unique(np.array(missing), axis=0)
        for p, counts in zip(unique, _count_rank_sums(unique, n_a),
                             strict=True):
            _COUNTS[p.tobytes(), n_a] = counts
    return np.stack([_COUNTS[p.tobytes(), n_a] for p in patterns])


_COUNTS = {}    # (pattern bytes, n_a) -> counts (_rank_sum_counts)


def _count_rank_sums(patterns, n_a):
    """The counts of :func:`_rank_sum_counts` by the subset recursion: one
    pooled value at a time, each subset of k values and sum s extended to
    k + 1 values and sum s + rank, for all patterns whose value there is
    the same rank at once (exact: integer counts below 2^53)."""
    n_patterns, n = patterns.shape
    size = n * (n + 1) + 1
    out = np.empty((n_patterns, size))
    step = max(1, _BLOCK // ((n_a + 1) * size))
    for start in range(0, n_patterns, step):
        block = patterns[start:start + step]
        counts = np.zeros((len(block), n_a + 1, size))
        counts[:, 0, 0] = 1.0
        for ranks in block.T:
            before = counts[:, :-1].copy()
            for rank in np.unique(ranks):      # doubled midranks, >= 2
                rows = np.flatnonzero(ranks == rank)
                counts[rows, 1:, rank:] += before[rows, :, :size - rank]
        out[start:start + step] = counts[:, n_a]
    return out
