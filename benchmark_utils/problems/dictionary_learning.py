"""Continual dictionary learning as a simple bilevel problem.

Note 000 §1.4 example 2 and §4.2, note 001 §4.2 (eqs. (4)-(5) of paper 000,
eq. (7) of paper 001). Old data A (n samples) was explained by an old
dictionary D_hat (p atoms) with codes X_hat; new data A' (n' samples)
arrives. With q > p atoms, the variable is x = (D~ in R^{m x q},
X~ in R^{q x n'}) and

    f(D~, X~) = 1/(2n') sum_k ||a'_k - D~ x~_k||^2          (nonconvex)
    g(D~)     = 1/(2n)  sum_i ||a_i  - D~ x_hat_i||^2         (convex in D~)
    Z = {||d~_j||_2 <= 1 for all j} x {||x~_k||_1 <= delta for all k},

where x_hat_i is x_hat_i padded with q - p zeros, so the q - p new atoms do
not change g: its solution set is not a single point.

Layout of the flat variable: ``x = concat(vec(D~), vec(X~))`` in row-major
order; the columns of X~ are the upper-level samples.

Choices where the papers are silent (all from the CG-BiO code that paper 000
says it follows, note 000 §8, except where stated):
* the true dictionary has ``n_atoms`` N(0, 1) columns normalized to unit norm;
  the old data uses the first ``n_old_atoms`` atoms and the new data the last
  ``n_new_atoms`` (40 and 20 of 50 share 10 atoms: the paper's "20 of the
  atoms, sharing at least 10"; CG-BiO used 21 atoms 30..50);
* each code has ``n_nonzeros`` nonzeros at uniformly random positions among
  its atoms, magnitude U[0.2, 1] with a random sign;
* the old dictionary comes from two Frank-Wolfe phases (paper 000 F.2):
  joint FW on (D, X) from a normalized Gaussian D and X = 0 with step
  1/sqrt(t+1), then FW on D alone with exact line search;
* the bilevel start is D~_0 = [D_hat, 0] and X~_0 Gaussian with columns
  rescaled to l1 norm delta (paper 000 §4.2, identical for all methods);
  the random start of a repetition redraws X~_0 only.
"""
import numpy as np
import torch

from benchmark_utils.problems.batches import is_full
from benchmark_utils.sets import ColumnBalls, ProductSet
from benchmark_utils.problems.simple import SimpleBilevelProblem


def make_continual_dictionary_data(n_features=25, n_atoms=50, n_old_atoms=40,
                                   n_new_atoms=20, n_old_samples=250,
                                   n_new_samples=250, n_nonzeros=5,
                                   noise=0.01, seed=0):
    """Synthetic old/new data of the continual dictionary-learning task.

    Returns ``(D_true, A_old, A_new)`` with samples as columns: D_true is
    (n_features, n_atoms), A_old (n_features, n_old_samples) and A_new
    (n_features, n_new_samples).
    """
    rng = np.random.default_rng(seed)
    D_true = rng.standard_normal((n_features, n_atoms))
    D_true /= np.linalg.norm(D_true, axis=0)
    old_atoms = np.arange(n_old_atoms)
    new_atoms = np.arange(n_atoms - n_new_atoms, n_atoms)

    def codes(atoms, n_samples):
        X = np.zeros((n_atoms, n_samples))
        for k in range(n_samples):
            support = rng.choice(atoms, size=n_nonzeros, replace=False)
            values = rng.uniform(0.2, 1.0, n_nonzeros)
            X[support, k] = values * rng.choice([-1.0, 1.0], n_nonzeros)
        return X

    A_old = D_true @ codes(old_atoms, n_old_samples)
    A_old += noise * rng.standard_normal(A_old.shape)
    A_new = D_true @ codes(new_atoms, n_new_samples)
    A_new += noise * rng.standard_normal(A_new.shape)
    return D_true, A_old, A_new


def _lmo_unit_columns(G):
    """argmin <G, D> over unit-l2 columns: -G_j / ||G_j|| (0 for a zero column)."""
    norms = np.linalg.norm(G, axis=0)
    return -G / np.where(norms > 0, norms, 1.0)


def _lmo_l1_columns(G, radius):
    """argmin <G, X> over l1 columns of given radius: a signed vertex per column."""
    S = np.zeros_like(G)
    rows = np.argmax(np.abs(G), axis=0)
    cols = np.arange(G.shape[1])
    S[rows, cols] = -radius * np.sign(G[rows, cols])
    return S


def fit_old_dictionary(A, n_atoms, delta, n_iter_joint=10_000,
                       n_iter_dictionary=10_000, seed=0):
    """Two-phase Frank-Wolfe fit of (D_hat, X_hat) on the old data (paper 000 F.2).

    Phase 1: FW on (D, X) for problem (4), step 1/sqrt(t+1), from a
    normalized Gaussian D and X = 0. Phase 2: FW on D alone with exact line
    search on the quadratic. Losses are 1/(2n) ||A - DX||_F^2.
    """
    rng = np.random.default_rng(seed)
    n_samples = A.shape[1]
    D = rng.standard_normal((A.shape[0], n_atoms))
    D /= np.linalg.norm(D, axis=0)
    X = np.zeros((n_atoms, n_samples))
    for t in range(n_iter_joint):
        R = A - D @ X
        grad_D = -(R @ X.T) / n_samples
        grad_X = -(D.T @ R) / n_samples
        step = 1.0 / np.sqrt(t + 1)
        D += step * (_lmo_unit_columns(grad_D) - D)
        X += step * (_lmo_l1_columns(grad_X, delta) - X)
    XXt = X @ X.T
    for _ in range(n_iter_dictionary):
        grad_D = -((A - D @ X) @ X.T) / n_samples
        direction = _lmo_unit_columns(grad_D) - D
        curvature = np.sum((direction @ XXt) * direction) / n_samples
        if curvature <= 0:
            break
        step = np.clip(-np.sum(grad_D * direction) / curvature, 0.0, 1.0)
        D += step * direction
    return D, X


class DictionaryLearningBilevel(SimpleBilevelProblem):
    """The continual dictionary-learning bilevel problem (see module doc)."""

    f_convex = False

    def __init__(self, A_old, A_new, D_hat, X_hat, D_true, n_atoms, delta,
                 X_start, device="cpu"):
        """``X_start``: the start's codes, columns rescaled to l1 norm delta."""
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
        """[D_hat, 0] with X's columns rescaled to l1 norm delta (paper 000)."""
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
        else:   # index_add sums repeated indices (sampling is with replacement)
            grad_X = torch.zeros(self.n_atoms, self.n_upper, dtype=x.dtype,
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
        """D~_0 = [D_hat, 0] and a fresh Gaussian X~_0 with l1-normalized columns."""
        X = torch.randn(self.n_atoms, self.n_upper, generator=generator,
                        dtype=self.dtype)
        return self._start(X.to(self.device))

    def task_metrics(self, x, threshold=0.9):
        """``recovery_rate``: share of the true atoms matched by a learned atom.

        An atom d*_i counts as recovered when some nonzero learned column d~_j
        has |<d*_i, d~_j / ||d~_j||>| > 0.9 (paper 000 §4.2; learned columns
        are normalized as in the CG-BiO code, zero columns never match).
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
