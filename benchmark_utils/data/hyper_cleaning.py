"""The data of the hyper-cleaning problem: disjoint splits and label noise.

Neither Kwon et al. 2023 (Sec. 5: labels "randomly corrupted with
probability p") nor Huang et al. 2021 (Sec. 5.1: "randomly changing their
labels") says how labels are corrupted or how the splits are drawn. Here:

* train and validation samples are drawn without replacement from one pool;
  the test samples come from the same pool (after them) when no separate
  test set is given (scikit-learn's digits), otherwise from the test set
  (MNIST's t10k images);
* exactly ``round(rate * n_train)`` training samples, drawn without
  replacement, get a label drawn uniformly among the *other* classes, so
  every corrupted label is wrong and the corruption rate is exact.
"""
import numpy as np

from benchmark_utils.checks.parameters import check_int


def corrupt_labels(labels, rate, n_classes, rng):
    """(noisy labels, corrupted mask): round(rate * n) labels, chosen without
    replacement, replaced by a uniformly random *other* class."""
    labels = np.asarray(labels, dtype=np.int64)
    n = labels.shape[0]
    corrupted = np.zeros(n, dtype=bool)
    corrupted[rng.choice(n, int(round(rate * n)), replace=False)] = True
    noisy = labels.copy()
    shift = rng.integers(1, n_classes, size=int(corrupted.sum()))
    noisy[corrupted] = (labels[corrupted] + shift) % n_classes
    return noisy, corrupted


def check_split_sizes(n_train, n_val, n_test, pool, test_pool=None):
    """The requested sizes must fit the samples available: ``pool`` for
    train + validation (+ test when ``test_pool`` is None: one shared pool),
    ``test_pool`` for the test samples otherwise."""
    if test_pool is None:
        check_int("n_train + n_val + n_test", n_train + n_val + n_test, 3,
                  pool)
    else:
        check_int("n_train + n_val", n_train + n_val, 2, pool)
        check_int("n_test", n_test, 1, test_pool)


def hyper_cleaning_split(features, labels, n_train, n_val, n_test,
                         corruption, seed=0, test_features=None,
                         test_labels=None, n_classes=None):
    """Disjoint train / validation / test samples, training labels corrupted.

    Returns the keyword arguments of
    :class:`~benchmark_utils.problems.hyper_cleaning.HyperCleaningBilevel`
    that hold data: ``A_train, labels_train, corrupted, A_val, labels_val,
    A_test, labels_test, n_classes``. Sizes beyond the data raise a
    ValueError. ``n_classes`` defaults to the largest label + 1.
    """
    rng = np.random.default_rng(seed)
    features, labels = np.asarray(features), np.asarray(labels)
    pool = features.shape[0]
    check_split_sizes(n_train, n_val, n_test, pool, None if (
        test_features is None) else np.asarray(test_features).shape[0])
    order = rng.permutation(pool)
    train, val = order[:n_train], order[n_train:n_train + n_val]
    if test_features is None:
        test_features, test_labels = features, labels
        test = order[n_train + n_val:n_train + n_val + n_test]
    else:
        test_features = np.asarray(test_features)
        test_labels = np.asarray(test_labels)
        test = rng.permutation(test_features.shape[0])[:n_test]
    if n_classes is None:
        n_classes = int(max(labels.max(), test_labels.max())) + 1
    noisy, corrupted = corrupt_labels(labels[train], corruption, n_classes,
                                      rng)
    return dict(A_train=features[train], labels_train=noisy,
                corrupted=corrupted, A_val=features[val],
                labels_val=labels[val], A_test=test_features[test],
                labels_test=test_labels[test], n_classes=n_classes)
