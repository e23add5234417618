"""benchmark_bilevel's ``simulated`` quadratic bilevel problem.

The ``quadratic`` dataset of github.com/benchopt/benchmark_bilevel (Dagreou
et al. 2022), rebuilt from its description so that both benchmarks run the
same problem; no code was copied. Both levels are finite sums of quadratics
``q_i(x, y) = 1/2 y^T H_i y + 1/2 x^T K_i x + x^T C_i y + a_i^T y + b_i^T
x`` (x: ``dim_outer``, y: ``dim_inner``), with full per-sample matrices (a
batch gradient costs about B d^2, as upstream); ``g`` is the mean over the
``n_lower`` inner samples, ``f`` over the ``n_upper`` outer samples. The
generator and upstream's acceptance check:
:mod:`benchmark_utils.data.simulated_quadratic`; upstream's defaults are
those of :func:`make_simulated_quadratic`.

``F_convex``, ``mu_F`` and the reference ``F*`` use the true Hessian of F
(a quadratic): ``x* = -grad^2 F^{-1} grad F(0)``, certified by ``||grad
F(x*)||^2 / (2 mu_F)`` (``benchmark_utils.references.quadratic.
simulated_references``); ``F_star`` is None
where F is not strongly convex.

Batches: index tensors, or upstream's sampling without replacement through
``batch_sampler`` (:class:`~benchmark_utils.problems.batches.
EpochBlockSampler`). ``cache_means`` (default True) keeps each fixed
block's means once computed and the full means precomputed (exact: the
same operations, an oracle then costs d^2); False averages the per-sample
arrays at every call, upstream's work (B d^2 a batch, n d^2 a full pass).
Oracles run in ``dtype`` (float64 or float32 like upstream's JAX); the
exact quantities for the metrics in float64, stored ones (full means,
Cholesky factor, J, y_c, A, c, x*) by :mod:`benchmark_utils.numerics.
ordered`: the same bits on any CPU (tests/test_instance_digests.py).
Details: docs/problems.md, "Simulated quadratic".
"""
import numpy as np
import torch

from benchmark_utils.checks.parameters import (
    check_choice,
    check_int,
    check_positive,
)
from benchmark_utils.data.simulated_quadratic import (
    MAX_TRIALS,
    MIN_EIGENVALUE,
    generate_level,
    upstream_check_eigenvalue,
)
from benchmark_utils.data.simulated_random import (
    RANDOM_SOURCES,
    random_source_normal,
)
from benchmark_utils.numerics import ordered
from benchmark_utils.problems.batches import EpochBlockSampler, SliceBatch
from benchmark_utils.problems.general import GeneralBilevelProblem
from benchmark_utils.problems.quadratic import QuadraticValueFunction
from benchmark_utils.sets import WholeSpace

# blocks smaller than this are averaged at every call (cheap), not cached
MIN_CACHED_BLOCK = 8
DTYPES = {"float64": torch.float64, "float32": torch.float32}
# the per-sample arrays of a level: H (yy), K (xx), C (xy), a (y), b (x)
FIELDS = ("H", "K", "C", "a", "b")


def check_simulated_parameters(n_samples_inner, n_samples_outer, dim_inner,
                                  dim_outer, L_inner_inner, L_inner_outer,
                                  mu_inner, L_outer_inner, L_outer_outer,
                                  L_cross_inner, L_cross_outer, random_state,
                                  dtype, random_source="jax"):
    """ValueError naming the parameter and its range, before any work."""
    check_int("n_samples_inner", n_samples_inner, 1)
    check_int("n_samples_outer", n_samples_outer, 1)
    check_int("dim_inner", dim_inner, 1)
    check_int("dim_outer", dim_outer, 2)    # K's spectrum: 0 and dim - 1 more
    for name, value in (("L_inner_inner", L_inner_inner),
                        ("L_inner_outer", L_inner_outer),
                        ("mu_inner", mu_inner),
                        ("L_outer_inner", L_outer_inner),
                        ("L_outer_outer", L_outer_outer),
                        ("L_cross_inner", L_cross_inner),
                        ("L_cross_outer", L_cross_outer)):
        check_positive(name, value)
    check_int("random_state", random_state, 0)
    check_choice("dtype", dtype, tuple(DTYPES))
    check_choice("random_source", random_source, tuple(RANDOM_SOURCES))


def make_simulated_quadratic(n_samples_inner=1024, n_samples_outer=1024,
                             dim_inner=100, dim_outer=100, L_inner_inner=1.0,
                             L_inner_outer=1.0, mu_inner=0.1,
                             L_outer_inner=1.0, L_outer_outer=1.0,
                             L_cross_inner=0.1, L_cross_outer=0.1,
                             random_state=2442, dtype="float64",
                             random_source="jax", device="cpu", normal=None,
                             cache_means=True):
    """Draw upstream's instance (defaults: upstream's) as a
    :class:`SimulatedQuadratic`; ``normal`` is the random source (None: the
    one ``random_source`` names, of ``random_state``; module doc).
    ValueError when upstream's acceptance check fails (module doc)."""
    check_simulated_parameters(
        n_samples_inner, n_samples_outer, dim_inner, dim_outer, L_inner_inner,
        L_inner_outer, mu_inner, L_outer_inner, L_outer_outer, L_cross_inner,
        L_cross_outer, random_state, dtype, random_source)
    if normal is None:
        normal = random_source_normal(random_state, random_source)
    inner = generate_level(n_samples_inner, dim_inner, dim_outer,
                           L_inner_inner, L_outer_inner, L_cross_inner,
                           mu_inner, normal, level=0)
    outer = generate_level(n_samples_outer, dim_inner, dim_outer,
                           L_inner_outer, L_outer_outer, L_cross_outer,
                           mu_inner, normal, level=1)
    means = [{k: v.mean(0) for k, v in level.items()}
             for level in (inner, outer)]
    eig = upstream_check_eigenvalue(*means)
    if not eig >= MIN_EIGENVALUE:
        raise ValueError(
            f"benchmark_bilevel's acceptance check fails for random_state="
            f"{random_state}: the smallest eigenvalue of its value-function "
            f"Hessian check is {eig:.3g} < {MIN_EIGENVALUE:g} (upstream "
            f"retries {MAX_TRIALS} times with the same key, so it fails "
            "too); choose another random_state")
    return SimulatedQuadratic(inner, outer, dtype=DTYPES[dtype],
                              device=device,
                              cache_means=cache_means)


class SimulatedQuadratic(QuadraticValueFunction, GeneralBilevelProblem):
    """benchmark_bilevel's quadratic (module doc): ``g`` from the inner
    level's arrays, ``f`` from the outer level's.

    ``inner`` / ``outer``: dicts of per-sample arrays H (n, dy, dy), K (n,
    dx, dx), C (n, dx, dy), a (n, dy), b (n, dx). Batches: index tensors,
    ``None`` / ``FullBatch`` (full means, precomputed) or
    :class:`~benchmark_utils.problems.batches.SliceBatch` blocks from
    :meth:`batch_sampler`.
    """

    def __init__(self, inner, outer, dtype=torch.float64, device="cpu",
                 cache_means=True):
        self.device = torch.device(device)
        self.dtype = dtype
        self.cache_means = bool(cache_means)
        self._data = {level: {k: self.as_tensor(np.ascontiguousarray(v))
                              for k, v in arrays.items()}
                      for level, arrays in (("lower", inner),
                                            ("upper", outer))}
        self.n_lower = self._data["lower"]["a"].shape[0]
        self.n_upper = self._data["upper"]["a"].shape[0]
        self.dim_y = self._data["lower"]["a"].shape[1]
        self.dim_x = self._data["lower"]["b"].shape[1]
        self.X = WholeSpace(self.dim_x)
        # full means of the stored (possibly float32) data, in float64 for
        # the exact quantities, and in dtype for full-pass oracles; these
        # and the exact quantities by numerics.ordered (module doc)
        exact = {level: {k: np.add.reduce(
            v.detach().cpu().numpy(), axis=0, dtype=np.float64) / v.shape[0]
            for k, v in arrays.items()}
            for level, arrays in self._data.items()}
        g, f = exact["lower"], exact["upper"]
        chol = ordered.cholesky(g["H"])
        # F(x) = 1/2 x^T A x - c^T x + const, y*(x) = J x + y_c
        J = -ordered.cholesky_solve(chol, g["C"].T)
        y_c = -ordered.cholesky_solve(chol, g["a"])
        matmul, matvec = ordered.matmul, ordered.matvec
        T = matmul(f["C"], J)
        A = matmul(matmul(J.T, f["H"]), J) + f["K"] + T + T.T
        A = 0.5 * (A + A.T)
        c = -(matvec(J.T, matvec(f["H"], y_c) + f["a"])
              + matvec(f["C"], y_c) + f["b"])

        def f64(x):
            return torch.as_tensor(x, dtype=torch.float64, device=self.device)
        self._exact = {level: {k: f64(v) for k, v in means.items()}
                       for level, means in exact.items()}
        self._full = {level: {k: v.to(dtype) for k, v in arrays.items()}
                      for level, arrays in self._exact.items()}
        self._block_means = {}
        self._chol, self.J, self.y_c, self.A, self.c = (
            f64(x) for x in (chol, J, y_c, A, c))
        eig = torch.linalg.eigvalsh(self._exact["lower"]["H"])
        self.mu_g, self.L_g_full = float(eig[0]), float(eig[-1])
        # every per-sample H_i is a w w^T: its norm is ||w||^2 = tr H_i
        self.L_g = max(float(self._exact_trace_max()), self.L_g_full)
        eig_F = torch.linalg.eigvalsh(self.A)
        self.mu_F, self.L_F = float(eig_F[0]), float(eig_F[-1])
        self.F_convex = self.mu_F > 0
        self.x0 = torch.zeros(self.dim_x, dtype=dtype, device=self.device)
        self.y0 = torch.zeros(self.dim_y, dtype=dtype, device=self.device)
        self.x_star = None

    def _exact_trace_max(self):
        H = self._data["lower"]["H"]
        return H.diagonal(dim1=1, dim2=2).sum(1, dtype=torch.float64).max()

    # -- sampling policy (read by the counting view) --------------------------
    def batch_sampler(self, level, generator):
        """benchmark_bilevel's sampling: fixed blocks, reshuffled per epoch."""
        n = self.n_upper if level == "upper" else self.n_lower
        return EpochBlockSampler(n, generator)

    # -- batch means ----------------------------------------------------------
    def _means(self, level, batch):
        """The level's batch means, as a mapping field -> mean over
        ``batch`` (each field computed when first read)."""
        if isinstance(batch, SliceBatch):
            start, stop = batch.start, batch.stop
            if self.cache_means and stop - start >= MIN_CACHED_BLOCK:
                key = (level, start, stop)
                means = self._block_means.get(key)
                if means is None:
                    means = self._block_means[key] = _CachedBlockMeans(
                        self._data[level], start, stop)
                return means
            return _Means(self._data[level], slice(start, stop))
        if batch is None or not torch.is_tensor(batch):     # a full pass
            if self.cache_means:
                return self._full[level]
            return _Means(self._data[level], slice(None))
        return _Means(self._data[level], batch)

    # each oracle reads the means it needs once (a field read by both
    # partials, C, is averaged once per call)
    @staticmethod
    def _value(m, x, y):
        return (0.5 * (y @ (m["H"] @ y)) + 0.5 * (x @ (m["K"] @ x))
                + x @ (m["C"] @ y) + m["a"] @ y + m["b"] @ x)

    @staticmethod
    def _grad_y(m, x, y):
        return m["H"] @ y + x @ m["C"] + m["a"]

    @staticmethod
    def _grad_x(m, x, y):
        return m["K"] @ x + m["C"] @ y + m["b"]

    # -- oracles --------------------------------------------------------------
    def f(self, x, y, *, batch=None):
        return self._value(self._means("upper", batch), x, y)

    def g(self, x, y, *, batch=None):
        return self._value(self._means("lower", batch), x, y)

    def grad_f(self, x, y, *, batch=None):
        m = self._means("upper", batch)
        return self._grad_x(m, x, y), self._grad_y(m, x, y)

    def grad_g(self, x, y, *, batch=None):
        m = self._means("lower", batch)
        return self._grad_x(m, x, y), self._grad_y(m, x, y)

    def grad_f_x(self, x, y, *, batch=None):
        return self._grad_x(self._means("upper", batch), x, y)

    def grad_f_y(self, x, y, *, batch=None):
        return self._grad_y(self._means("upper", batch), x, y)

    def grad_g_x(self, x, y, *, batch=None):
        return self._grad_x(self._means("lower", batch), x, y)

    def grad_g_y(self, x, y, *, batch=None):
        return self._grad_y(self._means("lower", batch), x, y)

    def hvp_yy_g(self, x, y, v, *, batch=None):
        return self._means("lower", batch)["H"] @ v

    def hvp_xy_g(self, x, y, v, *, batch=None):
        return self._means("lower", batch)["C"] @ v

    # -- exact quantities (float64) -------------------------------------------
    def _solve(self, rhs):
        """Hbar_in^{-1} rhs (vector or matrix), float64, by Cholesky."""
        column = rhs.dim() == 1
        out = torch.cholesky_solve(rhs[:, None] if column else rhs, self._chol)
        return out[:, 0] if column else out

    def _float64(self, t):
        return t.to(dtype=torch.float64, device=self.device)

    def inner_solution(self, x):
        """y*(x) = -Hbar_in^{-1} (Cbar_in^T x + abar_in), in float64."""
        g = self._exact["lower"]
        return -self._solve(self._float64(x) @ g["C"] + g["a"])

    def hypergradient(self, x, y_star=None):
        """grad F(x) = grad_x f + J^T grad_y f at y*(x), float64."""
        x = self._float64(x)
        y = self.inner_solution(x) if y_star is None else self._float64(y_star)
        f = self._exact["upper"]
        grad_x = f["K"] @ x + f["C"] @ y + f["b"]
        grad_y = f["H"] @ y + x @ f["C"] + f["a"]
        return grad_x + self.J.T @ grad_y

    def value(self, x, y_star=None):
        """F(x) = f(x, y*(x)) on the full outer sum, float64."""
        x = self._float64(x)
        y = self.inner_solution(x) if y_star is None else self._float64(y_star)
        f = self._exact["upper"]
        return (0.5 * (y @ (f["H"] @ y)) + 0.5 * (x @ (f["K"] @ x))
                + x @ (f["C"] @ y) + f["a"] @ y + f["b"] @ x)

    def set_references(self, references):
        self.F_star = references["F_star"]
        self.F_star_accuracy = references["F_star_accuracy"]
        x_star = references["x_star"]
        self.x_star = None if x_star is None else torch.as_tensor(
            x_star, dtype=torch.float64, device=self.device)

    def __repr__(self):
        return (f"SimulatedQuadratic(dim_x={self.dim_x}, dim_y={self.dim_y}, "
                f"n_upper={self.n_upper}, n_lower={self.n_lower}, "
                f"dtype={self.dtype}, mu_g={self.mu_g:.3g}, "
                f"mu_F={self.mu_F:.3g})")


def _average(rows):
    """The mean over the first axis of ``rows`` (a view or a gathered copy)
    as one matrix-vector product with the weights 1/B: a single streaming
    pass over the B per-sample arrays, about twice as fast as ``mean(0)``
    in float64 on one core (docs/speed.md)."""
    count = rows.shape[0]
    weights = torch.full((count,), 1.0 / count, dtype=rows.dtype,
                         device=rows.device)
    return (weights @ rows.reshape(count, -1)).reshape(rows.shape[1:])


class _Means(dict):
    """One oracle call's batch means: each field averaged over the rows
    (a slice, a view, or an index tensor, gathered) when first read, and
    kept for the rest of the call only."""

    def __init__(self, data, rows):
        super().__init__()
        self.data, self.rows = data, rows

    def __missing__(self, name):
        rows = self.rows
        if isinstance(rows, slice):
            mean = _average(self.data[name][rows])
        else:
            mean = _average(self.data[name].index_select(0, rows))
        self[name] = mean
        return mean


class _CachedBlockMeans(_Means):
    """A block's means, each computed on its first read and kept across
    calls (the same operations as :class:`_Means`, so the values are
    identical)."""

    def __init__(self, data, start, stop):
        super().__init__(data, slice(start, stop))
