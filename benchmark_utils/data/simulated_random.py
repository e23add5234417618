"""The random sources of benchmark_bilevel's quadratic generator
(:mod:`~benchmark_utils.problems.simulated_quadratic`): upstream's JAX
draws reproduced without JAX, or numpy's.

Upstream draws with JAX's PRNG (threefry2x32, JAX's default 32-bit mode):
``key = PRNGKey(random_state)``, ``split(key, 2)[level]`` for the level (0
inner, 1 outer), ``split(that, 10)[k]`` for draw k of
:func:`~benchmark_utils.problems.simulated_quadratic.generate_level` (0: the column of H's basis, 1: the z_i of H, 2: the
column of K's basis, 3: the z_i of K, 4: G, 5: the z_i of C, 6: a_i, 7:
b_i) and ``jax.random.normal(key, shape)`` in float32. The generator takes
the random source as one function ``normal(key, shape) -> array``, ``key =
(level, k)``; ``random_source`` picks it:

* ``"jax"`` (default): that schedule on :mod:`~benchmark_utils.problems.
  jax_random`, a numpy port of threefry2x32 / ``PRNGKey`` / ``split`` /
  ``normal``, in the layout of ``jax_threefry_partitionable=True``, the
  default of current JAX (0.5.0 on, per JAX's changelog; checked on 0.10.2);
* ``"jax_legacy"``: the same with ``jax_threefry_partitionable=False``, the
  layout of JAX < 0.5.0 (different numbers for the same seed);
* ``"numpy"``: ``numpy.random.default_rng([random_state, level,
  k]).standard_normal(shape)`` (:func:`numpy_normal`), float64, not JAX's
  stream (the default before the port).

What agrees with upstream, checked against jax 0.10.2 on CPU (x86-64;
tests/problems/test_jax_random.py, test_simulated_quadratic.py):

* bit for bit: the keys, split results, random bits, uniforms and the
  float32 Gaussian draws (XLA's float32 ``erfinv``, ``log1p`` and ``log``
  reproduced with their fused multiply-adds: equal for all 2^23 uniforms
  ``normal`` can see); the singular bases U, V: upstream's
  ``jnp.linalg.svd`` of a float32 draw runs LAPACK's ``sgesdd`` (the
  routine jaxlib calls on CPU, from scipy's LAPACK), and so does
  :func:`draw_svd` here, on the same float32 array: same bases, same signs
  (float64 ``dgesdd`` picks different signs for some singular vectors,
  which C_i is not invariant to; H_i and K_i are invariant to signs but
  not to the completion of a single column to a basis, also sgesdd's);
* to float32 rounding only: everything else. Upstream builds A, H_i, K_i,
  C_i, the spectra (``jnp.logspace`` in float32) and the means in float32;
  here they are built in float64 from the same float32 draws and bases,
  so they differ from upstream's by upstream's own float32 rounding
  (relative ~1e-6 per entry; ``dtype="float32"`` stores them rounded to
  float32, not bitwise upstream's). Upstream's acceptance check runs on
  its float32 means: a draw whose check eigenvalue is within float32
  rounding of 1e-12 may be accepted on one side and not the other.

Not covered: ``jax_enable_x64`` (JAX then draws float64 from 64-bit
words: a different stream). Not checked: other XLA versions, GPU, or CPUs
without FMA, which may round XLA's ``log1p`` / erfinv differently in the
last bit of some draws (then equal to float32 rounding only), and a
LAPACK other than the one both libraries load here (scipy's), which could
flip signs of singular vectors with nearly equal singular values.
"""
import numpy as np
import scipy.linalg

from benchmark_utils.checks.parameters import check_choice
from benchmark_utils.data import jax_random

# random_source -> jax_threefry_partitionable (None: numpy's generator)
RANDOM_SOURCES = {"jax": True, "jax_legacy": False, "numpy": None}
# upstream's key schedule: split(PRNGKey(seed), 2) per level, then
# split(level key, 10) per draw (module doc)
N_LEVEL_KEYS, N_DRAW_KEYS = 2, 10


def numpy_normal(random_state):
    """``random_source="numpy"``: ``normal(key, shape)`` draws standard
    Gaussians from ``numpy.random.default_rng([random_state, *key])``,
    one independent stream per key (module doc)."""
    def normal(key, shape):
        return np.random.default_rng(
            [int(random_state), *map(int, key)]).standard_normal(shape)
    return normal


def jax_normal(random_state, partitionable=True):
    """upstream's draws: ``normal((level, k), shape)`` is
    ``jax.random.normal(split(split(PRNGKey(random_state), 2)[level],
    10)[k], shape)`` (float32), by the numpy port
    :mod:`~benchmark_utils.data.jax_random` in the layout of
    ``jax_threefry_partitionable = partitionable``."""
    levels = jax_random.split(jax_random.prng_key(random_state),
                              N_LEVEL_KEYS, partitionable)
    draws = [jax_random.split(key, N_DRAW_KEYS, partitionable)
             for key in levels]

    def normal(key, shape):
        level, k = key
        return jax_random.normal(draws[level][k], shape, partitionable)
    return normal


def random_source_normal(random_state, name):
    """The ``normal(key, shape)`` of ``random_source=name`` (module doc)."""
    check_choice("random_source", name, tuple(RANDOM_SOURCES))
    if RANDOM_SOURCES[name] is None:
        return numpy_normal(random_state)
    return jax_normal(random_state, partitionable=RANDOM_SOURCES[name])


def draw_svd(G):
    """``U, s, Vh`` of ``G`` (full matrices) by LAPACK's gesdd in G's own
    precision (float32 for JAX's draws: sgesdd, what ``jnp.linalg.svd``
    runs on CPU, hence upstream's bases and signs; module doc), returned
    in float64."""
    U, s, Vh = scipy.linalg.svd(G, full_matrices=True, lapack_driver="gesdd")
    return (np.asarray(M, dtype=np.float64) for M in (U, s, Vh))
