"""Certified reference values ``g*`` and ``f*`` of the simple-bilevel problems.

Each value is computed once per dataset instance with CVXPY (Clarabel, tight
tolerances, data rescaled to O(1)), polished by exact linear algebra, and
checked by an independent certificate; the result is cached on disk
(:func:`cached_references`).

What the accuracies mean
------------------------
``g_star`` is g at a point of Z (an achievable value) and ``g_star_accuracy``
bounds ``g_star - g*``: a Lagrange dual bound LB <= g* (weak duality, valid
for any dual point, here the scaled residual of the candidate; at scale 1 it
is the Frank-Wolfe gap max_{s in Z} <grad g(z), z - s>, computed with the
set's ``lmo``; the optimal scale also certifies g* >= 0 when the residual is
tiny) gives ``g* in [LB, g_star]``. Added to it: a worst-case floating-point
bound on evaluating g and LB (gamma_k = k u / (1 - k u), Higham), and a floor
``1e-14 * max(1, |g_star|)``.

``f_star`` (least squares only) is f at a feasible point of the exact
lower-level solution set. For a least-squares lower level the predictions
y = A z of all lower-level solutions coincide (the loss is strictly convex in
A z), so the solution set is ``P = {z in Z : A z = A z_g}`` with z_g the
certified lower-level point, written ``Q^T z = Q^T z_g`` with Q an
orthonormal basis of the row space of A (numerical rank: numpy's default
tolerance). When the lower-level ball constraint is active, P lies in one
face of Z and is written on that face (signs and support fixed), which keeps
it well posed. ``f_star_accuracy`` bounds ``|f_star - f*|`` as the sum of

* ``f_star - LB``, LB = f(x) + min_{s in P} <grad f(x), s - x>, which is
  <= f* for convex f *even for an x slightly outside P*; the linear minimum
  over P is an LP solved by the HiGHS dual simplex (scipy, independent of
  CVXPY) and taken from its multipliers through weak duality (valid for any
  multiplier, so an inexact LP cannot make the bound optimistic); for an l2
  ball it is in closed form;
* the infeasibility of the reported point, to first order:
  ||grad f||_2 ||Q^T x - h||_2 (distance to the affine set, Q orthonormal)
  plus ||grad f||_inf times the ball excess;
* the sensitivity to the lower level, to first order: ||mu|| ||dh|| with mu
  the LP multiplier of ``Q^T z = h`` and dh a bound on how far h is from the
  exact lower-level value: computed exactly when the unconstrained
  least-squares minimum is attained in Z (then A z* = P_A b), otherwise from
  strong convexity of g in A z: c/n ||A z_g - A z*||^2 <= g(z_g) - g*;
* the same floating-point and floor terms as for g.

``f_spread`` = f(v) - f_star with v the maximizer of <grad f(x_f), .> over P
(an LP vertex): f varies over the solution set by at least that much, so the
instance is genuinely bilevel when ``f_spread >> f_star_accuracy``. It is 0
when the lower-level solution is unique.

Everything here is NumPy float64 on the CPU; the problem's tensors are only
read.
"""
import hashlib
import json
import math
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from benchmark_utils.sets import ColumnBalls, L1Ball, L2Ball

CACHE_ENV = "BILEVEL_REFERENCE_CACHE"
EPS = np.finfo(np.float64).eps
TINY = np.finfo(np.float64).tiny
RELATIVE_FLOOR = 1e-14
ACTIVE_SET_MAX_ITER = 50

CLARABEL_TIGHT = dict(tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12,
                      tol_ktratio=1e-10, max_iter=500)


# --------------------------------------------------------------------------
# disk cache
# --------------------------------------------------------------------------

def reference_cache_dir():
    """Folder of the cached references.

    ``$BILEVEL_REFERENCE_CACHE`` if set; else benchopt's data path
    ``references`` of the running benchmark (``benchopt run``, or any code
    that created a ``benchopt.benchmark.Benchmark``); else
    ``<repository>/data/references`` (scripts, pytest without a benchmark).
    """
    override = os.environ.get(CACHE_ENV)
    if override:
        return Path(override).expanduser()
    from benchopt.benchmark import get_running_benchmark
    if get_running_benchmark() is not None:
        from benchopt.config import get_data_path
        return Path(get_data_path("references"))
    return Path(__file__).resolve().parents[1] / "data" / "references"


def _params_digest(params):
    text = json.dumps(params, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def cached_references(kind, params, compute):
    """The references of one instance, computed once and cached on disk.

    Parameters
    ----------
    kind : str
        Family name, used as the file prefix (``"regression"``, ...).
    params : dict
        Every parameter that defines the instance (JSON-serialisable); the
        cache key is the sha256 of ``json.dumps(params, sort_keys=True)``.
    compute : callable
        ``compute() -> dict`` of floats / None / strings / small lists,
        called on a cache miss.

    A cached file is used only if its stored ``params`` equal ``params``
    (after a JSON round trip); it is written atomically (temporary file in
    the same folder, then ``os.replace``).
    """
    params = json.loads(json.dumps(params, sort_keys=True))
    folder = reference_cache_dir()
    path = folder / f"{kind}-{_params_digest(params)}.json"
    if path.exists():
        try:
            stored = json.loads(path.read_text())
        except (OSError, ValueError):
            stored = None
        if isinstance(stored, dict) and stored.get("params") == params:
            return stored["references"]
    references = compute()
    folder.mkdir(parents=True, exist_ok=True)
    payload = json.dumps({"params": params, "references": references},
                         sort_keys=True, indent=1, allow_nan=True)
    with tempfile.NamedTemporaryFile("w", dir=folder, prefix=f".{kind}-",
                                     suffix=".tmp", delete=False) as tmp:
        tmp.write(payload)
    os.replace(tmp.name, path)
    return references


# --------------------------------------------------------------------------
# small helpers
# --------------------------------------------------------------------------

def _gamma(k):
    """Higham's gamma_k = k u / (1 - k u): worst-case error of a k-term sum."""
    return k * EPS / (1.0 - k * EPS)


def _numpy(array):
    if torch.is_tensor(array):
        return array.detach().cpu().numpy().astype(np.float64)
    return np.asarray(array, dtype=np.float64)


def _set_call(method, point):
    return _numpy(method(torch.as_tensor(point, dtype=torch.float64)))


def _ball(Z):
    """(norm, radius) of a supported lower-level set, else a clear error."""
    if isinstance(Z, L1Ball):
        return "l1", float(Z.radius)
    if isinstance(Z, L2Ball):
        return "l2", float(Z.radius)
    raise ValueError(
        f"least_squares_references supports Z = L1Ball or L2Ball, got {Z!r}")


def _norm(kind, x):
    return float(np.abs(x).sum()) if kind == "l1" else float(np.linalg.norm(x))


def _solve_cvxpy(problem):
    """Clarabel at tight tolerances, then at its defaults if that fails."""
    import cvxpy as cp
    for options in (CLARABEL_TIGHT, {}):
        try:
            problem.solve(solver=cp.CLARABEL, **options)
        except cp.error.SolverError:
            continue
        if problem.status in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
            return problem.status
    return str(problem.status)


def _row_space(M):
    """Thin SVD of M with numpy's default numerical rank.

    Returns (U_k, s_k, V_k, V_null): M ~ U_k diag(s_k) V_k^T, V_null an
    orthonormal basis of the numerical null space.
    """
    U, s, Vt = np.linalg.svd(M, full_matrices=True)
    tol = (s.max() * max(M.shape) * EPS) if s.size else 0.0
    k = int((s > tol).sum())
    return U[:, :k], s[:k], Vt[:k].T, Vt[k:].T


def _lstsq(M, q):
    return np.linalg.lstsq(M, q, rcond=None)[0]


def _constrained_lstsq(M, q, C, e):
    """argmin ||M x - q|| s.t. C x = e (min-norm where not unique)."""
    x0 = _lstsq(C, e)
    x0 = x0 + _lstsq(C, e - C @ x0)          # one step of refinement
    _, _, _, N = _row_space(C)
    if N.shape[1] == 0:
        return x0
    t = _lstsq(M @ N, q - M @ x0)
    t = t + _lstsq(M @ N, q - M @ (x0 + N @ t))
    return x0 + N @ t


def _ball_lstsq(M, q, radius):
    """argmin ||M t - q|| s.t. ||t||_2 <= radius (secular equation).

    Min-norm least squares if it fits, else t(lam) = (M^T M + lam I)^-1 M^T q
    with ||t(lam)|| = radius found by Brent's method (the convex
    trust-region problem has no hard case for lam > 0).
    """
    from scipy.optimize import brentq
    U, s, V, _ = _row_space(M)
    beta = U.T @ q
    t_ls = V @ (beta / s)
    if np.linalg.norm(t_ls) <= radius:
        return t_ls

    def excess(lam):
        return np.linalg.norm(s * beta / (s ** 2 + lam)) - radius

    high = np.linalg.norm(s * beta) / radius
    lam = brentq(excess, 0.0, high, xtol=1e-300, rtol=4 * EPS, maxiter=500)
    return V @ (s * beta / (s ** 2 + lam))


def _active_set_lstsq(M, q, E, e, v0, max_iter=None):
    """Lawson-Hanson active set for min ||M v - q|| s.t. v >= 0, E v = e.

    Warm-started from ``v0`` (its positive entries are the first passive
    set; it needs to be feasible only approximately: a step back towards an
    exactly feasible subproblem solution shrinks its infeasibility). Each
    step solves the equality-constrained least squares on the passive set
    exactly (SVD), so a correct passive set gives the solution to rounding.
    Returns (v, converged): the last iterate (the caller certifies it).
    """
    m = M.shape[1]
    v = np.where(v0 > 0, v0, 0.0)
    passive = v > 0
    # a polish, not the reference itself (every candidate is certified): a
    # warm start from the CVXPY support converges in a few steps or not at
    # all, and each step is an SVD, so the budget stays small
    max_iter = max_iter or ACTIVE_SET_MAX_ITER
    converged = False
    for _ in range(max_iter):
        P = np.flatnonzero(passive)
        if P.size == 0:
            break
        s = np.zeros(m)
        s[P] = _constrained_lstsq(M[:, P], q, E[:, P], e)
        if (s[P] > 0).all():
            v = s
            residual = M @ v - q
            y = _lstsq(E[:, P].T, -(M[:, P].T @ residual))
            reduced = M.T @ residual + E.T @ y
            scale = (np.abs(M).T @ np.abs(residual)).max() + (
                np.abs(E).T @ np.abs(y)).max()
            reduced[passive] = np.inf
            i = int(np.argmin(reduced))
            if reduced[i] >= -1e-15 * max(scale, TINY):
                converged = True
                break
            passive[i] = True
        else:
            negative = P[s[P] <= 0]
            alpha = np.min(v[negative] / (v[negative] - s[negative]))
            v = v + alpha * (s - v)
            passive &= v > 0
            passive[negative[np.argmin(
                v[negative] / np.maximum(v[negative] - s[negative], TINY))]] \
                = False
            v[~passive] = 0.0
    return v, converged


# --------------------------------------------------------------------------
# the dual certificate of a convex least-squares value
# --------------------------------------------------------------------------

def _ls_bracket(A, b, weight, z, linear_min, ball_support):
    """Bracket of min_{s in S} weight * ||A s - b||^2 from one point z.

    ``linear_min(c)`` returns (a lower bound on min_{s in S} <c, s>, its
    rounding); ``ball_support(v)`` is an upper bound on max_{s in S} <v, s>
    for v >= 0 (the support of a ball containing S).

    Weak duality: ||A s - b||^2 >= 2 <t, A s - b> - ||t||^2 for every t, so
    with t = alpha * rho, rho the computed residual A z - b,

        min_S g >= -alpha^2 g~ - alpha beta,
        beta = 2 weight <rho, b> - min_{s in S} <2 weight A^T rho, s>,

    valid for any alpha (alpha = 1 is the Frank-Wolfe gap bound
    g(z) - max_s <grad g(z), z - s>); the best alpha >= 0 is used. Because
    the bound holds for any rho, only its evaluation is subject to rounding,
    not the error of rho; the value g(z) itself is. Rounding uses Higham's
    worst-case gamma_k.

    Returns dict(value, lower, rounding, grad) with value = g(z) as computed
    and [lower - rounding, value + rounding] containing min_S g when z in S.
    """
    n, d = A.shape
    residual = A @ z - b
    grad = 2.0 * weight * (A.T @ residual)
    value = weight * float(residual @ residual)
    support_min, linear_rounding = linear_min(grad)
    abs_res = np.abs(residual)
    beta = 2.0 * weight * float(residual @ b) - support_min
    if beta >= 0.0 or value <= 0.0:
        alpha, lower = 0.0, 0.0
    else:
        alpha = -beta / (2.0 * value)
        lower = beta * beta / (4.0 * value)
    # g(z) from the computed residual: error of rho itself
    err_res = _gamma(d + 1) * (np.abs(A) @ np.abs(z) + np.abs(b))
    err_value = (weight * (2.0 * np.linalg.norm(abs_res) * np.linalg.norm(
        err_res) + float(err_res @ err_res)) + _gamma(n) * value)
    # the dual bound at the computed rho: evaluation only
    err_grad = _gamma(n) * 2.0 * weight * (np.abs(A).T @ abs_res)
    err_beta = (_gamma(n) * 2.0 * weight * float(abs_res @ np.abs(b))
                + ball_support(err_grad) + _gamma(d) * abs(support_min)
                + linear_rounding)
    err_lower = alpha * alpha * _gamma(n) * value + alpha * err_beta
    return dict(value=value, lower=lower, rounding=err_value + err_lower,
                grad=grad)


def relative_floor(value):
    """The smallest accuracy ever reported for a reference of this size."""
    return RELATIVE_FLOOR * max(1.0, abs(value))


def _at_floor(bracket):
    """Whether a certified bracket is already as tight as ever reported."""
    gap = bracket["value"] - bracket["lower"] + bracket["rounding"]
    return gap <= relative_floor(bracket["value"])


# --------------------------------------------------------------------------
# least squares: the lower level
# --------------------------------------------------------------------------

class _LeastSquaresData:
    """NumPy copy of a LeastSquaresBilevel problem, with its derived data."""

    def __init__(self, problem):
        self.kind, self.radius = _ball(problem.Z)
        self.Z = problem.Z
        self.A = _numpy(problem.A_lower)
        self.b = _numpy(problem.b_lower)
        self.A_f = _numpy(problem.A_upper)
        self.b_f = _numpy(problem.b_upper)
        self.n, self.dim = self.A.shape
        self.w = problem.c_lower / self.n
        self.w_f = problem.c_upper / self.A_f.shape[0]
        self.U, self.s, self.Q, self.N = _row_space(self.A)
        self.rank = self.s.size

    def project(self, z):
        return _set_call(self.Z.project, z)

    def support_min(self, c):
        """min_{s in Z} <c, s> by the set's LMO."""
        return float(c @ _set_call(self.Z.lmo, c))

    def ball_support(self, v):
        """max_{s in Z} <v, s> (Z is a symmetric ball)."""
        return -self.support_min(v)

    def certify_lower(self, z):
        """Bracket of g* from z in Z (see :func:`_ls_bracket`)."""
        result = _ls_bracket(self.A, self.b, self.w, z,
                             lambda c: (self.support_min(c), 0.0),
                             self.ball_support)
        # z may exceed the ball by rounding after a projection
        excess = max(0.0, _norm(self.kind, z) - self.radius)
        result["rounding"] += self.ball_support(np.abs(result["grad"])) * (
            excess / self.radius)
        return result

    def pinv(self, y):
        """A^+ y through the numerical-rank SVD."""
        return self.Q @ ((self.U.T @ y) / self.s)


def _lower_candidates(data, z_cvx):
    """Polished lower-level points in Z (name -> point)."""
    A, b, r, d = data.A, data.b, data.radius, data.dim
    candidates = {"cvxpy": data.project(z_cvx)}
    # (i) unconstrained least squares: project onto {A z = P_A b}, refined
    z = z_cvx.copy()
    for _ in range(3):
        z = z - data.pinv(A @ z - b)
    if _norm(data.kind, z) <= r:
        candidates["least_squares"] = z
    if any(_at_floor(data.certify_lower(z)) for z in candidates.values()):
        return candidates           # certified to the floor: nothing to polish
    if data.kind == "l1":
        # (ii) ball constraint active: z = v+ - v-, v >= 0, sum(v) = r, by
        # the active-set method from the CVXPY point's support
        M = np.hstack([A, -A])
        v_cvx = np.concatenate([np.maximum(z_cvx, 0), np.maximum(-z_cvx, 0)])
        for tau in (1e-6, 1e-9):
            v0 = np.where(v_cvx > tau * max(v_cvx.max(), TINY), v_cvx, 0.0)
            if not v0.any():
                continue
            v0 *= r / v0.sum()
            v, converged = _active_set_lstsq(M, b, np.ones((1, 2 * d)),
                                             np.array([r]), v0)
            candidates[f"active_set_{tau:g}"] = data.project(v[:d] - v[d:])
            if converged:
                break
    else:
        # (ii) the ball-constrained least squares by its secular equation
        try:
            candidates["secular"] = data.project(_ball_lstsq(A, b, r))
        except ValueError:
            pass
    return candidates


def _solve_lower(data):
    """CVXPY solve of min_{z in Z} g, polished and certified."""
    import cvxpy as cp
    A, b, r, d = data.A, data.b, data.radius, data.dim
    # z = r u with u in the unit ball; A, b divided by a common scale
    scale = max(np.abs(b).max(), r * np.abs(A).max(), TINY)
    A_s, b_s = (r / scale) * A, b / scale
    if data.kind == "l1":
        v = cp.Variable(2 * d, nonneg=True)
        u = v[:d] - v[d:]
        constraints = [cp.sum(v) <= 1.0]
    else:
        u = v = cp.Variable(d)
        constraints = [cp.norm(v, 2) <= 1.0]
    problem = cp.Problem(
        cp.Minimize(cp.sum_squares(A_s @ u - b_s) / A.shape[0]), constraints)
    status = _solve_cvxpy(problem)
    z_cvx = np.zeros(d) if v.value is None else r * np.asarray(u.value)
    candidates = _lower_candidates(data, z_cvx)
    certified = {name: data.certify_lower(z)
                 for name, z in candidates.items()}
    best = min(certified, key=lambda name: certified[name]["value"])
    g_star = certified[best]["value"]
    lower = max(c["lower"] - c["rounding"] for c in certified.values())
    raw = max(g_star - lower + certified[best]["rounding"], 0.0)
    return dict(status=status, candidates=candidates, best=best,
                g_star=g_star, raw_accuracy=raw,
                accuracy=max(raw, relative_floor(g_star)))


# --------------------------------------------------------------------------
# least squares: the lower-level solution set P and linear minimization on it
# --------------------------------------------------------------------------

class _L1Solutions:
    """The lower-level solution set for an l1 ball, as {v >= 0 : G v = h,
    1^T v = r} with x = B v.

    ``"interior"``: the unconstrained least-squares minimum is attained in Z,
    P = {x : ||x||_1 <= r, Q^T x = h}; v = (x+, x-, slack), B = [I, -I, 0],
    G = [Q^T, -Q^T, 0].

    ``"face"``: the ball constraint is active (multiplier > 0), every
    solution has its support in the equicorrelation set E with signs sigma:
    P = {x : x_E = sigma * v, v >= 0, sum(v) = r, G v = h, x = 0 off E},
    G = Q_E^T with Q_E an orthonormal basis of the row space of
    A_E diag(sigma).
    """

    def __init__(self, data, z_g, mode, support=None, signs=None):
        self.data, self.mode, self.radius = data, mode, data.radius
        d = data.dim
        if mode == "interior":
            self.B = np.hstack([np.eye(d), -np.eye(d), np.zeros((d, 1))])
            self.G = self.data.Q.T @ self.B
        else:
            self.support, self.signs = support, signs
            self.B = np.zeros((d, support.size))
            self.B[support, np.arange(support.size)] = signs
            _, s_E, Q_E, _ = _row_space(data.A @ self.B)
            self.G, self.s_min = Q_E.T, s_E.min()
        self.h = self.G @ self.to_v(z_g)
        self.E = np.vstack([self.G, np.ones((1, self.G.shape[1]))])
        self.e = np.append(self.h, self.radius)
        self.dimension = self.G.shape[1] - _row_space(self.E)[1].size

    # x <-> v
    def to_x(self, v):
        return self.B @ v

    def to_v(self, x):
        if self.mode == "interior":
            slack = max(self.radius - np.abs(x).sum(), 0.0)
            return np.concatenate([np.maximum(x, 0), np.maximum(-x, 0),
                                   [slack]])
        return self.signs * x[self.support]

    def repair(self, x, z_g):
        """A point of P up to rounding (affine projection, then a shrink)."""
        if self.mode == "interior":
            Q = self.data.Q
            x = x - Q @ (Q.T @ x - self.h)
            norm_x, norm_g = np.abs(x).sum(), np.abs(z_g).sum()
            if norm_x > self.radius and norm_g < self.radius:
                t = (self.radius - norm_g) / (norm_x - norm_g)
                x = z_g + t * (x - z_g)
            return x
        v = np.maximum(self.to_v(x), 0.0)
        v = v - _lstsq(self.E, self.E @ v - self.e)
        return self.to_x(v)

    def infeasibility(self, x, grad):
        """First-order bound on f(proj_P x) - f(x)."""
        if self.mode == "interior":
            affine = np.linalg.norm(self.data.Q.T @ x - self.h)
            excess = max(0.0, np.abs(x).sum() - self.radius)
        else:
            v = self.signs * x[self.support]
            affine = np.linalg.norm(self.G @ v - self.h)
            outside = np.abs(x).sum() - np.abs(x[self.support]).sum()
            excess = (outside + np.abs(np.minimum(v, 0)).sum()
                      + abs(v.sum() - self.radius))
        return np.linalg.norm(grad) * affine + np.abs(grad).max() * excess

    def cvxpy_parts(self):
        """(variable, x_hat expression, constraints) in units of r."""
        import cvxpy as cp
        if self.mode == "interior":
            # x form: fewer variables than the split, faster in Clarabel
            x = cp.Variable(self.data.dim)
            return x, x, [cp.norm1(x) <= 1.0,
                          self.data.Q.T @ x == self.h / self.radius]
        v = cp.Variable(self.G.shape[1], nonneg=True)
        return v, self.B @ v, [cp.sum(v) == 1.0,
                               self.G @ v == self.h / self.radius]

    def active_set(self, A_f, b_f, x):
        """Exact minimizer of f over P from the support of x (active set)."""
        v0 = self.to_v(x)
        v0 = np.where(v0 > 1e-6 * max(v0.max(), TINY), v0, 0.0)
        v, _ = _active_set_lstsq(A_f @ self.B, b_f, self.E, self.e, v0)
        return self.to_x(v)

    def dual_bound(self, c, v_support):
        """Lower bound on min_{x in P} <c, x> by weak duality.

        For any mu: min_P <c, x> >= mu^T h + r min_j (B^T c - G^T mu)_j.
        mu solves the reduced-cost equations on ``v_support`` (the support
        of a minimizer, where the reduced costs are equal), so the bound is
        tight when the support is right. Returns (bound, mu, rounding).
        """
        c_v = self.B.T @ c
        S = np.flatnonzero(v_support)
        if S.size == 0:
            mu = np.zeros(self.G.shape[0])
        else:
            rows = np.hstack([self.G[:, S].T, np.ones((S.size, 1))])
            mu = _lstsq(rows, c_v[S])[:-1]
        reduced = c_v - self.G.T @ mu
        bound = float(mu @ self.h) + self.radius * reduced.min()
        rounding = _gamma(self.G.shape[0] + 2) * (
            float(np.abs(mu) @ np.abs(self.h)) + self.radius * float(
                (np.abs(c_v) + np.abs(self.G).T @ np.abs(mu)).max()))
        return bound, mu, rounding

    def linear_min(self, c):
        """(lower bound on min_{x in P} <c, x>, multiplier, x_min, rounding).

        An exact LP solve by the HiGHS dual simplex (scipy), in units of r
        and ||c||_inf; the bound is the weak-duality bound of
        :meth:`dual_bound` at multipliers refined on the LP's optimal
        support, or at HiGHS's own multipliers if better.
        """
        from scipy.optimize import linprog
        c_scale = max(np.abs(c).max(), TINY)
        c_v = (self.B.T @ c) / c_scale
        result = linprog(c_v, A_eq=self.E, b_eq=self.e / self.radius,
                         bounds=(0, None), method="highs-ds",
                         options=dict(primal_feasibility_tolerance=1e-10,
                                      dual_feasibility_tolerance=1e-10))
        if result.x is None:
            return -math.inf, np.zeros(self.G.shape[0]), None, 0.0
        v_min = self.radius * result.x
        best = self.dual_bound(c, v_min > 1e-9 * self.radius)
        mu = np.asarray(result.eqlin.marginals[:self.G.shape[0]]) * c_scale
        reduced = self.B.T @ c - self.G.T @ mu
        highs = float(mu @ self.h) + self.radius * reduced.min()
        if highs - best[2] > best[0] - best[2]:
            best = (highs, mu, best[2])
        return best[0], best[1], self.to_x(v_min), best[2]


class _L2Solutions:
    """P = {x : ||x||_2 <= r, Q^T x = h}, the solution set of an l2 ball whose
    constraint is inactive: a ball of radius sqrt(r^2 - ||h||^2) centred at
    Q h in the null space of A (closed-form linear minimization)."""

    mode = "interior"

    def __init__(self, data, z_g):
        self.data, self.radius = data, data.radius
        self.Q, self.N = data.Q, data.N
        self.h = self.Q.T @ z_g
        self.inner = math.sqrt(max(self.radius ** 2 - self.h @ self.h, 0.0))
        self.dimension = self.N.shape[1]

    def to_v(self, x):
        return x

    def dual_bound(self, c, v_support=None):
        bound, mu, _, rounding = self.linear_min(c)
        return bound, mu, rounding

    def active_set(self, A_f, b_f, x):
        """The exact minimizer: a ball-constrained least squares in the
        null space of A (secular equation)."""
        x0 = self.Q @ self.h
        t = _ball_lstsq(A_f @ self.N, b_f - A_f @ x0, self.inner)
        return x0 + self.N @ t

    def repair(self, x, z_g):
        x = x - self.Q @ (self.Q.T @ x - self.h)
        norm_x, norm_g = np.linalg.norm(x), np.linalg.norm(z_g)
        if norm_x > self.radius and norm_g < self.radius:
            # largest t with ||z_g + t (x - z_g)|| <= r
            e = x - z_g
            a, bq, cq = e @ e, 2 * (z_g @ e), norm_g ** 2 - self.radius ** 2
            t = (-bq + math.sqrt(bq * bq - 4 * a * cq)) / (2 * a)
            x = z_g + min(t, 1.0) * e
        return x

    def infeasibility(self, x, grad):
        affine = np.linalg.norm(self.Q.T @ x - self.h)
        excess = max(0.0, np.linalg.norm(x) - self.radius)
        return np.linalg.norm(grad) * (affine + excess)

    def cvxpy_parts(self):
        import cvxpy as cp
        x = cp.Variable(self.Q.shape[0])
        return x, x, [cp.norm(x, 2) <= 1.0,
                      self.Q.T @ x == self.h / self.radius]

    def linear_min(self, c):
        c_null = self.N @ (self.N.T @ c)
        norm_null = np.linalg.norm(c_null)
        value = float(c @ (self.Q @ self.h)) - self.inner * norm_null
        x_min = self.Q @ self.h - self.inner * c_null / max(norm_null, TINY)
        # d value / d h, the multiplier of Q^T x = h
        mu = self.Q.T @ c + self.h * norm_null / max(self.inner, TINY)
        rounding = _gamma(2 * c.size) * self.radius * np.linalg.norm(c) * 4
        return value, mu, x_min, rounding


# --------------------------------------------------------------------------
# least squares: the upper level on the solution set
# --------------------------------------------------------------------------

def _certify_upper(data, P, x, exact_lp=False):
    """Bracket of f* over P from x near P (see :func:`_ls_bracket`), with
    the infeasibility of x and the multiplier of ``Q^T x = h``.

    The linear minimum over P comes from weak duality at multipliers fitted
    on the support of x (closed form) or, with ``exact_lp``, from an LP.
    """
    found = {}

    def linear_min(c):
        if exact_lp:
            bound, mu, _, rounding = P.linear_min(c)
        else:
            bound, mu, rounding = P.dual_bound(c, P.to_v(x) > 0)
        found["mu"] = mu
        return bound, rounding

    result = _ls_bracket(data.A_f, data.b_f, data.w_f, x, linear_min,
                         data.ball_support)
    result["infeasibility"] = P.infeasibility(x, result["grad"])
    result["mu"] = found["mu"]
    return result


def _upper_on_singleton(data, z_g, distance):
    """f* = f(z*) for a unique lower-level solution z*, ||z_g - z*|| <= distance."""
    A_f, b_f, w_f = data.A_f, data.b_f, data.w_f
    residual = A_f @ z_g - b_f
    value = w_f * float(residual @ residual)
    grad = 2.0 * w_f * (A_f.T @ residual)
    curvature = w_f * np.linalg.norm(A_f, 2) ** 2
    error = np.linalg.norm(grad) * distance + curvature * distance ** 2
    error += _gamma(data.dim + 1) * w_f * 2 * np.linalg.norm(residual) * (
        np.linalg.norm(np.abs(A_f) @ np.abs(z_g) + np.abs(b_f)))
    return dict(f_star=value,
                f_star_accuracy=max(error, relative_floor(value)),
                f_spread=0.0, f_status="unique lower-level solution")


def _solution_set(data, lower):
    """The lower-level solution set.

    Returns (P, z_g, bound, mode): P None for a single point z* (then
    ``bound`` >= ||z_g - z*||), else ``bound`` >= ||h - h*|| with h* the
    exact right-hand side of P's equations.
    """
    A, b, r = data.A, data.b, data.radius
    candidates = lower["candidates"]
    if "least_squares" in candidates:
        # the unconstrained minimum is attained in Z: A z* = P_A b exactly
        z_g = candidates["least_squares"]
        residual = A @ z_g - b
        err = np.linalg.norm(_gamma(data.dim + 1) * (
            np.abs(A) @ np.abs(z_g) + np.abs(b))) / data.s.min()
        if data.rank == data.dim:
            return None, z_g, np.linalg.norm(data.pinv(residual)) + err, \
                "interior"
        dh = np.linalg.norm((data.U.T @ residual) / data.s) + err
        if data.kind == "l1":
            return _L1Solutions(data, z_g, "interior"), z_g, dh, "interior"
        return _L2Solutions(data, z_g), z_g, dh, "interior"
    # the ball constraint is active; strong convexity of g in A z:
    # c/n ||A (z_g - z*)||^2 <= g(z_g) - g*
    z_g = candidates[lower["best"]]
    prediction_gap = math.sqrt(lower["raw_accuracy"] / data.w)
    grad = 2.0 * data.w * (A.T @ (A @ z_g - b))
    if data.kind == "l2":
        # grad g(z*) = -lam z*, and g(z) - g* >= lam/2 ||z - z*||^2 in Z
        lam = np.linalg.norm(grad) / r
        return None, z_g, math.sqrt(2 * lower["raw_accuracy"] / lam), "face"
    lam = np.abs(grad).max()
    support = np.flatnonzero(np.abs(grad) >= lam * (1 - 1e-8))
    signs = -np.sign(grad[support])
    P = _L1Solutions(data, z_g, "face", support, signs)
    outside = np.abs(z_g).sum() - np.abs(z_g[support]).sum()
    gap = prediction_gap + np.linalg.norm(A, 2) * outside
    if P.dimension == 0:
        return None, z_g, gap / P.s_min + outside, "face"
    return P, z_g, gap / P.s_min, "face"


def _solve_upper(data, P, z_g, dh):
    """CVXPY solve of min_P f, polished by the active set and certified."""
    import cvxpy as cp
    A_f, b_f, r = data.A_f, data.b_f, data.radius
    scale = max(np.abs(b_f).max(), r * np.abs(A_f).max(), TINY)
    variable, x_hat, constraints = P.cvxpy_parts()
    problem = cp.Problem(cp.Minimize(cp.sum_squares(
        (r / scale) * A_f @ x_hat - b_f / scale) / A_f.shape[0]), constraints)
    status = _solve_cvxpy(problem)
    x_cvx = (z_g.copy() if variable.value is None
             else r * np.asarray(x_hat.value))
    candidates = {"cvxpy": x_cvx}
    try:
        candidates["active_set"] = P.active_set(A_f, b_f, P.repair(x_cvx, z_g))
    except (ValueError, np.linalg.LinAlgError):
        pass
    if P.mode == "interior" and data.N.shape[1]:
        # the minimizer over the affine set, if it lies in the ball
        t = _lstsq(A_f @ data.N, b_f - A_f @ z_g)
        x = z_g + data.N @ t
        if _norm(data.kind, x) <= r:
            candidates["affine"] = x
    candidates = {name: P.repair(x, z_g) for name, x in candidates.items()}
    certified = {name: _certify_upper(data, P, x)
                 for name, x in candidates.items()}
    best = min(certified, key=lambda k: certified[k]["value"]
               + certified[k]["infeasibility"])
    # an exact LP for the chosen point: independent of the support guess
    top = certified[best] = _certify_upper(data, P, candidates[best],
                                           exact_lp=True)
    lower = max(c["lower"] - c["rounding"] for c in certified.values())
    f_star = top["value"]
    sensitivity = float(np.linalg.norm(top["mu"]) * dh)
    raw = (f_star + top["infeasibility"] - lower + top["rounding"]
           + sensitivity)
    # spread of f over P: the LP vertex maximizing the linearization
    _, _, x_max, _ = P.linear_min(-top["grad"])
    f_spread = 0.0
    if x_max is not None:
        residual = A_f @ x_max - b_f
        f_spread = max(data.w_f * float(residual @ residual) - f_star, 0.0)
    return dict(f_star=f_star,
                f_star_accuracy=max(raw, relative_floor(f_star)),
                f_spread=f_spread, f_status=status, f_point=best,
                f_lower_level_sensitivity=sensitivity)


def least_squares_references(problem):
    """Certified g*, f* of a :class:`LeastSquaresBilevel` (Z an l1 or l2 ball).

    Returns a dict (JSON-serialisable, floats and strings):

    * ``g_star``, ``g_star_accuracy``: g* within [g_star - accuracy, g_star];
    * ``f_star``, ``f_star_accuracy``: |f_star - f*| <= accuracy, f* the
      minimum of f over the exact lower-level solution set (see the module
      docstring for the terms);
    * ``f_spread``: f varies over the solution set by at least this much
      (0 for a unique lower-level solution);
    * ``lower_level``: ``"interior"`` (the unconstrained least-squares
      minimum lies in Z) or ``"face"`` (the ball constraint is active);
    * ``rank_lower``, ``solution_set_dim`` (the dimension of the affine
      hull's null-space part, 0 for a unique solution), solver statuses,
      the chosen polished points and the wall-clock time.
    """
    start = time.perf_counter()
    data = _LeastSquaresData(problem)
    lower = _solve_lower(data)
    P, z_g, dh, mode = _solution_set(data, lower)
    if P is None:
        upper = _upper_on_singleton(data, z_g, dh)
        set_dim = 0
    else:
        upper = _solve_upper(data, P, z_g, dh)
        set_dim = int(P.dimension)
    references = dict(
        g_star=float(lower["g_star"]),
        g_star_accuracy=float(lower["accuracy"]),
        f_star=float(upper["f_star"]),
        f_star_accuracy=float(upper["f_star_accuracy"]),
        f_spread=float(upper["f_spread"]),
        lower_level=mode, rank_lower=int(data.rank),
        solution_set_dim=set_dim,
        g_status=str(lower["status"]), g_point=lower["best"],
        f_status=str(upper["f_status"]), f_point=upper.get("f_point"),
        f_lower_level_sensitivity=float(
            upper.get("f_lower_level_sensitivity", 0.0)),
    )
    references["seconds"] = time.perf_counter() - start
    return references


# --------------------------------------------------------------------------
# dictionary learning: the lower level only (f is nonconvex, no f*)
# --------------------------------------------------------------------------

def accelerated_projected_gradient(x, grad, project, lipschitz, n_iter):
    """FISTA (Beck & Teboulle 2009) from ``x`` with step 1/lipschitz: the
    cheap polish of a CVXPY point before it is certified (numpy or torch)."""
    y, x_prev, t = x, x, 1.0
    for _ in range(n_iter):
        x_next = project(y - grad(y) / lipschitz)
        t_next = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * t * t))
        y = x_next + ((t - 1.0) / t_next) * (x_next - x_prev)
        x_prev, t = x_next, t_next
    return x_prev


def dictionary_references(problem, polish_iter=3000):
    """Certified g* of a :class:`DictionaryLearningBilevel` (no f*: f is nonconvex).

    ``g(D) = 1/(2n) ||A - C D^T||_F^2`` over unit-l2 columns (C the padded
    old codes) is a convex QP: CVXPY (Clarabel, tight) solves it, FISTA
    polishes the projected solution, and the dual bound of
    :func:`_ls_bracket` (the least-squares form in vec(D), linear minimum
    by the column-ball LMO) certifies ``g_star - g* <= g_star_accuracy``.
    """
    import cvxpy as cp
    start = time.perf_counter()
    A = _numpy(problem.A_old)               # (n, m), samples as rows
    C = _numpy(problem.codes_old)           # (n, q)
    n, m = A.shape
    q = C.shape[1]
    balls = ColumnBalls(m, q, "l2", 1.0)

    def project(D):
        return _set_call(balls.project, D.reshape(-1)).reshape(m, q)

    def grad(D):
        return -((A - C @ D.T).T @ C) / n

    scale = max(np.abs(A).max(), TINY)
    D_var = cp.Variable((m, q))
    problem_cvx = cp.Problem(
        cp.Minimize(cp.sum_squares(A.T / scale - D_var @ C.T / scale) / n),
        [cp.norm(D_var, 2, axis=0) <= 1.0])
    status = _solve_cvxpy(problem_cvx)
    D_hat = _numpy(problem.D_start)
    candidates = {"start": D_hat}
    if D_var.value is not None:
        candidates["cvxpy"] = project(np.asarray(D_var.value))
    lipschitz = max(np.linalg.norm(C, 2) ** 2 / n, TINY)
    for name in list(candidates):
        candidates[f"{name}_polished"] = accelerated_projected_gradient(
            candidates[name], grad, project, lipschitz, polish_iter)

    # least-squares form in z = vec(D) column-major: (C kron I_m) z ~ vec(A)
    M = np.kron(C, np.eye(m))
    b = A.reshape(-1)

    def linear_min(c):
        G = c.reshape(q, m).T
        S = _set_call(balls.lmo, G.reshape(-1)).reshape(m, q)
        return float((G * S).sum()), 0.0

    def ball_support(v):
        return -linear_min(-v)[0]

    certified = {}
    for name, D in candidates.items():
        bracket = _ls_bracket(M, b, 0.5 / n, D.T.reshape(-1), linear_min,
                              ball_support)
        excess = max(0.0, float(np.linalg.norm(D, axis=0).max()) - 1.0)
        bracket["rounding"] += ball_support(np.abs(bracket["grad"])) * excess
        certified[name] = bracket
    best = min(certified, key=lambda name: certified[name]["value"])
    g_star = certified[best]["value"]
    lower = max(c["lower"] - c["rounding"] for c in certified.values())
    raw = max(g_star - lower + certified[best]["rounding"], 0.0)
    return dict(g_star=float(g_star),
                g_star_accuracy=float(max(raw, relative_floor(g_star))),
                f_star=None, f_star_accuracy=None,
                g_status=str(status), g_point=best,
                seconds=time.perf_counter() - start)
