"""How well learned sample weights separate clean from corrupted samples.

Scikit-learn's ROC AUC and F1, with the degenerate cases a benchmark curve
meets made explicit: NaN when the score is undefined (one class empty)
instead of an exception or a warning.
"""
import math

import numpy as np
from sklearn.metrics import f1_score as sklearn_f1_score
from sklearn.metrics import roc_auc_score


def roc_auc(scores, positive):
    """ROC AUC of ``scores`` for the boolean labels ``positive``
    (scikit-learn); NaN when a class is empty."""
    positive = np.asarray(positive, dtype=bool)
    if positive.all() or not positive.any():
        return math.nan
    return float(roc_auc_score(positive, scores))


def f1_score(predicted, actual):
    """F1 of boolean predictions (scikit-learn; 0 without true positives,
    NaN when there is nothing to detect)."""
    actual = np.asarray(actual, dtype=bool)
    if not actual.any():
        return math.nan
    return float(sklearn_f1_score(actual, np.asarray(predicted, dtype=bool),
                                  zero_division=0.0))
