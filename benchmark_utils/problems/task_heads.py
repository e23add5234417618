"""The per-task heads of hyper-representation learning
(:mod:`~benchmark_utils.problems.hyper_representation`): multinomial
logistic regression with ridge C on each task's features, its closed-form
gradients and Hessian products, certified batched Newton fits, and exact
solves with the per-task Hessians.

For one task with n points of features phi~_i (D = n_features + 1) and k
classes, the loss is ``mean_i CE(W phi~_i, b_i) + C ||W||^2``. The fits set
the cost of an evaluation of the metrics
(``perf/hyper_representation_evaluation.py``); how they are made cheap:

* one task's Hessian is ``H = M - Q^T Q / n`` (class blocks M, rows ``Q_i =
  p_i kron phi~_i``), built in closed form; when ``n < k D`` (always at the
  papers' sizes) it is factorized through the Woodbury identity (k D x D
  Cholesky factors and one n x n capacitance), else densely;
* every task starts from the previous evaluation's head or from 0,
  whichever has the lower loss; only the tasks still above the tolerance
  are factorized, and a task whose last full step cut its gradient at least
  ``1 / CHORD_RATIO``-fold reuses its factorization for the next step (a
  chord step, Shamanskii 1967; the certificate is the gradient norm,
  whatever the steps).
"""
import torch

# relative gradient tolerance of the head fits: ||grad|| <= GRAD_TOL * 2C
GRAD_TOL = 1e-10
NEWTON_MAX_ITER = 60
# a task's next Newton step reuses its factorization (a chord step) when its
# last step was a full one that cut its gradient norm at least this much
CHORD_RATIO = 0.1
# largest number of Hessian entries held at once by a head fit (tasks are
# factorized in chunks: 20-way heads on 32 features are 660 x 660 each)
HESSIAN_ENTRIES = 4_000_000


class RidgeSoftmaxHeads:
    """The heads of ``ways`` classes with ridge ``C``, on features of
    dimension ``n_head`` (with the intercept), batched over tasks: features
    (B, n, D), labels (B, n), heads W (B, k, D)."""

    def __init__(self, C, ways, n_head):
        self.C, self.ways, self.n_head = C, ways, n_head

    def ce(self, phi, labels, W):
        """Per-task mean cross-entropies (B,) and probabilities (B, n, k)."""
        logits = torch.einsum("bnd,bkd->bnk", phi, W)
        lse = torch.logsumexp(logits, dim=-1)
        ce = lse - logits.gather(-1, labels[..., None])[..., 0]
        return ce.mean(dim=1), torch.exp(logits - lse[..., None])

    def residual(self, probs, labels):
        """(p - e_b) / n: d mean CE / d logits, (B, n, k)."""
        # one_hot checks its labels on the host: not vmap-able (SABA's
        # per-sample rows), so compare with the class indices instead
        onehot = labels[..., None] == torch.arange(self.ways,
                                                   device=labels.device)
        return (probs - onehot.to(probs.dtype)) / probs.shape[1]

    def hessian_product(self, phi, probs, V):
        Av = torch.einsum("bnd,bkd->bnk", phi, V)
        jac = probs * (Av - (probs * Av).sum(dim=-1, keepdim=True))
        return (torch.einsum("bnk,bnd->bkd", jac, phi) / phi.shape[1]
                + 2.0 * self.C * V)

    def fit(self, phi, labels, W):
        """Certified minimizers of each task's support loss (module doc):
        (heads, per-task gradient norms) from the start ``W``."""
        # a task starts from W or from 0, whichever has the lower loss
        zero = torch.zeros_like(W)
        warm = (self._task_values(phi, labels, W)
                < self._task_values(phi, labels, zero))
        W = torch.where(warm[:, None, None], W, zero)
        chunk = self._chunk(phi.shape[1])
        parts = [self._newton(phi[i:i + chunk], labels[i:i + chunk],
                              W[i:i + chunk].clone())
                 for i in range(0, phi.shape[0], chunk)]
        return (torch.cat([h for h, _ in parts]),
                torch.cat([r for _, r in parts]))

    def _task_values(self, phi, labels, W):
        return (self.ce(phi, labels, W)[0]
                + self.C * (W ** 2).sum(dim=(1, 2)))

    def _task_gradients(self, phi, labels, W):
        _, probs = self.ce(phi, labels, W)
        return (torch.einsum("bnk,bnd->bkd", self.residual(probs, labels),
                             phi) + 2.0 * self.C * W), probs

    def _woodbury(self, n):
        """Whether n support points factorize through the n x n capacitance
        (n < k D) rather than the k D x k D Hessian (module doc)."""
        return n < self.ways * self.n_head

    def _chunk(self, n):
        """Tasks per chunk of a factorization (HESSIAN_ENTRIES)."""
        kD = self.ways * self.n_head
        size = (kD * (n + self.n_head) + n * n if self._woodbury(n)
                else kD * kD)
        return max(1, HESSIAN_ENTRIES // size)

    @staticmethod
    def _outer(phi):
        """phi_i phi_i^T of every support point, (B, n, D * D)."""
        return (phi[..., :, None] * phi[..., None, :]).flatten(2)

    def _factor(self, phi, probs, woodbury=None, outer=None):
        """Factorization of every task's Hessian H = M - Q^T Q / n (module
        doc) at features phi (B, n, D) and probabilities probs (B, n, k):
        Cholesky factors of the class blocks M_c and of the capacitance
        n I - Q M^-1 Q^T when ``woodbury`` (default: n < k D), else of H."""
        B, n, D = phi.shape
        k = self.ways
        if woodbury is None:
            woodbury = self._woodbury(n)
        eye = torch.eye(D, dtype=phi.dtype, device=phi.device)
        if outer is None:
            outer = self._outer(phi)
        blocks = ((probs.transpose(1, 2) @ outer).reshape(B, k, D, D) / n
                  + 2.0 * self.C * eye)
        if woodbury:
            chol = torch.linalg.cholesky(blocks)
            inverse = torch.linalg.solve_triangular(
                chol, eye.expand(B, k, D, D), upper=False)
            # M^-1/2 Q^T: row (c, d), column i is (L_c^-1 phi_i)_d p_ic
            half = (inverse.reshape(B, k * D, D) @ phi.transpose(1, 2))
            half = (half.reshape(B, k, D, n)
                    * probs.transpose(1, 2)[:, :, None, :]).reshape(
                        B, k * D, n)
            capacitance = torch.baddbmm(
                n * torch.eye(n, dtype=phi.dtype, device=phi.device),
                half.transpose(1, 2), half, alpha=-1.0)
            return chol, torch.linalg.cholesky(capacitance), phi, probs
        H = torch.zeros(B, k, D, k, D, dtype=phi.dtype, device=phi.device)
        H.diagonal(dim1=1, dim2=3).copy_(blocks.permute(0, 2, 3, 1))
        Q = (probs[..., None] * phi[:, :, None, :]).reshape(B, n, k * D)
        H = H.reshape(B, k * D, k * D) - Q.transpose(1, 2) @ Q / n
        return (torch.linalg.cholesky(H),)

    @staticmethod
    def _solve(factor, R):
        """H^-1 R per task for R (B, k, D), from ``_factor`` (Woodbury:
        H^-1 = M^-1 + M^-1 Q^T (n I - Q M^-1 Q^T)^-1 Q M^-1)."""
        if len(factor) == 1:
            B = R.shape[0]
            return torch.cholesky_solve(R.reshape(B, -1, 1),
                                        factor[0]).reshape(R.shape)
        chol, capacitance, phi, probs = factor
        s = torch.cholesky_solve(R[..., None], chol)[..., 0]
        Qs = (probs * (phi @ s.transpose(1, 2))).sum(dim=-1, keepdim=True)
        u = torch.cholesky_solve(Qs, capacitance)
        Qu = (probs * u).transpose(1, 2) @ phi
        return s + torch.cholesky_solve(Qu[..., None], chol)[..., 0]

    def _newton(self, phi, labels, W):
        """Damped Newton from W for every task of the batch (module doc);
        returns (heads, per-task gradient norms)."""
        tol = GRAD_TOL * 2.0 * self.C
        eps = torch.finfo(phi.dtype).eps
        outer = self._outer(phi)
        G, probs = self._task_gradients(phi, labels, W)
        norms = torch.linalg.vector_norm(G.flatten(1), dim=1)
        factor, reuse = None, torch.zeros_like(norms, dtype=torch.bool)
        for _ in range(NEWTON_MAX_ITER):
            active = norms > tol
            if not bool(active.any()):
                break
            # only the tasks above the tolerance are factorized, and only
            # those whose last step did not qualify for a chord step
            refresh = active & ~reuse
            if bool(refresh.any()):
                new = self._factor(phi[refresh], probs[refresh],
                                   outer=outer[refresh])
                if factor is None:
                    factor = [part.new_zeros(len(norms), *part.shape[1:])
                              for part in new]
                for full, part in zip(factor, new, strict=True):
                    full[refresh] = part
            index = torch.nonzero(active)[:, 0]
            step = torch.zeros_like(W)
            step[index] = self._solve([part[index] for part in factor],
                                      G[index])
            value = self._task_values(phi, labels, W)
            slope = (G * step).sum(dim=(1, 2))
            # per-task backtracking (Armijo); the full step once the
            # predicted decrease is at the rounding level of the value
            t = torch.ones_like(value)
            settled = slope <= 1e3 * eps * value.abs().clamp(min=1.0)
            for _ in range(40):
                trial = W - t[:, None, None] * step
                ok = settled | (self._task_values(phi, labels, trial)
                                <= value - 1e-4 * t * slope)
                if bool(ok.all()):
                    break
                t = torch.where(ok, t, 0.5 * t)
            W = W - t[:, None, None] * step
            G, probs = self._task_gradients(phi, labels, W)
            previous, norms = norms, torch.linalg.vector_norm(G.flatten(1),
                                                               dim=1)
            reuse = active & (t == 1.0) & (norms <= CHORD_RATIO * previous)
        return W, norms

    def adjoint(self, phi, probs, rhs):
        """z_t = H_t^-1 rhs_t for every task (B, k, D): the factorization
        and one step of iterative refinement with the closed-form Hessian
        product; returns (z, the certified bound sqrt(sum_t ||H_t z_t -
        rhs_t||^2) / (2C) >= ||z - z*||)."""
        chunk = self._chunk(phi.shape[1])
        parts, residuals = [], []
        for i in range(0, phi.shape[0], chunk):
            part = slice(i, i + chunk)
            factor = self._factor(phi[part], probs[part])
            z = self._solve(factor, rhs[part])
            z = z + self._solve(factor, rhs[part] - self.hessian_product(
                phi[part], probs[part], z))
            residuals.append(rhs[part] - self.hessian_product(
                phi[part], probs[part], z))
            parts.append(z)
        accuracy = float(torch.linalg.vector_norm(
            torch.cat(residuals))) / (2.0 * self.C)
        return torch.cat(parts), accuracy
