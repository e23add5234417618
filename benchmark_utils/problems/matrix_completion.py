"""Matrix completion with denoising as a general bilevel problem.

Abolfazli et al. 2023 (IBCG), eq. (2), Sec. 5.2 and App. G.3. Over the
nuclear-norm ball ``X = {||X||_* <= alpha}``::

    min_X  f(X, Y*(X)) = 1/|O1| sum_{(i,j) in O1} (X_ij - Y*_ij)^2
    Y*(X) = argmin_V 1/|O2| sum_{(i,j) in O2} (V_ij - M_ij)^2
                     + lambda1 R_delta(V) + lambda2 ||X - V||_F^2

with the pseudo-Huber ``R_delta(V) = sum_ij delta^2 (sqrt(1 + (V_ij /
delta)^2) - 1)``; matrices flattened row-major, data from
:mod:`benchmark_utils.data.matrix_completion`. One sample is one row of
the matrix (both regularizers in every term); ``reduction="mean"`` keeps
the printed 1/|O| factors, ``"sum"`` drops them (``s_f = |O1|``, ``s_g =
|O2|``). The lower Hessian is diagonal, ``H = 2 s_g/|O2| 1_{O2} + lambda1
psi''(V) + 2 lambda2``, and ``grad^2_xy g = -2 lambda2 I``: ``mu_g = 2
lambda2``, ``L_g = 2 n_rows s_g/|O2| + lambda1 + 2 lambda2`` (any batch),
``L_g_full = 2 s_g/|O2| + lambda1 + 2 lambda2``, ``outer_step_scale =
|O1|/s_f``. ``Y*(X)`` is n^2 independent 1-D problems (safeguarded Newton
to machine precision); ``grad F = grad_X f + 2 lambda2 grad_Y f / H`` at
``Y*(X)``. No F*. Task metric: ``normalized_error`` ``sum_O (X - Xhat)^2 /
sum_O Xhat^2`` over ``O = O1 u O2``. Why rows, why the reduction matters,
the starts: docs/problems.md.
"""
import numpy as np
import torch

from benchmark_utils.checks.parameters import (
    check_choice,
    check_nonnegative,
    check_positive,
)
from benchmark_utils.problems.batches import is_full
from benchmark_utils.problems.general import GeneralBilevelProblem
from benchmark_utils.sets import NuclearNormBall

REDUCTIONS = ("mean", "sum")
_EPS = float(np.finfo(np.float64).eps)


def pseudo_huber(v, delta):
    """R_delta(v) = sum delta^2 (sqrt(1 + (v / delta)^2) - 1)."""
    return delta ** 2 * (torch.sqrt(1 + (v / delta) ** 2) - 1).sum()


def pseudo_huber_grad(v, delta):
    """psi'(t) = t / sqrt(1 + (t / delta)^2), elementwise."""
    return v / torch.sqrt(1 + (v / delta) ** 2)


def pseudo_huber_hess(v, delta):
    """psi''(t) = (1 + (t / delta)^2)^{-3/2}, elementwise."""
    return (1 + (v / delta) ** 2) ** -1.5


class MatrixCompletionBilevel(GeneralBilevelProblem):
    """Problem (2) of Abolfazli et al. 2023 on given data (module doc)."""

    def __init__(self, M, X_hat, omega1, omega2, lambda1=0.05, lambda2=0.05,
                 delta=0.9, radius=None, observed=None, x0=None, y0=None,
                 reduction="mean", device="cpu"):
        check_choice("reduction", reduction, REDUCTIONS)
        check_nonnegative("lambda1", lambda1)
        check_positive("lambda2", lambda2)
        check_positive("delta", delta)
        self.device = torch.device(device)
        M = np.asarray(M, dtype=np.float64)
        self.n_rows, self.n_cols = M.shape
        self.M = self.as_tensor(M).reshape(-1)
        self.X_hat = self.as_tensor(X_hat).reshape(-1)
        self.omega1 = self._indices(omega1)
        self.omega2 = self._indices(omega2)
        self.lambda1, self.lambda2 = float(lambda1), float(lambda2)
        self.delta = float(delta)
        if radius is None:       # alpha = ||Xhat||_*, the paper's radius
            radius = float(torch.linalg.svdvals(
                self.X_hat.reshape(self.n_rows, self.n_cols)).sum())
        self.X = NuclearNormBall(self.n_rows, self.n_cols, radius)
        self.radius = self.X.radius
        self.dim_x = self.dim_y = self.n_rows * self.n_cols
        # one sample is one row of the matrix (module doc)
        self.n_upper = self.n_lower = self.n_rows
        self.reduction = reduction
        self.scale_upper = 1.0 if reduction == "mean" else float(
            len(self.omega1))
        self.scale_lower = 1.0 if reduction == "mean" else float(
            len(self.omega2))
        # the paper's normalized error sums over the observed set O
        if observed is None:
            observed_idx = torch.unique(torch.cat([self.omega1, self.omega2]))
        else:
            observed_idx = self._indices(np.flatnonzero(observed))
        self.observed = observed_idx
        # per-entry weights of the full sums, s/|O| on O (0 elsewhere), and
        # of one row's sample, n_rows s/|O| (their mean over rows is the sum)
        self.upper_weight = self._weights(self.omega1, self.scale_upper)
        self.data_weight = self._weights(self.omega2, self.scale_lower)
        self.upper_rows = (self.n_rows * self.upper_weight).reshape(
            self.n_rows, self.n_cols)
        self.lower_rows = (self.n_rows * self.data_weight).reshape(
            self.n_rows, self.n_cols)
        self.mu_g = 2.0 * self.lambda2
        # psi'' <= 1: one row's Hessian (so any batch's) is <= 2 n_rows
        # s_g/|O2| + lambda1 + 2 lambda2, the full sum's <= 2 s_g/|O2| +
        # lambda1 + 2 lambda2
        self.L_g = (2.0 * self.n_rows * self.scale_lower / len(self.omega2)
                    + self.lambda1 + self.mu_g)
        self.L_g_full = (2.0 * self.scale_lower / len(self.omega2)
                         + self.lambda1 + self.mu_g)
        # the hypergradient's entries are those of grad_X f, of order
        # s_f/|O1| times a residual: steps tuned where they are of order 1
        # (the quadratic) are scaled by |O1|/s_f (1 for sums)
        self.outer_step_scale = len(self.omega1) / self.scale_upper
        self.x0 = (self.X.random_point(torch.Generator().manual_seed(0))
                   if x0 is None else self.as_tensor(x0).reshape(-1))
        self.y0 = (torch.zeros(self.dim_y, dtype=self.dtype)
                   if y0 is None else self.as_tensor(y0).reshape(-1))
        self.x0, self.y0 = self.x0.to(self.device), self.y0.to(self.device)

    def _indices(self, idx):
        return torch.as_tensor(np.asarray(idx), dtype=torch.int64,
                               device=self.device)

    def _weights(self, omega, scale):
        weights = torch.zeros(self.dim_y, dtype=self.dtype,
                              device=self.device)
        return weights.index_fill(0, omega, scale / omega.shape[0])

    def _rows(self, v, batch):
        """v as an n_rows x n_cols matrix, restricted to the batch's rows."""
        mat = v.reshape(self.n_rows, self.n_cols)
        return mat if is_full(batch) else mat.index_select(0, batch)

    def _row_weights(self, rows, batch):
        return rows if is_full(batch) else rows.index_select(0, batch)

    def _mean_rows(self, values, batch):
        """The batch mean of per-row values (an |B| x n_cols matrix) put
        back in place, as a flat vector (repeated rows add up)."""
        if is_full(batch):
            return values.reshape(-1) / self.n_rows
        out = torch.zeros(self.n_rows, self.n_cols, dtype=values.dtype,
                          device=values.device)
        return out.index_add(0, batch, values / batch.shape[0]).reshape(-1)

    def _n_batch(self, batch):
        return self.n_rows if is_full(batch) else batch.shape[0]

    # -- values ---------------------------------------------------------------
    def f(self, x, y, *, batch=None):
        r = self._rows(x, batch) - self._rows(y, batch)
        weights = self._row_weights(self.upper_rows, batch)
        return (weights * r * r).sum() / self._n_batch(batch)

    def g(self, x, y, *, batch=None):
        r = self._rows(y, batch) - self._rows(self.M, batch)
        weights = self._row_weights(self.lower_rows, batch)
        diff = x - y
        return ((weights * r * r).sum() / self._n_batch(batch)
                + self.lambda1 * pseudo_huber(y, self.delta)
                + self.lambda2 * (diff @ diff))

    # -- first order ----------------------------------------------------------
    def grad_f_x(self, x, y, *, batch=None):
        r = self._rows(x, batch) - self._rows(y, batch)
        weights = self._row_weights(self.upper_rows, batch)
        return self._mean_rows(2.0 * weights * r, batch)

    def grad_f_y(self, x, y, *, batch=None):
        return -self.grad_f_x(x, y, batch=batch)

    def grad_f(self, x, y, *, batch=None):
        grad_x = self.grad_f_x(x, y, batch=batch)
        return grad_x, -grad_x

    def grad_g_x(self, x, y, *, batch=None):
        return 2 * self.lambda2 * (x - y)

    def grad_g_y(self, x, y, *, batch=None):
        r = self._rows(y, batch) - self._rows(self.M, batch)
        weights = self._row_weights(self.lower_rows, batch)
        return (self._mean_rows(2.0 * weights * r, batch)
                + self.lambda1 * pseudo_huber_grad(y, self.delta)
                + 2 * self.lambda2 * (y - x))

    def grad_g(self, x, y, *, batch=None):
        return self.grad_g_x(x, y, batch=batch), self.grad_g_y(x, y,
                                                               batch=batch)

    # -- second order: diagonal Hessian, constant cross term ------------------
    def hvp_yy_g(self, x, y, v, *, batch=None):
        weights = self._row_weights(self.lower_rows, batch)
        return (self._mean_rows(2.0 * weights * self._rows(v, batch), batch)
                + (self.lambda1 * pseudo_huber_hess(y, self.delta)
                   + 2 * self.lambda2) * v)

    def hvp_xy_g(self, x, y, v, *, batch=None):
        return -2 * self.lambda2 * v

    def hessian_diagonal(self, y):
        """diag of grad^2_yy g(x, y) on the full sum (independent of x)."""
        return (2 * self.data_weight + 2 * self.lambda2
                + self.lambda1 * pseudo_huber_hess(y, self.delta))

    # -- exact quantities -----------------------------------------------------
    def inner_solution(self, x, max_iter=100):
        """Y*(X): per entry, the root of phi'(v) = 2 (a + lambda2) (v - q)
        + lambda1 psi'(v), with a the entry's data weight and q = (a M +
        lambda2 X) / (a + lambda2). psi' has the sign of v and |psi'| <
        delta, so the root lies between 0 and q: Newton's method from q,
        falling back to bisection whenever a step leaves that bracket, until
        every |phi'| is at the rounding level (phi'' >= 2 lambda2 turns that
        into |v - v*| <= |phi'| / (2 lambda2))."""
        a = self.data_weight
        q = (a * self.M + self.lambda2 * x) / (a + self.lambda2)
        lo, hi = torch.minimum(q, torch.zeros_like(q)), torch.maximum(
            q, torch.zeros_like(q))
        v = q.clone()
        scale = 2 * (a + self.lambda2)
        for _ in range(max_iter):
            quadratic = scale * (v - q)
            huber = self.lambda1 * pseudo_huber_grad(v, self.delta)
            slope = quadratic + huber
            # converged: phi'(v) is at the rounding level of its terms
            floor = 8 * _EPS * (scale * (v.abs() + q.abs()) + huber.abs())
            if bool((slope.abs() <= floor).all()):
                break
            # keep the bracket: the root is left of v where phi'(v) > 0
            hi = torch.where(slope > 0, v, hi)
            lo = torch.where(slope < 0, v, lo)
            curvature = scale + self.lambda1 * pseudo_huber_hess(v, self.delta)
            newton = v - slope / curvature
            inside = (newton >= lo) & (newton <= hi)
            v_next = torch.where(slope.abs() <= floor, v,
                                 torch.where(inside, newton, 0.5 * (lo + hi)))
            if torch.equal(v_next, v):      # steps below one ulp
                break
            v = v_next
        return v

    def hypergradient(self, x, y_star=None):
        """grad F(X) = grad_X f + 2 lambda2 grad_Y f / H at Y*(X)."""
        y = self.inner_solution(x) if y_star is None else y_star
        grad_x, grad_y = self.grad_f(x, y)
        return grad_x + 2 * self.lambda2 * grad_y / self.hessian_diagonal(y)

    # -- task metrics ---------------------------------------------------------
    def task_metrics(self, x, y):
        """``normalized_error`` over the observed entries (module doc)."""
        err = x.index_select(0, self.observed) - self.X_hat.index_select(
            0, self.observed)
        ref = self.X_hat.index_select(0, self.observed)
        return {"normalized_error": float((err @ err) / (ref @ ref))}

    def __repr__(self):
        return (f"MatrixCompletionBilevel(shape=({self.n_rows}, "
                f"{self.n_cols}), |O1|={self.n_upper}, |O2|={self.n_lower}, "
                f"lambda1={self.lambda1}, lambda2={self.lambda2}, "
                f"delta={self.delta}, radius={self.radius:.4g}, "
                f"reduction={self.reduction!r})")
