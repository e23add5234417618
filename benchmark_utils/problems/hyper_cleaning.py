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
(:mod:`benchmark_utils.numerics.newton_inner_solver`), the Newton systems
solved with the dense Hessian (Cholesky) when ``dim_y`` is tiny (at most
DENSE_MAX_DIM) and by conjugate gradient on closed-form Hessian-vector
products otherwise (digits, MNIST), preconditioned by a Kronecker-factored
approximation of the Hessian
(:mod:`benchmark_utils.numerics.kronecker_preconditioner`: 5-25 CG
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

* the training sum's products run on row blocks of A in parallel threads,
  each with single-threaded BLAS, and the conjugate-gradient iterations
  use float32 copies of A, every residual that decides when a solve is
  done being recomputed in float64 (``hvp_precision="mixed"``, mixed-
  precision iterative refinement:
  :func:`benchmark_utils.numerics.linear_systems.refined_conjugate_gradient`;
  ``"float64"`` does every product in float64). Why and what each saves:
  :mod:`benchmark_utils.numerics.softmax_sum`. Measured at Kwon et al.'s
  size (2 cores, side by side): a warm evaluation 1.9-2.7 s where the
  former torch products took 3.8-4.2 s (3.0-3.3 s with the row blocks in
  float64 only), F(x) and ||grad F(x)|| the same to 4.5e-13 and 3.3e-15
  (relative), the same recorded bound (about 2e-10); the float32 products
  carry a relative error of about 1e-6 on these systems, so each
  refinement round solves to ROUND_TOL = 1e-4 (18 CG iterations) and
  gains that much in the float64 residual;
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
  gradient: see :mod:`benchmark_utils.numerics.newton_inner_solver`), which
  saves the stall rule's extra step and a too-tight last step (warm
  evaluations at Kwon et al.'s size: 58 CG iterations against 83, same
  recorded bound about 2e-10);
* the hypergradient's cross derivative reuses the full pass kept at y*
  (the solvers' oracle ``hvp_xy_g`` would redo it);
* on the CPU the per-sample array work and the preconditioner's small
  products go through NumPy, single-threaded (the problem's tensors viewed
  without copies): PyTorch's intra-op threads make each small operation a
  parallel region, and on a loaded 2-core machine each region waits for a
  descheduled thread (the HVP's elementwise part took 60 ms with torch
  against 0.4 ms on one thread); see
  :mod:`benchmark_utils.numerics.kronecker_preconditioner`. Other devices
  keep torch throughout (``array_library``).

Tried without gain (same 28 CG iterations for the adjoint solve at Huang
et al.'s size): a curvature-weighted data factor A^T diag(w_i tr J_i) A
and the eigenvalue-corrected Kronecker factorization (George et al. 2018,
EKFAC); the remaining iterations come from the per-sample variation of
the softmax Jacobians J_i, which no single Kronecker product holds.
"""
import numpy as np
import torch

from benchmark_utils.data.hyper_cleaning import hyper_cleaning_split
from benchmark_utils.checks.parameters import (check_choice, check_int,
                                              check_positive)
from benchmark_utils.problems.batches import is_full
from benchmark_utils.problems.cleaning_metrics import f1_score, roc_auc
from benchmark_utils.problems.general import GeneralBilevelProblem
from benchmark_utils.numerics.kronecker_preconditioner import (
    blas_threads, class_factor, kronecker_inverse, symmetric_eigh)
from benchmark_utils.numerics.newton_inner_solver import newton_minimize
from benchmark_utils.numerics.softmax_sum import SoftmaxSum
from benchmark_utils.sets import WholeSpace
from benchmark_utils.numerics.linear_systems import refined_conjugate_gradient

REDUCTIONS = ("mean", "sum")
HESSIAN_SOLVERS = ("auto", "dense", "cg")
# preconditioners of the CG path: Kronecker-factored (default, see
# benchmark_utils.numerics.kronecker_preconditioner) or the Hessian's
# diagonal (the former default, kept for comparison: thousands of CG
# iterations per solve at Kwon et al. 2023's size)
PRECONDITIONERS = ("kronecker", "jacobi")
# products of the CG iterations: float32 refined by float64 residuals, or
# float64 throughout (module doc)
HVP_PRECISIONS = ("mixed", "float64")
# largest dim_y for which the Newton systems use the dense Hessian (forming
# it costs n K^2 D^2, CG about 65 Hessian-vector products of n K D per
# evaluation, each with a fixed Python overhead of about 0.3 ms): at the
# default digits instance (300 samples, 10 x 65 = 650) an evaluation took
# 75 ms dense against 32 ms by CG, so digits and MNIST go through CG; tiny
# test instances stay dense
DENSE_MAX_DIM = 300
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
                 hvp_precision="mixed", device="cpu"):
        check_choice("reduction", reduction, REDUCTIONS)
        check_choice("hessian_solver", hessian_solver, HESSIAN_SOLVERS)
        check_choice("preconditioner", preconditioner, PRECONDITIONERS)
        check_choice("hvp_precision", hvp_precision, HVP_PRECISIONS)
        self.preconditioner, self.hvp_precision = (preconditioner,
                                                   hvp_precision)
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
        # e_{b_i} per sample, gathered with each batch (module doc)
        self.onehot_train = self._onehot(self.labels_train)
        self.onehot_val = self._onehot(self.labels_val)
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
        self._adjoint = None        # the last hypergradient's solve (CG)
        self._data_eig = None       # (x, eigh of A^T diag(w(x)) A), CG path
        self._sum = None            # the metrics' full sum (SoftmaxSum)
        self._noise = None          # (y, rounding estimate of grad at y)
        # Hessian-vector products of the CG solves so far (a work count),
        # and how many of them were float32 (hvp_precision="mixed")
        self.hvp_count = self.hvp_count_low = 0
        # work of the last inner solve: Newton steps and CG iterations
        self.inner_work = {"newton_steps": 0, "cg_iterations": 0,
                           "data_factors": 0}

    def _with_intercept(self, A):
        A = self.as_tensor(A)
        return torch.cat([A, torch.ones_like(A[:, :1])], dim=1)

    def _onehot(self, labels):
        return torch.nn.functional.one_hot(labels, self.n_classes).to(
            self.dtype)

    def _labels(self, labels):
        return torch.as_tensor(np.asarray(labels), dtype=torch.int64,
                               device=self.device)

    # -- per-sample pieces ----------------------------------------------------
    def _W(self, y):
        return y.reshape(self.n_classes, self.n_features)

    def _ce(self, A, onehot, y, values=True):
        """(per-sample cross-entropies, softmax probabilities) at y;
        ``values=False`` skips the cross-entropies (None): one softmax
        instead of logsumexp, exp and a difference (the gradient oracles
        need only the probabilities)."""
        logits = A @ self._W(y).T
        if not values:
            return None, torch.softmax(logits, dim=1)
        lse = torch.logsumexp(logits, dim=1)
        ce = lse - (logits * onehot).sum(dim=1)
        return ce, torch.exp(logits - lse[:, None])

    def _scatter_x(self, batch, per_sample):
        """A vector over the training samples from per-sample batch values."""
        if is_full(batch):
            return per_sample
        out = torch.zeros(self.dim_x, dtype=per_sample.dtype,
                          device=per_sample.device)
        return out.index_add(0, batch, per_sample)

    def _lower_pieces(self, x, y, batch, values=True):
        """The batch's features, one-hot labels (e_{b_i}, so that p_i -
        e_{b_i} = d CE_i / d logits is one subtraction), cross-entropies
        (None unless ``values``), probabilities, x entries and 1 / size."""
        A = self.rows(self.A_train, batch)
        onehot = self.rows(self.onehot_train, batch)
        ce, probs = self._ce(A, onehot, y, values)
        x_b = self.rows(x, batch)
        coef = self.scale_lower / A.shape[0]
        return A, onehot, ce, probs, x_b, coef

    # -- values ---------------------------------------------------------------
    def f(self, x, y, *, batch=None):
        A = self.rows(self.A_val, batch)
        ce, _ = self._ce(A, self.rows(self.onehot_val, batch), y)
        return self.scale_upper * ce.mean()

    def g(self, x, y, *, batch=None):
        A, _, ce, _, x_b, coef = self._lower_pieces(x, y, batch)
        return coef * (torch.sigmoid(x_b) * ce).sum() + self.c * (y @ y)

    # -- first order (closed form) --------------------------------------------
    def grad_f_x(self, x, y, *, batch=None):
        return torch.zeros_like(x)

    def grad_f_y(self, x, y, *, batch=None):
        A = self.rows(self.A_val, batch)
        onehot = self.rows(self.onehot_val, batch)
        _, probs = self._ce(A, onehot, y, values=False)
        coef = self.scale_upper / A.shape[0]
        return (coef * (probs - onehot).T @ A).reshape(-1)

    def grad_f(self, x, y, *, batch=None):
        return torch.zeros_like(x), self.grad_f_y(x, y, batch=batch)

    def grad_g(self, x, y, *, batch=None):
        A, onehot, ce, probs, x_b, coef = self._lower_pieces(x, y, batch)
        s = torch.sigmoid(x_b)
        grad_x = self._scatter_x(batch, coef * s * (1 - s) * ce)
        weighted = (probs - onehot) * (coef * s)[:, None]
        grad_y = (weighted.T @ A).reshape(-1) + 2 * self.c * y
        return grad_x, grad_y

    def grad_g_x(self, x, y, *, batch=None):
        A, _, ce, _, x_b, coef = self._lower_pieces(x, y, batch)
        s = torch.sigmoid(x_b)
        return self._scatter_x(batch, coef * s * (1 - s) * ce)

    def grad_g_y(self, x, y, *, batch=None):
        A, onehot, _, probs, x_b, coef = self._lower_pieces(
            x, y, batch, values=False)
        weighted = (probs - onehot) * (coef * torch.sigmoid(x_b))[:, None]
        return (weighted.T @ A).reshape(-1) + 2 * self.c * y

    # -- second order (closed form) -------------------------------------------
    def hvp_yy_g(self, x, y, v, *, batch=None):
        """sum_i w_i [diag(p_i) - p_i p_i^T] (V a_i) a_i^T + 2c V."""
        A, _, _, probs, x_b, coef = self._lower_pieces(x, y, batch,
                                                       values=False)
        return self._hvp_yy(A, probs, coef * torch.sigmoid(x_b), v)

    def _hvp_yy(self, A, probs, weights, v):
        Av = A @ self._W(v).T
        jac = probs * (Av - (probs * Av).sum(dim=1, keepdim=True))
        return ((jac * weights[:, None]).T @ A).reshape(-1) + 2 * self.c * v

    def hvp_xy_g(self, x, y, v, *, batch=None):
        """d/dt grad_x g(x, y + t v): coef sigma'(x_i) <p_i - e_{b_i}, V a_i>."""
        A, onehot, _, probs, x_b, coef = self._lower_pieces(
            x, y, batch, values=False)
        s = torch.sigmoid(x_b)
        Av = A @ self._W(v).T
        per_sample = ((probs - onehot) * Av).sum(dim=1)
        return self._scatter_x(batch, coef * s * (1 - s) * per_sample)

    # -- exact quantities -----------------------------------------------------
    def _softmax_sum(self):
        """The training sum's exact machinery (row blocks, float32 copies:
        :mod:`benchmark_utils.numerics.softmax_sum`), set up at the first
        exact solve."""
        if self._sum is None:
            self._sum = SoftmaxSum(self.A_train, self.labels_train,
                                   self.n_classes)
        return self._sum

    def _sample_weights(self, x):
        """The full sum's per-sample weights s_g sigma(x_i) / n_train."""
        return (self.scale_lower / self.n_lower) * torch.sigmoid(x)

    def _exact_g(self, x, y):
        """g(x, y) on the full sum."""
        return self._softmax_sum().value(self._sample_weights(x), y) + (
            self.c * float(y @ y))

    def _exact_grad_g_y(self, x, y):
        """grad_y g(x, y) on the full sum; the same products give the
        rounding-error estimate of its norm (see
        :mod:`benchmark_utils.numerics.newton_inner_solver`), kept for
        :meth:`_grad_noise`."""
        grad, noise = self._softmax_sum().gradient(self._sample_weights(x), y)
        self._noise = (y, noise)
        return grad + 2 * self.c * y

    def _grad_noise(self, x, y):
        """The rounding-error estimate of the last :meth:`_exact_grad_g_y`
        (at this y)."""
        if self._noise is None or self._noise[0] is not y:
            self._exact_grad_g_y(x, y)
        return self._noise[1]

    def _hessian_solver(self, x, y):
        """A function solving grad^2_yy g(x, y) w = r (full sum): ``solve(r)``
        by Cholesky when ``self.dense``, otherwise ``solve(r, rtol, w0)``
        to the relative residual rtol in float64 products, by
        preconditioned conjugate gradient, its iterations on float32
        products refined by float64 residuals (``hvp_precision="mixed"``,
        :func:`benchmark_utils.numerics.linear_systems.refined_conjugate_gradient`)
        or all in float64 (module doc)."""
        weights = self._sample_weights(x)
        data_sum = self._softmax_sum()
        if self.dense:
            return data_sum.dense_solver(weights, y, 2 * self.c)
        precondition = self._preconditioner(x, y, weights)
        data_hvp = data_sum.hessian(weights, y)

        def hvp(v, low=False):
            self.hvp_count += 1
            self.hvp_count_low += low
            return data_hvp(v, low=low) + 2 * self.c * v

        def low(v):
            return hvp(v, low=True)
        hvp_low = low if self.hvp_precision == "mixed" else None

        def solve(r, rtol=1e-13, w0=None):
            return refined_conjugate_gradient(
                hvp, hvp_low, r, tol=rtol, max_iter=CG_MAX_ITER,
                precondition=precondition, w0=w0)
        return solve

    def _exact_hvp_xy(self, x, y, v):
        """:meth:`hvp_xy_g` on the full sum (the hypergradient at y*,
        whose full pass is kept)."""
        s = torch.sigmoid(x)
        return (self.scale_lower / self.n_lower) * s * (1 - s) * (
            self._softmax_sum().cross(y, v))

    def _preconditioner(self, x, y, weights):
        """``r -> P^-1 r`` for the CG path: the Kronecker-factored
        ``B kron S + 2c I`` (its x-dependent factor S kept while x stays
        within PRECONDITIONER_REUSE of the x it was computed at, see the
        module doc), or the Hessian's diagonal
        (``preconditioner="jacobi"``)."""
        probs = self._softmax_sum().probabilities(y)
        if self.preconditioner == "jacobi":
            A = self.A_train
            diag = ((weights[:, None] * probs * (1 - probs)).T @ (A * A)
                    ).reshape(-1) + 2 * self.c
            return lambda v: v / diag
        if self._data_eig is None or float(
                (self._data_eig[0] - x).abs().max()) > PRECONDITIONER_REUSE:
            self._data_eig = (x.clone(),
                              self._softmax_sum().data_factor(weights))
            self.inner_work["data_factors"] = (
                self.inner_work.get("data_factors", 0) + 1)
        return kronecker_inverse(symmetric_eigh(class_factor(probs, weights)),
                                 self._data_eig[1], 2 * self.c)

    def inner_solution(self, x, max_iter=100):
        """y*(x) by Newton's method (module doc), warm-started at the last
        solution; ``self.inner_accuracy`` records the certified bound
        ||grad_y g|| / mu_g >= ||y - y*|| of the returned point. NumPy's
        BLAS runs single-threaded meanwhile (``blas_threads``, see
        :mod:`benchmark_utils.numerics.kronecker_preconditioner`)."""
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
        start gives the same residual bound, see
        :func:`benchmark_utils.numerics.linear_systems.refined_conjugate_gradient`)."""
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

