"""How well learned sample weights separate clean from corrupted samples.

ROC AUC and F1, with the degenerate cases a benchmark curve meets made
explicit: NaN when the score is undefined (one class empty) instead of an
exception or a warning. Both are closed forms on NumPy arrays (the ROC AUC
is the Mann-Whitney statistic of SciPy's tie-averaged ranks), equal to
scikit-learn's ``roc_auc_score`` and ``f1_score`` (tested against them)
and about 100 times cheaper: scikit-learn's input validation took 9 ms per
call, 15% of an exact hyper-cleaning evaluation at the default instance
(two calls per evaluation, untimed but inside benchopt's wall-clock budget
of a run).
"""
import math

import numpy as np


def roc_auc(scores, positive):
    """ROC AUC of ``scores`` for the boolean labels ``positive`` (ties
    count 1/2); NaN when a class is empty."""
    positive = np.asarray(positive, dtype=bool)
    n_positive = int(positive.sum())
    n_negative = positive.size - n_positive
    if n_positive == 0 or n_negative == 0:
        return math.nan
    # scipy.stats on first use: its import adds about 0.3 s to the start
    # of every benchopt process
    from scipy.stats import rankdata
    ranks = rankdata(np.asarray(scores, dtype=float))
    u_statistic = ranks[positive].sum() - n_positive * (n_positive + 1) / 2
    return float(u_statistic / (n_positive * n_negative))


def f1_score(predicted, actual):
    """F1 of boolean predictions (0 without true positives, NaN when there
    is nothing to detect)."""
    actual = np.asarray(actual, dtype=bool)
    predicted = np.asarray(predicted, dtype=bool)
    if not actual.any():
        return math.nan
    true_positives = int((predicted & actual).sum())
    return 2 * true_positives / (int(predicted.sum()) + int(actual.sum()))
