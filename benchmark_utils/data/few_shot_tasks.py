"""N-way K-shot tasks for hyper-representation learning (Huang et al. 2021,
BiAdam, Sec. 5.2 and App. A.1.2), and the image sources they are drawn from.

A task picks ``ways`` distinct classes of a pool of classes, and for each of
them ``shots`` support images and ``n_query`` query images, all distinct;
the task's labels 0..ways-1 are given to its classes in the random order in
which they were drawn (a label means nothing across tasks: only the
representation is shared). Meta-training and meta-test tasks come from
disjoint pools; each source says how it splits its images and how many
ways it can serve:

* ``"omniglot"`` (Lake et al. 2015): the 964 characters of the background
  set for meta-training, the 659 of the evaluation set for meta-test, 20
  drawings each, downscaled to 28 x 28: ways <= 659, shots + n_query <= 20;
* ``"digits"`` (scikit-learn's 8 x 8 digits, no download): 10 classes
  cannot be split into disjoint class sets for 5-way tasks on both sides,
  so the split is by image (half the images of every digit, stratified,
  for meta-training): new images of the same classes, a weaker test;
  ways <= 10;
* ``"synthetic"`` (no download): ``SYNTHETIC_CLASSES`` = (100, 50) classes,
  20 images each, 8 x 8 images made by a hidden nonlinear map
  (:func:`synthetic_images`) from a class code and a larger nuisance code,
  which a learned representation must see through: ways <= 50,
  shots + n_query <= 20; its products and ``tanh`` by
  :mod:`benchmark_utils.numerics.ordered`, so the images are the same bit
  for bit on any CPU.
"""
import numpy as np

from benchmark_utils.numerics import ordered

# classes for (meta-training, meta-test) and images per class, by source;
# digits: image split (module doc), so both sides hold all 10 classes
SOURCE_SIZES = {
    "synthetic": {"classes": (100, 50), "per_class": 20},
    "digits": {"classes": (10, 10), "per_class": 87},
    "omniglot": {"classes": (964, 659), "per_class": 20},
    # offline, Omniglot's shape (benchmark_utils/data/shaped.py)
    "omniglot_shaped": {"classes": (964, 659), "per_class": 20},
}
SYNTHETIC_CLASSES = SOURCE_SIZES["synthetic"]["classes"]
SYNTHETIC_SIDE = 8
# dimensions of the synthetic generator's class code and nuisance code, and
# their scales (the nuisance dominates the pixels of a random projection)
CLASS_DIM, NUISANCE_DIM = 6, 10
WITHIN_CLASS_NOISE, NUISANCE_SCALE = 0.3, 0.7
HIDDEN = 32


def make_tasks(images, labels, n_tasks, ways, shots, n_query, rng):
    """``n_tasks`` tasks drawn from ``images`` (n, c, h, w) with class
    ``labels`` (n,): a dict of ``support`` (n_tasks, ways * shots, c, h, w),
    ``support_labels`` (n_tasks, ways * shots), ``query`` and
    ``query_labels`` likewise with ``ways * n_query`` images; images are
    ordered by task label within a task."""
    labels = np.asarray(labels)
    classes = np.unique(labels)
    members = {c: np.flatnonzero(labels == c) for c in classes}
    need = shots + n_query
    eligible = np.array([c for c in classes if len(members[c]) >= need])
    if len(eligible) < ways:
        raise ValueError(
            f"ways must be <= {len(eligible)} (classes with at least shots +"
            f" n_query = {need} images in this pool), got {ways}")
    support, query = [], []
    for _ in range(n_tasks):
        chosen = rng.choice(eligible, size=ways, replace=False)
        picks = [rng.choice(members[c], size=need, replace=False)
                 for c in chosen]
        support.append(np.concatenate([p[:shots] for p in picks]))
        query.append(np.concatenate([p[shots:] for p in picks]))
    support, query = np.array(support), np.array(query)
    task_labels = np.arange(ways)
    return {"support": images[support],
            "support_labels": np.tile(np.repeat(task_labels, shots),
                                      (n_tasks, 1)),
            "query": images[query],
            "query_labels": np.tile(np.repeat(task_labels, n_query),
                                    (n_tasks, 1))}


def digits_pools(seed):
    """scikit-learn's 8 x 8 digits split by image, stratified (module doc):
    ((train_images, train_labels), (test_images, test_labels)), images
    (n, 1, 8, 8) in [0, 1], the same number of images per class on each
    side (``SOURCE_SIZES["digits"]["per_class"]``, the smallest class's
    half)."""
    from sklearn.datasets import load_digits
    digits = load_digits()
    images = (digits.images / 16.0)[:, None]
    rng = np.random.default_rng(seed)
    per_class = SOURCE_SIZES["digits"]["per_class"]
    train, test = [], []
    for c in range(10):
        idx = rng.permutation(np.flatnonzero(digits.target == c))
        train.append(idx[:per_class])
        test.append(idx[per_class:2 * per_class])
    train, test = np.concatenate(train), np.concatenate(test)
    return ((images[train], digits.target[train]),
            (images[test], digits.target[test]))


def synthetic_images(n_classes, per_class, rng, world_rng,
                     side=SYNTHETIC_SIDE):
    """Images (n_classes * per_class, 1, side, side) in (-1, 1) and their
    labels (side 8: the synthetic source; 28: the Omniglot-shaped one,
    benchmark_utils/data/shaped.py).

    ``world_rng`` draws the hidden map, shared by meta-training and
    meta-test classes; ``rng`` the classes and images. An image of class c
    is ``tanh(A2 gelu(A1 [m_c + s e; u]))`` with class code m_c ~ N(0, I)
    (CLASS_DIM), within-class noise e ~ N(0, I) scaled by
    WITHIN_CLASS_NOISE, and a nuisance code u ~ N(0, NUISANCE_SCALE^2 I)
    (NUISANCE_DIM) drawn per image.
    """
    dim = CLASS_DIM + NUISANCE_DIM
    A1 = world_rng.standard_normal((HIDDEN, dim)) / np.sqrt(dim)
    A2 = world_rng.standard_normal((side ** 2, HIDDEN)) * (
        1.5 / np.sqrt(HIDDEN))
    codes = rng.standard_normal((n_classes, CLASS_DIM))
    labels = np.repeat(np.arange(n_classes), per_class)
    n = labels.size
    z = np.concatenate([
        codes[labels] + WITHIN_CLASS_NOISE * rng.standard_normal(
            (n, CLASS_DIM)),
        NUISANCE_SCALE * rng.standard_normal((n, NUISANCE_DIM))], axis=1)
    h = ordered.matmul(z, A1.T)
    hidden = 0.5 * h * (1 + ordered.tanh(np.sqrt(2 / np.pi) * (
        h + 0.044715 * (h * h * h))))
    pixels = ordered.tanh(ordered.matmul(hidden, A2.T))
    return pixels.reshape(n, 1, side, side), labels


def synthetic_pools(seed):
    """((train_images, train_labels), (test_images, test_labels)) of the
    synthetic source: disjoint classes, one hidden map (module doc)."""
    per_class = SOURCE_SIZES["synthetic"]["per_class"]
    pools = []
    for side, n_classes in enumerate(SYNTHETIC_CLASSES):
        # the same world seed on both sides: one hidden map
        pools.append(synthetic_images(
            n_classes, per_class, np.random.default_rng([seed, side + 1]),
            np.random.default_rng([seed, 0])))
    return tuple(pools)
