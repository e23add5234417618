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

:func:`draw_svd` gives the singular bases of upstream's ``jnp.linalg.svd``
(LAPACK's ``sgesdd`` on the float32 draw, on CPU) with the same bits on
every CPU: computed in float64 by :mod:`benchmark_utils.numerics.ordered`
and rounded once to the draw's precision, each singular pair's sign that of
``gesdd`` in the draw's precision, and the columns that complete a
rectangular basis ``gesdd``'s own (its Householder reflectors, rebuilt).
What agrees with upstream bit for bit, what only to float32 rounding or
``sgesdd``'s float32 accuracy, and what was checked:
docs/problems_quadratic.md, "The random draws".
"""
import numpy as np

from benchmark_utils.checks.parameters import check_choice
from benchmark_utils.data import jax_random
from benchmark_utils.numerics import ordered

# scipy.linalg is imported where it is used: its import adds about
# 0.2 s to the start of every benchopt process

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
    """``U, s, Vh`` of ``G`` (full matrices), float64 arrays holding values
    of G's precision (module doc): the thin part by
    :func:`~benchmark_utils.numerics.ordered.svd`, each singular pair signed
    as LAPACK's ``gesdd`` in G's precision signs it (``sgesdd`` for JAX's
    float32 draws: upstream's signs), the completion of the larger side as
    ``gesdd`` builds it (:func:`gesdd_completion`), all rounded once to G's
    precision. LAPACK decides only the signs (each the sign of a dot product
    near +-1), so the bases are the same bit for bit on any CPU."""
    G = np.asarray(G)
    U, s, Vh = ordered.svd(G)
    k = s.size
    import scipy.linalg                         # on first use (module top)
    U_lapack, _, Vh_lapack = scipy.linalg.svd(G, full_matrices=True,
                                              lapack_driver="gesdd")
    agreement = (np.add.reduce(U * U_lapack[:, :k], axis=0)
                 + np.add.reduce(Vh * Vh_lapack[:k], axis=1))
    sign = np.where(agreement < 0, -1.0, 1.0)
    U, Vh = U * sign, Vh * sign[:, None]
    if G.shape[0] > k:
        U = np.concatenate([U, gesdd_completion(G)], axis=1)
    if G.shape[1] > k:
        Vh = np.concatenate([Vh, gesdd_completion(G.T).T], axis=0)
    return (np.asarray(M.astype(G.dtype), dtype=np.float64)
            for M in (U, s, Vh))


def gesdd_completion(G):
    """The columns ``min(m, n):`` of the full U that LAPACK's ``gesdd``
    returns for an m x n G with m > n (of Vh for m < n: the same of G^T,
    transposed): the last columns of the product of its Householder
    reflectors, for m >= 11 n / 6 those of the QR factorization it starts
    with (its path 4), else those of the bidiagonalization (``gebd2``, left
    and right reflectors alternating; its path 5), in float64."""
    A = np.array(G, dtype=np.float64)
    m, n = A.shape
    if m >= int(n * 11.0 / 6.0):
        return ordered.qr(A)[0][:, n:]
    left = []
    for i in range(n):
        v, tau, beta = ordered.householder(A[i:, i])
        A[i:, i + 1:] = ordered.reflect(v, tau, A[i:, i + 1:])
        A[i, i], A[i + 1:, i] = beta, 0.0
        left.append((i, v, tau))
        if i < n - 1:
            w, tau, beta = ordered.householder(A[i, i + 1:])
            A[i + 1:, i + 1:] = ordered.reflect(w, tau,
                                                A[i + 1:, i + 1:].T).T
            A[i, i + 1], A[i, i + 2:] = beta, 0.0
    return ordered.reflector_product(left, m)[:, n:]
