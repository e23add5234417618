"""The exact quantities of regularization selection: y*(x) and grad F(x).

Untimed, for the metrics (:class:`~benchmark_utils.problems.
regularization_selection.RegularizationSelectionBilevel` mixes
:class:`ExactLogisticSolves` in). The Hessian of g in y on the training
sum is, with J_i = sigma'(z_i) (binary) or diag(p_i) - p_i p_i^T,

    grad^2_yy g = 1/n sum_i J_i kron a_i a_i^T + diag(lambda(x)).

Forming it densely costs about n dim_y^2: done on the whole sum while that
is at most DENSE_MAX_WORK (synthetic, ijcnn1: 50k x 22^2), then factorized
(Cholesky) for exact Newton steps. Above it (covtype: 372k x 378^2, 8 s a
formation on 2 cores) it is formed on the first m = DENSE_MAX_WORK /
dim_y^2 training rows (a random subsample: the split shuffles) and its
factor preconditions conjugate gradient on exact full-sum products
(inexact Newton; :func:`~benchmark_utils.numerics.linear_systems.
refined_conjugate_gradient`). ``inner_solution``: Newton's method
(:mod:`benchmark_utils.numerics.newton_inner_solver`), warm-started at the
last solution, to ``||grad_y g|| <= 1e-10 mu(x)``, ``mu(x) = min
lambda(x)`` (the loss is convex), or the gradient's rounding floor; the
bound ``||grad_y g|| / mu(x) >= ||y - y*||`` is ``inner_accuracy`` (the
metric ``inner_tolerance``). ``hypergradient``: grad F = -grad^2_xy g w
(grad_x f = 0) with ``grad^2_yy g w = grad_y f`` at y*(x), solved to
ADJOINT_RTOL by conjugate gradient on exact products, preconditioned by
the last Cholesky factor taken at this x (or a fresh one).
"""
import math

import torch

from benchmark_utils.numerics.linear_systems import refined_conjugate_gradient
from benchmark_utils.numerics.newton_inner_solver import newton_minimize

# largest n * dim_y^2 of a dense Hessian formation (about 0.2 s on 2 cores)
DENSE_MAX_WORK = 2e9
# rows per chunk of a formation (bounds its memory)
CHUNK_ROWS = 8192
# relative residual of the adjoint solve
ADJOINT_RTOL = 1e-12
CG_MAX_ITER = 1000


class ExactLogisticSolves:
    """Newton / Cholesky / preconditioned CG solves on the full training
    sum. Reads the problem's ``A_train``, ``loss``, ``n_outputs``,
    ``n_features``, ``n_lower``, ``y0``, ``strengths`` and its oracles."""

    def _init_exact_state(self):
        self._cache = None          # (x, y*(x)) of the last solve
        self._factor = None         # (x, solve) of the last factorization
        self.inner_accuracy = None
        self.dense_rows = min(self.n_lower, max(1, math.floor(
            DENSE_MAX_WORK / self.dim_y ** 2)))
        self.dense = self.dense_rows == self.n_lower

    def mu(self, x):
        """The strong convexity of g(x, .): min lambda(x)."""
        return float(self.strengths(x).min())

    def dense_hessian(self, x, y, n_rows=None):
        """grad^2_yy g(x, y) with the data term's mean over the first
        ``n_rows`` training rows (default: all; module doc)."""
        K, D = self.n_outputs, self.n_features
        n = self.n_lower if n_rows is None else n_rows
        H = torch.zeros(K * D, K * D, dtype=self.dtype, device=self.device)
        W = y.reshape(K, D)
        for start in range(0, n, CHUNK_ROWS):
            A = self.A_train[start:min(start + CHUNK_ROWS, n)]
            Z = A @ W.T
            if K == 1:
                s = torch.sigmoid(Z[:, 0])
                H += (A * (s * (1 - s))[:, None]).T @ A
                continue
            # sum_k e_k e_k^T kron A^T diag(p_k) A - Q^T Q, Q_i = p_i kron a_i
            P = torch.softmax(Z, dim=1)
            for k in range(K):
                H[k * D:(k + 1) * D, k * D:(k + 1) * D] += (
                    (A * P[:, k:k + 1]).T @ A)
            Q = (P[:, :, None] * A[:, None, :]).reshape(A.shape[0], K * D)
            H -= Q.T @ Q
        H /= n
        H.diagonal().add_(self.strengths(x))
        return H

    def full_hvp(self, x, y):
        """``v -> grad^2_yy g(x, y) v`` on the full sum, the logits'
        curvature computed once."""
        A, K = self.A_train, self.n_outputs
        jacobian = self.loss.jacobian(A @ y.reshape(K, -1).T)
        lam, n = self.strengths(x), self.n_lower
        return lambda v: (jacobian(A @ v.reshape(K, -1).T).T @ A).reshape(
            -1) / n + lam * v

    def _cholesky(self, x, y):
        """``solve(r)`` by the Cholesky factor of :meth:`dense_hessian` on
        ``dense_rows`` rows (the exact Hessian when ``self.dense``)."""
        chol = torch.linalg.cholesky(
            self.dense_hessian(x, y, self.dense_rows))

        def solve(r):
            return torch.cholesky_solve(r[:, None], chol)[:, 0]
        self._factor = (x.clone(), solve)
        return solve

    def _newton_solver(self, x, y):
        """The Newton system's solver at (x, y): exact (Cholesky) when
        ``self.dense``, else ``solve(r, rtol)`` by conjugate gradient
        preconditioned by the subsampled factor (module doc)."""
        factor = self._cholesky(x, y)
        if self.dense:
            return factor
        hvp = self.full_hvp(x, y)
        return lambda r, rtol=1e-13: refined_conjugate_gradient(
            hvp, None, r, tol=rtol, max_iter=CG_MAX_ITER,
            precondition=factor)

    def _full_g(self, x, y):
        return self.g(x, y)

    def _full_grad_g_y(self, x, y):
        return self.grad_g_y(x, y)

    def inner_solution(self, x, max_iter=100):
        """y*(x) by Newton's method (module doc), warm-started at the last
        solution; ``self.inner_accuracy`` is the certified bound
        ||grad_y g|| / mu(x) >= ||y - y*|| of the returned point."""
        if self._cache is not None and torch.equal(self._cache[0], x):
            return self._cache[1].clone()
        y = self.y0.clone() if self._cache is None else self._cache[1].clone()
        y, self.inner_accuracy = newton_minimize(
            self._full_g, self._full_grad_g_y, self._newton_solver, x, y,
            self.mu(x), exact=self.dense, max_iter=max_iter)
        self._cache = (x.clone(), y.clone())
        return y

    def hypergradient(self, x, y_star=None):
        """grad F(x) = -grad^2_xy g [grad^2_yy g]^-1 grad_y f at y*(x)
        (module doc)."""
        y = self.inner_solution(x) if y_star is None else y_star
        rhs = self.grad_f_y(x, y)
        hvp = self.full_hvp(x, y)
        factor = None
        if self._factor is not None and torch.equal(self._factor[0], x):
            factor = self._factor[1]
        # CG on the exact products, preconditioned by the Cholesky factor
        # (exact when dense: one or two iterations; Newton's last factor
        # where it was taken at this x)
        w = refined_conjugate_gradient(
            hvp, None, rhs, tol=ADJOINT_RTOL, max_iter=CG_MAX_ITER,
            precondition=factor or self._cholesky(x, y))
        return self.grad_f_x(x, y) - self.hvp_xy_g(x, y, w)

