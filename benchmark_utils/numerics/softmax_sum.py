"""The full training sum of a weighted multinomial logistic model, for the
exact metrics of hyper-cleaning (y*(x) by Newton's method, the exact
hypergradient) at MNIST scale.

With features ``a_i`` (rows of A, n x D), labels ``b_i``, K classes, the
model ``y = vec(W)`` (W of shape K x D) and sample weights ``w_i >= 0``::

    G(y)   = sum_i w_i CE(W a_i; b_i),   CE(z; b) = logsumexp(z) - z_b
    grad G = sum_i w_i (p_i - e_{b_i}) a_i^T                  (K x D)
    hess G = sum_i w_i (diag(p_i) - p_i p_i^T) kron a_i a_i^T

(p_i the softmax probabilities); the caller adds its ridge. Every product
reads A, which is what an evaluation costs. On the CPU: row blocks of A on
a thread pool, single-threaded BLAS in each; float32 copies of A for the
conjugate-gradient products (``hvp(..., low=True)``; every residual that
decides when a solve is done is a float64 product, see
:func:`benchmark_utils.numerics.linear_systems.refined_conjugate_gradient`);
in-place per-sample work, and the full pass at the last y kept. Other
devices (a GPU) use torch throughout, one block (``array_library``). What
each choice saves: docs/problems.md, "The numerical kernels".
"""
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch

from benchmark_utils.numerics.kronecker_preconditioner import (
    array_library,
    blas_threads,
    gram_eigh,
    weighted_gram,
)

# scipy.linalg is imported where it is used: its import adds about
# 0.2 s to the start of every benchopt process

# fewest rows per block: below this, splitting costs more than it saves
MIN_BLOCK_ROWS = 2000
_POOLS = {}


def available_cores():
    """The cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _pool(workers):
    """A thread pool of ``workers`` threads, one per size and process, kept
    for the process (a forked child has the parent's pool object without
    its threads: it gets its own)."""
    key = (os.getpid(), workers)
    if key not in _POOLS:
        _POOLS[key] = ThreadPoolExecutor(
            workers, thread_name_prefix="softmax_sum")
    return _POOLS[key]


class SoftmaxSum:
    """The weighted softmax cross-entropy sum over (A, labels) (module
    doc). Weights are given per call (a tensor over the n samples); so is
    y, and the probabilities of the last y are kept. ``n_blocks``: by
    default one per available core on the CPU, at least MIN_BLOCK_ROWS
    rows each, and one elsewhere."""

    def __init__(self, A, labels, n_classes, n_blocks=None):
        self.xp, self.to, self.back = array_library(A.device)
        self.K, (self.n, self.D) = n_classes, A.shape
        if n_blocks is None:
            n_blocks = 1
            if A.device.type == "cpu":
                n_blocks = max(1, min(available_cores(),
                                      self.n // MIN_BLOCK_ROWS))
        edges = np.linspace(0, self.n, n_blocks + 1).astype(int)
        self.slices = [slice(int(a), int(b))
                       for a, b in zip(edges[:-1], edges[1:], strict=True)]
        self.A_T = [self.to(A[s].T.contiguous()) for s in self.slices]
        self.A_T_low = None         # float32 copies (_low_A_T)
        # |A|^T for the gradient's rounding estimate; None when A >= 0
        # (pixels and an intercept: A^T itself, one product for both)
        self.abs_A_T = None if bool((A >= 0).all()) else [
            abs(a) for a in self.A_T]
        self.labels = [self.to(labels[s]) for s in self.slices]
        self.columns = [self.to(torch.arange(s.stop - s.start,
                                             device=A.device))
                        for s in self.slices]
        self._pass = None           # (y, [(ce_b, probs_b)]) at the last y

    # -- blocks ------------------------------------------------------------
    def _map(self, work):
        """``[work(b) for b in blocks]``, the blocks on the thread pool with
        single-threaded BLAS (module doc)."""
        blocks = range(len(self.slices))
        if len(self.slices) == 1:
            return [work(0)]
        with blas_threads():
            return list(_pool(len(self.slices)).map(work, blocks))

    def _per_block(self, weights):
        w = self.to(weights)
        return [w[s] for s in self.slices]

    def _low(self, array):
        if self.xp is np:
            return array.astype(np.float32)
        return array.float()

    def _high(self, array):
        if self.xp is np:
            return array.astype(np.float64)
        return array.double()

    # -- full pass ---------------------------------------------------------
    def full_pass(self, y):
        """[(cross-entropies, probabilities K x n_b)] of every block at y,
        kept for the last y."""
        if self._pass is None or not torch.equal(self._pass[0], y):
            W = self.to(y.reshape(self.K, self.D))
            xp = self.xp

            def work(b):
                logits = W @ self.A_T[b]
                logits -= xp.amax(logits, 0)
                e = xp.exp(logits)
                total = e.sum(0)
                ce = xp.log(total) - logits[self.labels[b], self.columns[b]]
                e /= total
                return ce, e
            self._pass = (y.clone(), self._map(work))
        return self._pass[1]

    def probabilities(self, y):
        """The softmax probabilities at y, n x K (a tensor)."""
        return self.back(self.xp.concatenate(
            [probs for _, probs in self.full_pass(y)], 1).T)

    def value(self, weights, y):
        """G(y) = sum_i w_i CE_i."""
        return sum(float((w * ce).sum()) for w, (ce, _) in zip(
            self._per_block(weights), self.full_pass(y), strict=True))

    def gradient(self, weights, y):
        """(grad G(y) as a K D tensor, the rounding-error estimate of its
        norm ``eps || |A|^T |R| ||`` with R the weighted residuals, from the
        same products; see
        :mod:`benchmark_utils.numerics.newton_inner_solver`)."""
        xp, passes, K = self.xp, self.full_pass(y), self.K

        def work(b, w):
            R = passes[b][1] * w
            R[self.labels[b], self.columns[b]] -= w
            if self.abs_A_T is None:    # one pass over A for both products
                both = self.A_T[b] @ xp.concatenate([R, abs(R)], 0).T
                return both[:, :K], both[:, K:]
            return self.A_T[b] @ R.T, self.abs_A_T[b] @ abs(R).T
        parts = self._map_weighted(work, weights)
        product = sum(p for p, _ in parts)
        magnitude = sum(m for _, m in parts)
        noise = float(np.finfo(np.float64).eps * float(
            (magnitude ** 2).sum()) ** 0.5)
        return self.back(product).T.reshape(-1), noise

    def _map_weighted(self, work, weights):
        per_block = self._per_block(weights)
        return self._map(lambda b: work(b, per_block[b]))

    # -- second order ------------------------------------------------------
    def hessian(self, weights, y):
        """``hvp(v, low=False)``: hess G(y) v, in float64 or, with
        ``low=True``, from the float32 copies (module doc); both return a
        float64 tensor."""
        probs = [p for _, p in self.full_pass(y)]
        operands = {False: (self.A_T, probs, [
            w * p for w, p in zip(self._per_block(weights), probs,
                                  strict=True)])}

        def hvp(v, low=False):
            if low not in operands:     # float32 copies, made on first use
                _, P, WP = operands[False]
                operands[low] = (self._low_A_T(), [self._low(p) for p in P],
                                 [self._low(p) for p in WP])
            A_T, P, WP = operands[low]
            V = self.to(v.reshape(self.K, self.D))
            V = self._low(V) if low else V

            def work(b):
                # J_i (V a_i) w_i, J_i = diag(p_i) - p_i p_i^T, in place
                Av = V @ A_T[b]
                Av -= (P[b] * Av).sum(0)
                Av *= WP[b]
                return A_T[b] @ Av.T
            out = sum(self._high(part) for part in self._map(work))
            return self.back(out).T.reshape(-1)
        return hvp

    def _low_A_T(self):
        """The float32 copies of the blocks' A^T, made on first use."""
        if self.A_T_low is None:
            self.A_T_low = [self._low(a) for a in self.A_T]
        return self.A_T_low

    def dense_solver(self, weights, y, shift):
        """``solve(r) = (hess G(y) + shift I)^-1 r`` by Cholesky on the
        explicit K D x K D Hessian (small K D only), formed per block as
        ``sum_k e_k e_k^T kron A^T diag(w p_k) A - Q^T Q`` with
        ``Q_i = sqrt(w_i) p_i kron a_i``; on the CPU through NumPy and
        SciPy, single-threaded (at 300 samples and K D = 650: 12-14 ms
        with torch against 4.5 ms, and 4.7 ms against 3 ms for the
        factorization; an evaluation forms 4-5 of them)."""
        K, D, xp, passes = self.K, self.D, self.xp, self.full_pass(y)

        def work(b, w):
            A = self.A_T[b].T
            WP = passes[b][1] * w                       # K x n_b
            Q = ((xp.sqrt(w) * passes[b][1]).T[:, :, None]
                 * A[:, None, :]).reshape(A.shape[0], K * D)
            return (WP[:, :, None] * A[None]).swapaxes(1, 2) @ A, Q.T @ Q
        parts = self._map_weighted(work, weights)
        H = -sum(QQ for _, QQ in parts)
        blocks = sum(G for G, _ in parts)
        for k in range(K):
            H[k * D:(k + 1) * D, k * D:(k + 1) * D] += blocks[k]
        H[range(K * D), range(K * D)] += shift
        if xp is np:
            from scipy.linalg import cho_factor, cho_solve  # (module top)
            factor = cho_factor(H, check_finite=False)
            return lambda r: torch.from_numpy(
                cho_solve(factor, r.numpy(), check_finite=False))
        chol = torch.linalg.cholesky(H)
        return lambda r: torch.cholesky_solve(r[:, None], chol)[:, 0]

    def cross(self, y, v):
        """Per sample, ``<p_i - e_{b_i}, V a_i>`` (n, a tensor): the
        derivative of CE_i along v, at y (the hypergradient's cross
        derivative weighs it)."""
        V, passes = self.to(v.reshape(self.K, self.D)), self.full_pass(y)

        def work(b):
            Av = V @ self.A_T[b]
            return ((passes[b][1] * Av).sum(0)
                    - Av[self.labels[b], self.columns[b]])
        return self.back(self.xp.concatenate(self._map(work)))

    def data_factor(self, weights):
        """Eigendecomposition of S = A^T diag(w) A (the Kronecker
        preconditioner's data factor), the blocks' Gram matrices formed in
        parallel."""
        grams = self._map_weighted(
            lambda b, w: weighted_gram(self.A_T[b], w), weights)
        return gram_eigh(sum(grams))
