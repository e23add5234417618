"""The two rank tests of the verdict rule (:mod:`benchmark_utils.claims.
stats`), each counted exactly given the ties up to ``MAX_EXACT`` values
in all: the Wilcoxon signed-rank test of paired differences (the
sign-flip distribution of the positive ranks' sum, zeros dropped) and the
Mann-Whitney U (Wilcoxon rank-sum) test of two samples (the permutation
distribution of one sample's rank sum); over that, the normal
approximation with the ties' variance (at 30 repetitions the smallest
p-values are far below any threshold the rule uses). scipy's exact
versions take about a second per tied comparison, which the simulated
error rates (millions of comparisons) cannot afford;
tests/test_claims_stats.py checks both against scipy's."""
import numpy as np
import scipy.stats

MAX_EXACT = 40  # values in all up to which a test is exact
_BLOCK = 4_000_000  # array elements per vectorized block (memory bound)


def signed_rank_tails(d):
    """``(less, greater)``: for each row of ``d`` (m, n), the probability
    that the sum of the ranks of its positive values is at most / at
    least the one observed, under its exact sign-flip distribution given
    the midranks of the nonzero values' magnitudes (zeros dropped; a row
    of zeros gives 1, 1); normal over ``MAX_EXACT / 2`` pairs."""
    d = np.atleast_2d(np.asarray(d, dtype=float))
    nonzero = d != 0
    # midranks of |d| among the nonzero values, doubled: integers, so that
    # sums are exact; a zero gets rank 0 (it adds nothing to either sum)
    magnitude = np.where(nonzero, np.abs(d), -1.0)
    doubled = np.rint(2 * scipy.stats.rankdata(magnitude, axis=1)).astype(
        np.int64) - 2 * (~nonzero).sum(axis=1, keepdims=True)
    doubled = np.where(nonzero, doubled, 0)
    observed = np.where(d > 0, doubled, 0).sum(axis=1)
    if 2 * d.shape[1] > MAX_EXACT:
        # the sum of ranks r_i each kept with probability 1/2: mean
        # sum(r) / 2, variance sum(r^2) / 4 (doubled ranks here)
        mean, var = doubled.sum(axis=1) / 2, (doubled ** 2).sum(axis=1) / 4
        with np.errstate(invalid="ignore", divide="ignore"):
            z = (observed - mean) / np.sqrt(var)
        return (np.where(var > 0, scipy.stats.norm.cdf(z), 1.0),
                np.where(var > 0, scipy.stats.norm.sf(z), 1.0))
    patterns, which = _patterns(doubled)
    return _tails(_signed_rank_counts(patterns), which, observed)


def _tails(counts, which, observed):
    """``(less, greater)``: P(S <= observed) and P(S >= observed) for each
    row, S distributed as its pattern's ``counts[which]`` (integer counts
    of each sum: their cumulative sums are exact, divided once)."""
    total = counts.sum(axis=1)[which]
    less = np.cumsum(counts, axis=1)[which, observed] / total
    greater = np.cumsum(counts[:, ::-1], axis=1)[:, ::-1][
        which, observed] / total
    return less, greater


def two_sided(tails):
    """Twice the smaller of the ``(less, greater)`` tails, at most 1."""
    less, greater = tails
    return np.minimum(1.0, 2 * np.minimum(less, greater))


def _patterns(doubled):
    """The distinct sorted rows of ``doubled`` and each row's index among
    them; rows without ties (the most common pattern, 2, 4, ..., or the
    same after zeros) found by one comparison, not by the sort of
    ``np.unique``."""
    ordered = np.sort(doubled, axis=1)
    common = ordered[np.argmax((np.diff(ordered, axis=1) == 2).all(axis=1))]
    plain = (ordered == common).all(axis=1)
    patterns, which = np.unique(ordered[~plain], axis=0,
                                return_inverse=True)
    patterns = np.concatenate([common[None], patterns])
    out = np.zeros(len(ordered), dtype=np.intp)
    out[~plain] = which.reshape(-1) + 1
    return patterns, out


def _signed_rank_counts(patterns):
    """``counts[p, s]``: the sign patterns of the doubled midranks
    ``patterns[p]`` whose positive ranks sum to s (a rank 0 doubles every
    count, which the caller's normalization removes), each pattern
    counted once per process."""
    missing = [p for p in patterns if p.tobytes() not in _SIGNED_COUNTS]
    if missing:
        unique = np.unique(np.array(missing), axis=0)
        n = unique.shape[1]
        size = n * (n + 1) + 1
        counts = np.zeros((len(unique), size))
        counts[:, 0] = 1.0
        # one value at a time: each sum s either keeps it or adds its rank
        for ranks in unique.T:
            before = counts.copy()
            for rank in np.unique(ranks):
                rows = np.flatnonzero(ranks == rank)
                counts[rows, rank:] += before[rows, :size - rank]
        for p, c in zip(unique, counts, strict=True):
            _SIGNED_COUNTS[p.tobytes()] = c
    return np.stack([_SIGNED_COUNTS[p.tobytes()] for p in patterns])


_SIGNED_COUNTS = {}    # pattern bytes -> counts (_signed_rank_counts)


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
    patterns, which = _patterns(doubled)
    return _tails(_rank_sum_counts(patterns, n_a), which, observed)


def _rank_sum_counts(patterns, n_a):
    """``counts[p, s]``: the subsets of ``n_a`` of the doubled midranks
    ``patterns[p]`` whose sum is s (:func:`_count_rank_sums`), each
    pattern counted once per process (without ties every row has the
    same pattern)."""
    missing = [p for p in patterns if (p.tobytes(), n_a) not in _SUM_COUNTS]
    if missing:
        unique = np.unique(np.array(missing), axis=0)
        for p, counts in zip(unique, _count_rank_sums(unique, n_a),
                             strict=True):
            _SUM_COUNTS[p.tobytes(), n_a] = counts
    return np.stack([_SUM_COUNTS[p.tobytes(), n_a] for p in patterns])


_SUM_COUNTS = {}    # (pattern bytes, n_a) -> counts (_rank_sum_counts)


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
