"""The random sources of benchmark_bilevel's quadratic generator
(:mod:`~benchmark_utils.data.simulated_quadratic`): upstream's JAX draws
reproduced without JAX, or numpy's.

The generator takes the random source as one function ``normal(key,
shape) -> array``, ``key = (level, k)`` for draw k of
:func:`~benchmark_utils.data.simulated_quadratic.generate_level` on that
level (0 inner, 1 outer); ``random_source`` picks it:

* ``"jax"`` (default): upstream's schedule, ``split(split(PRNGKey(
  random_state), 2)[level], 10)[k]`` then ``jax.random.normal`` in float32,
  on :mod:`~benchmark_utils.data.jax_random` (a numpy port of threefry2x32)
  in the layout of ``jax_threefry_partitionable=True`` (JAX >= 0.5.0);
* ``"jax_legacy"``: the same with ``jax_threefry_partitionable=False``;
* ``"numpy"``: ``numpy.random.default_rng([random_state, level,
  k]).standard_normal(shape)`` (:func:`numpy_normal`), float64.

:func:`draw_svd` computes the singular bases with LAPACK's ``sgesdd`` on
the float32 draw, as jaxlib does on CPU, so that their signs match
upstream's. What agrees with upstream bit for bit, what only to float32
rounding, and what was checked: docs/problems.md, "The random draws".
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
