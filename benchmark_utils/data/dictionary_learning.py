"""The synthetic data of continual dictionary learning and the old fit.

Cao et al. 2023, Sec. 5 and App. F.2 (also used by Giang-Tran et al. 2025,
Sec. 4.2): a 25 x 50 true dictionary, old data from 40 of its atoms, new
data from 20 atoms sharing at least 10 with the old ones, 250 + 250 samples
with 5-sparse codes, noise 0.01; then the old dictionary and codes (D_hat,
X_hat) by two Frank-Wolfe phases.

Where the paper is silent we follow the code of the deterministic
predecessor CG-BiO (Jiang et al. 2023), whose setup the paper says it
reuses:

* the true dictionary has ``n_atoms`` N(0, 1) columns normalized to unit
  norm; the old data uses the first ``n_old_atoms`` atoms and the new data
  the last ``n_new_atoms`` (40 and 20 of 50 share 10 atoms: the paper's "20
  of the atoms, sharing at least 10"; CG-BiO used 21 atoms, 30..50);
* each code has ``n_nonzeros`` nonzeros at uniformly random positions among
  its atoms, magnitude U[0.2, 1] with a random sign (the paper gives the
  magnitudes only);
* the first Frank-Wolfe phase starts from a normalized Gaussian D and
  X = 0 (the paper does not say).
"""
import numpy as np
import torch

from benchmark_utils.sets import ColumnBalls


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
    """argmin <G, D> over unit-l2 columns: -G_j / ||G_j|| (0 for G_j = 0).

    Not ``ColumnBalls(..., "l2", 1.0).lmo``: the set multiplies by
    -1 / ||G_j|| where this divides, which differs in the last bit, and over
    thousands of Frank-Wolfe steps that moves D_hat (by 1e-4 on the quick
    instance): the instance would change.
    """
    norms = np.linalg.norm(G, axis=0)
    return -G / np.where(norms > 0, norms, 1.0)


def fit_old_dictionary(A, n_atoms, delta, n_iter_joint=10_000,
                       n_iter_dictionary=10_000, seed=0):
    """Two-phase Frank-Wolfe fit of (D_hat, X_hat) on the old data (Cao et
    al. 2023, App. F.2).

    Phase 1: FW on (D, X) for the dictionary-learning problem, eq. (4) of
    the paper, with step 1/sqrt(t+1), from a normalized Gaussian D and
    X = 0. Phase 2: FW on D alone with exact line search on the quadratic.
    Losses are 1/(2n) ||A - DX||_F^2; the constraints are unit-l2 columns
    for D and l1 columns of radius delta for X.
    """
    rng = np.random.default_rng(seed)
    n_samples = A.shape[1]
    D = rng.standard_normal((A.shape[0], n_atoms))
    D /= np.linalg.norm(D, axis=0)
    X = np.zeros((n_atoms, n_samples))
    codes = ColumnBalls(n_atoms, n_samples, "l1", delta)
    for t in range(n_iter_joint):
        R = A - D @ X
        grad_D = -(R @ X.T) / n_samples
        grad_X = -(D.T @ R) / n_samples
        step = 1.0 / np.sqrt(t + 1)
        D += step * (_lmo_unit_columns(grad_D) - D)
        vertex = codes.lmo(torch.from_numpy(grad_X).reshape(-1))
        X += step * (vertex.reshape(n_atoms, n_samples).numpy() - X)
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
