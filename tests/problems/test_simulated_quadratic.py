"""benchmark_bilevel's simulated quadratic: generator logic, random
sources, upstream's matrices rebuilt with JAX (when importable), closed
forms against autograd, certified F*, storage modes, dataset option."""
import numpy as np
import pytest
import scipy.linalg
import torch
from torch.func import grad as func_grad

from benchmark_utils.data import jax_random, simulated_random
from benchmark_utils.data.simulated_quadratic import (
    generate_level,
    upstream_check_eigenvalue,
)
from benchmark_utils.problems import simulated_quadratic as sq
from benchmark_utils.problems.batches import FullBatch, SliceBatch
from benchmark_utils.problems.general import GeneralBilevelProblem
from benchmark_utils.references.quadratic import simulated_references

SMALL = dict(n_samples_inner=40, n_samples_outer=30, dim_inner=5,
             dim_outer=6)
# at SMALL with the default random source (upstream's JAX draws): F convex,
# accepted by upstream's check with F not convex, rejected (check
# eigenvalues 0.12, 0.029, -0.012: far from float32 rounding)
CONVEX_SEED, NONCONVEX_SEED, REJECTED_SEED = 4, 2, 122


def small(random_state=CONVEX_SEED, **kwargs):
    return sq.make_simulated_quadratic(**SMALL, random_state=random_state,
                                       **kwargs)


def point(P, seed):
    gen = torch.Generator().manual_seed(seed)
    return (torch.randn(P.dim_x, generator=gen, dtype=torch.float64),
            torch.randn(P.dim_y, generator=gen, dtype=torch.float64))


BATCHES = {
    "full": lambda P: None,
    "full_marker": lambda P: FullBatch(P.n_lower),
    "indices": lambda P: torch.tensor([3, 0, 3, 7, 11]),
    "slice": lambda P: SliceBatch(8, 24),
}


# -- generator logic ----------------------------------------------------------

def identity_source(dim_in, dim_out, n):
    """A source whose z_i rows are sqrt(n) e_i (so that mean z z^T = I
    exactly for n = dim), a fixed column for the bases, recording keys."""
    calls = []

    def normal(key, shape):
        calls.append((key, shape))
        level, k = key
        if k in (1, 3, 5):
            d = shape[-1]
            return np.sqrt(n) * np.eye(n, d).reshape(shape)
        return np.random.default_rng([9, level, k]).standard_normal(shape)
    return normal, calls


def test_spectra_and_keys_follow_benchmark_bilevels_construction():
    d = n = 7
    normal, calls = identity_source(d, d, n)
    mu, L_y, L_x, L_c = 0.1, 2.0, 3.0, 0.5
    level = generate_level(n, d, d, L_y, L_x, L_c, mu, normal, level=1)
    # E H_i = A^2, spectrum logspace(log10 mu, log10 L_y) exactly
    np.testing.assert_allclose(np.linalg.eigvalsh(level["H"].mean(0)),
                               np.geomspace(mu, L_y, d), rtol=1e-12)
    np.testing.assert_allclose(
        np.linalg.eigvalsh(level["K"].mean(0)),
        np.concatenate([[0.0], np.geomspace(mu, L_x, d - 1)]),
        rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(
        np.linalg.svd(level["C"].mean(0), compute_uv=False),
        np.geomspace(mu, L_c, d)[::-1], rtol=1e-12)
    # every per-sample H_i, K_i, C_i has rank one
    for name in ("H", "K", "C"):
        assert (np.linalg.matrix_rank(level[name], tol=1e-10) == 1).all()
    # keys (level, k), k = 0..7 once each, with upstream's shapes
    assert calls == [((1, 0), (d, 1)), ((1, 1), (n, 1, d)),
                     ((1, 2), (d, 1)), ((1, 3), (n, 1, d)),
                     ((1, 4), (d, d)), ((1, 5), (n, 1, d)),
                     ((1, 6), (n, d)), ((1, 7), (n, d))]


def test_random_sources_and_pluggable_normal():
    # "numpy": one numpy stream per key
    normal = simulated_random.random_source_normal(3, "numpy")
    np.testing.assert_array_equal(
        normal((1, 4), (2, 3)),
        np.random.default_rng([3, 1, 4]).standard_normal((2, 3)))
    # "jax" / "jax_legacy": upstream's key schedule on the port
    for name, partitionable in (("jax", True), ("jax_legacy", False)):
        level = jax_random.split(jax_random.prng_key(3), 2, partitionable)[1]
        key = jax_random.split(level, 10, partitionable)[4]
        draw = simulated_random.random_source_normal(3, name)((1, 4), (2, 3))
        assert draw.dtype == np.float32
        np.testing.assert_array_equal(
            draw, jax_random.normal(key, (2, 3), partitionable))
    keys = []
    jax_normal = simulated_random.random_source_normal(3, "jax")

    def recording(key, shape):
        keys.append(key)
        return jax_normal(key, shape)
    P = small(random_state=3, normal=recording)
    Q = small(random_state=3)                        # default: "jax"
    assert sorted(keys) == [(level, k) for level in (0, 1) for k in range(8)]
    assert torch.equal(P._data["lower"]["H"], Q._data["lower"]["H"])
    R = small(random_state=3, random_source="jax_legacy")
    assert not torch.equal(R._data["lower"]["H"], Q._data["lower"]["H"])


@pytest.mark.parametrize("shape", [(6, 5), (5, 6), (9, 4), (4, 9), (7, 1)])
def test_bases_are_sgesdds_rounded_once(shape):
    """The singular bases are the float64 ones rounded once to the draw's
    precision, each pair signed as LAPACK's sgesdd signs it, the columns
    completing a rectangular basis sgesdd's (its QR path for (9, 4), (4, 9)
    and (7, 1), its bidiagonal path for (6, 5), (5, 6)): sgesdd's own
    bases to its float32 accuracy, signs included (module doc)."""
    G = simulated_random.random_source_normal(0, "jax")((0, 4), shape)
    U, s, V = simulated_random.draw_svd(G)
    U32, s32, V32 = scipy.linalg.svd(G, lapack_driver="gesdd")
    for ours, theirs in ((U, U32), (s, s32), (V, V32)):
        assert ours.dtype == np.float64
        np.testing.assert_array_equal(ours, ours.astype(np.float32))
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=2e-6)
    # the thin part: the float64 SVD rounded once (as signed above)
    U64, s64, V64 = np.linalg.svd(G.astype(np.float64), full_matrices=False)
    k = s64.size
    sign = np.sign(np.sum(U64 * U[:, :k], axis=0))
    eps32 = np.finfo(np.float32).eps
    np.testing.assert_allclose(U[:, :k], U64 * sign, rtol=0, atol=eps32)
    np.testing.assert_allclose(V[:k], V64 * sign[:, None], rtol=0,
                               atol=eps32)
    np.testing.assert_allclose(s, s64, rtol=eps32)
    np.testing.assert_allclose(U.T @ U, np.eye(shape[0]), atol=1e-6)
    np.testing.assert_allclose(V @ V.T, np.eye(shape[1]), atol=1e-6)
    np.testing.assert_allclose((U[:, :k] * s) @ V[:k], G, atol=1e-5)


def test_lapack_sets_only_the_bases_signs(monkeypatch):
    """LAPACK's values enter the bases only through their signs: LAPACK
    bases perturbed by 1e-4 (another CPU's kernels differ by less) give
    the same bases bit for bit, which are therefore the same on any CPU."""
    G = simulated_random.random_source_normal(0, "jax")((0, 4), (20, 20))
    before = [M.copy() for M in simulated_random.draw_svd(G)]
    svd = scipy.linalg.svd
    rng = np.random.default_rng(0)

    def perturbed(*args, **kwargs):
        return tuple(M + 1e-4 * rng.standard_normal(M.shape).astype(M.dtype)
                     for M in svd(*args, **kwargs))
    monkeypatch.setattr(scipy.linalg, "svd", perturbed)
    for mine, theirs in zip(simulated_random.draw_svd(G), before,
                            strict=True):
        np.testing.assert_array_equal(mine, theirs)


# -- upstream's matrices, rebuilt with JAX -----------------------------------

def upstream_level(jax, n, d_in, d_out, L_in, L_out, L_cross, mu, key):
    """benchmark_bilevel's gen_matrices recipe in JAX float32 (D of C built
    with ``.at[].set``, where upstream's in-place assignment fails)."""
    jnp, normal = jax.numpy, jax.random.normal
    keys = jax.random.split(key, 10)

    def half_root(column_key, d, spectrum):
        U = jnp.linalg.svd(normal(column_key, (d, 1)))[0]
        return U @ jnp.diag(spectrum) @ U.T

    def rank_one(A, z_key, d):
        X = normal(z_key, (n, 1, d)) @ A
        return X.transpose(0, 2, 1) @ X / X.shape[1]

    H = rank_one(half_root(keys[0], d_in, jnp.logspace(
        jnp.log10(mu) / 2, jnp.log10(L_in) / 2, d_in)), keys[1], d_in)
    K = rank_one(half_root(keys[2], d_out, jnp.r_[0, jnp.logspace(
        jnp.log10(mu) / 2, jnp.log10(L_out) / 2, d_out - 1)]), keys[3], d_out)
    U, _, V = jnp.linalg.svd(normal(keys[4], (d_out, d_in)))
    m = min(d_out, d_in)
    D = jnp.zeros((d_out, d_in)).at[:m, :m].set(jnp.diag(jnp.logspace(
        jnp.log10(mu), jnp.log10(L_cross), m)))
    X = normal(keys[5], (n, 1, d_in))
    C = (U @ D @ X.transpose(0, 2, 1)) @ (X @ V.T)
    return dict(H=H, K=K, C=C, a=normal(keys[6], (n, d_in)),
                b=normal(keys[7], (n, d_out)))


def upstream_check(inner, outer):
    """Upstream's acceptance eigenvalue on its float32 means (numpy)."""
    inner, outer = ({k: np.asarray(v).mean(0) for k, v in level.items()}
                    for level in (inner, outer))
    J = -np.linalg.solve(inner["H"], inner["C"].T)
    M = J.T.dot(outer["H"]) @ J + outer["K"]
    T = outer["C"] @ J
    return np.min(np.linalg.eigvalsh(M + .5 * (T + T.T)))


@pytest.mark.parametrize("jax_layout", [True], indirect=True)
def test_matrices_are_upstreams_to_float32_rounding(jax_layout):  # noqa: F811
    """Upstream's recipe run by JAX (current layout; the legacy layout's
    draws are checked in test_jax_random.py) against generate_level: d_in
    > d_out so that the completion of V matters; one jit (XLA compiles
    the 16 draws in ~5 s)."""
    jax, partitionable = jax_layout
    seed, n_in, n_out, d_in, d_out = 2442, 24, 20, 6, 5
    # (L_y, L_x, L_c) per level, upstream's argument order; mu = 0.1
    constants = ((1.0, 1.5, 0.1), (2.0, 0.5, 0.3))

    @jax.jit
    def upstream(key):      # both levels, as upstream's dataset draws them
        keys = jax.random.split(key, 2)
        return [upstream_level(jax, n, d_in, d_out, *L, 0.1, keys[level])
                for level, (n, L) in enumerate(zip((n_in, n_out),
                                                   constants, strict=True))]
    theirs = upstream(jax.random.PRNGKey(seed))
    normal = simulated_random.random_source_normal(
        seed, "jax" if partitionable else "jax_legacy")
    ours = [generate_level(n, d_in, d_out, *L, 0.1, normal, level)
            for level, (n, L) in enumerate(zip((n_in, n_out), constants,
                                               strict=True))]
    for mine, upstream_arrays in zip(ours, theirs, strict=True):
        for name, value in upstream_arrays.items():
            value = np.asarray(value, dtype=np.float64)
            # float32 rounding of upstream's own float32 products and of
            # its sgesdd bases (ours: the float64 ones rounded once)
            assert np.abs(mine[name] - value).max() <= \
                2e-6 * np.abs(value).max(), name
    means = [{k: v.mean(0) for k, v in level.items()} for level in ours]
    assert upstream_check_eigenvalue(*means) == pytest.approx(
        upstream_check(*theirs), abs=1e-4)


def test_upstream_acceptance_check_rejects_like_upstream():
    with pytest.raises(ValueError, match="acceptance check"):
        small(random_state=REJECTED_SEED)
    # accepted by upstream's check, yet F is not convex (its cross term
    # is halved): no F*
    P = small(random_state=NONCONVEX_SEED)
    assert P.mu_F < 0 and not P.F_convex
    assert simulated_references(P)["F_star"] is None


def test_acceptance_eigenvalue_is_upstreams_formula():
    P = small()
    means = [{k: v.numpy() for k, v in P._exact[level].items()}
             for level in ("lower", "upper")]
    inner, outer = means
    J = -np.linalg.solve(inner["H"], inner["C"].T)
    T = outer["C"] @ J
    M = J.T @ outer["H"] @ J + outer["K"] + (T + T.T) / 2
    assert upstream_check_eigenvalue(*means) == pytest.approx(
        np.linalg.eigvalsh(M)[0], rel=1e-10)
    # the true Hessian of F counts the cross term twice
    np.testing.assert_allclose(P.A.numpy(), M + (T + T.T) / 2, atol=1e-12)


# -- oracles against autograd -------------------------------------------------

@pytest.mark.parametrize("batch", BATCHES)
def test_closed_forms_match_autograd(batch):
    P = small()
    x, y = point(P, 0)
    v = torch.randn(P.dim_y, generator=torch.Generator().manual_seed(1),
                    dtype=torch.float64)
    B = BATCHES[batch](P)
    for level in ("f", "g"):
        ours = getattr(P, f"grad_{level}")(x, y, batch=B)
        auto = getattr(GeneralBilevelProblem, f"grad_{level}")(P, x, y,
                                                               batch=B)
        for a, b in zip(ours, auto, strict=True):
            torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-12)
        torch.testing.assert_close(
            getattr(P, f"grad_{level}_x")(x, y, batch=B), ours[0])
        torch.testing.assert_close(
            getattr(P, f"grad_{level}_y")(x, y, batch=B), ours[1])
    for name in ("hvp_yy_g", "hvp_xy_g"):
        torch.testing.assert_close(
            getattr(P, name)(x, y, v, batch=B),
            getattr(GeneralBilevelProblem, name)(P, x, y, v, batch=B),
            rtol=1e-12, atol=1e-12)


def test_slice_batches_are_the_means_of_their_samples():
    P = small()
    x, y = point(P, 2)
    block, indices = SliceBatch(8, 24), torch.arange(8, 24)
    for name in ("f", "g"):
        one = getattr(P, name)(x, y, batch=block)
        samples = torch.stack([getattr(P, name)(x, y, batch=torch.tensor([i]))
                               for i in range(8, 24)])
        torch.testing.assert_close(one, samples.mean(), rtol=1e-12,
                                   atol=1e-12)
        torch.testing.assert_close(
            one, getattr(P, name)(x, y, batch=indices), rtol=1e-12,
            atol=1e-12)


def test_block_mean_cache_is_exact():
    cached, plain = small(), small(cache_means=False)
    x, y = point(cached, 3)
    block = SliceBatch(0, 16)
    for _ in range(2):                       # first use, then from the cache
        for name in ("grad_g_y", "grad_f_x", "g"):
            assert torch.equal(getattr(cached, name)(x, y, batch=block),
                               getattr(plain, name)(x, y, batch=block))
    assert cached._block_means and not plain._block_means
    # full passes: precomputed means, or upstream's average over every sample
    for batch in (None, FullBatch(cached.n_lower)):
        torch.testing.assert_close(plain.grad_g_y(x, y, batch=batch),
                                   cached.grad_g_y(x, y, batch=batch),
                                   rtol=1e-12, atol=1e-12)
    assert isinstance(plain._means("lower", None), sq._Means)
    assert cached._means("lower", None) is cached._full["lower"]


# -- exact quantities ---------------------------------------------------------

def test_inner_solution_and_hypergradient_match_autograd():
    P = small(random_state=NONCONVEX_SEED)        # closed forms need no F*
    x, _ = point(P, 4)
    y_star = P.inner_solution(x)
    assert float(P.grad_g_y(x, y_star).abs().max()) < 1e-12
    torch.testing.assert_close(P.hypergradient(x), func_grad(P.value)(x),
                               rtol=1e-10, atol=1e-12)
    # F is the quadratic 1/2 x^T A x - c^T x + const
    torch.testing.assert_close(P.hypergradient(x), P.A @ x - P.c,
                               rtol=1e-10, atol=1e-12)


def test_F_star_is_certified():
    P = small()
    refs = simulated_references(P)
    P.set_references(refs)
    x_star = P.x_star
    assert P.F_convex and refs["F_star_accuracy"] < 1e-10
    assert float(P.hypergradient(x_star).abs().max()) < 1e-10
    assert P.F_star == pytest.approx(float(P.value(x_star)), abs=1e-12)
    gen = torch.Generator().manual_seed(5)
    for _ in range(5):
        x = x_star + torch.randn(P.dim_x, generator=gen, dtype=torch.float64)
        assert float(P.value(x)) > P.F_star


def test_float32_oracles_and_float64_metrics():
    P32, P64 = small(dtype="float32"), small()
    x, y = point(P64, 6)
    x32, y32 = x.float(), y.float()
    for B in (None, SliceBatch(0, 16), torch.tensor([1, 2, 5])):
        out = P32.grad_g_y(x32, y32, batch=B)
        assert out.dtype == torch.float32
        torch.testing.assert_close(out.double(), P64.grad_g_y(x, y, batch=B),
                                   rtol=1e-5, atol=1e-5)
    assert P32.hypergradient(x32).dtype == torch.float64
    assert P32.x0.dtype == torch.float32


def test_bad_parameters_name_the_parameter():
    for name, value in (("dim_inner", 0), ("dim_outer", 1), ("mu_inner", 0),
                        ("L_cross_outer", -1.0), ("dtype", "float16"),
                        ("random_state", -1), ("random_source", "torch")):
        with pytest.raises(ValueError, match=name):
            sq.make_simulated_quadratic(**{name: value})


# -- the dataset option -------------------------------------------------------

def quadratic_dataset():
    from pathlib import Path

    from benchopt.benchmark import Benchmark
    root = Path(__file__).resolve().parents[2]
    return next(d for d in Benchmark(root).get_datasets()
                if d.name == "quadratic")


def test_dataset_option_builds_the_problem_with_its_references():
    Dataset = quadratic_dataset()
    data = Dataset.get_instance(
        generator="benchmark_bilevel", dim_x=6, dim_y=5, n_samples=30,
        mu=0.1, L=1.0, cross_norm=0.1, random_state=CONVEX_SEED,
        constraint="none").get_data()
    P = data["problem"]
    assert isinstance(P, sq.SimulatedQuadratic)
    assert (P.n_lower, P.n_upper, P.dim_y, P.dim_x) == (30, 30, 5, 6)
    assert P.F_star is not None and P.F_star_accuracy < 1e-10


@pytest.mark.parametrize("params, name", [
    (dict(generator="other"), "generator"),
    (dict(generator="benchmark_bilevel", constraint="box"), "constraint"),
    (dict(dtype="float32"), "dtype"),
    (dict(generator="benchmark_bilevel", dtype="float16"), "dtype"),
    (dict(random_source="numpy"), "random_source"),
    (dict(generator="benchmark_bilevel", random_source="jax2"),
     "random_source"),
])
def test_dataset_option_rejects_bad_combinations(params, name):
    Dataset = quadratic_dataset()
    with pytest.raises(ValueError, match=name):
        Dataset.get_instance(**params).check_parameters()
