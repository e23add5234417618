"""Offline stand-ins shaped like data that cannot be read here.

A config whose data must be downloaded (MNIST, Omniglot) cannot be tuned
where the tuning runs; its steps are transferred from a stand-in's by rule
(benchmark_utils/tuning/transfer.py): each step is a multiplier times the
solver's default rule, and the default rule is evaluated on an offline
instance *shaped* like the real one, so that the constants the rules read
(the lower level's curvature bounds ``L_g``, ``L_g_full``, ``L_g_start``,
the sizes, the problem's ``outer_step_scale``) are those of the real
instance's sizes and of the data's published statistics, not of the
stand-in's. The same instance serves the transfer's time check and the
tests' short runs. A shaped source is no substitute for the data: its
labels come from a random teacher and its features carry only the
statistics below, so a run there says whether a step is stable at the
target's scale, not how the method does on the real data.

* MNIST (:func:`mnist_shaped`): 784 features per sample, i.i.d. across
  pixels, each a Gaussian clipped to [0, 1] whose mean and standard
  deviation after clipping are MNIST's published per-pixel ones (0.1307,
  0.3081: the normalization constants of the PyTorch examples, over the
  60000 training images scaled by 1/255), so E ||a||^2 = 784 (0.1307^2 +
  0.3081^2) = 87.8 as on MNIST (about 15 on the digits stand-in). The
  Gaussian before clipping is N(-1.62, 1.87^2) (:func:`clipped_gaussian`):
  about 81% of the pixels are 0 and 8% are 1, as MNIST's background and
  strokes. Labels: the class of the largest of 10 random projections of
  the centred pixels (a random linear teacher). What it lacks: the
  pixels' correlations (a stroke), so ``L_g_full`` (the top eigenvalue of
  A^T A / n) is smaller than MNIST's, and the spread of the images'
  norms, so ``L_g`` (the largest ||a_i||^2) is too (no statistic of
  either is published).
* Omniglot (:func:`omniglot_shaped_pools`): the synthetic few-shot source's
  hidden map (:func:`~benchmark_utils.data.few_shot_tasks.synthetic_images`)
  drawn at Omniglot's shape: 28 x 28 images in [0, 1], 964 meta-training
  and 659 meta-test classes of 20 images. No pixel statistic of Omniglot at
  28 x 28 is published; none is needed by the rules (hyper-representation's
  L_g is (n_features + 1) / 2 + 2C, its mu_g 2C / n_tasks, its
  ``outer_step_scale`` a constant), only by ``L_g_start``, which no solver
  of the Omniglot config reads, and by the time per iteration (the conv
  net on 28 x 28 images), which the shape gives.
"""
import functools

import numpy as np

# MNIST's per-pixel mean and standard deviation over the training images
# scaled to [0, 1] (the PyTorch examples' transforms.Normalize constants)
MNIST_PIXEL_MEAN, MNIST_PIXEL_STD = 0.1307, 0.3081
MNIST_FEATURES, MNIST_CLASSES = 28 * 28, 10


def clipped_moments(m, s):
    """(E[Y], E[Y^2]) of Y = clip(X, 0, 1), X ~ N(m, s^2)."""
    # scipy.stats on first use: its import adds about 0.3 s to the start
    # of every benchopt process (every dataset module is imported)
    from scipy import stats
    a, b = -m / s, (1.0 - m) / s
    inside = stats.norm.cdf(b) - stats.norm.cdf(a)
    above = stats.norm.sf(b)
    ez = stats.norm.pdf(a) - stats.norm.pdf(b)              # E[Z 1{a<Z<b}]
    ez2 = inside + a * stats.norm.pdf(a) - b * stats.norm.pdf(b)
    first = m * inside + s * ez + above
    second = m * m * inside + 2 * m * s * ez + s * s * ez2 + above
    return first, second


@functools.lru_cache(maxsize=None)
def clipped_gaussian(mean, std):
    """(m, s): the Gaussian N(m, s^2) whose values clipped to [0, 1] have
    mean ``mean`` and standard deviation ``std`` (ValueError where no such
    Gaussian exists: std^2 must lie below mean (1 - mean))."""
    target = np.array([mean, std ** 2 + mean ** 2])
    from scipy import optimize
    solution, info, status, message = optimize.fsolve(
        lambda p: np.array(clipped_moments(p[0], abs(p[1]))) - target,
        [0.0, 0.5], full_output=True, xtol=1e-12)
    m, s = float(solution[0]), abs(float(solution[1]))
    if status != 1 or not np.allclose(clipped_moments(m, s), target,
                                      atol=1e-9):
        raise ValueError(f"no Gaussian clipped to [0, 1] has mean {mean} "
                         f"and standard deviation {std}: {message}")
    return m, s


def mnist_shaped(n_pool, n_test, seed):
    """``(features, labels, test_features, test_labels)`` of the MNIST-shaped
    source (module doc): ``n_pool`` training-pool and ``n_test`` test rows
    of 784 clipped Gaussian pixels (float32, as MNIST's / 255), drawn from
    ``seed``, and their labels by a random linear teacher (the class of the
    largest of 10 Gaussian projections of the centred pixels), so that, as
    on MNIST, the clean labels are learnable by the linear model and a
    corrupted label stands out (uniformly random labels would leave the
    cleaning nothing to find)."""
    m, s = clipped_gaussian(MNIST_PIXEL_MEAN, MNIST_PIXEL_STD)
    rng = np.random.default_rng([seed, 784])
    teacher = rng.standard_normal((MNIST_FEATURES, MNIST_CLASSES))
    mean = float(clipped_moments(m, s)[0])

    def draw(n):
        pixels = rng.standard_normal((n, MNIST_FEATURES), dtype=np.float32)
        features = np.clip(m + s * pixels, 0.0, 1.0)
        return features, np.argmax((features - mean) @ teacher, axis=1)

    features, labels = draw(n_pool)
    test_features, test_labels = draw(n_test)
    return features, labels, test_features, test_labels


def omniglot_shaped_pools(seed, classes=(964, 659), per_class=20, side=28):
    """((train images, labels), (test images, labels)) shaped like
    Omniglot's at ``side`` x ``side`` (module doc): the synthetic source's
    hidden map at that side, pixels mapped from (-1, 1) to (0, 1)."""
    from benchmark_utils.data.few_shot_tasks import synthetic_images
    pools = []
    for index, n_classes in enumerate(classes):
        images, labels = synthetic_images(
            n_classes, per_class, np.random.default_rng([seed, index + 1]),
            np.random.default_rng([seed, 0]), side=side)
        pools.append((0.5 * (images + 1.0), labels))
    return tuple(pools)
