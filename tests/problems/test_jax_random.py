"""The numpy port of jax.random (benchmark_utils/data/jax_random.py):
recorded JAX values (run without JAX), then against JAX itself when it is
importable (both ``jax_threefry_partitionable`` layouts)."""
import numpy as np
import pytest

from benchmark_utils.data import jax_random as jr

F32 = np.float32
SQRT2 = F32(np.sqrt(2))

# Threefry-2x32-20 known answers (Salmon et al. 2011, Random123's
# kat_vectors; jax.extend.random.threefry_2x32 gives the same): key,
# counter -> output
THREEFRY_KAT = [
    ((0, 0), (0, 0), (0x6B200159, 0x99BA4EFE)),
    ((0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF),
     (0x1CB996FC, 0xBB002BE7)),
    ((0x13198A2E, 0x03707344), (0x243F6A88, 0x85A308D3),
     (0xC4923A9C, 0x483DF7A0)),
]

# Recorded once with jax 0.10.2 / jaxlib 0.10.2 (CPU, x86-64, 32-bit mode):
# key = PRNGKey(2442); split(key, 2); split(that[1], 10) rows 0, 4, 7;
# normal(split(that[1], 10)[4], (2, 3)) as float32 bit patterns; per
# value of jax_threefry_partitionable.
RECORDED = {
    True: dict(
        split2=[[1922429537, 1601171562], [910643699, 406311753]],
        split10=[[3249148041, 3929564482], [2935901855, 3949622240],
                 [2984911490, 3549587771]],
        normal=[0xBE7D77F6, 0x3E44F6E9, 0x3F1FDEB1, 0xBF73E8C9, 0xBFA1DF03,
                0xBFDF9697]),
    False: dict(
        split2=[[1488919123, 1579848654], [3681135531, 386387525]],
        split10=[[565790042, 4229587074], [3017188420, 4166406099],
                 [1853475937, 1974137024]],
        normal=[0x3F79D68C, 0x3F966027, 0xBE6EE8B1, 0xBF496E5E, 0x3E846879,
                0xBF4EC0DA]),
}
# sqrt(2) * erfinv(uniform(word)) for words at the ends of the range, near
# 0, in both erfinv branches and both log1p branches (jax 0.10.2, CPU)
RECORDED_WORDS = [0x0, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, 0x200, 0xFFFFFE00,
                  0xD2000000, 0x29000000, 0xF8000000, 0x6000000]
RECORDED_NORMALS = [0xC0AD7080, 0x40A70B2A, 0x33A06C98, 0xB470A2E3,
                    0xC0A3FD7B, 0x40A70B2A, 0x3F6AA374, 0xBF7E6AB4,
                    0x3FEE6E02, 0xBFFE6405]
LAYOUTS = [True, False]


def bits_of(x):
    return np.asarray(x, dtype=F32).view(np.uint32)


# -- recorded values (no JAX needed) ------------------------------------------

@pytest.mark.parametrize("key, counter, expected", THREEFRY_KAT)
def test_threefry_known_answers(key, counter, expected):
    y0, y1 = jr.threefry2x32(key, [counter[0]], [counter[1]])
    assert (int(y0[0]), int(y1[0])) == expected


def test_prng_key_is_jax_32_bit_seeding():
    assert jr.prng_key(2442).tolist() == [0, 2442]
    assert jr.prng_key(2 ** 33 + 5).tolist() == [0, 5]     # low 32 bits
    assert jr.prng_key(-1).tolist() == [0, 2 ** 32 - 1]


@pytest.mark.parametrize("partitionable", LAYOUTS)
def test_recorded_jax_keys_and_draws(partitionable):
    rec = RECORDED[partitionable]
    levels = jr.split(jr.prng_key(2442), 2, partitionable)
    assert levels.dtype == np.uint32 and levels.tolist() == rec["split2"]
    draws = jr.split(levels[1], 10, partitionable)
    assert draws[[0, 4, 7]].tolist() == rec["split10"]
    z = jr.normal(draws[4], (2, 3), partitionable)
    assert z.dtype == F32 and z.shape == (2, 3)
    assert bits_of(z).ravel().tolist() == rec["normal"]


def test_recorded_normals_at_the_ends_and_branches():
    u = jr.uniform_from_bits(np.array(RECORDED_WORDS, dtype=np.uint32))
    assert u.min() == np.nextafter(F32(-1), F32(0)) and u.max() < 1
    assert bits_of(SQRT2 * jr.erfinv_float32(u)).tolist() == \
        RECORDED_NORMALS


def test_layouts_differ_and_split_prefixes():
    key = jr.prng_key(7)
    assert not np.array_equal(jr.split(key, 4, True),
                              jr.split(key, 4, False))
    # partitionable: key i is the hash of counter i, whatever num
    assert np.array_equal(jr.split(key, 3, True), jr.split(key, 8, True)[:3])
    # the bits of a shape are its row-major flat bits in that layout
    flat = jr.random_bits(key, (12,), True)
    assert np.array_equal(jr.random_bits(key, (3, 4), True).ravel(), flat)


def test_fma_rounds_once():
    # a * b = 1 + 2^-11 + 2^-24 exactly: halfway between two float32s
    a = b = np.array([1 + 2.0 ** -12] * 3, dtype=F32)
    c = np.array([0.0, 2.0 ** -80, -(2.0 ** -80)], dtype=F32)
    out = jr.fma_float32(a, b, c)
    low, high = F32(1 + 2.0 ** -11), F32(1 + 2.0 ** -11 + 2.0 ** -23)
    # exact tie: to even (low); past the tie either way: the nearer one,
    # where rounding the product first would give low in all three cases
    assert out.tolist() == [low, high, low]
    assert (a * b + c).tolist() == [low, low, low]


def test_normals_are_standard_gaussian():
    z = jr.normal(jr.prng_key(0), (200_000,)).astype(np.float64)
    assert abs(z.mean()) < 0.01 and abs(z.std() - 1) < 0.01
    assert abs(np.mean(np.abs(z) < 1) - 0.682689) < 0.005


@pytest.mark.parametrize("call, name", [
    (lambda: jr.split(np.array([1, 2, 3]), 2), "key"),
    (lambda: jr.split(np.array([-1, 2]), 2), "key"),
    (lambda: jr.split(jr.prng_key(0), -1), "num"),
    (lambda: jr.normal(jr.prng_key(0), (2, -1)), "shape"),
    (lambda: jr.random_bits(jr.prng_key(0), (2 ** 16, 2 ** 16)), "shape"),
    (lambda: jr.erfinv_float32(np.array([1.0])), "u"),
    (lambda: jr.prng_key(1.5), "seed"),
])
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


# -- against JAX --------------------------------------------------------------

SEEDS = [0, 1, 2442, 2 ** 31 + 7]
SHAPES = [(7,), (100, 1), (5, 1, 9), (33, 17)]     # odd and even sizes


@pytest.mark.parametrize("jax_layout", LAYOUTS, indirect=True)
def test_port_equals_jax(jax_layout):
    jax, partitionable = jax_layout
    low = np.nextafter(F32(-1), F32(0))
    nums = (1, 2, 3, 10)
    # one compilation each, the keys as arguments
    splits = jax.jit(lambda key: [jax.random.split(key, n) for n in nums])
    draws = jax.jit(lambda key: [
        (jax.random.bits(key, shape), jax.random.normal(key, shape))
        for shape in SHAPES] + [jax.random.uniform(key, SHAPES[-1],
                                                   minval=low)])
    for seed in SEEDS:
        key = jax.random.PRNGKey(seed)
        assert np.array_equal(np.asarray(key), jr.prng_key(seed))
        for num, split in zip(nums, splits(key), strict=True):
            assert np.array_equal(np.asarray(split), jr.split(
                jr.prng_key(seed), num, partitionable))
        key = np.asarray(split)[5]                  # split(key, 10)[5]
        *jax_draws, uniform = draws(key)
        for shape, (bits, normal) in zip(SHAPES, jax_draws, strict=True):
            ours = jr.random_bits(key, shape, partitionable)
            assert np.array_equal(np.asarray(bits), ours)
            assert np.array_equal(bits_of(normal), bits_of(
                jr.normal(key, shape, partitionable)))
        assert np.array_equal(np.asarray(uniform),
                              jr.uniform_from_bits(ours))


def test_threefry_equals_jax():
    pytest.importorskip("jax")
    from jax.extend.random import threefry_2x32
    rng = np.random.default_rng(0)
    key = rng.integers(0, 2 ** 32, 2, dtype=np.uint32)
    counts = rng.integers(0, 2 ** 32, 1000, dtype=np.uint32)
    y0, y1 = jr.threefry2x32(key, counts[:500], counts[500:])
    assert np.array_equal(np.asarray(threefry_2x32(key, counts)),
                          np.concatenate([y0, y1]))


def test_erfinv_equals_xla_on_every_16th_uniform():
    """1/16 of the 2^23 uniforms normal can see (all of them agree too:
    checked once, 14 s), sqrt(2) * erfinv as jax.random.normal computes
    it."""
    jax = pytest.importorskip("jax")
    words = np.arange(0, 2 ** 23, 16, dtype=np.uint32) << np.uint32(9)
    u = jr.uniform_from_bits(words)
    ref = jax.jit(lambda v: jax.lax.mul(SQRT2, jax.lax.erf_inv(v)))(u)
    assert np.array_equal(bits_of(ref), bits_of(SQRT2 * jr.erfinv_float32(u)))
