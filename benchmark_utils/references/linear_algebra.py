"""Exact NumPy float64 linear algebra that polishes reference candidates.

A CVXPY point is accurate to the solver's tolerances only. Once its support
(or active constraints) is known, the minimizer solves a linear least-squares
system, which an SVD solves to rounding; these helpers do that. The
problem's tensors are only read (converted to float64 NumPy arrays here),
so the references never touch the device a benchmark runs on.
"""
import numpy as np
import torch

from benchmark_utils.references.precision import EPS, TINY

# a polish, not the reference itself (every candidate is certified): a warm
# start from the CVXPY support converges in a few steps or not at all, and
# each step is an SVD, so the budget stays small
ACTIVE_SET_MAX_ITER = 50


def to_numpy(array):
    """A float64 NumPy copy of a tensor or array-like."""
    if torch.is_tensor(array):
        return array.detach().cpu().numpy().astype(np.float64)
    return np.asarray(array, dtype=np.float64)


def call_on_numpy(method, point):
    """``method`` of a feasible set (torch) applied to a NumPy point."""
    return to_numpy(method(torch.as_tensor(point, dtype=torch.float64)))


def row_space(M):
    """Thin SVD of M with numpy's default numerical rank.

    Returns (U_k, s_k, V_k, V_null): M ~ U_k diag(s_k) V_k^T, V_null an
    orthonormal basis of the numerical null space.
    """
    U, s, Vt = np.linalg.svd(M, full_matrices=True)
    tol = (s.max() * max(M.shape) * EPS) if s.size else 0.0
    k = int((s > tol).sum())
    return U[:, :k], s[:k], Vt[:k].T, Vt[k:].T


def lstsq(M, q):
    """Min-norm least-squares solution of M x ~ q."""
    return np.linalg.lstsq(M, q, rcond=None)[0]


def equality_constrained_lstsq(M, q, C, e):
    """argmin ||M x - q|| s.t. C x = e (min-norm where not unique)."""
    x0 = lstsq(C, e)
    x0 = x0 + lstsq(C, e - C @ x0)           # one step of refinement
    _, _, _, N = row_space(C)
    if N.shape[1] == 0:
        return x0
    t = lstsq(M @ N, q - M @ x0)
    t = t + lstsq(M @ N, q - M @ (x0 + N @ t))
    return x0 + N @ t


def ball_constrained_lstsq(M, q, radius):
    """argmin ||M t - q|| s.t. ||t||_2 <= radius (secular equation).

    Min-norm least squares if it fits, else t(lam) = (M^T M + lam I)^-1 M^T q
    with ||t(lam)|| = radius found by Brent's method (the convex
    trust-region problem has no hard case for lam > 0).
    """
    from scipy.optimize import brentq
    U, s, V, _ = row_space(M)
    beta = U.T @ q
    t_ls = V @ (beta / s)
    if np.linalg.norm(t_ls) <= radius:
        return t_ls

    def excess(lam):
        return np.linalg.norm(s * beta / (s ** 2 + lam)) - radius

    high = np.linalg.norm(s * beta) / radius
    lam = brentq(excess, 0.0, high, xtol=1e-300, rtol=4 * EPS, maxiter=500)
    return V @ (s * beta / (s ** 2 + lam))


def active_set_lstsq(M, q, E, e, v0, max_iter=None):
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
    max_iter = max_iter or ACTIVE_SET_MAX_ITER
    converged = False
    for _ in range(max_iter):
        P = np.flatnonzero(passive)
        if P.size == 0:
            break
        s = np.zeros(m)
        s[P] = equality_constrained_lstsq(M[:, P], q, E[:, P], e)
        if (s[P] > 0).all():
            v = s
            residual = M @ v - q
            y = lstsq(E[:, P].T, -(M[:, P].T @ residual))
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
