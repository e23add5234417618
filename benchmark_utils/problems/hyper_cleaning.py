"""Data hyper-cleaning as a general bilevel problem.

The experiment of Kwon et al. 2023 (F2SA, Sec. 5) and Huang et al. 2021
(BiAdam, Sec. 5.1 and App. A.1.1). A fraction of the training labels is
corrupted; the upper variable ``x`` in R^{n_train} holds one logit per
training sample, whose sigmoid weighs that sample's loss in the lower level;
the lower variable ``y`` is a linear multinomial logistic model::

    f(x, y) = s_f * mean_{j in val}   CE(y; a_j, b_j)
    g(x, y) = s_g * mean_{i in train} sigma(x_i) CE(y; a_i, b_i) + c ||y||^2

with ``CE(y; a, b) = logsumexp(W a) - (W a)_b``, ``W = y.reshape(K, D)`` and
an intercept (``D = n_features + 1``). ``reduction="mean"`` (s = 1) is Huang
et al.'s form, ``"sum"`` (s_f = n_val, s_g = n_train) Kwon et al.'s. One
upper sample is a validation image, one lower sample a training image; the
ridge is in every g_i. ``mu_g = 2c``; ``L_g`` bounds every sample's Hessian
in y, ``L_g_full`` the full sum's, ``L_g_start`` is the full sum's exact
curvature at (x0, y0) = (0, 0). No F* (F is nonconvex).

Task metrics: ``test_accuracy`` of y on the clean test set, and the ROC AUC
(``cleaning_auc``) and F1 score (``cleaning_f1``, flag sigma(x_i) < 1/2) of
the weights as a detector of corrupted samples. The exact y*(x) and grad F:
:mod:`benchmark_utils.problems.hyper_cleaning_exact`. The choices where the
papers are silent, and the derivation of the constants: docs/problems.md.
"""
import numpy as np
import torch

from benchmark_utils.checks.parameters import (
    check_choice,
    check_int,
    check_positive,
)
from benchmark_utils.data.hyper_cleaning import hyper_cleaning_split
from benchmark_utils.problems.batches import is_full
from benchmark_utils.problems.cleaning_metrics import f1_score, roc_auc
from benchmark_utils.problems.general import GeneralBilevelProblem
from benchmark_utils.problems.hyper_cleaning_exact import (
    DENSE_MAX_DIM,
    HESSIAN_SOLVERS,
    HVP_PRECISIONS,
    PRECONDITIONERS,
    ExactSoftmaxSolves,
)
from benchmark_utils.sets import WholeSpace

REDUCTIONS = ("mean", "sum")

def level_scales(n_train, n_val, reduction):
    """``(s_f, s_g, outer_step_scale)``: the factors of f and g (module
    doc) and the problem's outer step scale (GeneralBilevelProblem): a
    weight's hypergradient entry is of order 1/n_train with means,
    n_val/n_train with sums."""
    if reduction == "mean":
        return 1.0, 1.0, float(n_train)
    return float(n_val), float(n_train), n_train / n_val


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


class HyperCleaningBilevel(ExactSoftmaxSolves, GeneralBilevelProblem):
    """Hyper-cleaning with a linear multinomial logistic model (module doc);
    the exact y*(x) and grad F come from :class:`ExactSoftmaxSolves`."""

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
        self.scale_upper, self.scale_lower, self.outer_step_scale = (
            level_scales(self.n_lower, self.n_upper, reduction))
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
        # plain training on the noisy labels: every weight sigma(0) = 1/2
        self.single_level_x = torch.zeros_like(self.x0)
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
        """d/dt grad_x g(x, y + t v):
        coef sigma'(x_i) <p_i - e_{b_i}, V a_i>."""
        A, onehot, _, probs, x_b, coef = self._lower_pieces(
            x, y, batch, values=False)
        s = torch.sigmoid(x_b)
        Av = A @ self._W(v).T
        per_sample = ((probs - onehot) * Av).sum(dim=1)
        return self._scatter_x(batch, coef * s * (1 - s) * per_sample)

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

