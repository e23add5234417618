"""Regularization selection: one l2 penalty per feature of a logistic model.

Dagréou et al. 2022 (SOBA / SABA), Fig. 2 left, and benchopt's
benchmark_bilevel (its ``ijcnn1`` and ``covtype`` datasets), after
Pedregosa 2016's hyperparameter optimization of an l2-regularized logistic
regression. With training samples (a_i, b_i), validation samples
(a'_j, b'_j) and the model ``y``::

    g(x, y) = mean_i loss(y; a_i, b_i) + 1/2 sum_m lambda_{G(m)}(x) y_m^2
    f(x, y) = mean_j loss(y; a'_j, b'_j)

Binary (``n_classes = 2``, ijcnn1): y in R^D, ``loss = log(1 + exp(-s
a^T y))`` with s = +-1. Multiclass (covtype): y = vec(W), W of shape K x D,
``loss = logsumexp(W a) - (W a)_b`` (cross-entropy). No intercept, as
upstream. ``penalty``: x holds one strength per feature (G(m) = m's
feature, shared by the classes) or per class (G(m) = m's class, upstream's
covtype). ``reg="exp"``: lambda = exp(x), X = R^dim_x (upstream's
default); ``reg="linear"``: lambda = x on the box X = LINEAR_BOUNDS, whose
positive floor keeps g strongly convex. The penalty is in every g_i.

``mu_g`` / ``L_g`` / ``L_g_full``: the strong convexity, per-sample and
full-sum smoothness bounds in y over X (linear); for exp, where no uniform
bound exists on R^dim_x, mu_g at x0 and the smoothness bounds for lambda
<= 1 (x0 and upstream's random starts); ``L_g_start`` the exact curvature
at (x0, 0).
Exact y*(x), grad F: :mod:`~benchmark_utils.problems.
regularization_selection_exact`. Choices: docs/problems.md.
"""
import math

import torch
import torch.nn.functional as F

from benchmark_utils.checks.parameters import check_choice, check_int
from benchmark_utils.problems.batches import is_full
from benchmark_utils.problems.general import GeneralBilevelProblem
from benchmark_utils.problems.regularization_selection_exact import (
    ExactLogisticSolves,
)
from benchmark_utils.sets import Box, WholeSpace

REGS = ("exp", "linear")
PENALTIES = ("feature", "class")
# x0: lambda = exp(-1), the geometric mean of upstream's random starts
# lambda ~ U(0, 1) (benchmark_bilevel, datasets/ijcnn1.py, init_var)
REG_INIT = math.exp(-1.0)
# reg="linear": X = [floor, ceiling]^dim_x; the floor keeps g 1e-4-strongly
# convex, the ceiling is the top of upstream's starts U(0, 1) (and the
# strength in the smoothness bounds of reg="exp")
LINEAR_BOUNDS = (1e-4, 1.0)


class BinaryLogistic:
    """log(1 + exp(-s z)) of one logit z (n x 1) and a sign s = +-1."""

    curvature_bound = 0.25          # sigma'(z) <= 1/4

    @staticmethod
    def targets(labels, n_classes):
        return (2.0 * labels - 1.0)[:, None]

    @staticmethod
    def values(Z, T):
        return F.softplus(-T * Z)[:, 0]

    @staticmethod
    def residual(Z, T):
        """d loss / d z."""
        return -T * torch.sigmoid(-T * Z)

    @staticmethod
    def jacobian(Z):
        """``Zv -> d^2 loss / dz^2 Zv`` at the logits Z."""
        s = torch.sigmoid(Z)
        weight = s * (1 - s)
        return lambda Zv: weight * Zv

    @staticmethod
    def predict(Z):
        return (Z[:, 0] > 0).long()


class MultinomialLogistic:
    """Cross-entropy of the logits Z (n x K) against one-hot targets T."""

    curvature_bound = 0.5           # ||diag(p) - p p^T|| <= 1/2

    @staticmethod
    def targets(labels, n_classes):
        # one-hot by comparison (one_hot checks its input on the host)
        classes = torch.arange(n_classes, device=labels.device)
        return (labels[:, None] == classes).double()

    @staticmethod
    def values(Z, T):
        return torch.logsumexp(Z, dim=1) - (Z * T).sum(dim=1)

    @staticmethod
    def residual(Z, T):
        return torch.softmax(Z, dim=1) - T

    @staticmethod
    def jacobian(Z):
        """``Zv -> (diag(p) - p p^T) Zv`` per sample, at the logits Z."""
        p = torch.softmax(Z, dim=1)
        return lambda Zv: p * (Zv - (p * Zv).sum(dim=1, keepdim=True))

    @staticmethod
    def predict(Z):
        return Z.argmax(dim=1)


class RegularizationSelectionBilevel(ExactLogisticSolves,
                                     GeneralBilevelProblem):
    """The problem of the module doc. Labels are class indices 0..K-1
    (binary: 0 for -1, 1 for +1); features are used as given.

    The ``<oracle>_rows`` oracles give the per-sample terms of a batch (one
    row per drawn sample, their mean the batch oracle), what SAGA-type
    methods store (SABA), counted as the mean oracle is."""

    ORACLES = {**GeneralBilevelProblem.ORACLES,
               "grad_f_rows": ("upper", "grad"),
               "grad_g_y_rows": ("lower", "grad"),
               "hvp_yy_g_rows": ("lower", "hvp"),
               "hvp_xy_g_rows": ("lower", "hvp")}
    # the hypergradient's entries at x0 are of order 1e-2 (default
    # instance: mean 4e-3, largest 3.5e-2), against 1 on the quadratic
    outer_step_scale = 100.0

    def __init__(self, A_train, labels_train, A_val, labels_val, A_test,
                 labels_test, n_classes=2, reg="exp", penalty="feature",
                 device="cpu"):
        check_choice("reg", reg, REGS)
        check_choice("penalty", penalty, PENALTIES)
        self.n_classes = check_int("n_classes", n_classes, 2)
        if penalty == "class" and n_classes == 2:
            raise ValueError("penalty must be 'feature' for a binary problem "
                             "(one weight vector: per class means one "
                             "strength), got 'class'")
        self.reg, self.penalty = reg, penalty
        self.device = torch.device(device)
        self.loss = BinaryLogistic if n_classes == 2 else MultinomialLogistic
        self.A_train, self.A_val, self.A_test = map(
            self.as_tensor, (A_train, A_val, A_test))
        self.T_train, self.T_val = (
            self.loss.targets(self._labels(labels), n_classes)
            for labels in (labels_train, labels_val))
        self.labels_test = self._labels(labels_test)
        self.n_lower, self.n_features = self.A_train.shape
        self.n_upper = self.A_val.shape[0]
        self.n_outputs = 1 if n_classes == 2 else n_classes
        self.dim_y = self.n_outputs * self.n_features
        # the strength of each entry of y = vec(W): its feature or its class
        entries = torch.arange(self.dim_y, device=self.device)
        self.groups = (entries % self.n_features if penalty == "feature"
                       else entries // self.n_features)
        self.dim_x = int(self.groups.max()) + 1
        self._set_start_and_bounds()
        self._init_exact_state()

    def _labels(self, labels):
        return torch.as_tensor(labels, device=self.device).long()

    def _set_start_and_bounds(self):
        """x0, y0 = 0, X and the curvature constants (module doc)."""
        ones = torch.ones(self.dim_x, dtype=self.dtype, device=self.device)
        if self.reg == "exp":
            self.X = WholeSpace(self.dim_x)
            self.x0 = math.log(REG_INIT) * ones
            lam_low, lam_high = REG_INIT, LINEAR_BOUNDS[1]
        else:
            lam_low, lam_high = LINEAR_BOUNDS
            self.X = Box(lam_low, lam_high, dim=self.dim_x)
            self.x0 = REG_INIT * ones
        self.y0 = torch.zeros(self.dim_y, dtype=self.dtype,
                              device=self.device)
        A = self.A_train
        sq_norms = (A * A).sum(dim=1)
        gram_max = float(torch.linalg.eigvalsh(A.T @ A / A.shape[0])[-1])
        bound = self.loss.curvature_bound
        self.mu_g = lam_low
        self.L_g = bound * float(sq_norms.max()) + lam_high
        self.L_g_full = bound * gram_max + lam_high
        # at y = 0: sigma' = 1/4 (binary); the softmax Jacobian is
        # (I - 1 1^T / K) / K, of largest eigenvalue 1/K (multiclass)
        at_zero = 0.25 if self.n_outputs == 1 else 1.0 / self.n_classes
        self.L_g_start = at_zero * gram_max + REG_INIT

    # -- the penalty ----------------------------------------------------------
    def strengths(self, x):
        """lambda(x) per entry of y."""
        lam = torch.exp(x) if self.reg == "exp" else x
        return lam[self.groups]

    def _strength_slopes(self, x):
        """d lambda / d x per entry of y."""
        slope = torch.exp(x) if self.reg == "exp" else torch.ones_like(x)
        return slope[self.groups]

    def _to_x(self, per_entry):
        """Sum the per-entry values of each strength's group."""
        out = torch.zeros(self.dim_x, dtype=per_entry.dtype,
                          device=per_entry.device)
        return out.index_add(0, self.groups, per_entry)

    # -- per-sample pieces ----------------------------------------------------
    def _W(self, y):
        return y.reshape(self.n_outputs, self.n_features)

    def _level(self, level, batch):
        """(features, targets) of the batch at ``level``."""
        A, T = ((self.A_val, self.T_val) if level == "upper"
                else (self.A_train, self.T_train))
        return self.rows(A, batch), self.rows(T, batch)

    def _outer(self, R, A):
        """Per-sample (R_i a_i^T) flattened as y, (n, dim_y)."""
        return (R[:, :, None] * A[:, None, :]).reshape(A.shape[0], -1)

    def _loss_gradient(self, level, y, batch, rows=False):
        A, T = self._level(level, batch)
        R = self.loss.residual(A @ self._W(y).T, T)
        if rows:
            return self._outer(R, A)
        return (R.T @ A).reshape(-1) / A.shape[0]

    def _loss_hvp(self, y, v, batch, rows=False):
        A, _ = self._level("lower", batch)
        C = self.loss.jacobian(A @ self._W(y).T)(A @ self._W(v).T)
        if rows:
            return self._outer(C, A)
        return (C.T @ A).reshape(-1) / A.shape[0]

    # -- values ---------------------------------------------------------------
    def f(self, x, y, *, batch=None):
        A, T = self._level("upper", batch)
        return self.loss.values(A @ self._W(y).T, T).mean()

    def g(self, x, y, *, batch=None):
        A, T = self._level("lower", batch)
        return (self.loss.values(A @ self._W(y).T, T).mean()
                + 0.5 * (self.strengths(x) * y * y).sum())

    # -- first order (closed form) --------------------------------------------
    def grad_f_x(self, x, y, *, batch=None):
        return torch.zeros_like(x)

    def grad_f_y(self, x, y, *, batch=None):
        return self._loss_gradient("upper", y, batch)

    def grad_f(self, x, y, *, batch=None):
        return torch.zeros_like(x), self.grad_f_y(x, y, batch=batch)

    def grad_g_x(self, x, y, *, batch=None):
        # the penalty, in every g_i: the same on every batch
        return 0.5 * self._to_x(self._strength_slopes(x) * y * y)

    def grad_g_y(self, x, y, *, batch=None):
        return (self._loss_gradient("lower", y, batch)
                + self.strengths(x) * y)

    def grad_g(self, x, y, *, batch=None):
        return (self.grad_g_x(x, y, batch=batch),
                self.grad_g_y(x, y, batch=batch))

    # -- second order (closed form) -------------------------------------------
    def hvp_yy_g(self, x, y, v, *, batch=None):
        return self._loss_hvp(y, v, batch) + self.strengths(x) * v

    def hvp_xy_g(self, x, y, v, *, batch=None):
        """d/dt grad_x g(x, y + t v) = sum over each group of
        lambda'(x) y_m v_m (no data: the same on every batch)."""
        return self._to_x(self._strength_slopes(x) * y * v)

    # -- per-sample rows (SAGA tables) ----------------------------------------
    def _n_rows(self, level, batch):
        if is_full(batch):
            return self.n_upper if level == "upper" else self.n_lower
        return batch.shape[0]

    def grad_f_rows(self, x, y, *, batch=None):
        """(rows of grad_x f_j = 0, rows of grad_y f_j), j in the batch."""
        rows_y = self._loss_gradient("upper", y, batch, rows=True)
        return x.new_zeros(1, self.dim_x).expand(rows_y.shape[0], -1), rows_y

    def grad_g_y_rows(self, x, y, *, batch=None):
        return (self._loss_gradient("lower", y, batch, rows=True)
                + self.strengths(x) * y)

    def hvp_yy_g_rows(self, x, y, v, *, batch=None):
        return self._loss_hvp(y, v, batch, rows=True) + self.strengths(x) * v

    def hvp_xy_g_rows(self, x, y, v, *, batch=None):
        # the same row for every sample (the penalty is in every g_i): a
        # broadcast view, not n copies
        return self.hvp_xy_g(x, y, v).expand(self._n_rows("lower", batch), -1)

    # -- starts ------------------------------------------------------------
    def random_start(self, generator):
        """(x, y0) with upstream's random strengths lambda ~ U(0, 1) per
        coordinate (benchmark_bilevel, ``init_var``): x = log u (exp), a
        uniform point of the box [1e-4, 1] (linear)."""
        if self.reg == "linear":
            return super().random_start(generator)
        u = torch.rand(self.dim_x, generator=generator, dtype=self.dtype)
        tiny = torch.finfo(self.dtype).tiny       # u = 0 has log -inf
        return (torch.log(u.clamp_min(tiny)).to(self.device),
                self.y0.clone())

    # -- task metrics ---------------------------------------------------------
    def task_metrics(self, x, y):
        """``test_accuracy`` of the model y on the held-out test samples."""
        predicted = self.loss.predict(self.A_test @ self._W(y).T)
        return {"test_accuracy": float(
            (predicted == self.labels_test).double().mean())}

    def __repr__(self):
        return (f"RegularizationSelectionBilevel(n_train={self.n_lower}, "
                f"n_val={self.n_upper}, n_test={self.A_test.shape[0]}, "
                f"n_features={self.n_features}, n_classes={self.n_classes}, "
                f"reg={self.reg!r}, penalty={self.penalty!r})")
