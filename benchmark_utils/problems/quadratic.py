"""Finite-sum quadratic bilevel problems with controlled spectra.

The general-family test bed: every exact quantity (y*(x), grad F, x*, F*) is
in closed form or certified. Not a paper's experiment: the quadratic
instance of the papers' common problem class (Kwon et al. 2023, problem
(P); Abolfazli et al. 2023, eq. (1); Huang et al. 2021, problem (1)), on
which their assumptions hold with known constants. For ``j, i = 1..n``::

    g_j(x, y) = 1/2 y^T H_j y + y^T C_j x + d_j^T y,
    H_j = H + diag(delta_j),        C_j = C + p_j q_j^T,
    f_i(x, y) = 1/2 ||y - b_i||^2 + rho/2 ||x - a_i||^2,

f and g the means over the samples. :func:`make_quadratic_bilevel` makes
the means exact: the spectrum of ``mean_j H_j`` is ``geomspace(mu, L)``,
``||mean_j C_j|| = cross_norm``, every sample Hessian lies in ``[(1 -
noise) mu, L + noise mu]`` (``L_g`` the upper end), ``noise = 0`` gives a
deterministic problem, ``rho = upper_reg > 0`` makes F strongly convex, and
the unconstrained minimizer is ``x_target ~ N(0, I)`` while grad_y f does
not vanish there (the implicit part of the hypergradient stays visible).
Closed forms: ``y*(x) = J x + y_c`` with ``J = -Hbar^{-1} Cbar``, F a
quadratic. ``F*``: closed form without constraint, otherwise certified
(:mod:`benchmark_utils.references.quadratic`). The generator in full and
its choices: docs/problems.md, "Controlled quadratic".

The generator and the exact quantities that the problem stores (means,
Cholesky factor, J, y_c, A, c, and x* through
:meth:`QuadraticValueFunction.unconstrained_minimizer`) are computed by
:mod:`benchmark_utils.numerics.ordered`, not BLAS / LAPACK: the instance is
the same bit for bit on any CPU (tests/test_instance_digests.py).
"""
import numpy as np
import torch

from benchmark_utils.checks.parameters import (
    check_choice,
    check_in_interval,
    check_int,
    check_positive,
)
from benchmark_utils.numerics import ordered
from benchmark_utils.problems.batches import is_full
from benchmark_utils.problems.general import GeneralBilevelProblem
from benchmark_utils.sets import Box, L2Ball, WholeSpace

CONSTRAINTS = ("none", "l2_ball", "box")
# bump when the generator changes: cached references of older instances
# must not be reused (2: ordered products and factorizations, the same bits
# on any CPU)
GENERATOR_VERSION = 2


def check_quadratic_parameters(dim_x, dim_y, n_samples, mu, L, cross_norm,
                                  noise, upper_reg, constraint, radius,
                                  random_state):
    """ValueError naming the parameter and its range, before any work."""
    check_int("dim_x", dim_x, 1)
    check_int("dim_y", dim_y, 1)
    check_int("n_samples", n_samples, 1)
    check_positive("mu", mu)
    check_positive("L", L)
    if mu > L:
        raise ValueError(f"mu must be <= L, got mu={mu!r} > L={L!r}")
    check_positive("cross_norm", cross_norm)
    check_in_interval("noise", noise, 0.0, 1.0, closed=(True, False))
    check_positive("upper_reg", upper_reg)
    check_choice("constraint", constraint, CONSTRAINTS)
    check_positive("radius", radius)
    check_int("random_state", random_state, 0)


def make_feasible_set(constraint, dim_x, radius):
    """X: R^dim_x, the l2 ball or the box [-radius, radius]^dim_x."""
    check_choice("constraint", constraint, CONSTRAINTS)
    if constraint == "none":
        return WholeSpace(dim_x)
    if constraint == "l2_ball":
        return L2Ball(dim_x, radius)
    return Box(-radius, radius, dim=dim_x)


def _centred(rng, shape):
    z = rng.standard_normal(shape)
    return z - z.mean(axis=0)


def _unit_rows(rng, n, dim):
    z = rng.standard_normal((n, dim))
    return z / np.linalg.norm(z, axis=1, keepdims=True)


def make_quadratic_bilevel(dim_x=20, dim_y=20, n_samples=500, mu=0.5, L=5.0,
                           cross_norm=1.0, noise=0.5, upper_reg=0.5,
                           constraint="none", radius=1.0, random_state=0,
                           device="cpu"):
    """Draw one :class:`QuadraticBilevel` instance (see the module doc)."""
    check_quadratic_parameters(dim_x, dim_y, n_samples, mu, L, cross_norm,
                                  noise, upper_reg, constraint, radius,
                                  random_state)
    rng = np.random.default_rng(random_state)
    n = n_samples
    matmul, matvec = ordered.matmul, ordered.matvec
    # lower level: Hbar = Q diag(s) Q^T with spectrum exactly [mu, L]
    Q, _ = ordered.qr(rng.standard_normal((dim_y, dim_y)))
    spectrum = ordered.geomspace(mu, L, dim_y)
    H = matmul(Q * spectrum, Q.T)
    H = 0.5 * (H + H.T)
    u = rng.uniform(-1.0, 1.0, (n, dim_y))
    u -= u.mean(axis=0)
    u /= max(np.abs(u).max(), 1.0)     # keeps the mean 0 and |u| <= 1
    hess_diag = noise * mu * u
    C_mean = rng.standard_normal((dim_y, dim_x))
    C_mean *= cross_norm / ordered.svd(C_mean)[1][0]
    cross_left = noise * cross_norm * _unit_rows(rng, n, dim_y)
    cross_right = _unit_rows(rng, n, dim_x)
    C = C_mean - matmul(cross_left.T, cross_right) / n
    d = rng.standard_normal(dim_y) + noise * _centred(rng, (n, dim_y))
    # upper level: bbar generic, abar chosen so that x_target minimizes F
    x_target = rng.standard_normal(dim_x)
    b = rng.standard_normal(dim_y) + noise * _centred(rng, (n, dim_y))
    # H^{-1} = Q diag(1/s) Q^T
    H_inverse = matmul(Q / spectrum, Q.T)
    J = -matmul(H_inverse, C_mean)
    y_c = -matvec(H_inverse, d.mean(axis=0))
    residual = matvec(J, x_target) + y_c - b.mean(axis=0)
    a_mean = x_target + matvec(J.T, residual) / upper_reg
    a = a_mean + noise * _centred(rng, (n, dim_x))
    X = make_feasible_set(constraint, dim_x, radius)
    return QuadraticBilevel(H, hess_diag, C, cross_left, cross_right, d, b, a,
                            upper_reg, X, mu_g=mu,
                            L_g=L + noise * mu, device=device)


class QuadraticValueFunction:
    """For problems whose F(x) = 1/2 x^T A x - c^T x + const is a quadratic
    with A = grad^2 F positive definite (attributes ``A`` and ``c``)."""

    def unconstrained_minimizer(self):
        """argmin_{R^dim_x} F = A^{-1} c (Cholesky, ordered: the same bits
        on any CPU)."""
        A, c = (t.detach().cpu().double().numpy() for t in (self.A, self.c))
        return torch.as_tensor(
            ordered.cholesky_solve(ordered.cholesky(A), c),
            dtype=self.c.dtype, device=self.c.device)


class QuadraticBilevel(QuadraticValueFunction, GeneralBilevelProblem):
    """Finite-sum quadratic bilevel problem (see the module docstring).

    Per-sample data are stacked by rows: ``hess_diag`` (n, dim_y) the
    delta_j, ``cross_left`` (n, dim_y) / ``cross_right`` (n, dim_x) the p_j /
    q_j, ``d`` (n, dim_y), ``b`` (n, dim_y), ``a`` (n, dim_x). A batch is a
    1-D index tensor (repeats allowed); oracles cost O(|B| (dim_x + dim_y))
    plus one product with H and C. ``mu_g`` / ``L_g`` are the strong
    convexity of g and a smoothness bound valid for every sample Hessian;
    ``mu_F`` / ``L_F`` the extreme eigenvalues of grad^2 F (a constant).

    The ``<oracle>_rows`` oracles give the per-sample terms of a batch, one
    row per drawn sample (their mean is the batch oracle), in closed form:
    what SAGA-type methods (SABA) store, counted as the mean oracle is.
    """

    F_convex = True         # F is a quadratic with grad^2 F >= rho I
    ORACLES = {**GeneralBilevelProblem.ORACLES,
               "grad_f_rows": ("upper", "grad"),
               "grad_g_y_rows": ("lower", "grad"),
               "hvp_yy_g_rows": ("lower", "hvp"),
               "hvp_xy_g_rows": ("lower", "hvp")}

    def __init__(self, H, hess_diag, C, cross_left, cross_right, d, b, a,
                 upper_reg, X, mu_g=None, L_g=None, device="cpu"):
        self.device = torch.device(device)
        t = self.as_tensor
        self.H, self.hess_diag, self.C = t(H), t(hess_diag), t(C)
        self.cross_left, self.cross_right = t(cross_left), t(cross_right)
        self.d, self.b, self.a = t(d), t(b), t(a)
        self.upper_reg = float(upper_reg)
        self.n_lower, self.dim_y = self.hess_diag.shape
        self.n_upper, self.dim_x = self.a.shape
        self.X = X
        # full-sum means, so a full pass costs one dense product; these and
        # the exact quantities by numerics.ordered (module doc)
        n = self.n_lower
        host = {name: getattr(self, name).detach().cpu().double().numpy()
                for name in ("H", "hess_diag", "C", "cross_left",
                             "cross_right", "d", "b", "a")}
        H_bar = host["H"] + np.diag(host["hess_diag"].mean(0))
        C_bar = host["C"] + ordered.matmul(host["cross_left"].T,
                                           host["cross_right"]) / n
        d_bar, b_bar = host["d"].mean(0), host["b"].mean(0)
        a_bar = host["a"].mean(0)
        chol = ordered.cholesky(H_bar)
        # F is quadratic: F(x) = 1/2 x^T A x - c^T x + const
        J = -ordered.cholesky_solve(chol, C_bar)
        y_c = -ordered.cholesky_solve(chol, d_bar)
        A = ordered.matmul(J.T, J) + self.upper_reg * np.eye(self.dim_x)
        c = self.upper_reg * a_bar - ordered.matvec(J.T, y_c - b_bar)
        (self.H_bar, self.C_bar, self.d_bar, self.b_bar, self.a_bar,
         self._chol, self.J, self.y_c, self.A, self.c) = (
            t(x) for x in (H_bar, C_bar, d_bar, b_bar, a_bar, chol, J, y_c,
                           A, c))
        eig = torch.linalg.eigvalsh(self.H_bar)
        self.mu_g = float(eig[0]) if mu_g is None else float(mu_g)
        self.L_g = float(eig[-1]) if L_g is None else float(L_g)
        eig_F = torch.linalg.eigvalsh(self.A)
        self.mu_F, self.L_F = float(eig_F[0]), float(eig_F[-1])
        self.x0 = torch.zeros(self.dim_x, dtype=self.dtype, device=self.device)
        self.y0 = torch.zeros(self.dim_y, dtype=self.dtype, device=self.device)
        self.x_star = None

    # -- batch means ----------------------------------------------------------
    @staticmethod
    def _mean(rows, mean, batch):
        return mean if is_full(batch) else rows.index_select(0, batch).mean(0)

    def _cross(self, x, batch):
        """C_B x."""
        if is_full(batch):
            return self.C_bar @ x
        P = self.cross_left.index_select(0, batch)
        Qr = self.cross_right.index_select(0, batch)
        return self.C @ x + P.T @ (Qr @ x) / batch.shape[0]

    def _cross_t(self, y, batch):
        """C_B^T y."""
        if is_full(batch):
            return self.C_bar.T @ y
        P = self.cross_left.index_select(0, batch)
        Qr = self.cross_right.index_select(0, batch)
        return self.C.T @ y + Qr.T @ (P @ y) / batch.shape[0]

    def _hess(self, v, batch):
        """H_B v."""
        if is_full(batch):
            return self.H_bar @ v
        delta = self.hess_diag.index_select(0, batch).mean(0)
        return self.H @ v + delta * v

    # -- values ---------------------------------------------------------------
    def f(self, x, y, *, batch=None):
        b, a = self.rows(self.b, batch), self.rows(self.a, batch)
        ry, rx = y - b, x - a
        return 0.5 * ((ry * ry).sum(1).mean()
                      + self.upper_reg * (rx * rx).sum(1).mean())

    def g(self, x, y, *, batch=None):
        d = self._mean(self.d, self.d_bar, batch)
        return 0.5 * (y @ self._hess(y, batch)) + y @ self._cross(x, batch) \
            + d @ y

    # -- closed-form derivatives ----------------------------------------------
    def grad_f_x(self, x, y, *, batch=None):
        return self.upper_reg * (x - self._mean(self.a, self.a_bar, batch))

    def grad_f_y(self, x, y, *, batch=None):
        return y - self._mean(self.b, self.b_bar, batch)

    def grad_f(self, x, y, *, batch=None):
        return (self.grad_f_x(x, y, batch=batch),
                self.grad_f_y(x, y, batch=batch))

    def grad_g_x(self, x, y, *, batch=None):
        return self._cross_t(y, batch)

    def grad_g_y(self, x, y, *, batch=None):
        return self._hess(y, batch) + self._cross(x, batch) + self._mean(
            self.d, self.d_bar, batch)

    def grad_g(self, x, y, *, batch=None):
        return (self.grad_g_x(x, y, batch=batch),
                self.grad_g_y(x, y, batch=batch))

    def hvp_yy_g(self, x, y, v, *, batch=None):
        return self._hess(v, batch)

    def hvp_xy_g(self, x, y, v, *, batch=None):
        return self._cross_t(v, batch)

    # -- per-sample rows (SAGA tables) ---------------------------------------
    def grad_f_rows(self, x, y, *, batch=None):
        """(rows of grad_x f_i, rows of grad_y f_i), i in the batch."""
        return (self.upper_reg * (x - self.rows(self.a, batch)),
                y - self.rows(self.b, batch))

    def grad_g_y_rows(self, x, y, *, batch=None):
        """Rows H_j y + C_j x + d_j, j in the batch."""
        delta = self.rows(self.hess_diag, batch)
        p, q = (self.rows(self.cross_left, batch),
                self.rows(self.cross_right, batch))
        return (self.H @ y + self.C @ x) + delta * y + p * (q @ x)[:, None] \
            + self.rows(self.d, batch)

    def hvp_yy_g_rows(self, x, y, v, *, batch=None):
        """Rows H_j v, j in the batch."""
        return self.H @ v + self.rows(self.hess_diag, batch) * v

    def hvp_xy_g_rows(self, x, y, v, *, batch=None):
        """Rows C_j^T v, j in the batch."""
        p, q = (self.rows(self.cross_left, batch),
                self.rows(self.cross_right, batch))
        return self.C.T @ v + q * (p @ v)[:, None]

    # -- exact quantities -----------------------------------------------------
    def _solve(self, rhs):
        """Hbar^{-1} rhs (vector or matrix) by the Cholesky factor."""
        column = rhs.dim() == 1
        out = torch.cholesky_solve(rhs[:, None] if column else rhs, self._chol)
        return out[:, 0] if column else out

    def inner_solution(self, x):
        """y*(x) = -Hbar^{-1} (Cbar x + dbar)."""
        return -self._solve(self.C_bar @ x + self.d_bar)

    def hypergradient(self, x, y_star=None):
        """grad F(x) = rho (x - abar) - Cbar^T Hbar^{-1} (y*(x) - bbar)."""
        y = self.inner_solution(x) if y_star is None else y_star
        return self.upper_reg * (x - self.a_bar) - self.C_bar.T @ self._solve(
            y - self.b_bar)

    def set_references(self, references):
        self.F_star = references["F_star"]
        self.F_star_accuracy = references["F_star_accuracy"]
        self.x_star = self.as_tensor(references["x_star"])

    def __repr__(self):
        return (f"QuadraticBilevel(dim_x={self.dim_x}, dim_y={self.dim_y}, "
                f"n={self.n_lower}, mu_g={self.mu_g:.3g}, L_g={self.L_g:.3g}, "
                f"X={self.X!r})")
