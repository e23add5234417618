"""Compare two methods by their per-seed final values: one rule for every
verdict of docs/results.md.

**The rule.** "a is better than b" when the two-sided Mann-Whitney U
p-value of their per-seed values is at most the level (alpha = 0.05,
Holm-corrected over the verdicts of a paper) and the 95% percentile
bootstrap confidence interval of median(a) - median(b) lies entirely on
a's better side of 0; otherwise there is no verdict.

Why a rank test: ten seeds, heavy tails (a run that nearly diverges) and
ties (diverged runs, counts, accuracies on a few hundred test images)
leave no room for a normal model; the rank test assumes none, and its
p-value is exact at these sizes. Why the interval as well: the rank test
asks whether one method's values tend to rank below the other's, while
the tables print medians; the interval makes every verdict agree with
the printed difference and refuses one where that difference could be 0.
It only removes verdicts, so the rule's false-positive rate is at most
the rank test's (:func:`false_positive_rate` measures it;
``python -m benchmark_utils.claims.stats`` prints the table). Under Holm
the interval stays at 1 - alpha: the family-wise control comes from the
p-values. The two samples are resampled independently (no pairing of
seeds is assumed).

The p-value is that of :func:`scipy.stats.mannwhitneyu` with
``method="exact"`` where no value is tied, and with
``method=PermutationMethod(n_resamples=np.inf)`` (the exact permutation
distribution given the ties) where values are tied; it is counted here
(:func:`rank_sum_p_values`) because scipy's takes about a second per
tied 10 vs 10 comparison and the simulation needs 10^5 of them (the
tests check both agree). Over ``MAX_EXACT`` values in all: scipy's
asymptotic p-value (tie and continuity corrected).

A NaN value (a diverged run) is the worst value: +inf for a loss, -inf
where higher is better; infinite values rank as the worst (tied among
themselves), a median may be infinite, and two equal infinite medians
differ by 0. None (a curve that stopped before the budget,
:func:`benchmark_utils.claims.curves.value_at`) is refused: the caller
decides whether "not reached" counts as diverged or is left out.
"""
import argparse
import dataclasses
import math

import numpy as np
import scipy.stats

ALPHA = 0.05
N_BOOT = 10000
TRIALS = 4000
MAX_EXACT = 60  # pooled values up to which the p-value is counted exactly
_BLOCK = 4_000_000  # array elements per vectorized block (memory bound)


@dataclasses.dataclass(frozen=True)
class Comparison:
    """a against b: medians (NaN counted as the worst value), the
    difference of medians and its bootstrap interval [ci_low, ci_high],
    the Mann-Whitney p-value, ``favours`` (the side of 0 the interval
    lies on, whatever the p-value) and ``better``, the rule's verdict for
    this comparison alone ("a", "b" or None)."""
    median_a: float
    median_b: float
    difference: float
    ci_low: float
    ci_high: float
    p_value: float
    favours: str | None
    better: str | None
    alpha: float
    higher_is_better: bool


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


def compare(a, b, *, higher_is_better=False, n_boot=N_BOOT, alpha=ALPHA,
            seed=0):
    """The rule (module docstring) on the per-seed values ``a`` and
    ``b`` of two methods, as one verdict at level ``alpha`` (a family of
    verdicts: :func:`family_verdicts`)."""
    a = worst_filled(a, higher_is_better)
    b = worst_filled(b, higher_is_better)
    median_a, median_b = float(np.median(a)), float(np.median(b))
    low, high = bootstrap_ci(a[None], b[None], n_boot=n_boot, alpha=alpha,
                             rng=np.random.default_rng(seed))
    low, high = float(low[0]), float(high[0])
    p_value = float(rank_sum_p_values(a[None], b[None])[0])
    below, above = ("b", "a") if higher_is_better else ("a", "b")
    favours = below if high < 0 else above if low > 0 else None
    return Comparison(
        median_a=median_a, median_b=median_b,
        difference=float(median_difference(median_a, median_b)),
        ci_low=low, ci_high=high, p_value=p_value, favours=favours,
        better=favours if p_value <= alpha else None, alpha=alpha,
        higher_is_better=higher_is_better)


def family_verdicts(comparisons, alpha=ALPHA):
    """The rule's verdicts over a family (a paper's comparisons): each
    "a", "b" or None, its p-value Holm-corrected over the family."""
    rejected = holm([c.p_value for c in comparisons], alpha)
    return [c.favours if r else None
            for c, r in zip(comparisons, rejected, strict=True)]


def holm(p_values, alpha=ALPHA):
    """Holm-Bonferroni step-down over the last axis: the smallest of m
    p-values is rejected if at most alpha/m, the next if at most
    alpha/(m-1), ..., stopping at the first that is not; the family-wise
    error rate stays at most alpha whatever the dependence between the
    hypotheses. Boolean array of the rejected, in the given order."""
    p = np.asarray(p_values, dtype=float)
    m = p.shape[-1]
    order = np.argsort(p, axis=-1, kind="stable")
    thresholds = alpha / (m - np.arange(m))
    passing = np.take_along_axis(p, order, axis=-1) <= thresholds
    rejected = np.empty(p.shape, dtype=bool)
    np.put_along_axis(rejected, order,
                      np.logical_and.accumulate(passing, axis=-1), axis=-1)
    return rejected


def bootstrap_ci(a, b, *, n_boot=N_BOOT, alpha=ALPHA, rng):
    """Percentile bootstrap interval, at level 1 - alpha, of median(a) -
    median(b) for each row pair of ``a`` (m, n_a) and ``b`` (m, n_b),
    each sample resampled on its own. Its ends are order statistics of
    the resampled differences (no interpolation, which infinite values
    would turn into NaN; a hair wider). Returns (low, high), each (m,)."""
    a, b = np.atleast_2d(a), np.atleast_2d(b)
    low, high = np.empty(len(a)), np.empty(len(a))
    step = max(1, _BLOCK // (n_boot * (a.shape[1] + b.shape[1])))
    for start in range(0, len(a), step):
        rows = slice(start, start + step)
        differences = median_difference(
            _resampled_medians(a[rows], n_boot, rng),
            _resampled_medians(b[rows], n_boot, rng))
        low[rows] = np.quantile(differences, alpha / 2, axis=1,
                                method="lower")
        high[rows] = np.quantile(differences, 1 - alpha / 2, axis=1,
                                 method="higher")
    return low, high


def _resampled_medians(x, n_boot, rng):
    """(m, n_boot) medians of rows of ``x`` resampled with replacement."""
    picks = rng.integers(0, x.shape[1], size=(len(x), n_boot, x.shape[1]))
    return np.median(x[np.arange(len(x))[:, None, None], picks], axis=2)


def rank_sum_p_values(a, b):
    """Two-sided Mann-Whitney U p-values of each row of ``a`` (m, n_a)
    against the same row of ``b`` (m, n_b) (module docstring): twice the
    smaller tail of the observed rank sum of a under its exact
    distribution given the pooled midranks, at most 1."""
    a, b = np.atleast_2d(a), np.atleast_2d(b)
    n_a, n = a.shape[1], a.shape[1] + b.shape[1]
    if n > MAX_EXACT:
        return np.atleast_1d(scipy.stats.mannwhitneyu(
            a, b, axis=1, method="asymptotic").pvalue)
    # midranks doubled: integers, so that sums are exact
    doubled = np.rint(2 * scipy.stats.rankdata(
        np.concatenate([a, b], axis=1), axis=1)).astype(np.int64)
    observed = doubled[:, :n_a].sum(axis=1)
    patterns, which = np.unique(np.sort(doubled, axis=1), axis=0,
                                return_inverse=True)
    which = which.reshape(-1)
    counts = _rank_sum_counts(patterns, n_a)
    less = np.cumsum(counts, axis=1)[which, observed]
    greater = np.cumsum(counts[:, ::-1], axis=1)[:, ::-1][which, observed]
    return np.minimum(1.0, 2 * np.minimum(less, greater) / math.comb(n, n_a))


def _rank_sum_counts(patterns, n_a):
    """``counts[p, s]``: the subsets of ``n_a`` of the doubled midranks
    ``patterns[p]`` whose sum is s, counted by the subset recursion (one
    pooled value at a time, all patterns at once)."""
    n_patterns, n = patterns.shape
    size = n * (n + 1) + 1
    out = np.empty((n_patterns, size))
    sums, sizes = np.arange(size), np.arange(n_a)[None, :, None]
    step = max(1, _BLOCK // ((n_a + 1) * size))
    for start in range(0, n_patterns, step):
        block = patterns[start:start + step]
        counts = np.zeros((len(block), n_a + 1, size))
        counts[:, 0, 0] = 1.0
        rows = np.arange(len(block))[:, None, None]
        for rank in block.T:
            source = sums - rank[:, None]
            shifted = counts[rows, sizes, np.maximum(source, 0)[:, None, :]]
            counts[:, 1:] += np.where((source >= 0)[:, None, :], shifted, 0)
        out[start:start + step] = counts[:, n_a]
    return out


# samples for the simulation: equal distributions, from tame to awkward
DISTRIBUTIONS = {
    "normal": ("normal (mean 1, sd 0.2)",
               lambda rng, shape: rng.normal(1.0, 0.2, shape)),
    "lognormal": ("lognormal, heavy tail (sigma 1.5)",
                  lambda rng, shape: rng.lognormal(0.0, 1.5, shape)),
    "discrete": ("discrete, many ties (4 values)",
                 lambda rng, shape: rng.integers(0, 4, shape).astype(float)),
    "diverging": ("lognormal (sigma 1), 30% diverged (NaN)",
                  lambda rng, shape: np.where(rng.random(shape) < 0.3,
                                              np.nan,
                                              rng.lognormal(0.0, 1.0, shape))),
}


def false_positive_rate(n=10, n_verdicts=1, trials=TRIALS, seed=0,
                        distribution="normal", alpha=ALPHA, n_boot=N_BOOT):
    """The fraction of ``trials`` families of ``n_verdicts`` comparisons,
    both samples of each (``n`` values) drawn from one ``distribution``
    (a key of DISTRIBUTIONS), where the rule gives any verdict (Holm over
    the family): the false-positive rate of one verdict, or the
    family-wise rate of a paper's ``n_verdicts``. The interval is drawn
    only for the comparisons whose p-value passes (it can only veto)."""
    rng = np.random.default_rng(seed)
    draw = DISTRIBUTIONS[distribution][1]
    shape = (trials * n_verdicts, n)
    a = np.where(np.isnan(x := draw(rng, shape)), np.inf, x)
    b = np.where(np.isnan(x := draw(rng, shape)), np.inf, x)
    p_values = rank_sum_p_values(a, b).reshape(trials, n_verdicts)
    passed = holm(p_values, alpha).reshape(-1)
    low, high = bootstrap_ci(a[passed], b[passed], n_boot=n_boot,
                             alpha=alpha, rng=rng)
    verdict = np.zeros(passed.shape, dtype=bool)
    verdict[passed] = (high < 0) | (low > 0)
    return float(verdict.reshape(trials, n_verdicts).any(axis=1).mean())


def rate_table(n=10, family=8, trials=TRIALS, seed=0, alpha=ALPHA):
    """The measured false-positive rates as markdown lines: one row per
    distribution, a single verdict and a family of ``family`` verdicts."""
    lines = [f"| values (n = {n} per method) | single verdict | "
             f"family of {family} (Holm) |", "|---|---|---|"]
    for name, (label, _) in DISTRIBUTIONS.items():
        single, whole = (false_positive_rate(
            n, k, trials=trials, seed=seed, distribution=name, alpha=alpha)
            for k in (1, family))
        lines.append(f"| {label} | {single:.3f} | {whole:.3f} |")
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m benchmark_utils.claims.stats",
        description="Print the measured false-positive rates of the "
                    "verdict rule as a markdown table.")
    parser.add_argument("--n", type=int, default=10,
                        help="values per method (default 10)")
    parser.add_argument("--family", type=int, default=8,
                        help="verdicts per family (default 8)")
    parser.add_argument("--trials", type=int, default=TRIALS,
                        help=f"simulated trials (default {TRIALS})")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    error = math.sqrt(ALPHA * (1 - ALPHA) / args.trials)
    print(f"Rate of verdicts between two samples of one distribution "
          f"(alpha = {ALPHA}, {args.trials} trials, seed {args.seed}; "
          f"standard error about {error:.3f} at a rate of {ALPHA}):\n")
    print("\n".join(rate_table(args.n, args.family, args.trials,
                               args.seed)))


if __name__ == "__main__":
    main()
