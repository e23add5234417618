"""Continual dictionary learning as a simple bilevel problem.

Cao et al. 2023, eqs. (4)-(5) (Sec. 2.1, example 2; experiments in Sec. 5
and App. F.2), also Giang-Tran et al. 2025, eq. (7). Old data A (n samples)
was explained by an old dictionary D_hat (p atoms) with codes X_hat; new
data A' (n' samples) arrives. With q > p atoms, the variable is
x = (D~ in R^{m x q}, X~ in R^{q x n'}) and

    f(D~, X~) = 1/(2n') sum_k ||a'_k - D~ x~_k||^2          (nonconvex)
    g(D~)     = 1/(2n)  sum_i ||a_i  - D~ x_hat_i||^2         (convex in D~)
    Z = {||d~_j||_2 <= 1 for all j} x {||x~_k||_1 <= delta for all k},

where x_hat_i is x_hat_i padded with q - p zeros, so the q - p new atoms do
not change g: its solution set is not a single point. The data and the fit
of (D_hat, X_hat) are in :mod:`benchmark_utils.data.dictionary_learning`.

Layout of the flat variable: ``x = concat(vec(D~), vec(X~))`` in row-major
order; the columns of X~ are the upper-level samples (one sample of the
upper level is one new data point a'_k, one of the lower level one old
point a_i).

The bilevel start is D~_0 = [D_hat, 0] and X~_0 Gaussian with columns
rescaled to l1 norm delta (Cao et al. 2023, App. F.2, the same start for
every method); the random start of a repetition redraws X~_0 only.
"""
import numpy as np
import torch

from benchmark_utils.problems.batches import is_full
from benchmark_utils.problems.simple import SimpleBilevelProblem
from benchmark_utils.sets import ColumnBalls, ProductSet


class DictionaryLearningBilevel(SimpleBilevelProblem):
    """The continual dictionary-learning bilevel problem (see module doc)."""

    f_convex = False

    def __init__(self, A_old, A_new, D_hat, X_hat, D_true, n_atoms, delta,
                 X_start, device="cpu"):
        """``X_start``: the start's codes, columns rescaled to l1 norm
        delta."""
        self.device = torch.device(device)
        m, p = D_hat.shape
        self.n_features, self.n_atoms, self.delta = m, n_atoms, delta
        self.n_lower, self.n_upper = A_old.shape[1], A_new.shape[1]
        # samples as rows, so a batch is a contiguous index_select
        self.A_old = self.as_tensor(A_old.T)
        self.A_new = self.as_tensor(A_new.T)
        X_hat_pad = np.zeros((n_atoms, self.n_lower))
        X_hat_pad[:p] = X_hat
        self.codes_old = self.as_tensor(X_hat_pad.T)      # (n, q)
        self.D_true = self.as_tensor(D_true)
        self.size_D = m * n_atoms
        self.dim = self.size_D + n_atoms * self.n_upper
        self.Z = ProductSet([
            ColumnBalls(m, n_atoms, "l2", 1.0),
            ColumnBalls(n_atoms, self.n_upper, "l1", delta),
        ])
        D0 = np.zeros((m, n_atoms))
        D0[:, :p] = D_hat
        self.D_start = self.as_tensor(D0)
        self.x0 = self._start(self.as_tensor(X_start))

    def _start(self, X):
        """[D_hat, 0] with X's columns rescaled to l1 norm delta (module
        doc)."""
        X = self.delta * X / X.abs().sum(dim=0, keepdim=True)
        return torch.cat([self.D_start.reshape(-1), X.reshape(-1)])

    def split(self, x):
        """Views (D~, X~) of the flat variable."""
        return (x[:self.size_D].view(self.n_features, self.n_atoms),
                x[self.size_D:].view(self.n_atoms, self.n_upper))

    # upper level: residuals of the sampled new points, columns of X~ by batch
    def _upper_residual(self, x, batch):
        D, X = self.split(x)
        X_B = X if is_full(batch) else X.index_select(1, batch)
        return D, X_B, self.rows(self.A_new, batch) - X_B.T @ D.T

    def f(self, x, *, batch=None):
        _, _, R = self._upper_residual(x, batch)
        return 0.5 * (R * R).sum() / R.shape[0]

    def grad_f(self, x, *, batch=None):
        D, X_B, R = self._upper_residual(x, batch)
        scale = -1.0 / R.shape[0]
        grad_D = scale * (R.T @ X_B.T)
        grad_X_B = scale * (D.T @ R.T)
        if is_full(batch):
            grad_X = grad_X_B
        else:
            # index_add sums repeated indices (sampling is with replacement)
            grad_X = torch.zeros(
                self.n_atoms, self.n_upper, dtype=x.dtype,
                device=x.device).index_add_(1, batch, grad_X_B)
        return torch.cat([grad_D.reshape(-1), grad_X.reshape(-1)])

    # lower level: depends on D~ only
    def _lower_residual(self, x, batch):
        D, _ = self.split(x)
        codes = self.rows(self.codes_old, batch)
        return codes, self.rows(self.A_old, batch) - codes @ D.T

    def g(self, x, *, batch=None):
        _, R = self._lower_residual(x, batch)
        return 0.5 * (R * R).sum() / R.shape[0]

    def grad_g(self, x, *, batch=None):
        return self.g_and_grad_g(x, batch=batch)[1]

    def g_and_grad_g(self, x, *, batch=None):
        codes, R = self._lower_residual(x, batch)
        n_B = R.shape[0]
        grad = torch.zeros_like(x)
        grad[:self.size_D] = (-(R.T @ codes) / n_B).reshape(-1)
        return 0.5 * (R * R).sum() / n_B, grad

    def random_start(self, generator):
        """D~_0 = [D_hat, 0] and a fresh Gaussian X~_0 with l1-normalized
        columns."""
        X = torch.randn(self.n_atoms, self.n_upper, generator=generator,
                        dtype=self.dtype)
        return self._start(X.to(self.device))

    def task_metrics(self, x, threshold=0.9):
        """``recovery_rate``: share of the true atoms matched by a learned
        atom.

        An atom d*_i counts as recovered when some nonzero learned column d~_j
        has |<d*_i, d~_j / ||d~_j||>| > 0.9 (Cao et al. 2023, Sec. 5; the
        paper does not say whether learned columns are normalized: they are
        here, as in the CG-BiO code of Jiang et al. 2023, and zero columns,
        such as the new atoms at the start, never match).
        """
        D, _ = self.split(x)
        norms = D.norm(dim=0)
        D_unit = D[:, norms > 1e-12] / norms[norms > 1e-12]
        if D_unit.shape[1] == 0:
            return {"recovery_rate": 0.0}
        corr = (self.D_true.T @ D_unit).abs().max(dim=1).values
        return {"recovery_rate": float((corr > threshold).double().mean())}

    def __repr__(self):
        return (f"DictionaryLearningBilevel(n_features={self.n_features}, "
                f"n_atoms={self.n_atoms}, n_old={self.n_lower}, "
                f"n_new={self.n_upper}, delta={self.delta})")
