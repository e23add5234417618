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

The data and the fit are the same bit for bit on any CPU: every product
that enters them is :func:`benchmark_utils.numerics.ordered.matmul`, not
BLAS, whose kernels round by CPU (the fit's 20,000 steps would carry such
last-bit differences to 1e-9); BLAS serves only to find the fit's code
vertices where its rounding provably does not matter
(:func:`fit_old_dictionary`).
"""
import numpy as np
import torch

from benchmark_utils.numerics.ordered import matmul
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

    A_old = matmul(D_true, codes(old_atoms, n_old_samples))
    A_old += noise * rng.standard_normal(A_old.shape)
    A_new = matmul(D_true, codes(new_atoms, n_new_samples))
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


def _code_vertex(codes, grad_X):
    """The vertex of the code set's own LMO (``codes``: l1 column balls) at
    ``grad_X`` as ``(atom, value)`` per column: its one nonzero."""
    vertex = codes.lmo(torch.from_numpy(grad_X).reshape(-1)).numpy().reshape(
        grad_X.shape)
    atom = np.argmax(np.abs(vertex), axis=0)
    return atom, vertex[atom, np.arange(vertex.shape[1])]


def _times_vertex_t(M, atom, value, n_atoms):
    """``M V^T`` for the vertex V of :func:`_code_vertex` (one nonzero
    per column): column j is the sum of ``value_k M[:, k]`` over the
    columns k with ``atom_k = j``, added in k order (``np.bincount``)."""
    rows = M.shape[0]
    bins = (np.arange(rows)[:, None] * n_atoms + atom).ravel()
    return np.bincount(bins, weights=(M * value).ravel(),
                       minlength=rows * n_atoms).reshape(rows, n_atoms)


def _gamma(k):
    """Higham's gamma_k = k u / (1 - k u), u = 2^-53: a float64 sum of k
    products, in any order, fused or not, is within gamma_k |x|^T |y| of
    x^T y."""
    return k * 2.0 ** -53 / (1 - k * 2.0 ** -53)


def _certain_code_vertex(A, D, X, delta, a_norms):
    """The code vertex ``_code_vertex(codes, -D^T (A - D X) / n)`` of
    the ordered products, found from BLAS products where their rounding
    cannot change it; None where it might.

    Both products, BLAS's or ordered, are within B_k (per column k) of the
    exact ``G = D^T (A - D X)``: ``|fl(G) - G| <= gamma_m |D|^T |R| +
    gamma_{q+1} |D|^T (|A| + |D| |X|)``, bounded by Cauchy-Schwarz with
    the largest column norm c of D, and doubled (it covers the ordered
    product's own R and this bound's rounding): ``B_k = 2 c (gamma_m
    ||r_k|| + gamma_{q+1} (||a_k|| + ||D||_F ||x_k||))``. Where each
    column's largest |G_jk| of BLAS exceeds the next by more than 5 B_k,
    the ordered product has the same argmax, strictly, and the same sign:
    the vertex is the ordered one, bit for bit."""
    R = A - D @ X
    G = D.T @ R
    magnitude = np.abs(G)
    atom = np.argmax(magnitude, axis=0)
    columns = np.arange(G.shape[1])
    top = magnitude[atom, columns]
    second = (np.partition(magnitude, -2, axis=0)[-2]
              if G.shape[0] > 1 else 0.0)
    c = np.sqrt(np.max(np.add.reduce(D * D, axis=0)))
    bound = 2 * c * (_gamma(A.shape[0]) * np.sqrt(np.add.reduce(R * R, axis=0))
                     + _gamma(D.shape[1] + 1) * (a_norms + np.sqrt(
                         np.add.reduce(D * D, axis=None)
                         * np.add.reduce(X * X, axis=0))))
    if not np.all(top - second > 5 * bound):
        return None
    # grad_X = -G / n: its vertex value is -delta sign(grad_X) = delta sign(G)
    return atom, delta * np.sign(G[atom, columns])


def fit_old_dictionary(A, n_atoms, delta, n_iter_joint=10_000,
                       n_iter_dictionary=10_000, seed=0):
    """Two-phase Frank-Wolfe fit of (D_hat, X_hat) on the old data (Cao et
    al. 2023, App. F.2).

    Phase 1: FW on (D, X) for the dictionary-learning problem, eq. (4) of
    the paper, with step 1/sqrt(t+1), from a normalized Gaussian D and
    X = 0. Phase 2: FW on D alone with exact line search on the quadratic.
    Losses are 1/(2n) ||A - DX||_F^2; the constraints are unit-l2 columns
    for D and l1 columns of radius delta for X.

    Computed with the same bits on any CPU, in the cheapest form found:
    ``grad_D = -(A X^T - D X X^T) / n`` by an ordered (m, q, q) product,
    ``A X^T`` and ``X X^T`` updated along X's steps ``X + step (V - X)``
    (V has one nonzero per column: products with it are sums of columns,
    :func:`_times_vertex_t`); X's vertex, the l1 LMO at ``grad_X = -D^T (A
    - D X) / n``, that of the ordered products, which are computed only
    where BLAS's might give another (:func:`_certain_code_vertex`, one
    step in 10,000 on the default instance). Phase 2 (X fixed) computes
    ``A X^T`` and ``X X^T`` once and ``D X X^T`` along D's steps: one
    ordered (m, q, q) product a step, ``direction X X^T``.
    """
    rng = np.random.default_rng(seed)
    m, n_samples = A.shape
    D = rng.standard_normal((m, n_atoms))
    D /= np.linalg.norm(D, axis=0)
    AX = np.concatenate([A, np.zeros((n_atoms, n_samples))])
    X = AX[m:]                              # a view: AX = [A; X]
    AXt = np.zeros((m, n_atoms))            # A X^T
    XXt = np.zeros((n_atoms, n_atoms))      # X X^T
    a_norms = np.sqrt(np.add.reduce(A * A, axis=0))
    columns = np.arange(n_samples)
    codes = ColumnBalls(n_atoms, n_samples, "l1", delta)
    for t in range(n_iter_joint):
        grad_D = -(AXt - matmul(D, XXt)) / n_samples
        vertex = _certain_code_vertex(A, D, X, delta, a_norms)
        if vertex is None:
            vertex = _code_vertex(
                codes, -matmul(D.T, A - matmul(D, X)) / n_samples)
        atom, value = vertex
        step = 1.0 / np.sqrt(t + 1)
        D += step * (_lmo_unit_columns(grad_D) - D)
        AVt_XVt = _times_vertex_t(AX, atom, value, n_atoms)
        XVt = AVt_XVt[m:]
        VVt = np.diag(np.bincount(atom, weights=value * value,
                                  minlength=n_atoms))
        AXt = (1 - step) * AXt + step * AVt_XVt[:m]
        XXt = ((1 - step) ** 2 * XXt + step * (1 - step) * (XVt + XVt.T)
               + step ** 2 * VVt)
        V = np.zeros_like(X)
        V[atom, columns] = value
        X += step * (V - X)
    X = X.copy()
    AXt, XXt = matmul(A, X.T), matmul(X, X.T)
    DXXt = matmul(D, XXt)
    for _ in range(n_iter_dictionary):
        grad_D = -(AXt - DXXt) / n_samples
        direction = _lmo_unit_columns(grad_D) - D
        direction_XXt = matmul(direction, XXt)
        curvature = np.sum(direction_XXt * direction) / n_samples
        if curvature <= 0:
            break
        step = np.clip(-np.sum(grad_D * direction) / curvature, 0.0, 1.0)
        D += step * direction
        DXXt += step * direction_XXt
    return D, X
