"""Tests for benchmark_utils.sets, checked against CVXPY (Clarabel)."""

import math

import cvxpy as cp
import numpy as np
import pytest
import torch

from benchmark_utils.sets import (
    Box,
    ColumnBalls,
    FeasibleSet,
    L1Ball,
    L2Ball,
    NormBall,
    NuclearNormBall,
    ProductSet,
    Simplex,
    UnboundedLMOError,
    WholeSpace,
)

N_INSTANCES = 25
CLARABEL_TOL = dict(tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10,
                    tol_ktratio=1e-9, max_iter=200)

KINDS = ["l1", "l2", "col_l1", "col_l2", "simplex", "nuclear", "box",
         "product", "whole"]
BOUNDED_KINDS = [k for k in KINDS if k != "whole"]


# --------------------------------------------------------------------------
# random instances, each with its own CVXPY formulation
# --------------------------------------------------------------------------
#
# A case is a set and an independent CVXPY formulation of "s in the set",
# written here from the set's definition (not taken from the code under
# test, so ``cvxpy_constraints`` can be checked against it).

def _radius(rng):
    return float(np.exp(rng.uniform(np.log(0.1), np.log(10.0))))


def _l1_case(rng):
    S = L1Ball(int(rng.integers(5, 31)), _radius(rng))
    return S, lambda s: [cp.norm1(s) <= S.radius]


def _l2_case(rng):
    S = L2Ball(int(rng.integers(5, 31)), _radius(rng))
    return S, lambda s: [cp.norm(s, 2) <= S.radius]


def _column_case(norm):
    def make(rng):
        S = ColumnBalls(int(rng.integers(1, 7)), int(rng.integers(1, 7)),
                        norm, _radius(rng))

        def constraints(s):
            M = cp.reshape(s, (S.n_rows, S.n_cols), order="C")
            if norm == "l1":
                return [cp.sum(cp.abs(M), axis=0) <= S.radius]
            return [cp.norm(M, 2, axis=0) <= S.radius]
        return S, constraints
    return make


def _simplex_case(rng):
    S = Simplex(int(rng.integers(2, 31)), _radius(rng))
    return S, lambda s: [s >= 0, cp.sum(s) == S.radius]


def _nuclear_case(rng):
    S = NuclearNormBall(int(rng.integers(1, 6)), int(rng.integers(1, 6)),
                        _radius(rng))
    return S, lambda s: [
        cp.normNuc(cp.reshape(s, (S.n_rows, S.n_cols), order="C"))
        <= S.radius]


def _box_case(rng):
    dim = int(rng.integers(5, 31))
    lower = rng.normal(size=dim)
    width = rng.uniform(0, 2, size=dim) * (rng.uniform(size=dim) > 0.1)
    S = Box(torch.tensor(lower), torch.tensor(lower + width))
    return S, lambda s: [s >= lower, s <= lower + width]


def _product_case(rng):
    blocks = ["l1", "l2", "col_l1", "col_l2", "simplex", "box"]
    chosen = rng.choice(blocks, size=int(rng.integers(2, 4)), replace=False)
    cases = [CASES[str(k)](rng) for k in chosen]

    def constraints(s):
        cons, start = [], 0
        for block, block_constraints in cases:
            cons += block_constraints(s[start:start + block.dim])
            start += block.dim
        return cons
    return ProductSet([block for block, _ in cases]), constraints


def _whole_case(rng):
    return WholeSpace(int(rng.integers(5, 31))), lambda s: []


CASES = {
    "l1": _l1_case, "l2": _l2_case, "col_l1": _column_case("l1"),
    "col_l2": _column_case("l2"), "simplex": _simplex_case,
    "nuclear": _nuclear_case, "box": _box_case, "product": _product_case,
    "whole": _whole_case,
}
KINDS = list(CASES)
BOUNDED_KINDS = [k for k in KINDS if k != "whole"]


def cases(kind, seed, n=N_INSTANCES):
    """(set, its CVXPY constraints, torch generator, numpy rng),
    reproducible per kind."""
    rng = np.random.default_rng([seed, KINDS.index(kind)])
    gen = torch.Generator().manual_seed(seed * 100 + KINDS.index(kind))
    for _ in range(n):
        S, constraints = CASES[kind](rng)
        yield S, constraints, gen, rng


def instances(kind, seed, n=N_INSTANCES):
    """(set, torch generator, numpy rng) triples, reproducible per kind."""
    for S, _, gen, rng in cases(kind, seed, n):
        yield S, gen, rng


def random_vector(S, gen, rng):
    """Mix of inside points and points at various scales (mostly outside)."""
    if rng.uniform() < 0.25:
        return S.random_point(gen)
    scale = 10 ** rng.uniform(-1, 1.5)
    return scale * torch.randn(S.dim, generator=gen, dtype=torch.float64)


# --------------------------------------------------------------------------
# CVXPY reference
# --------------------------------------------------------------------------

def cvx_solve(S, constraints, objective):
    s = cp.Variable(S.dim)
    prob = cp.Problem(cp.Minimize(objective(s)), constraints(s))
    prob.solve(solver=cp.CLARABEL, **CLARABEL_TOL)
    assert prob.status in ("optimal", "optimal_inaccurate"), prob.status
    return s.value, prob.value


def cvx_project(S, constraints, p):
    p = p.numpy()
    return cvx_solve(S, constraints, lambda s: cp.sum_squares(s - p))[0]


def cvx_lmo_value(S, constraints, c):
    c = c.numpy()
    return cvx_solve(S, constraints, lambda s: c @ s)[1]


# --------------------------------------------------------------------------
# comparisons with CVXPY
# --------------------------------------------------------------------------

@pytest.mark.parametrize("kind", KINDS)
def test_project_matches_cvxpy(kind):
    for S, constraints, gen, rng in cases(kind, seed=0):
        p = random_vector(S, gen, rng)
        ours = S.project(p)
        ref = cvx_project(S, constraints, p)
        scale = max(1.0, float(p.abs().max()))
        np.testing.assert_allclose(ours.numpy(), ref, rtol=0,
                                   atol=1e-6 * scale, err_msg=repr(S))


@pytest.mark.parametrize("kind", BOUNDED_KINDS)
def test_lmo_matches_cvxpy(kind):
    for S, constraints, gen, rng in cases(kind, seed=1):
        c = 10 ** rng.uniform(-1, 1) * torch.randn(
            S.dim, generator=gen, dtype=torch.float64)
        s = S.lmo(c)
        assert S.contains(s), repr(S)
        ours = float(c @ s)
        ref = cvx_lmo_value(S, constraints, c)
        assert abs(ours - ref) <= 1e-7 * max(1.0, abs(ref)), (S, ours, ref)


# --------------------------------------------------------------------------
# properties (no CVXPY)
# --------------------------------------------------------------------------

@pytest.mark.parametrize("kind", KINDS)
def test_projection_properties(kind):
    for S, gen, rng in instances(kind, seed=2, n=40):
        a, b = random_vector(S, gen, rng), random_vector(S, gen, rng)
        pa, pb = S.project(a), S.project(b)
        assert pa.shape == a.shape and pa.dtype == a.dtype
        assert S.contains(pa) and S.contains(pb), repr(S)
        # idempotent
        torch.testing.assert_close(S.project(pa), pa, rtol=0, atol=1e-12)
        # non-expansive
        assert (torch.linalg.vector_norm(pa - pb)
                <= torch.linalg.vector_norm(a - b) * (1 + 1e-12) + 1e-12)
        # optimality: <a - P(a), x - P(a)> <= 0 for every x in the set
        x = S.random_point(gen)
        assert S.contains(x), repr(S)
        scale = float(torch.linalg.vector_norm(a - pa)
                      * torch.linalg.vector_norm(x - pa)) + 1.0
        assert float((a - pa) @ (x - pa)) <= 1e-10 * scale
        # points of the set are fixed (bit-exact except for the Euclidean
        # rescaling, which may round)
        torch.testing.assert_close(S.project(x), x, rtol=1e-14, atol=1e-14)
        # a new tensor, never the input
        assert pa.data_ptr() != a.data_ptr()


@pytest.mark.parametrize("kind", BOUNDED_KINDS)
def test_lmo_properties(kind):
    for S, gen, _ in instances(kind, seed=3, n=40):
        c = torch.randn(S.dim, generator=gen, dtype=torch.float64)
        s = S.lmo(c)
        assert s.shape == c.shape and s.dtype == c.dtype
        assert S.contains(s), repr(S)
        assert s.data_ptr() != c.data_ptr()
        value = float(c @ s)
        for _ in range(5):
            x = S.random_point(gen)
            assert value <= float(c @ x) + 1e-12 * max(1.0, abs(value))
        # the lmo is invariant to positive scaling of the direction
        s2 = S.lmo(3.7 * c)
        assert float(c @ s2) == pytest.approx(value, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("kind", BOUNDED_KINDS)
def test_diameter(kind):
    for S, gen, _ in instances(kind, seed=4, n=10):
        pts = [S.random_point(gen) for _ in range(5)]
        pts += [S.lmo(torch.randn(S.dim, generator=gen, dtype=torch.float64))
                for _ in range(5)]
        for x in pts:
            for y in pts:
                assert (float(torch.linalg.vector_norm(x - y))
                        <= S.diameter * (1 + 1e-12))
        # the diameter is attained by lmo(c), lmo(-c) for a suitable c
        c = torch.randn(S.dim, generator=gen, dtype=torch.float64)
        assert float(torch.linalg.vector_norm(S.lmo(c) - S.lmo(-c))) \
            <= S.diameter * (1 + 1e-12)


def test_diameter_values():
    assert L1Ball(7, 1.5).diameter == 3.0
    assert L2Ball(7, 1.5).diameter == 3.0
    assert ColumnBalls(3, 4, "l1", 0.5).diameter == pytest.approx(2.0)
    assert ColumnBalls(3, 4, "l2", 1.0).diameter == pytest.approx(4.0)
    assert Simplex(5).diameter == pytest.approx(math.sqrt(2))
    assert Simplex(5, 3.0).diameter == pytest.approx(3 * math.sqrt(2))
    assert Simplex(1).diameter == 0.0
    assert NuclearNormBall(3, 4, 2.0).diameter == 4.0
    assert Box(0.0, 2.0, dim=4).diameter == pytest.approx(4.0)
    assert WholeSpace(3).diameter == math.inf
    assert ProductSet([L2Ball(2, 1.5), L1Ball(3, 2.0)]).diameter \
        == pytest.approx(5.0)
    assert ProductSet([L2Ball(2), WholeSpace(2)]).diameter == math.inf
    # attained: two antipodal rank-one matrices / vertices
    N = NuclearNormBall(3, 4, 2.0)
    c = torch.randn(12, dtype=torch.float64)
    assert float(torch.linalg.vector_norm(N.lmo(c) - N.lmo(-c))) \
        == pytest.approx(4.0)


@pytest.mark.parametrize("kind", KINDS)
def test_random_point(kind):
    for S, gen, _ in instances(kind, seed=5, n=20):
        x = S.random_point(gen)
        assert x.shape == (S.dim,) and x.dtype == torch.float64
        assert x.device.type == "cpu"
        assert S.contains(x), repr(S)
        y = S.random_point(gen, dtype=torch.float32)
        assert y.dtype == torch.float32 and S.contains(y, tol=1e-5)
    # reproducible with the generator
    S = L1Ball(10, 2.0)
    x1 = S.random_point(torch.Generator().manual_seed(3))
    x2 = S.random_point(torch.Generator().manual_seed(3))
    assert torch.equal(x1, x2)


@pytest.mark.parametrize("kind", BOUNDED_KINDS)
def test_float32_and_noncontiguous(kind):
    for S, gen, _ in instances(kind, seed=6, n=5):
        big = torch.randn(2 * S.dim, generator=gen, dtype=torch.float64)
        c = big[::2]  # non-contiguous 1-D input
        assert S.dim == 1 or not c.is_contiguous()
        torch.testing.assert_close(S.lmo(c), S.lmo(c.contiguous()))
        torch.testing.assert_close(S.project(c), S.project(c.contiguous()))
        c32 = c.float()
        assert S.lmo(c32).dtype == torch.float32
        p32 = S.project(c32)
        assert p32.dtype == torch.float32
        torch.testing.assert_close(p32.double(), S.project(c),
                                   rtol=1e-4, atol=1e-4)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("kind", BOUNDED_KINDS)
def test_cuda(kind):
    for S, gen, _ in instances(kind, seed=7, n=5):
        c = torch.randn(S.dim, generator=gen, dtype=torch.float64)
        s, p = S.lmo(c.cuda()), S.project(c.cuda())
        assert s.is_cuda and p.is_cuda
        assert S.contains(s) and S.contains(p)
        torch.testing.assert_close(p.cpu(), S.project(c))
        assert float(c @ s.cpu()) == pytest.approx(float(c @ S.lmo(c)))
        assert S.random_point(gen, device="cuda").is_cuda


# --------------------------------------------------------------------------
# conventions
# --------------------------------------------------------------------------

def t(*values):
    return torch.tensor(values, dtype=torch.float64)


def test_l1_lmo_conventions():
    B = L1Ball(4, 2.0)
    # ties in |c|: first index (torch.argmax semantics), sign opposite to c
    assert torch.equal(B.lmo(t(1.0, -3.0, 3.0, 0.0)), t(0.0, 2.0, 0.0, 0.0))
    assert torch.equal(B.lmo(t(3.0, -3.0, 3.0, 0.0)), t(-2.0, 0.0, 0.0, 0.0))
    # zero direction: the zero vector (the center)
    assert torch.equal(B.lmo(torch.zeros(4, dtype=torch.float64)),
                       torch.zeros(4, dtype=torch.float64))


def test_l1_projection_examples():
    B = L1Ball(3, 1.0)
    v = t(0.2, -0.3, 0.1)
    assert torch.equal(B.project(v), v)  # inside: unchanged
    torch.testing.assert_close(B.project(t(3.0, -1.0, 0.0)),
                               t(1.0, 0.0, 0.0))
    torch.testing.assert_close(B.project(t(2.0, -2.0, 0.5)),
                               t(0.5, -0.5, 0.0))
    # huge entries: no cancellation problem in the threshold
    torch.testing.assert_close(B.project(t(1e17, 0.0, 0.0)),
                               t(1.0, 0.0, 0.0))


def test_l2_lmo_conventions():
    B = L2Ball(2, 2.0)
    torch.testing.assert_close(B.lmo(t(3.0, 4.0)), t(-1.2, -1.6))
    zero = torch.zeros(2, dtype=torch.float64)
    out = B.lmo(zero)
    assert torch.equal(out, zero) and not torch.isnan(out).any()


def test_column_conventions():
    # M = [[1, 0, -2], [-3, 0, 2]], row-major flat
    c = t(1.0, 0.0, -2.0, -3.0, 0.0, 2.0)
    S1 = ColumnBalls(2, 3, "l1", 0.5)
    # col 0: argmax |.| is row 1 (value -3) -> +0.5; col 1 zero -> zero;
    # col 2: tie |-2| = |2| -> first row (value -2) -> +0.5
    assert torch.equal(S1.lmo(c), t(0.0, 0.0, 0.5, 0.5, 0.0, 0.0))
    S2 = ColumnBalls(2, 3, "l2", 1.0)
    s = S2.lmo(c).view(2, 3)
    torch.testing.assert_close(s[:, 0], -t(1.0, -3.0) / math.sqrt(10))
    assert torch.equal(s[:, 1], torch.zeros(2, dtype=torch.float64))
    torch.testing.assert_close(s[:, 2], -t(-2.0, 2.0) / math.sqrt(8))
    # projection acts per column of the row-major view
    p = S1.project(t(2.0, 0.1, 0.0, 0.0, 0.1, 0.0)).view(2, 3)
    torch.testing.assert_close(p, torch.tensor([[0.5, 0.1, 0.0],
                                                [0.0, 0.1, 0.0]],
                                               dtype=torch.float64))
    torch.testing.assert_close(
        S1.column_norms(t(1.0, 0.0, -2.0, -3.0, 0.0, 2.0)), t(4.0, 0.0, 4.0))


def test_simplex_conventions():
    S = Simplex(4, 2.0)
    assert torch.equal(S.lmo(t(1.0, -2.0, -2.0, 0.0)), t(0.0, 2.0, 0.0, 0.0))
    assert torch.equal(S.lmo(torch.zeros(4, dtype=torch.float64)),
                       t(2.0, 0.0, 0.0, 0.0))
    torch.testing.assert_close(S.project(t(0.0, 0.0, 0.0, 0.0)),
                               t(0.5, 0.5, 0.5, 0.5))
    torch.testing.assert_close(Simplex(1, 3.0).project(t(-7.0)), t(3.0))


def test_box_conventions():
    B = Box(t(0.0, -1.0, 2.0), t(1.0, 1.0, 2.0))
    assert torch.equal(B.lmo(t(1.0, -1.0, 0.0)), t(0.0, 1.0, 2.0))
    assert torch.equal(B.lmo(t(0.0, 0.0, 5.0)), t(0.5, 0.0, 2.0))
    assert torch.equal(B.project(t(-5.0, 0.5, 9.0)), t(0.0, 0.5, 2.0))
    assert Box(-1.0, 1.0, dim=3).dim == 3
    assert Box(t(0.0, 0.0), 1.0).dim == 2


def test_nuclear_conventions():
    N = NuclearNormBall(2, 3, 2.0)
    zero = torch.zeros(6, dtype=torch.float64)
    assert torch.equal(N.lmo(zero), zero)
    # diagonal direction: top singular pair is e_1 e_1^T
    torch.testing.assert_close(N.lmo(t(3.0, 0.0, 0.0, 0.0, 1.0, 0.0)),
                               t(-2.0, 0.0, 0.0, 0.0, 0.0, 0.0))
    # singular values (3, 1) projected on the l1 ball of radius 2 -> (2, 0)
    torch.testing.assert_close(N.project(t(3.0, 0.0, 0.0, 0.0, 1.0, 0.0)),
                               t(2.0, 0.0, 0.0, 0.0, 0.0, 0.0))
    inside = t(0.5, 0.0, 0.0, 0.0, -0.5, 0.0)
    assert torch.equal(N.project(inside), inside)
    torch.testing.assert_close(N.nuclear_norm(inside),
                               torch.tensor(1.0, dtype=torch.float64))


def test_whole_space():
    W = WholeSpace(3)
    c = t(1.0, 2.0, 3.0)
    with pytest.raises(UnboundedLMOError, match="unbounded"):
        W.lmo(c)
    with pytest.raises(NotImplementedError):
        W.lmo(c)
    with pytest.raises(ValueError):
        W.lmo(c)
    p = W.project(c)
    assert torch.equal(p, c) and p.data_ptr() != c.data_ptr()
    assert W.contains(1e30 * c)
    with pytest.raises(UnboundedLMOError):
        ProductSet([L2Ball(2), W]).lmo(torch.ones(5, dtype=torch.float64))


def test_product_set():
    sets = [L1Ball(3, 1.0), Simplex(2), ColumnBalls(2, 2, "l2", 1.0)]
    P = ProductSet(sets)
    assert P.dim == 9 and len(P) == 3 and P[1] is sets[1]
    x = torch.arange(9, dtype=torch.float64)
    blocks = P.blocks(x)
    assert [b.shape[0] for b in blocks] == [3, 2, 4]
    blocks[1][0] = -1.0  # views, not copies
    assert x[3] == -1.0
    c = torch.randn(9, dtype=torch.float64)
    expected = torch.cat([S.lmo(b) for S, b in
                          zip(sets, P.blocks(c), strict=True)])
    assert torch.equal(P.lmo(c), expected)
    expected = torch.cat([S.project(b) for S, b in
                          zip(sets, P.blocks(c), strict=True)])
    assert torch.equal(P.project(c), expected)
    assert P.contains(P.project(c))
    nested = ProductSet([P, L2Ball(1)])
    assert nested.dim == 10 and nested.contains(nested.project(
        torch.randn(10, dtype=torch.float64)))


def test_contains_rejects():
    assert not L1Ball(3, 1.0).contains(t(0.6, 0.6, 0.0))
    assert not L2Ball(2, 1.0).contains(t(0.8, 0.8))
    assert not Simplex(2).contains(t(0.5, 0.4))
    assert not Simplex(2).contains(t(1.5, -0.5))
    assert not Box(0.0, 1.0, dim=2).contains(t(0.5, 1.1))
    assert not ColumnBalls(2, 2, "l2", 1.0).contains(t(1.0, 0.0, 1.0, 0.0))
    assert ColumnBalls(2, 2, "l2", 1.0).contains(t(1.0, 0.0, 0.0, 1.0))
    assert not NuclearNormBall(2, 2, 1.0).contains(t(0.6, 0.0, 0.0, 0.6))
    assert not L2Ball(2).contains(t(float("nan"), 0.0))
    assert L1Ball(3, 1.0).contains(t(0.5, 0.5, 1e-10))
    # the slack scales with the radius: rounding at large radii is accepted
    assert L1Ball(3, 1e6).contains(t(1e6 + 1e-4, 0.0, 0.0))
    assert not L1Ball(3, 1e6).contains(t(1e6 + 1e-2, 0.0, 0.0))
    gen = torch.Generator().manual_seed(0)
    for S in [NuclearNormBall(30, 20, 1e6), L1Ball(500, 1e6),
              Simplex(500, 1e6), ColumnBalls(50, 10, "l1", 1e6)]:
        c = 3e6 * torch.randn(S.dim, generator=gen, dtype=torch.float64)
        assert S.contains(S.project(c)) and S.contains(S.lmo(c))
    with pytest.raises(ValueError, match="shape"):
        L1Ball(3).contains(torch.zeros(4, dtype=torch.float64))
    with pytest.raises(ValueError, match="shape"):
        L2Ball(3).project(torch.zeros(3, 1, dtype=torch.float64))


# --------------------------------------------------------------------------
# constructor validation
# --------------------------------------------------------------------------

@pytest.mark.parametrize("factory, match", [
    (lambda: L1Ball(3, -1), "radius"),
    (lambda: L1Ball(3, 0.0), "radius"),
    (lambda: L1Ball(3, float("inf")), "radius"),
    (lambda: L1Ball(3, "a"), "radius"),
    (lambda: L1Ball(0, 1.0), "dim"),
    (lambda: L1Ball(2.5, 1.0), "dim"),
    (lambda: L1Ball(True, 1.0), "dim"),
    (lambda: L2Ball(3, -1), "radius"),
    (lambda: L2Ball(-3, 1.0), "dim"),
    (lambda: NormBall(3, 1.0, "linf"), "norm"),
    (lambda: NormBall(3, 0.0, "l1"), "radius"),
    (lambda: ColumnBalls(2, 3, "l1", -1.0), "radius"),
    (lambda: ColumnBalls(2, 3, "linf", 1.0), "norm"),
    (lambda: ColumnBalls(0, 3, "l2", 1.0), "n_rows"),
    (lambda: ColumnBalls(2, 0, "l2", 1.0), "n_cols"),
    (lambda: Simplex(3, 0.0), "radius"),
    (lambda: Simplex(0), "dim"),
    (lambda: NuclearNormBall(2, 3, -2.0), "radius"),
    (lambda: NuclearNormBall(0, 3, 1.0), "n_rows"),
    (lambda: NuclearNormBall(2, -1, 1.0), "n_cols"),
    (lambda: Box(1.0, 0.0, dim=2), "lower"),
    (lambda: Box(torch.zeros(3), torch.ones(2)), "lower"),
    (lambda: Box(0.0, 1.0), "dim"),
    (lambda: Box(0.0, 1.0, dim=0), "dim"),
    (lambda: Box(0.0, float("inf"), dim=2), "upper"),
    (lambda: Box(torch.zeros(2, 2), 1.0), "lower"),
    (lambda: WholeSpace(0), "dim"),
    (lambda: ProductSet([]), "sets"),
    (lambda: ProductSet([L1Ball(2), "not a set"]), "sets"),
])
def test_constructor_validation(factory, match):
    with pytest.raises(ValueError, match=match):
        factory()


def test_numpy_scalars_are_accepted_and_stored_as_python_numbers():
    B = L1Ball(np.int64(3), np.float64(2.0))
    assert type(B.dim) is int and type(B.radius) is float
    C = ColumnBalls(np.int32(2), np.int64(3), "l2", np.float32(0.5))
    assert (C.n_rows, C.n_cols, C.dim, C.radius) == (2, 3, 6, 0.5)
    assert type(Simplex(4, 1).radius) is float


def test_repr_and_interface():
    sets = [L1Ball(3, 2.0), L2Ball(3), ColumnBalls(2, 3, "l1", 0.5),
            Simplex(4), NuclearNormBall(2, 2, 1.0), Box(0.0, 1.0, dim=2),
            WholeSpace(2)]
    for S in sets:
        assert isinstance(S, FeasibleSet)
        assert type(S).__name__ in repr(S)
    assert "radius=2.0" in repr(sets[0])
    assert "norm='l1'" in repr(sets[2])
    assert "L1Ball" in repr(ProductSet(sets[:2]))
    assert repr(L2Ball(3, 1.5)) == "L2Ball(dim=3, radius=1.5)"
    assert repr(NormBall(3, 1.5, "l1")) == \
        "NormBall(dim=3, radius=1.5, norm='l1')"
    with pytest.raises(TypeError):
        FeasibleSet()


# --------------------------------------------------------------------------
# one norm-ball class
# --------------------------------------------------------------------------

@pytest.mark.parametrize("norm, fixed", [("l1", L1Ball), ("l2", L2Ball)])
def test_norm_ball_is_the_fixed_norm_ball(norm, fixed):
    """NormBall(dim, r, norm) and L1Ball / L2Ball give identical bits."""
    gen = torch.Generator().manual_seed(0)
    for dim, radius in [(1, 0.3), (7, 2.0), (40, 10.0)]:
        A, B = NormBall(dim, radius, norm), fixed(dim, radius)
        assert B.norm == norm and B.norm_ball == A.norm_ball
        for _ in range(5):
            c = 10 * torch.randn(dim, generator=gen, dtype=torch.float64)
            assert torch.equal(A.lmo(c), B.lmo(c))
            assert torch.equal(A.project(c), B.project(c))
            assert A.excess(c) == B.excess(c)
        draws = [S.random_point(torch.Generator().manual_seed(1))
                 for S in (A, B)]
        assert torch.equal(*draws)
        assert A.diameter == B.diameter and A.polyhedral == B.polyhedral


# --------------------------------------------------------------------------
# what each set says about itself
# --------------------------------------------------------------------------

@pytest.mark.parametrize("kind", KINDS)
def test_cvxpy_constraints_match_independent_formulation(kind):
    """The set's CVXPY constraints are the independent formulation: same
    expressions, same violation at points inside, on and outside the set."""
    for S, constraints, gen, rng in cases(kind, seed=8, n=10):
        s = cp.Variable(S.dim)
        ours, ref = S.cvxpy_constraints(s), constraints(s)
        assert [str(con) for con in ours] == [str(con) for con in ref]
        points = [S.random_point(gen), random_vector(S, gen, rng),
                  S.project(random_vector(S, gen, rng))]
        if not S.unbounded:
            points.append(S.lmo(torch.randn(S.dim, generator=gen,
                                            dtype=torch.float64)))
        for x in points:
            s.value = x.numpy()
            for mine, theirs in zip(ours, ref, strict=True):
                np.testing.assert_allclose(mine.violation(),
                                           theirs.violation(),
                                           rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kind", KINDS)
def test_excess_is_the_largest_constraint_violation(kind):
    for S, constraints, gen, rng in cases(kind, seed=9, n=20):
        s = cp.Variable(S.dim)
        cons = constraints(s)
        for x in [random_vector(S, gen, rng) for _ in range(3)] + [
                S.project(random_vector(S, gen, rng))]:
            excess = S.excess(x)
            assert isinstance(excess, float) and excess >= 0.0
            # zero exactly for the points of the set (no slack)
            assert (excess == 0.0) == S.contains(x, tol=0.0), repr(S)
            s.value = x.numpy()
            violation = max([float(np.max(con.violation())) for con in cons],
                            default=0.0)
            assert excess == pytest.approx(max(violation, 0.0), rel=1e-9,
                                           abs=1e-12), repr(S)


def test_excess_values():
    x = t(3.0, -4.0)
    assert L2Ball(2, 1.0).excess(x) == \
        max(float(torch.linalg.vector_norm(x)) - 1.0, 0.0) == 4.0
    assert L1Ball(2, 1.0).excess(x) == 6.0
    assert L2Ball(2, 10.0).excess(x) == 0.0
    assert Box(0.0, 1.0, dim=2).excess(x) == 4.0
    assert Simplex(2).excess(t(0.5, 0.25)) == 0.25
    assert Simplex(2).excess(t(1.5, -0.5)) == 0.5
    assert ColumnBalls(2, 2, "l2", 1.0).excess(t(3.0, 0.0, 4.0, 0.5)) \
        == pytest.approx(4.0)
    assert NuclearNormBall(2, 2, 1.0).excess(t(2.0, 0.0, 0.0, -1.0)) \
        == pytest.approx(2.0)
    assert WholeSpace(2).excess(1e30 * x) == 0.0
    assert ProductSet([L2Ball(2, 1.0), L1Ball(2, 1.0)]).excess(
        torch.cat([x, x])) == 6.0


def test_norm_ball():
    assert L1Ball(3, 2.0).norm_ball == ("l1", 2.0)
    assert L2Ball(3).norm_ball == ("l2", 1.0)
    assert NormBall(3, 0.5, "l1").norm_ball == ("l1", 0.5)
    for S in [ColumnBalls(2, 3, "l2", 1.0), Simplex(3), Box(0.0, 1.0, dim=2),
              NuclearNormBall(2, 2), WholeSpace(3), ProductSet([L2Ball(3)])]:
        assert S.norm_ball is None, repr(S)


def test_polyhedral():
    polyhedral = [L1Ball(3), Simplex(3), Box(0.0, 1.0, dim=2),
                  ColumnBalls(2, 2, "l1"), ProductSet([L1Ball(2), Simplex(2)])]
    curved = [L2Ball(3), ColumnBalls(2, 2, "l2"), NuclearNormBall(2, 2),
              ProductSet([L1Ball(2), L2Ball(2)])]
    assert all(S.polyhedral for S in polyhedral)
    assert not any(S.polyhedral for S in curved)


def test_coordinate_separable():
    separable = [Box(0.0, 1.0, dim=2), WholeSpace(3),
                 ProductSet([Box(0.0, 1.0, dim=2), WholeSpace(2)])]
    coupled = [L1Ball(3), L2Ball(3), Simplex(3), ColumnBalls(2, 2, "l2"),
               NuclearNormBall(2, 2), ProductSet([Box(0.0, 1.0, dim=2),
                                                  L2Ball(2)])]
    assert all(S.coordinate_separable for S in separable)
    assert not any(S.coordinate_separable for S in coupled)
    # what the attribute promises: the projection in a diagonal metric D,
    # argmin_s (s - x)^T D (s - x), is the Euclidean projection
    gen = torch.Generator().manual_seed(0)
    for S in separable:
        x = 3 * torch.randn(S.dim, generator=gen, dtype=torch.float64)
        d = torch.rand(S.dim, generator=gen, dtype=torch.float64) + 0.1
        s = cp.Variable(S.dim)
        cp.Problem(cp.Minimize(cp.sum(cp.multiply(d.numpy(), cp.square(
            s - x.numpy())))), S.cvxpy_constraints(s)).solve(
                solver=cp.CLARABEL, **CLARABEL_TOL)
        assert np.allclose(s.value, S.project(x).numpy(), atol=1e-7)


def test_cache_key():
    assert L1Ball(3, 2.0).cache_key == L1Ball(3, 2.0).cache_key
    assert L1Ball(3, 2.0).cache_key != L2Ball(3, 2.0).cache_key
    assert L1Ball(3, 2.0).cache_key != L1Ball(3, 2.5).cache_key
    assert Box(t(0, 0), t(1, 1)).cache_key == Box(0.0, 1.0, dim=2).cache_key
    assert Box(t(0, 0), t(1, 2)).cache_key != Box(0.0, 1.0, dim=2).cache_key
    P = ProductSet([ColumnBalls(2, 3, "l2"), ColumnBalls(3, 4, "l1", 3.0)])
    Q = ProductSet([ColumnBalls(2, 3, "l2"), ColumnBalls(3, 4, "l1", 2.0)])
    assert P.cache_key != Q.cache_key
    hash(P.cache_key)
