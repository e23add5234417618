"""The cut-LMO, min <c, s> s.t. s in Z, <a, s> <= beta (benchmark_utils.sets).

Random instances (at least 1000 per set kind) are checked against
independent solves: scipy.optimize.linprog (HiGHS) for the polyhedral sets,
one parametrized CVXPY problem per shape (Clarabel, tight tolerances) for
the curved ones. Regimes: cut active, cut inactive, clearly infeasible,
near the feasibility boundary, cut exactly touching Z, a = 0, c = 0; about
40 % of the instances are integer-valued (ties in |c_j|, |a_j|, parallel
columns).
"""

import dataclasses
import math
from collections import Counter

import cvxpy as cp
import numpy as np
import pytest
import torch
from scipy.optimize import linprog

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
from benchmark_utils.sets.cut_lmo import CutLMOResult, cut_lmo, cut_lmo_cvxpy
from benchmark_utils.sets.cut_lmo_cvxpy import _CVXPY_CACHE

N_RANDOM = 1000
VALUE_RTOL = 1e-8   # optimal value, relative to max_Z |<c, s>|
# When the cut exactly touches a curved set (beta = min_Z <a, s>), the
# optimal value is not Lipschitz in beta: moving beta by a few ulps moves it
# by ~ sqrt(ulp) ~ 1e-8 (the cap {<a, s> <= beta} has a width ~ sqrt of its
# height), so no float64 method can be asked for more there.
TOUCHING_CURVED_RTOL = 3e-7
CUT_RTOL = 1e-9     # cut violation, relative to max(|beta|, max_Z |<a, s>|)
HIGHS_TOL = dict(primal_feasibility_tolerance=1e-10,
                 dual_feasibility_tolerance=1e-10)
CLARABEL_TOL = dict(tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11,
                    tol_ktratio=1e-10, max_iter=300)

REGIMES = ["active", "inactive", "infeasible", "near_in", "near_out",
           "touching", "a_zero", "c_zero"]
REGIME_P = [0.45, 0.10, 0.15, 0.05, 0.05, 0.08, 0.06, 0.06]


def t(*values):
    return torch.tensor(values, dtype=torch.float64)


def dot(u, v):
    return float(torch.dot(u, v))


def support(Z, v):
    """max_{s in Z} |<v, s>| (scale of a linear function on Z)."""
    return max(abs(dot(v, Z.lmo(v))), abs(dot(v, Z.lmo(-v))))


def dual_value(Z, c, a, beta, lam):
    """phi(lam) = min_Z <c + lam a, s> - lam beta."""
    d = c + lam * a
    return dot(d, Z.lmo(d)) - lam * beta


# --------------------------------------------------------------------------
# random instances
# --------------------------------------------------------------------------

def _vec(rng, n, integer):
    if integer:
        return rng.integers(-3, 4, size=n).astype(float)
    return rng.normal(size=n) * 10 ** rng.uniform(-1, 1)


def make_set(kind, rng, shape=None):
    if kind == "l1":
        return L1Ball(int(rng.integers(3, 21)), float(rng.uniform(0.5, 10)))
    if kind == "simplex":
        return Simplex(int(rng.integers(3, 21)), float(rng.uniform(0.5, 5)))
    if kind == "box":
        d = int(rng.integers(3, 21))
        lo = rng.integers(-3, 2, size=d).astype(float) if rng.uniform() < .4 \
            else rng.normal(size=d)
        width = rng.uniform(0, 3, size=d) * (rng.uniform(size=d) > 0.1)
        return Box(torch.tensor(lo), torch.tensor(lo + width))
    if kind == "columns":  # dictionary-like: l2 columns x l1 codes (a = 0)
        (n1, p1), (n2, p2) = shape
        return ProductSet([
            ColumnBalls(n1, p1, "l2", float(rng.uniform(0.5, 3))),
            ColumnBalls(n2, p2, "l1", float(rng.uniform(0.5, 3))),
        ])
    if kind == "l2":
        return L2Ball(shape, float(rng.uniform(0.5, 3)))
    if kind == "nuclear":
        return NuclearNormBall(*shape, float(rng.uniform(0.5, 3)))
    raise AssertionError(kind)


def _cut_vector(kind, Z, rng, integer):
    a = _vec(rng, Z.dim, integer)
    if kind == "columns":
        D = Z.sets[0]
        A = a[:D.dim].reshape(D.n_rows, D.n_cols)
        A[:, rng.uniform(size=D.n_cols) < 0.2] = 0.0  # zero cut columns
        a[D.dim:] = 0.0  # the cut does not involve the code block
    return a


def _objective(kind, Z, a, rng, integer):
    c = _vec(rng, Z.dim, integer)
    if kind == "columns" and rng.uniform() < 0.3:
        # a column with c_j = -k a_j: its LMO passes through 0 at lam = k
        D = Z.sets[0]
        C = c[:D.dim].reshape(D.n_rows, D.n_cols)
        A = a[:D.dim].reshape(D.n_rows, D.n_cols)
        j = int(rng.integers(D.n_cols))
        C[:, j] = -float(rng.integers(1, 4)) * A[:, j]
    return c


# relative distance of beta to min_Z <a, s> in the near_in / near_out regimes
NEAR = {"l1": 1e-6, "simplex": 1e-6, "box": 1e-6}  # others (conic): 1e-4


def make_instance(kind, rng, shape=None):
    Z = make_set(kind, rng, shape)
    near = NEAR.get(kind, 1e-4)
    regime = str(rng.choice(REGIMES, p=REGIME_P))
    integer = rng.uniform() < 0.4
    a = _cut_vector(kind, Z, rng, integer)
    c = _objective(kind, Z, a, rng, integer)
    if regime == "a_zero":
        a[:] = 0.0
    if regime == "c_zero":
        c[:] = 0.0
    c, a = torch.tensor(c), torch.tensor(a)
    m = dot(a, Z.lmo(a))          # min_Z <a, s>
    M = -dot(-a, Z.lmo(-a))       # max_Z <a, s>
    x0 = dot(a, Z.lmo(c))         # <a, plain LMO>
    width = M - m
    u = rng.uniform(0.02, 0.98)
    if regime in ("active", "c_zero") and x0 - m > 1e-9 * width:
        beta = m + u * (x0 - m)
    elif regime in ("active", "inactive", "c_zero"):
        beta = x0 + u * (width + 1.0)
    elif regime == "infeasible":
        beta = m - (0.05 + u) * width - 1e-3 * (1 + abs(m))
    elif regime == "near_in":
        beta = m + near * max(width, 1e-3)
    elif regime == "near_out":
        beta = m - near * max(width, 1e-3)
    elif regime == "touching":
        beta = m
    else:  # a_zero: feasible iff beta >= 0
        beta = float(rng.choice([-1.0, 1.0])) * u
    return Z, c, a, float(beta), regime


# --------------------------------------------------------------------------
# independent reference solvers
# --------------------------------------------------------------------------

def _linprog(cost, A_ub, b_ub, bounds, A_eq=None, b_eq=None):
    res = linprog(cost, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq,
                  bounds=bounds, method="highs", options=HIGHS_TOL)
    assert res.status in (0, 2), res.message
    return (True, float(res.fun)) if res.status == 0 else (False, None)


def _lp_l1(Z, c, a, beta):  # s = s+ - s-
    d = Z.dim
    A_ub = np.vstack([np.ones(2 * d), np.concatenate([a, -a])])
    return _linprog(np.concatenate([c, -c]), A_ub, [Z.radius, beta],
                    (0, None))


def _lp_simplex(Z, c, a, beta):
    return _linprog(c, a[None], [beta], (0, None), np.ones((1, Z.dim)),
                    [Z.radius])


def _lp_box(Z, c, a, beta):
    return _linprog(c, a[None], [beta],
                    list(zip(Z.lower.numpy(), Z.upper.numpy(), strict=True)))


LP_FORMS = {"l1": _lp_l1, "simplex": _lp_simplex, "box": _lp_box}


def reference_lp(kind, Z, c, a, beta):
    """The LP written by hand for each polyhedral kind, solved by HiGHS."""
    return LP_FORMS[kind](Z, c.numpy(), a.numpy(), beta)


def blocks(kind, Z):
    """The balls that make up a curved instance: the two column-ball blocks
    of the dictionary-like product, or the set itself."""
    return list(Z.sets) if kind == "columns" else [Z]


def matrix_shape(B):
    """The shape of the matrix whose columns are B's balls (one column for
    a vector ball)."""
    return getattr(B, "n_rows", B.dim), getattr(B, "n_cols", 1)


def columns(B, v):
    return v.reshape(matrix_shape(B))


def _column_balls_form(kind, Z, s):
    """||column||_norm <= r per block, written by hand; radii as
    parameters."""
    cons, radii, start = [], [], 0
    for B in blocks(kind, Z):
        r = cp.Parameter(nonneg=True)
        radii.append(r)
        M = cp.reshape(s[start:start + B.dim], matrix_shape(B), order="C")
        start += B.dim
        if B.norm == "l1":
            cons.append(cp.sum(cp.abs(M), axis=0) <= r)
        else:
            cons.append(cp.norm(M, 2, axis=0) <= r)
    return cons, radii


def _nuclear_form(kind, Z, s):
    r = cp.Parameter(nonneg=True)
    M = cp.reshape(s, (Z.n_rows, Z.n_cols), order="C")
    return [cp.normNuc(M) <= r], [r]


CONIC_FORMS = {"l2": _column_balls_form, "columns": _column_balls_form,
               "nuclear": _nuclear_form}


class ConicReference:
    """One parametrized CVXPY problem per set structure, re-solved with
    Clarabel (written independently of the sets' ``cvxpy_constraints``)."""

    def __init__(self):
        self.cache = {}
        self.failures = 0

    def __call__(self, kind, Z, c, a, beta):
        key = (kind,) + tuple(matrix_shape(B) for B in blocks(kind, Z))
        if key not in self.cache:
            s = cp.Variable(Z.dim)
            c_p, a_p, b_p = cp.Parameter(Z.dim), cp.Parameter(Z.dim), \
                cp.Parameter()
            cons, radii = CONIC_FORMS[kind](kind, Z, s)
            prob = cp.Problem(cp.Minimize(c_p @ s), cons + [a_p @ s <= b_p])
            self.cache[key] = (prob, c_p, a_p, b_p, radii)
        prob, c_p, a_p, b_p, radii = self.cache[key]
        c_p.value, a_p.value, b_p.value = c.numpy(), a.numpy(), beta
        for p, B in zip(radii, blocks(kind, Z), strict=False):
            p.value = B.radius
        for opts in (CLARABEL_TOL, {}):  # tight, then default tolerances
            try:
                prob.solve(solver=cp.CLARABEL, **opts)
            except cp.error.SolverError:
                continue
            if prob.status in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE):
                return False, None
            if prob.status in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
                return True, float(prob.value)
        # a few times in 1000 (the halfspace misses Z by 1e-4 relative):
        # decide feasibility by the closed form, no value to compare
        self.failures += 1
        return closed_form_cut_min(kind, Z, a) <= beta, None


def closed_form_cut_min(kind, Z, a):
    """min_Z <a, s> by the dual norms, without any LMO."""
    if kind == "nuclear":
        A = a.reshape(Z.n_rows, Z.n_cols)
        return -Z.radius * float(torch.linalg.matrix_norm(A, ord=2))
    total, start = 0.0, 0
    for B in blocks(kind, Z):
        A = columns(B, a[start:start + B.dim])
        start += B.dim
        dual = math.inf if B.norm == "l1" else 2
        total -= B.radius * float(torch.linalg.vector_norm(A, ord=dual,
                                                           dim=0).sum())
    return total


def touching_value(kind, Z, c, a):
    """min <c, s> over the face argmin_Z <a, s> of a product of l2 column
    balls / l1 column balls / l2 balls, worked out by hand: columns with
    a_j != 0 are pinned to -r a_j / ||a_j|| (strictly convex), the others
    are free (plain LMO of c_j)."""
    total, start = 0.0, 0
    for B in blocks(kind, Z):
        cb = columns(B, c[start:start + B.dim])
        ab = columns(B, a[start:start + B.dim])
        start += B.dim
        for j in range(cb.shape[1]):
            cj, aj = cb[:, j], ab[:, j]
            if bool((aj == 0).all()):
                dual = math.inf if B.norm == "l1" else 2
                total -= B.radius * float(torch.linalg.vector_norm(
                    cj, ord=dual))
            else:
                assert B.norm == "l2"
                total -= B.radius * dot(cj, aj) / float(aj.norm())
    return total


# --------------------------------------------------------------------------
# checks
# --------------------------------------------------------------------------

def check_result(Z, c, a, beta, res, ref_feasible, ref_value,
                 check_dual=True, ref_slack=0.0, value_rtol=VALUE_RTOL):
    """``ref_slack``: relative constraint slack of the reference solver; it
    moves the reference value by up to multiplier * slack * scale (the
    sensitivity of the optimal value to beta is -lam*), which matters when
    the cut nearly touches Z and lam* is large."""
    assert isinstance(res, CutLMOResult)
    assert res.feasible == ref_feasible
    if not ref_feasible:
        assert res.point is None and res.value == math.inf
        return
    s = res.point
    assert s.shape == c.shape and s.dtype == c.dtype
    assert Z.contains(s)
    scale_c = max(support(Z, c), 1e-300)
    scale_a = max(support(Z, a), abs(beta), 1e-300)
    assert dot(a, s) <= beta + CUT_RTOL * scale_a
    assert abs(dot(c, s) - res.value) <= 1e-12 * scale_c
    if ref_value is None:  # reference solver failed (counted, rare)
        return
    assert abs(res.value - ref_value) <= value_rtol * scale_c + \
        ref_slack * res.multiplier * scale_a, (res.value, ref_value)
    assert res.multiplier >= 0
    if check_dual and res.multiplier > 0:
        # strong duality at the returned multiplier
        lam = res.multiplier
        phi = dual_value(Z, c, a, max(beta, res.cut_min), lam)
        assert abs(phi - res.value) <= VALUE_RTOL * (
            scale_c + lam * scale_a)


def run_random(kind, n, seed, reference, shapes=(None,), check_dual=True):
    rng = np.random.default_rng(seed)
    seen = Counter()
    for i in range(n):
        shape = shapes[i % len(shapes)]
        Z, c, a, beta, regime = make_instance(kind, rng, shape)
        value_rtol = VALUE_RTOL
        if regime == "touching" and reference is not reference_lp:
            # conic solvers are unreliable without a Slater point: the
            # face point worked out by hand instead
            ref = (True, touching_value(kind, Z, c, a))
            value_rtol = TOUCHING_CURVED_RTOL
        else:
            ref = reference(kind, Z, c, a, beta)
        res = cut_lmo(Z, c, a, beta)
        slack = 1e-9 if isinstance(reference, ConicReference) else 0.0
        check_result(Z, c, a, beta, res, *ref,
                     check_dual=check_dual and regime != "touching",
                     ref_slack=slack, value_rtol=value_rtol)
        seen[regime, ref[0]] += 1
    if isinstance(reference, ConicReference):
        assert reference.failures <= n // 100
    # every regime occurred, with the expected feasibility
    for regime in REGIMES:
        assert any(k[0] == regime for k in seen), regime
    assert seen["infeasible", True] == 0 and seen["near_out", True] == 0
    assert seen["near_in", False] == 0 and seen["touching", False] == 0
    assert seen["a_zero", True] > 0 and seen["a_zero", False] > 0
    return seen


# --------------------------------------------------------------------------
# random comparisons with independent solvers
# --------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["l1", "simplex", "box"])
def test_polyhedral_matches_linprog(kind):
    run_random(kind, N_RANDOM, seed=1, reference=reference_lp)


DICT_SHAPES = [((3, 4), (4, 5)), ((2, 3), (3, 2)), ((4, 2), (2, 3)),
               ((5, 3), (3, 4))]


def test_column_product_matches_clarabel():
    run_random("columns", N_RANDOM, seed=2, reference=ConicReference(),
               shapes=DICT_SHAPES)


def l2_ball_closed_form(kind, Z, c, a, beta):
    """Exact solution on one l2 ball of radius r: write s = t a/||a|| + u
    with u orthogonal to a; the optimum takes u = -sqrt(r^2 - t^2) c_perp /
    ||c_perp|| and t = min(-r <c, a>/(||a|| ||c||), beta/||a||)."""
    r, c, a = Z.radius, c.numpy(), a.numpy()
    na, nc = np.linalg.norm(a), np.linalg.norm(c)
    if na == 0:
        return (beta >= 0), -r * nc
    if -r * na > beta:
        return False, None
    if nc == 0:
        return True, 0.0
    g = c @ a / na
    n_perp = np.linalg.norm(c - g * a / na)
    t = min(-r * g / nc, beta / na)
    return True, t * g - math.sqrt(max((r - t) * (r + t), 0.0)) * n_perp


def test_l2_ball_matches_closed_form():
    run_random("l2", N_RANDOM, seed=3, reference=l2_ball_closed_form,
               shapes=[2, 5, 12])


def test_l2_ball_matches_clarabel():
    run_random("l2", 100, seed=3, reference=ConicReference(),
               shapes=[2, 5, 12])


def test_nuclear_ball_matches_clarabel():
    # generic path on a curved set without a dedicated oracle (SDP ref.)
    seen = Counter()
    rng = np.random.default_rng(4)
    ref = ConicReference()
    for i in range(150):
        Z, c, a, beta, regime = make_instance(
            "nuclear", rng, [(2, 3), (3, 3)][i % 2])
        if regime == "touching":
            continue  # face of the nuclear ball: not worked out here
        feasible, value = ref("nuclear", Z, c, a, beta)
        res = cut_lmo(Z, c, a, beta)
        assert res.feasible == feasible
        if feasible:
            assert Z.contains(res.point, tol=1e-9)
            scale_c = support(Z, c)
            assert dot(a, res.point) <= beta + CUT_RTOL * max(
                support(Z, a), abs(beta))
            # Clarabel's SDP accuracy is the limit here
            assert abs(res.value - value) <= 1e-7 * max(scale_c, 1e-300)
        seen[feasible] += 1
    assert seen[True] > 50 and seen[False] > 10


def test_l1_fast_path_matches_generic_path():
    """The numpy l1 oracle and the generic torch oracle (ProductSet with one
    L1Ball block) agree, including on ties."""
    rng = np.random.default_rng(5)
    for _ in range(300):
        Z, c, a, beta, regime = make_instance("l1", rng)
        fast = cut_lmo(Z, c, a, beta)
        slow = cut_lmo(ProductSet([Z]), c, a, beta)
        assert fast.feasible == slow.feasible
        if fast.feasible:
            scale = max(support(Z, c), 1e-300)
            assert abs(fast.value - slow.value) <= 1e-12 * scale
            # an optimal vertex of the LP has at most two nonzeros
            assert int((fast.point != 0).sum()) <= 2


def test_large_l1_matches_linprog():
    """The regression problem's size: d = 730, radius 10."""
    rng = np.random.default_rng(6)
    Z = L1Ball(730, 10.0)
    for _ in range(20):
        c = torch.tensor(rng.normal(size=730) * 10.0)
        a = torch.tensor(rng.standard_t(3, size=730))
        m, x0 = dot(a, Z.lmo(a)), dot(a, Z.lmo(c))
        beta = m + rng.uniform(0.01, 0.99) * (x0 - m)
        res = cut_lmo(Z, c, a, beta)
        check_result(Z, c, a, beta, res, *reference_lp("l1", Z, c, a, beta))
        assert res.multiplier > 0 and res.n_evals <= 30


# --------------------------------------------------------------------------
# the CVXPY backend
# --------------------------------------------------------------------------

BACKEND_KINDS = ["l1", "simplex", "box", "columns", "l2", "nuclear"]
BACKEND_SHAPES = {"columns": DICT_SHAPES[:2], "l2": [4], "nuclear": [(2, 3)]}


@pytest.mark.parametrize("kind", BACKEND_KINDS)
def test_cvxpy_backend_agrees(kind):
    rng = np.random.default_rng(7)
    shapes = BACKEND_SHAPES.get(kind, [None])
    n_feasible = n_infeasible = 0
    for i in range(40):
        Z, c, a, beta, regime = make_instance(kind, rng, shapes[i % len(
            shapes)])
        if regime in ("touching", "near_in", "near_out"):
            continue  # interior-point methods need a clear margin
        exact = cut_lmo(Z, c, a, beta)
        res = cut_lmo_cvxpy(Z, c, a, beta, **CLARABEL_TOL)
        assert isinstance(res, CutLMOResult)
        assert res.feasible == exact.feasible
        assert res.cut_min == pytest.approx(exact.cut_min, rel=1e-12,
                                            abs=1e-300)
        if not res.feasible:
            assert res.point is None
            n_infeasible += 1
            continue
        n_feasible += 1
        scale = max(support(Z, c), 1e-300)
        assert abs(res.value - exact.value) <= 1e-7 * scale
        assert res.point.shape == c.shape
        assert abs(dot(c, res.point) - res.value) <= 1e-7 * scale
    assert n_feasible > 10 and n_infeasible > 2


def test_cvxpy_backend_hand_example():
    res = cut_lmo_cvxpy(L1Ball(2, 1.0), t(-1, -2), t(0, 1), 0.5)
    assert res.feasible
    torch.testing.assert_close(res.point, t(0.5, 0.5), atol=1e-7, rtol=0)
    assert res.multiplier == pytest.approx(1.0, abs=1e-6)
    fb = torch.zeros(2)
    res = cut_lmo_cvxpy(L1Ball(2, 1.0), t(-1, -2), t(1, 0), -1.5,
                        fallback=fb)
    assert not res.feasible and res.point is fb


def test_cvxpy_backend_unsupported_sets():
    # unbounded: the LMO raises before anything is compiled
    for Z in (WholeSpace(2), ProductSet([L2Ball(1), WholeSpace(1)])):
        with pytest.raises(UnboundedLMOError):
            cut_lmo_cvxpy(Z, t(1, 0), t(0, 1), 0.0)

    class NoCVXPY(L2Ball):  # a set that has no CVXPY formulation
        cvxpy_constraints = FeasibleSet.cvxpy_constraints

    with pytest.raises(NotImplementedError, match="CVXPY"):
        cut_lmo_cvxpy(NoCVXPY(2), t(1, 0), t(0, 1), 0.0)


# --------------------------------------------------------------------------
# the set method: Z.cut_lmo(..., backend=...) and Z.prepare_cut_lmo
# --------------------------------------------------------------------------

def assert_same_result(r1, r2):
    """Bit-identical results (same point, same floats)."""
    p1, p2 = r1.point, r2.point
    assert (p1 is None) == (p2 is None)
    if p1 is not None:
        assert p1.dtype == p2.dtype and torch.equal(p1, p2)
    assert dataclasses.replace(r1, point=None) == \
        dataclasses.replace(r2, point=None)


@pytest.mark.parametrize("kind, shape", [
    ("l1", None), ("simplex", None), ("box", None), ("l2", 4),
    ("columns", DICT_SHAPES[0]), ("nuclear", (2, 3))])
def test_set_method_is_the_backend(kind, shape):
    rng = np.random.default_rng(9)
    for _ in range(10):
        Z, c, a, beta, regime = make_instance(kind, rng, shape)
        fb = t(7.0)
        assert_same_result(Z.cut_lmo(c, a, beta), cut_lmo(Z, c, a, beta))
        assert_same_result(
            Z.cut_lmo(c, a, beta, backend="exact", fallback=fb, max_evals=5),
            cut_lmo(Z, c, a, beta, fallback=fb, max_evals=5))
        if regime in ("touching", "near_in", "near_out"):
            continue  # interior-point methods need a clear margin
        via_set = Z.cut_lmo(c, a, beta, backend="cvxpy", **CLARABEL_TOL)
        direct = cut_lmo_cvxpy(Z, c, a, beta, **CLARABEL_TOL)
        assert via_set.feasible == direct.feasible
        assert via_set.value == pytest.approx(direct.value, rel=1e-9)


def test_norm_ball_with_l1_norm_takes_the_vertex_oracle():
    rng = np.random.default_rng(10)
    for _ in range(50):
        Z, c, a, beta, _ = make_instance("l1", rng)
        same = NormBall(Z.dim, Z.radius, "l1")
        assert_same_result(same.cut_lmo(c, a, beta), Z.cut_lmo(c, a, beta))
        assert type(same.cut_lmo_oracle(c, a)) is \
            type(Z.cut_lmo_oracle(c, a))


def test_unknown_backend():
    Z = L1Ball(2, 1.0)
    with pytest.raises(ValueError, match="backend"):
        Z.cut_lmo(t(1, 0), t(0, 1), 0.0, backend="mosek")
    with pytest.raises(ValueError, match="backend"):
        Z.prepare_cut_lmo("mosek")


def test_prepare_cut_lmo_compiles_the_cvxpy_problem_once():
    Z = ProductSet([ColumnBalls(3, 2, "l2", 1.0),
                    ColumnBalls(2, 3, "l1", 2.0)])
    _CVXPY_CACHE.pop(Z.cache_key, None)
    Z.prepare_cut_lmo("exact")  # nothing to prepare
    assert Z.cache_key not in _CVXPY_CACHE
    Z.prepare_cut_lmo("cvxpy")
    entry = _CVXPY_CACHE[Z.cache_key]
    # an equal set re-uses the compiled problem
    same = ProductSet([ColumnBalls(3, 2, "l2", 1.0),
                       ColumnBalls(2, 3, "l1", 2.0)])
    c = torch.linspace(-1, 1, Z.dim, dtype=torch.float64)
    res = same.cut_lmo(c, -c, 0.0, backend="cvxpy")
    assert res.feasible and _CVXPY_CACHE[Z.cache_key] is entry


# --------------------------------------------------------------------------
# hand-worked instances
# --------------------------------------------------------------------------

def test_l1_2d_hand_example():
    """min -s1 - 2 s2  s.t. |s1| + |s2| <= 1, s2 <= 1/2.

    The plain LMO is (0, 1) (value -2), cut off by s2 <= 1/2. The optimum
    is on the edge from e1 to e2 at s2 = 1/2: s = (1/2, 1/2), value -3/2.
    Dual: phi(lam) = -||(-1, -2 + lam)||_inf - lam/2 is maximal at lam = 1
    (both entries of magnitude 1), phi(1) = -3/2.
    """
    Z = L1Ball(2, 1.0)
    c, a = t(-1, -2), t(0, 1)
    res = cut_lmo(Z, c, a, 0.5)
    assert res.feasible
    torch.testing.assert_close(res.point, t(0.5, 0.5), rtol=0, atol=1e-15)
    assert res.value == pytest.approx(-1.5, abs=1e-15)
    assert res.multiplier == pytest.approx(1.0, abs=1e-15)
    assert res.cut_min == -1.0 and res.gap <= 1e-15

    # cut inactive: the plain LMO vertex, multiplier 0
    res = cut_lmo(Z, c, a, 2.0)
    assert torch.equal(res.point, t(0, 1)) and res.multiplier == 0.0

    # s1 <= -1 touches the ball at the single point (-1, 0)
    res = cut_lmo(Z, c, t(1, 0), -1.0)
    assert res.feasible and torch.equal(res.point, t(-1, 0))
    assert res.value == 1.0

    # s1 <= -1.5 misses the ball: infeasible, the fallback comes back
    fb = t(7, 7)
    res = cut_lmo(Z, c, t(1, 0), -1.5, fallback=fb)
    assert not res.feasible and res.point is fb
    assert res.value == math.inf and res.cut_min == -1.0


def test_l1_ties_hand_example():
    """min -s1 - s2 s.t. ||s||_1 <= 1, s1 <= -1/2 (tie |c_1| = |c_2|).

    Vertices e1, e2 tie for the plain LMO; with s1 <= -1/2 the best is
    s = (-1/2, 1/2) (value 0) on the edge from -e1 to e2. Dual:
    phi(lam) = -max(|lam - 1|, 1) + lam/2 rises (slope 1/2) up to lam = 2,
    where |lam - 1| overtakes 1, and falls after: lam* = 2, phi(2) = 0."""
    res = cut_lmo(L1Ball(2, 1.0), t(-1, -1), t(1, 0), -0.5)
    torch.testing.assert_close(res.point, t(-0.5, 0.5), rtol=0, atol=1e-15)
    assert res.value == pytest.approx(0.0, abs=1e-15)
    assert res.multiplier == pytest.approx(2.0, abs=1e-15)

    # ties in |a| with the cut touching: the face is the edge from -e1 to
    # -e2; c = (-1, 1/2) prefers -e2 (value -1/2)
    res = cut_lmo(L1Ball(2, 1.0), t(-1, 0.5), t(1, 1), -1.0)
    torch.testing.assert_close(res.point, t(0, -1), rtol=0, atol=1e-15)
    assert res.value == -0.5


def test_l1_degenerate_hand_examples():
    Z = L1Ball(3, 2.0)
    # a = 0: the cut is 0 <= beta
    res = cut_lmo(Z, t(1, -3, 2), t(0, 0, 0), 0.0)
    assert res.feasible and torch.equal(res.point, t(0, 2, 0))
    assert not cut_lmo(Z, t(1, -3, 2), t(0, 0, 0), -1e-3).feasible
    # c = 0: every feasible point is optimal (value 0)
    res = cut_lmo(Z, t(0, 0, 0), t(1, 2, -1), -3.0)
    assert res.feasible and res.value == 0.0
    assert dot(t(1, 2, -1), res.point) <= -3.0 + 1e-15
    assert Z.contains(res.point)
    # c = 0 and a = 0
    res = cut_lmo(Z, t(0, 0, 0), t(0, 0, 0), 0.0)
    assert res.feasible and torch.equal(res.point, t(0, 0, 0))


def test_l2_hand_examples():
    B = L2Ball(2, 1.0)
    # min -s1 s.t. ||s|| <= 1, s2 <= -0.6: s = (0.8, -0.6), lam = 3/4
    # (s(lam) = (1, -lam) / sqrt(1 + lam^2) has s2 = -0.6 at lam = 3/4)
    res = cut_lmo(B, t(-1, 0), t(0, 1), -0.6)
    torch.testing.assert_close(res.point, t(0.8, -0.6), rtol=0, atol=1e-12)
    assert res.value == pytest.approx(-0.8, abs=1e-14)
    assert res.multiplier == pytest.approx(0.75, abs=1e-10)
    # min -s2 s.t. s2 <= 0.6: c + lam a = (0, lam - 1) vanishes at lam* = 1
    # (h jumps from -1.6 to 0.4); the combination of both sides is (0, 0.6)
    res = cut_lmo(B, t(0, -1), t(0, 1), 0.6)
    torch.testing.assert_close(res.point, t(0, 0.6), rtol=0, atol=1e-15)
    assert res.value == pytest.approx(-0.6, abs=1e-15)
    assert res.multiplier == pytest.approx(1.0, abs=1e-12)
    # s2 <= -1 touches the disc at (0, -1) only
    res = cut_lmo(B, t(-1, 0), t(0, 1), -1.0)
    assert res.feasible and torch.equal(res.point, t(0, -1))
    assert not cut_lmo(B, t(-1, 0), t(0, 1), -1.0 - 1e-9).feasible


def test_dictionary_hand_example():
    """Product of unit-l2 columns (2 x 2 dictionary) and l1 codes (a = 0).

    G1 = [[-1, 0], [0, -1]] (columns (-1, 0), (0, -1)), G2 = [[0, 0],
    [1, 0]] (the cut only sees column 0), beta = -0.6. Column 0 is the l2
    example above: d_0 = (0.8, -0.6) at lam = 3/4; column 1 has G2_1 = 0 so
    d_1 = lmo((0, -1)) = (0, 1), i.e. -(G1 + lam G2)/||.|| column-wise and
    NOT the projection of (85). The code block is the plain l1 LMO.
    """
    Z = ProductSet([ColumnBalls(2, 2, "l2", 1.0),
                    ColumnBalls(2, 3, "l1", 3.0)])
    G1 = t(-1, 0, 0, -1)            # row-major 2 x 2
    G2 = t(0, 0, 1, 0)
    cX = t(1, -2, 0, 0, 0, 5)       # 2 x 3 codes: columns (1,0),(-2,0),(0,5)
    c = torch.cat([G1, cX])
    a = torch.cat([G2, torch.zeros(6)])
    res = cut_lmo(Z, c, a, -0.6)
    D = res.point[:4].reshape(2, 2)
    torch.testing.assert_close(D[:, 0], t(0.8, -0.6), rtol=0, atol=1e-12)
    torch.testing.assert_close(D[:, 1], t(0, 1), rtol=0, atol=0)
    torch.testing.assert_close(res.point[4:], t(-3, 3, 0, 0, 0, -3),
                               rtol=0, atol=0)
    assert res.value == pytest.approx(-0.8 - 1 - 3 - 6 - 15, rel=1e-14)
    # the search certifies the value; lam is only as accurate as the
    # square root of the gap where phi is smooth and flat at its maximum
    assert res.multiplier == pytest.approx(0.75, abs=1e-6)


def test_simplex_and_box_hand_examples():
    # simplex: min -s1 + s2 s.t. s in simplex, s1 <= 1/4. The best vertex
    # e1 is cut off; at s1 = 1/4 the rest goes to e3 (cost 0, not e2 cost
    # 1): s = (1/4, 0, 3/4), value -1/4. Dual: min(lam - 1, 1, 0) - lam/4
    # is maximal at lam = 1.
    res = cut_lmo(Simplex(3), t(-1, 1, 0), t(1, 0, 0), 0.25)
    torch.testing.assert_close(res.point, t(0.25, 0, 0.75), rtol=0,
                               atol=1e-15)
    assert res.value == pytest.approx(-0.25, abs=1e-15)
    assert res.multiplier == pytest.approx(1.0, abs=1e-15)
    # box [0, 1]^2: min -s1 - s2 s.t. s1 + 2 s2 <= 1: the vertices of the
    # cut box are (0,0), (1,0), (0,1/2); the best is (1, 0), value -1; the
    # dual phi(lam) = min(0, lam - 1) + min(0, 2 lam - 1) - lam equals -1
    # on the whole interval [1/2, 1]: any of those is an optimal multiplier.
    res = cut_lmo(Box(0.0, 1.0, dim=2), t(-1, -1), t(1, 2), 1.0)
    torch.testing.assert_close(res.point, t(1, 0), rtol=0, atol=1e-15)
    assert res.value == pytest.approx(-1.0, abs=1e-15)
    assert 0.5 <= res.multiplier <= 1.0


# --------------------------------------------------------------------------
# misc
# --------------------------------------------------------------------------

def test_float32_inputs_and_types():
    Z = L1Ball(5, 2.0)
    c = torch.tensor([1.0, -2.0, 0.5, 3.0, -1.0])
    a = torch.tensor([0.5, 1.0, -1.0, 2.0, 0.0])
    res64 = cut_lmo(Z, c.double(), a.double(), torch.tensor(-1.0))
    for Zs in (Z, ProductSet([Z])):
        res = cut_lmo(Zs, c, a, -1.0)
        assert res.point.dtype == torch.float32
        assert res.value == pytest.approx(res64.value, rel=1e-12)
    with pytest.raises(ValueError):
        cut_lmo(Z, c[:3], a, 0.0)
    with pytest.raises(TypeError):
        cut_lmo(Z, c.numpy(), a, 0.0)


def test_cut_off_by_rounding_counts_as_touching():
    """beta a few ulps below min_Z <a, s> (rounding in the caller's beta):
    feasible, the face point is returned; a clear miss is infeasible."""
    Z = L1Ball(4, 10.0)
    c, a = t(1, -2, 3, 0.5), t(0.1, 0.2, -0.3, 0.05)
    m = -3.0
    res = cut_lmo(Z, c, a, m * (1 + 4e-16))
    assert res.feasible and torch.equal(res.point, t(0, 0, 10, 0))
    assert not cut_lmo(Z, c, a, m * (1 + 1e-9)).feasible


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda():
    rng = np.random.default_rng(8)
    for kind, shape in [("l1", None), ("columns", DICT_SHAPES[0]),
                        ("simplex", None)]:
        for _ in range(20):
            Z, c, a, beta, _ = make_instance(kind, rng, shape)
            cpu = cut_lmo(Z, c, a, beta)
            gpu = cut_lmo(Z, c.cuda(), a.cuda(), beta)
            assert gpu.feasible == cpu.feasible
            if cpu.feasible:
                assert gpu.point.is_cuda
                assert gpu.value == pytest.approx(cpu.value, rel=1e-10,
                                                  abs=1e-12)
