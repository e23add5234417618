"""A numpy port of the part of ``jax.random`` that benchmark_bilevel's
quadratic draws with: ``PRNGKey(seed)``, ``split(key, num)`` and
``normal(key, shape)`` in float32, JAX's default ("threefry2x32") PRNG in
its default 32-bit mode (``jax_enable_x64`` off). JAX is not a dependency:
this module is what lets :mod:`~benchmark_utils.data.simulated_quadratic`
rebuild upstream's instance draw for draw. Written from the JAX PRNG design
note (JEP 263, "JAX PRNG Design"), the threefry paper (Salmon, Moraes,
Dror, Shaw 2011, "Parallel random numbers: as easy as 1, 2, 3", SC'11,
Threefry-2x32 with 20 rounds) and the behaviour of JAX's public functions
(``jax.random``, ``jax.extend.random.threefry_2x32``), read as reference;
no code was copied.

Both of JAX's layouts (``partitionable``, JAX's
``jax_threefry_partitionable`` flag: True from JAX 0.5.0 on) are ported.
Uniforms and normals are computed with float32 operations rounded as XLA
rounds them on CPU, fused multiply-adds included (:func:`fma_float32`).
How each piece (hash, keys, layouts, uniform, normal, XLA's float32
arithmetic) is defined, and what was checked against jax 0.10.2 (keys,
bits, uniforms and normals equal): docs/problems.md, "The jax.random
port". Arrays of up to 2^32 - 1 elements (a ValueError beyond).
"""
import numpy as np

from benchmark_utils.checks.parameters import check_int

# Threefry-2x32 (Salmon et al. 2011: its rotation constants for 2 words of
# 32 bits, and the key-schedule parity constant of Threefish)
ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
KEY_PARITY = 0x1BD11BDA
N_INJECTIONS = 6            # 20 rounds: 5 groups of 4, 6 key injections
MAX_SIZE = 2 ** 32 - 1
# Giles (2010), single precision, highest degree first (w < 5, w >= 5)
ERFINV_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06,
                  -4.39150654e-06, 0.00021858087, -0.00125372503,
                  -0.00417768164, 0.246640727, 1.50140941)
ERFINV_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322,
               -0.00367342844, 0.00573950773, -0.0076224613,
               0.00943887047, 1.00167406, 2.83297682)
# Cephes (Moshier 1992) logf: P's coefficients, highest degree first
# (evaluated as three cubic pieces in r, combined in r^3); log 2 =
# LOG2_HIGH + LOG2_LOW
LOG_POLY = (7.0376836e-02, -1.151461e-01, 1.16769984e-01,
            -1.2420141e-01, 1.4249323e-01, -1.6668057e-01,
            2.0000714e-01, -2.4999994e-01, 3.333333e-01)
LOG2_HIGH, LOG2_LOW = 0.693359375, -2.1219444e-04
SQRT_HALF, SQRT2_MINUS_1 = 7.0710677e-01, 4.1421357e-01
# Cephes log1p rational approximation, highest degree first
LOG1P_NUMERATOR = (4.527e-05, 4.9854103e-01, 6.5787325e+00, 2.9911919e+01,
                   6.094967e+01, 5.7112965e+01, 2.0039553e+01)
LOG1P_DENOMINATOR = (1.0, 1.5062909e+01, 8.304757e+01, 2.217624e+02,
                     3.0909872e+02, 2.1642789e+02, 6.011866e+01)
F32, F64 = np.float32, np.float64
# float64 mantissa bits below float32's last: exactly half a float32 ulp
HALF_ULP_MASK, HALF_ULP = (1 << 29) - 1, 1 << 28
U32 = np.uint32


def _rotate_left(x, r):
    return (x << U32(r)) | (x >> U32(32 - r))


def threefry2x32(key, x0, x1):
    """Threefry-2x32-20 of the counter words (x0, x1) (uint32 arrays of one
    shape) under ``key`` (two uint32 words): the output words (y0, y1)."""
    k0, k1 = (int(k) for k in _as_key(key))
    schedule = (k0, k1, k0 ^ k1 ^ KEY_PARITY)
    x0 = np.array(x0, dtype=U32) + U32(schedule[0])
    x1 = np.array(x1, dtype=U32) + U32(schedule[1])
    for i in range(1, N_INJECTIONS):
        for r in ROTATIONS[(i - 1) % 2]:
            x0 += x1
            x1 = _rotate_left(x1, r)
            x1 ^= x0
        x0 += U32(schedule[i % 3])
        x1 += U32((schedule[(i + 1) % 3] + i) % 2 ** 32)
    return x0, x1


def _as_key(key):
    key = np.asarray(key)
    if key.shape != (2,) or not (np.issubdtype(key.dtype, np.integer)
                                 and key.min() >= 0
                                 and key.max() <= 0xFFFFFFFF):
        raise ValueError("key must be two words in [0, 2^32) (a PRNGKey "
                         f"or a row of split), got {key!r}")
    return key.astype(U32)


def _size(shape):
    shape = tuple(int(d) for d in shape)
    if any(d < 0 for d in shape):
        raise ValueError(f"shape must have sizes >= 0, got {shape}")
    size = int(np.prod(shape, dtype=np.int64))
    if size > MAX_SIZE:
        raise ValueError(f"shape must hold at most 2^32 - 1 elements, got "
                         f"{size}")
    return shape, size


def _hash_halves(key, size):
    """The unpartitionable layout's words for the counters 0..size-1:
    halves hashed as pairs, outputs concatenated, truncated to size."""
    half = (size + 1) // 2
    counts = np.arange(2 * half, dtype=U32)
    if size % 2:
        counts[-1] = 0
    y0, y1 = threefry2x32(key, counts[:half], counts[half:])
    return np.concatenate([y0, y1])[:size]


def _hash_iota(key, size):
    """The partitionable layout: the hash of (hi(i), lo(i)) per index i."""
    i = np.arange(size, dtype=np.uint64)
    return threefry2x32(key, (i >> np.uint64(32)).astype(U32),
                        (i & np.uint64(0xFFFFFFFF)).astype(U32))


def prng_key(seed):
    """``jax.random.PRNGKey(seed)`` in JAX's 32-bit mode: (0, seed mod
    2^32) as uint32."""
    check_int("seed", seed, None)
    return np.array([0, int(seed) % 2 ** 32], dtype=U32)


def split(key, num=2, partitionable=True):
    """``jax.random.split(key, num)``: ``num`` keys, (num, 2) uint32, in the
    layout of ``jax_threefry_partitionable = partitionable``."""
    check_int("num", num, 0)
    _size((2 * num,))
    if partitionable:
        y0, y1 = _hash_iota(key, num)
        return np.stack([y0, y1], axis=-1)
    return _hash_halves(key, 2 * num).reshape(num, 2)


def random_bits(key, shape, partitionable=True):
    """``jax.random.bits(key, shape)`` (uint32 words, the bits ``uniform``
    reads)."""
    shape, size = _size(shape)
    if partitionable:
        y0, y1 = _hash_iota(key, size)
        return (y0 ^ y1).reshape(shape)
    return _hash_halves(key, size).reshape(shape)


def uniform_from_bits(bits):
    """float32 uniforms on [nextafter(-1, 0), 1) from uint32 words, as
    ``jax.random.normal`` draws them (module doc)."""
    low = np.nextafter(F32(-1), F32(0))
    ones = (np.asarray(bits, dtype=U32) >> U32(32 - 23)) | \
        np.array(1.0, F32).view(U32)
    floats = ones.view(F32) - F32(1)
    return np.maximum(low, floats * (F32(1) - low) + low)


def fma_float32(a, b, c):
    """``a * b + c`` rounded once to float32 (a fused multiply-add), for
    float32 arrays whose results lie in float32's normal range: the product
    is exact in float64 and the float64 sum rounds to the same float32 as
    the exact sum unless it falls exactly halfway between two float32s;
    there (rarely) the sum's rounding error, by Knuth's two-sum, breaks
    the tie."""
    a, b, c = (np.asarray(v, dtype=F32) for v in (a, b, c))
    product = a.astype(F64) * b
    total = product + c
    out = total.astype(F32)
    tie = (total.view(np.int64) & HALF_ULP_MASK) == HALF_ULP
    if tie.any():
        product, c = np.broadcast_to(product, total.shape)[tie], \
            np.broadcast_to(c, total.shape)[tie]
        part = total[tie] - product
        error = (product - (total[tie] - part)) + (c - part)
        out[tie] = _round_past_midpoint(total[tie], error)
    return out


def _round_past_midpoint(midpoint, error):
    """float32 rounding of ``midpoint + error`` for float64 midpoints
    between two float32s and |error| far below their spacing."""
    nearest = midpoint.astype(F32)          # ties to even
    away = np.nextafter(midpoint, np.copysign(np.inf, error)).astype(F32)
    return np.where(error == 0, nearest, away)


def _horner(coefficients, x):
    """sum_k coefficients[k] x^(n-k) in float32, one FMA per step."""
    p = np.full_like(x, F32(coefficients[0]))
    for c in coefficients[1:]:
        p = fma_float32(p, x, F32(c))
    return p


def log_float32(y):
    """XLA's CPU float32 log for finite y >= the smallest normal float32
    (XLA clamps smaller y there and special-cases 0, inf, NaN: not needed
    here): Cephes' ``logf`` (Moshier 1992): y = m 2^e with m in
    [sqrt(1/2), sqrt(2)), ``log(1 + r)`` for r = m - 1 by ``r - r^2/2 +
    r^3 P(r)`` (P of degree 8 as three cubics in r combined in r^3), ``e
    log 2`` in two constants; multiply-adds fused as XLA fuses them."""
    y = np.asarray(y, dtype=F32)
    bits = y.view(U32)
    e = ((bits >> U32(23)).astype(np.int32) - 126).astype(F32)
    m = ((bits & U32(0x807FFFFF)) | U32(0x3F000000)).view(F32)  # [1/2, 1)
    low = m < F32(SQRT_HALF)
    e = e - low.astype(F32)
    r = (m - F32(1)) + np.where(low, m, F32(0))                  # 2m - 1
    r2 = r * r
    r3 = r2 * r
    pieces = [_horner(LOG_POLY[k:k + 3], r) for k in (0, 3, 6)]
    p = fma_float32(fma_float32(pieces[0], r3, pieces[1]), r3, pieces[2])
    p = fma_float32(p, r3, e * F32(LOG2_LOW))
    head = fma_float32(r2, F32(-0.5), r)
    return fma_float32(e, F32(LOG2_HIGH), head + p)


def log1p_float32(x):
    """XLA's CPU float32 ``log1p`` for x > -1 with 1 + x finite and normal
    (erfinv's x = -u^2 in (-1, 0]): for |x| < sqrt(2) - 1 Cephes' rational
    approximation ``x - x^2/2 + x^3 P(x)/Q(x)`` (P, Q of degree 6), else
    ``log_float32(1 + x)``."""
    x = np.asarray(x, dtype=F32)
    out = np.empty_like(x)
    small = np.abs(x) < F32(SQRT2_MINUS_1)
    xs = x[small]
    ratio = _horner(LOG1P_NUMERATOR, xs) / _horner(LOG1P_DENOMINATOR, xs)
    out[small] = xs + fma_float32(xs * xs, F32(-0.5), (xs * (xs * xs)) * ratio)
    out[~small] = log_float32(x[~small] + F32(1))
    return out


def erfinv_float32(u):
    """erfinv in float32 for -1 < u < 1 by Giles' single-precision
    polynomial (module doc), its steps fused as XLA fuses them."""
    u = np.asarray(u, dtype=F32)
    if not np.all(np.abs(u) < 1):
        raise ValueError("u must lie in (-1, 1)")
    w = -log1p_float32(-(u * u))
    out = np.empty_like(u)
    central = w < F32(5)
    for mask, t, coefficients in (
            (central, w[central] - F32(2.5), ERFINV_CENTRAL),
            (~central, np.sqrt(w[~central]) - F32(3), ERFINV_TAIL)):
        out[mask] = _horner(coefficients, t) * u[mask]
    return out


def normal(key, shape, partitionable=True):
    """``jax.random.normal(key, shape)`` (float32): ``sqrt(2) * erfinv(u)``
    of the uniforms of ``random_bits(key, shape)`` (module doc)."""
    u = uniform_from_bits(random_bits(key, shape, partitionable))
    return F32(np.sqrt(2)) * erfinv_float32(u)
