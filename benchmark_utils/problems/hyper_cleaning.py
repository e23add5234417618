"""Data hyper-cleaning as a general bilevel problem.

The experiment of Kwon et al. 2023 (F2SA, Sec. 5) and Huang et al. 2021
(BiAdam, Sec. 5.1 and App. A.1.1). A fraction of the training labels is
corrupted; the upper variable ``x`` in R^{n_train} holds one logit per
training sample, whose sigmoid weighs that sample's loss in the lower level;
the lower variable ``y`` is a linear multinomial logistic model::

    f(x, y) = s_f * mean_{j in val}   CE(y; a_j, b_j)
    g(x, y) = s_g * mean_{i in train} sigma(x_i) CE(y; a_i, b_i) + c ||y||^2

with ``CE(y; a, b) = logsumexp(W a) - (W a)_b`` and ``W = y.reshape(K, D)``.
``reduction="mean"`` (s = 1) is Huang et al.'s form (C = 0.001, 5000 / 5000
samples, corruption rho in {0.2, 0.6, 0.8}); ``reduction="sum"`` (s_f =
n_val, s_g = n_train, so f and g are sums as printed) is Kwon et al.'s form
(c = 0.01, 19000 / 1000 samples, p in {0.1, 0.3}). With sums the ridge is
tiny next to the data term; with means it is not, so the choice changes
mu_g relative to L_g and the step sizes that work. One sample of the upper
level is one validation image, one sample of the lower level one training
image: the per-sample terms are ``f_j = s_f CE_j`` and ``g_i = s_g
sigma(x_i) CE_i + c ||y||^2`` (the ridge is in every term, so a batch mean
keeps it once), and batch values are means over the batch as everywhere in
the benchmark. A lower batch touches only its own coordinates of x: the
x-gradient of a batch is zero elsewhere (repeated indices add up).

Choices where the papers are silent (both say "logistic loss" on MNIST and
nothing more about the model):

* the model has an intercept: features get a trailing constant 1, so
  ``D = n_features + 1`` and ``dim_y = K * D`` (the public stocBiO code of
  Ji et al. 2021, which Kwon et al. run as their second-order baseline and
  on which Huang et al.'s experiments appear to build, uses a 10 x 785
  model); the ridge covers the intercept too, so ``g(x, .)`` is exactly
  ``2c``-strongly convex (for any x) and ``mu_g = 2c``;
* features are pixel intensities scaled to [0, 1], nothing else;
* ``L_g`` bounds every sample's (so every batch's) Hessian in y,
  ``s_g max_i ||a_i||^2 / 2 + 2c``, and ``L_g_full`` the full sum's,
  ``s_g lambda_max(A^T A) / (2 n_train) + 2c`` (both upper bounds, from
  sigma <= 1 and ||diag(p) - p p^T|| <= 1/2); ``L_g_start`` is the full
  sum's exact curvature at the start (x0, y0) = (0, 0), where sigma = 1/2
  and every p is uniform, so the softmax factor diag(p) - p p^T =
  (I - 1 1^T / K) / K has norm 1/K: ``L_g_start = (L_g_full - 2c) / K +
  2c``, K times below L_g_full (F2SA's default inner step reads it; the
  bounds over-estimate the curvature the runs meet about tenfold);
* the upper start is ``x0 = 0`` (every weight 1/2), the lower start
  ``y0 = 0``;
* the splits and the label noise: see
  :mod:`benchmark_utils.data.hyper_cleaning`;
* there is no F* (the upper level is nonconvex in x): ``F_star = None``.

Task metrics: ``test_accuracy`` of the model y on the clean test set;
``cleaning_auc``, the ROC AUC of the weights sigma(x_i) as a score for
"sample i is clean" (0.5 at x0 = 0, 1 when every clean sample outweighs
every corrupted one; NaN without corrupted samples); ``cleaning_f1``, the F1
score of flagging sample i as corrupted when sigma(x_i) < 1/2 (0 at x0).
Neither paper reports these (both plot the validation loss only); they show
whether the weights learned anything.

Exact quantities: ``inner_solution`` is Newton's method with a backtracking
line search on the strongly convex g(x, .)
(:mod:`benchmark_utils.problems.newton_inner_solver`), the Newton systems
solved with the dense Hessian (Cholesky) when ``dim_y`` is small (digits)
and by conjugate gradient on closed-form Hessian-vector products otherwise
(MNIST), preconditioned by a Kronecker-factored approximation of the
Hessian (:mod:`benchmark_utils.problems.kronecker_preconditioner`: 5-25 CG
iterations per Newton step at Kwon et al.'s size where the diagonal
preconditioner, ``preconditioner="jacobi"``, took thousands); it is
warm-started at the last solution (metrics evaluate nearby points in turn).
The hypergradient (``grad_x f = 0`` here) solves one more Hessian system.
``inner_accuracy`` (the certified ||y - y*||, reported as the metric
``inner_tolerance``) and ``inner_work`` (Newton steps, CG iterations)
describe the last inner solve.

Cost of an evaluation on the CG path (``perf/hyper_cleaning_evaluation.py``
prints it against the previous method). Nearly all of it is reading A
(n_train x D, 120 MB at Kwon et al.'s size): twice per Hessian-vector
product (HVP), once or twice per full pass, n_train D^2 for the
preconditioner's data factor (about 20 HVPs with syrk). Choices:

* warm starts: y*(x) starts from the last solution (an implicit-function
  extrapolation y + dy*/dx (x_new - x) would cost one more solve and is
  what Newton's first step from y does anyway), the hypergradient's CG from
  the last adjoint solution, and the data factor S = A^T diag(w(x)) A of
  the preconditioner is kept while max_i |x_i - x_i at S| <=
  PRECONDITIONER_REUSE (0.5: each weight sigma(x_i) then within a factor
  e^0.5 of the one S holds, so P stays within that factor of the fresh
  one; it only preconditions, the certificate is unaffected);
* Newton stops at the gradient's known rounding floor (an estimate of the
  rounding error of the computed gradient, from the same pass as the
  gradient: see :mod:`benchmark_utils.problems.newton_inner_solver`), which
  saves the stall rule's extra step and a too-tight last step (warm
  evaluations at Kwon et al.'s size: 58 CG iterations against 83, same
  recorded bound about 2e-10);
* the hypergradient's cross derivative reuses the full pass cached at y*
  (the solvers' oracle ``hvp_xy_g`` would redo it);
* on the CPU the per-sample array work of the full passes and HVPs (n x K
  softmax terms, done in place) and the preconditioner's small products
  go through NumPy, single-threaded (the problem's tensors viewed without
  copies); the large products with A stay in torch. PyTorch's intra-op
  threads make each small operation a parallel region, and on a loaded
  2-core machine each region waits for a descheduled thread (the HVP's
  elementwise part took 60 ms with torch against 0.4 ms on one thread);
  NumPy's BLAS with its own threads next to torch's oversubscribes the 2
  cores (a warm evaluation 10.8 s instead of 4.6 s at Kwon et al.'s size,
  see :mod:`benchmark_utils.problems.kronecker_preconditioner`). Other
  devices keep torch throughout (``array_library``).

Tried without gain (same 28 CG iterations for the adjoint solve at Huang
et al.'s size): a curvature-weighted data factor A^T diag(w_i tr J_i) A
and the eigenvalue-corrected Kronecker factorization (George et al. 2018,
EKFAC); the remaining iterations come from the per-sample variation of
the softmax Jacobians J_i, which no single Kronecker product holds.
"""
import numpy as np
import torch

from benchmark_utils.data.hyper_cleaning import hyper_cleaning_split
from benchmark_utils.parameter_checks import (check_choice, check_int,
                                              check_positive)
from benchmark_utils.problems.batches import is_full
from benchmark_utils.problems.cleaning_metrics import f1_score, roc_auc
from benchmark_utils.problems.general import GeneralBilevelProblem
from benchmark_utils.problems.kronecker_preconditioner import (
    array_library, blas_threads, class_factor, data_factor,
    kronecker_inverse, symmetric_eigh)
from benchmark_utils.problems.newton_inner_solver import newton_minimize
from benchmark_utils.sets import WholeSpace
from benchmark_utils.linear_systems import conjugate_gradient

REDUCTIONS = ("mean", "sum")
HESSIAN_SOLVERS = ("auto", "dense", "cg")
# preconditioners of the CG path: Kronecker-factored (default, see
# benchmark_utils.problems.kronecker_preconditioner) or the Hessian's
# diagonal (the former default, kept for comparison: thousands of CG
# iterations per solve at Kwon et al. 2023's size)
PRECONDITIONERS = ("kronecker", "jacobi")
# largest dim_y for which the Newton systems use the dense Hessian: digits
# (10 x 65 = 650) is dense, MNIST (10 x 785 = 7850) goes through CG
DENSE_MAX_DIM = 3000
# cap on the conjugate-gradient iterations of one Hessian solve
CG_MAX_ITER = 10_000
# the Kronecker preconditioner's data factor S = A^T diag(w(x)) A is kept
# while max_i |x_i - x_i at S| stays below this (module doc)
PRECONDITIONER_REUSE = 0.5


def make_hyper_cleaning(features, labels, n_train, n_val, n_test, corruption,
                        c, reduction="mean", seed=0, test_features=None,
                        test_labels=None, n_classes=None, **kwargs):
    """Split the data and corrupt the training labels (see
    :mod:`benchmark_utils.data.hyper_cleaning`), then build a
    :class:`HyperCleaningBilevel`; ``kwargs`` go to the problem
    (``hessian_solver``, ``device``)."""
    data = hyper_cleaning_split(
        features, labels, n_train, n_val, n_test, corruption, seed=seed,
        test_features=test_features, test_labels=test_labels,
        n_classes=n_classes)
    return HyperCleaningBilevel(c=c, reduction=reduction, **data, **kwargs)


class HyperCleaningBilevel(GeneralBilevelProblem):
    """Hyper-cleaning with a linear multinomial logistic model (module doc)."""

    x0_is_no_bilevel_baseline = True    # x0 = 0: uniform weights 1/2

    def __init__(self, A_train, labels_train, corrupted, A_val, labels_val,
                 A_test, labels_test, n_classes, c, reduction="mean",
                 hessian_solver="auto", preconditioner="kronecker",
                 device="cpu"):
        check_choice("reduction", reduction, REDUCTIONS)
        check_choice("hessian_solver", hessian_solver, HESSIAN_SOLVERS)
        check_choice("preconditioner", preconditioner, PRECONDITIONERS)
        self.preconditioner = preconditioner
        check_positive("c", c)
        n_classes = check_int("n_classes", n_classes, 2)
        self.device = torch.device(device)
        self.A_train = self._with_intercept(A_train)
        self.A_val = self._with_intercept(A_val)
        self.A_test = self._with_intercept(A_test)
        self.labels_train = self._labels(labels_train)
        self.labels_val = self._labels(labels_val)
        self.labels_test = self._labels(labels_test)
        self.corrupted = np.asarray(corrupted, dtype=bool)
        self.n_classes, self.c, self.reduction = n_classes, float(c), reduction
        self.n_lower, self.n_features = self.A_train.shape
        self.n_upper = self.A_val.shape[0]
        self.n_train, self.n_val = self.n_lower, self.n_upper
        self.scale_upper = 1.0 if reduction == "mean" else float(self.n_upper)
        self.scale_lower = 1.0 if reduction == "mean" else float(self.n_lower)
        # outer steps (GeneralBilevelProblem): a weight's hypergradient
        # entry is of order 1/n_train with means, n_val/n_train with sums
        self.outer_step_scale = (float(self.n_lower) if reduction == "mean"
                                 else self.n_lower / self.n_upper)
        self.dim_x = self.n_lower
        self.dim_y = n_classes * self.n_features
        self.X = WholeSpace(self.dim_x)
        self.mu_g = 2.0 * self.c
        # smoothness in y: sigma <= 1 and ||diag(p) - p p^T|| <= 1/2, so a
        # sample's Hessian is <= s_g ||a_i||^2 / 2 + 2c (L_g, valid for every
        # batch) and the full one <= s_g lambda_max(A^T A / n) / 2 + 2c
        sq_norms = (self.A_train ** 2).sum(dim=1)
        self.L_g = 0.5 * self.scale_lower * float(sq_norms.max()) + self.mu_g
        self.L_g_full = 0.5 * self.scale_lower * float(torch.linalg.eigvalsh(
            self.A_train.T @ self.A_train)[-1]) / self.n_lower + self.mu_g
        # the curvature at (x0, y0) = (0, 0): sigma = 1/2, p uniform, so
        # the Hessian is (I - 1 1^T / K) / K kron A^T A s_g / (2 n) + 2c,
        # whose top eigenvalue is (L_g_full - 2c) / K + 2c exactly
        self.L_g_start = (self.L_g_full - self.mu_g) / n_classes + self.mu_g
        self.x0 = torch.zeros(self.dim_x, dtype=self.dtype, device=self.device)
        self.y0 = torch.zeros(self.dim_y, dtype=self.dtype, device=self.device)
        self.dense = (hessian_solver == "dense" or (
            hessian_solver == "auto" and self.dim_y <= DENSE_MAX_DIM))
        self._cache = None          # (x, y*(x)) of the last inner solve
        self._pass_cache = None     # (y, CE, probs) of the last full pass
        self._adjoint = None        # the last hypergradient's solve (CG)
        self._data_eig = None       # (x, eigh of A^T diag(w(x)) A), CG path
        self._train_arrays = None   # the metrics' arrays (_arrays)
        self._noise = None          # (y, rounding estimate of grad at y)
        # Hessian-vector products of the CG solves so far (a work count)
        self.hvp_count = 0
        # work of the last inner solve: Newton steps and CG iterations
        self.inner_work = {"newton_steps": 0, "cg_iterations": 0,
                           "data_factors": 0}

    def _with_intercept(self, A):
        A = self.as_tensor(A)
        return torch.cat([A, torch.ones_like(A[:, :1])], dim=1)

    def _labels(self, labels):
        return torch.as_tensor(np.asarray(labels), dtype=torch.int64,
                               device=self.device)

    # -- per-sample pieces ----------------------------------------------------
    def _W(self, y):
        return y.reshape(self.n_classes, self.n_features)

    def _ce(self, A, labels, y):
        """Per-sample cross-entropies and softmax probabilities."""
        logits = A @ self._W(y).T
        lse = torch.logsumexp(logits, dim=1)
        ce = lse - logits.gather(1, labels[:, None])[:, 0]
        return ce, torch.exp(logits - lse[:, None])

    def _residual(self, probs, labels):
        """p_i - e_{b_i}: d CE_i / d logits."""
        return probs - torch.nn.functional.one_hot(
            labels, self.n_classes).to(probs.dtype)

    def _batch_size(self, batch, n):
        return n if is_full(batch) else batch.shape[0]

    def _scatter_x(self, batch, per_sample):
        """A vector over the training samples from per-sample batch values."""
        if is_full(batch):
            return per_sample
        out = torch.zeros(self.dim_x, dtype=per_sample.dtype,
                          device=per_sample.device)
        return out.index_add(0, batch, per_sample)

    def _lower_pieces(self, x, y, batch):
        A = self.rows(self.A_train, batch)
        labels = self.rows(self.labels_train, batch)
        ce, probs = self._ce(A, labels, y)
        x_b = self.rows(x, batch)
        coef = self.scale_lower / A.shape[0]
        return A, labels, ce, probs, x_b, coef

    # -- values ---------------------------------------------------------------
    def f(self, x, y, *, batch=None):
        A = self.rows(self.A_val, batch)
        ce, _ = self._ce(A, self.rows(self.labels_val, batch), y)
        return self.scale_upper * ce.mean()

    def g(self, x, y, *, batch=None):
        A, _, ce, _, x_b, coef = self._lower_pieces(x, y, batch)
        return coef * (torch.sigmoid(x_b) * ce).sum() + self.c * (y @ y)

    # -- first order (closed form) --------------------------------------------
    def grad_f_x(self, x, y, *, batch=None):
        return torch.zeros_like(x)

    def grad_f_y(self, x, y, *, batch=None):
        A = self.rows(self.A_val, batch)
        labels = self.rows(self.labels_val, batch)
        _, probs = self._ce(A, labels, y)
        coef = self.scale_upper / A.shape[0]
        return (coef * self._residual(probs, labels).T @ A).reshape(-1)

    def grad_f(self, x, y, *, batch=None):
        return torch.zeros_like(x), self.grad_f_y(x, y, batch=batch)

    def grad_g(self, x, y, *, batch=None):
        A, labels, ce, probs, x_b, coef = self._lower_pieces(x, y, batch)
        s = torch.sigmoid(x_b)
        grad_x = self._scatter_x(batch, coef * s * (1 - s) * ce)
        weighted = self._residual(probs, labels) * (coef * s)[:, None]
        grad_y = (weighted.T @ A).reshape(-1) + 2 * self.c * y
        return grad_x, grad_y

    def grad_g_x(self, x, y, *, batch=None):
        A, _, ce, _, x_b, coef = self._lower_pieces(x, y, batch)
        s = torch.sigmoid(x_b)
        return self._scatter_x(batch, coef * s * (1 - s) * ce)

    def grad_g_y(self, x, y, *, batch=None):
        A, labels, _, probs, x_b, coef = self._lower_pieces(x, y, batch)
        weighted = self._residual(probs, labels) * (
            coef * torch.sigmoid(x_b))[:, None]
        return (weighted.T @ A).reshape(-1) + 2 * self.c * y

    # -- second order (closed form) -------------------------------------------
    def hvp_yy_g(self, x, y, v, *, batch=None):
        """sum_i w_i [diag(p_i) - p_i p_i^T] (V a_i) a_i^T + 2c V."""
        A, _, _, probs, x_b, coef = self._lower_pieces(x, y, batch)
        return self._hvp_yy(A, probs, coef * torch.sigmoid(x_b), v)

    def _hvp_yy(self, A, probs, weights, v):
        Av = A @ self._W(v).T
        jac = probs * (Av - (probs * Av).sum(dim=1, keepdim=True))
        return ((jac * weights[:, None]).T @ A).reshape(-1) + 2 * self.c * v

    def hvp_xy_g(self, x, y, v, *, batch=None):
        """d/dt grad_x g(x, y + t v): coef sigma'(x_i) <p_i - e_{b_i}, V a_i>."""
        A, labels, _, probs, x_b, coef = self._lower_pieces(x, y, batch)
        s = torch.sigmoid(x_b)
        Av = A @ self._W(v).T
        per_sample = (self._residual(probs, labels) * Av).sum(dim=1)
        return self._scatter_x(batch, coef * s * (1 - s) * per_sample)

    # -- exact quantities -----------------------------------------------------
    def _arrays(self):
        """The training set in the array library of the metrics' full
        passes, set up once: ``(xp, to, back, A, A^T, |A|^T, labels,
        rows)`` with ``xp`` NumPy on the CPU for the per-sample work
        (``to`` / ``back``: zero-copy views between tensors and arrays),
        torch elsewhere (module doc: why); A, A^T and |A|^T are tensors
        (the large products run in torch), A^T stored contiguous (the
        products are bound by reading A, 120 MB at Kwon et al.'s size, and
        A^T @ J reads it faster than J^T @ A); |A|^T is None for
        nonnegative features (pixels and the intercept: A^T itself)."""
        if self._train_arrays is None:
            A_T = self.A_train.T.contiguous()
            rows = torch.arange(self.n_lower, device=self.device)
            xp, to, back = array_library(self.device)
            self._train_arrays = (
                xp, to, back, self.A_train, A_T,
                None if bool((A_T >= 0).all()) else A_T.abs(),
                to(self.labels_train), to(rows))
        return self._train_arrays

    def _full_pass(self, y):
        """(cross-entropies, softmax probabilities) of every training
        sample at y, as arrays of :meth:`_arrays`, kept for the last y: a
        Newton step's line search evaluates g at the point where the next
        step's gradient and Hessian are needed, and the hypergradient's
        cross derivative reuses the pass at y* (the metrics' full passes
        only; the solvers' oracles do not go through it)."""
        if self._pass_cache is None or not torch.equal(
                self._pass_cache[0], y):
            xp, to, _, A, _, _, labels, rows = self._arrays()
            logits = to(A @ self._W(y).T)
            z = logits - xp.amax(logits, 1)[:, None]
            e = xp.exp(z)
            total = e.sum(1)
            self._pass_cache = (y.clone(), xp.log(total) - z[rows, labels],
                                e / total[:, None])
        return self._pass_cache[1], self._pass_cache[2]

    def _sample_weights(self, x):
        """The full sum's per-sample weights s_g sigma(x_i) / n_train."""
        return (self.scale_lower / self.n_lower) * torch.sigmoid(x)

    def _exact_g(self, x, y):
        """g(x, y) on the full sum, through :meth:`_full_pass`."""
        ce, _ = self._full_pass(y)
        to = self._arrays()[1]
        return float((to(self._sample_weights(x)) * ce).sum()) + self.c * (
            float(y @ y))

    def _exact_grad_g_y(self, x, y):
        """grad_y g(x, y) on the full sum, through :meth:`_full_pass`; the
        same product gives the rounding-error estimate of its norm,
        ``eps || |A|^T |R| ||`` (R the per-sample residuals; see
        :mod:`benchmark_utils.problems.newton_inner_solver`), kept for
        :meth:`_grad_noise`."""
        xp, to, back, _, A_T, abs_A_T, labels, rows = self._arrays()
        _, probs = self._full_pass(y)
        weights = to(self._sample_weights(x))
        R = probs * weights[:, None]
        R[rows, labels] -= weights
        if abs_A_T is None:     # one pass over A for both products
            both = A_T @ back(xp.concatenate([R, abs(R)], 1))
            product, magnitude = both[:, :self.n_classes], both[
                :, self.n_classes:]
        else:
            product, magnitude = A_T @ back(R), abs_A_T @ back(abs(R))
        self._noise = (y, float(np.finfo(np.float64).eps * float(
            (magnitude ** 2).sum()) ** 0.5))
        return product.T.reshape(-1) + 2 * self.c * y

    def _grad_noise(self, x, y):
        """The rounding-error estimate of the last :meth:`_exact_grad_g_y`
        (at this y)."""
        if self._noise is None or self._noise[0] is not y:
            self._exact_grad_g_y(x, y)
        return self._noise[1]

    def _hessian_solver(self, x, y):
        """A function solving grad^2_yy g(x, y) w = r (full sum): ``solve(r)``
        by Cholesky when ``self.dense``, otherwise ``solve(r, rtol, w0)``
        by preconditioned conjugate gradient (:meth:`_cg_solve`) on
        closed-form Hessian-vector products that read A twice and do their
        per-sample part in place (module doc)."""
        xp, to, back, A, A_T, _, _, _ = self._arrays()
        _, probs = self._full_pass(y)
        weights = self._sample_weights(x)
        if self.dense:
            chol = torch.linalg.cholesky(self._dense_hessian(
                self.A_train, back(probs), weights))
            return lambda r: torch.cholesky_solve(r[:, None], chol)[:, 0]
        precondition = self._preconditioner(x, self.A_train, back(probs),
                                            weights)
        weighted_probs = probs * to(weights)[:, None]
        K, D = self.n_classes, self.n_features

        def hvp(v):
            self.hvp_count += 1
            # J_i (V a_i) w_i with J_i = diag(p_i) - p_i p_i^T
            Av = to(A @ v.reshape(K, D).T)
            Av -= xp.einsum("ik,ik->i", probs, Av)[:, None]
            Av *= weighted_probs
            return (A_T @ back(Av)).T.reshape(-1) + 2 * self.c * v
        return lambda r, rtol=1e-13, w0=None: self._cg_solve(
            hvp, r, rtol, precondition, w0)

    def _exact_hvp_xy(self, x, y, v):
        """:meth:`hvp_xy_g` on the full sum through :meth:`_full_pass`
        (the hypergradient at y*, whose pass is cached)."""
        xp, to, back, A, _, _, labels, rows = self._arrays()
        _, probs = self._full_pass(y)
        Av = to(A @ self._W(v).T)
        per_sample = back(xp.einsum("ik,ik->i", probs, Av)
                          - Av[rows, labels])
        s = torch.sigmoid(x)
        return (self.scale_lower / self.n_lower) * s * (1 - s) * per_sample

    @staticmethod
    def _cg_solve(hvp, r, rtol, precondition, w0):
        """w with ||r - H w|| <= rtol ||r|| by preconditioned CG, from
        ``w0`` when it is closer than 0: CG on the correction, H d = r -
        H w0, to the same absolute residual. The start only saves
        iterations and never changes what the result must satisfy; a w0
        farther from the solution than 0 (x jumped) is dropped at the
        price of one product."""
        if w0 is not None:
            r0 = r - hvp(w0)
            r_norm = float(torch.linalg.vector_norm(r))
            r0_norm = float(torch.linalg.vector_norm(r0))
            if r0_norm < r_norm:
                if r0_norm <= rtol * r_norm:
                    return w0.clone()
                return w0 + conjugate_gradient(
                    hvp, r0, tol=rtol * r_norm / r0_norm,
                    max_iter=CG_MAX_ITER, precondition=precondition)
        return conjugate_gradient(hvp, r, tol=rtol, max_iter=CG_MAX_ITER,
                                  precondition=precondition)

    def _preconditioner(self, x, A, probs, weights):
        """``r -> P^-1 r`` for the CG path: the Kronecker-factored
        ``B kron S + 2c I`` (its x-dependent factor S kept while x stays
        within PRECONDITIONER_REUSE of the x it was computed at, see the
        module doc), or the Hessian's diagonal
        (``preconditioner="jacobi"``)."""
        if self.preconditioner == "jacobi":
            diag = ((weights[:, None] * probs * (1 - probs)).T @ (A * A)
                    ).reshape(-1) + 2 * self.c
            return lambda v: v / diag
        if self._data_eig is None or float(
                (self._data_eig[0] - x).abs().max()) > PRECONDITIONER_REUSE:
            self._data_eig = (x.clone(), data_factor(A, weights))
            self.inner_work["data_factors"] = (
                self.inner_work.get("data_factors", 0) + 1)
        return kronecker_inverse(symmetric_eigh(class_factor(probs, weights)),
                                 self._data_eig[1], 2 * self.c)

    def _dense_hessian(self, A, probs, weights):
        """sum_i w_i [diag(p_i) - p_i p_i^T] kron a_i a_i^T + 2c I."""
        K, D = self.n_classes, self.n_features
        H = torch.zeros(K, D, K, D, dtype=A.dtype, device=A.device)
        for k in range(K):
            H[k, :, k] = (A * (weights * probs[:, k])[:, None]).T @ A
        Q = (weights.sqrt()[:, None, None] * probs[:, :, None]
             * A[:, None, :]).reshape(A.shape[0], K * D)
        H = H.reshape(K * D, K * D) - Q.T @ Q
        return H + 2 * self.c * torch.eye(K * D, dtype=A.dtype,
                                          device=A.device)

    def inner_solution(self, x, max_iter=100):
        """y*(x) by Newton's method (module doc), warm-started at the last
        solution; ``self.inner_accuracy`` records the certified bound
        ||grad_y g|| / mu_g >= ||y - y*|| of the returned point. NumPy's
        BLAS runs single-threaded meanwhile (``blas_threads``, see
        :mod:`benchmark_utils.problems.kronecker_preconditioner`)."""
        if self._cache is not None and torch.equal(self._cache[0], x):
            return self._cache[1].clone()
        with blas_threads():
            return self._newton_solve(x, max_iter)

    def _newton_solve(self, x, max_iter):
        """The solve of :meth:`inner_solution` (no cached answer)."""
        y = self.y0.clone() if self._cache is None else self._cache[1].clone()
        newton_steps, hvp_start = 0, self.hvp_count
        self.inner_work = {"newton_steps": 0, "cg_iterations": 0,
                           "data_factors": 0}

        def hessian_solver(x, y):
            nonlocal newton_steps
            newton_steps += 1
            return self._hessian_solver(x, y)
        y, self.inner_accuracy = newton_minimize(
            self._exact_g, self._exact_grad_g_y, hessian_solver, x, y,
            self.mu_g, exact=self.dense, max_iter=max_iter,
            grad_noise=self._grad_noise)
        self.inner_work.update(newton_steps=newton_steps,
                               cg_iterations=self.hvp_count - hvp_start)
        self._cache = (x.clone(), y.clone())
        return y

    def hypergradient(self, x, y_star=None):
        """grad F(x) = -grad^2_xy g [grad^2_yy g]^-1 grad_y f at y*(x)
        (grad_x f = 0), with the same Hessian solver as inner_solution; on
        the CG path the solve starts from the last one's solution (any
        start gives the same residual bound, see :meth:`_cg_solve`)."""
        y = self.inner_solution(x) if y_star is None else y_star
        with blas_threads():
            solve = self._hessian_solver(x, y)
            rhs = self.grad_f_y(x, y)
            if self.dense:
                w = solve(rhs)
            else:
                w = solve(rhs, w0=self._adjoint)
                self._adjoint = w.clone()
            return self.grad_f_x(x, y) - self._exact_hvp_xy(x, y, w)

    # -- task metrics ---------------------------------------------------------
    def task_metrics(self, x, y):
        """``test_accuracy`` of the model y; ``cleaning_auc`` and
        ``cleaning_f1`` of the weights sigma(x) (module doc)."""
        logits = self.A_test @ self._W(y).T
        accuracy = float((logits.argmax(dim=1) == self.labels_test).double()
                         .mean())
        weights = torch.sigmoid(x).detach().cpu().numpy()
        return {"test_accuracy": accuracy,
                "cleaning_auc": roc_auc(weights, ~self.corrupted),
                "cleaning_f1": f1_score(weights < 0.5, self.corrupted)}

    def __repr__(self):
        return (f"HyperCleaningBilevel(n_train={self.n_train}, "
                f"n_val={self.n_val}, n_test={self.A_test.shape[0]}, "
                f"n_classes={self.n_classes}, dim_y={self.dim_y}, "
                f"c={self.c}, reduction={self.reduction!r})")

