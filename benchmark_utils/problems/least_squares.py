"""Over-parameterized least squares as a simple bilevel problem.

Upper level: validation loss, lower level: training loss (Cao et al. 2023,
Sec. 2.1, example 1, eq. (3); Giang-Tran et al. 2025, Sec. 4.1, eq. (6));
Z is a norm ball. Per sample,

    f_i(x) = c_f (a_i^T x - b_i)^2,    g_j(x) = c_g (a_j^T x - b_j)^2,

and f, g are means over the samples, so the scale ``c`` fixes the loss
convention, which Cao et al. do not state: ``"mse"`` (c = 1, the mean
squared error without a factor 1/2 that Giang-Tran et al. print),
``"half_mse"`` (c = 1/2) or ``"half_sse"`` (c = n/2, so f = 1/2 ||Ax -
b||^2, the sum convention of the CG-BiO code of Jiang et al. 2023, which
the tiny baseline step sizes of Cao et al., App. F.1, 1e-6 and 1e-7, hint
at).
"""
import torch

from benchmark_utils.checks.parameters import check_choice
from benchmark_utils.problems.batches import is_full
from benchmark_utils.problems.simple import SimpleBilevelProblem

LOSS_SCALINGS = ("mse", "half_mse", "half_sse")
_NO_BATCH = object()


def loss_scale(loss, n):
    """Per-sample factor c for a loss convention over n samples."""
    check_choice("loss", loss, LOSS_SCALINGS)
    return {"mse": 1.0, "half_mse": 0.5, "half_sse": 0.5 * n}[loss]


class LeastSquaresBilevel(SimpleBilevelProblem):
    """min_x c_f/n_f ||A_f x - b_f||^2
    s.t.  x in argmin_{z in Z} c_g/n_g ||A_g z - b_g||^2."""

    f_convex = True

    def __init__(self, A_upper, b_upper, A_lower, b_lower, Z, loss="mse",
                 A_test=None, b_test=None, x0=None, device="cpu"):
        self.device = torch.device(device)
        self.A_upper = self.as_tensor(A_upper)
        self.b_upper = self.as_tensor(b_upper)
        self.A_lower = self.as_tensor(A_lower)
        self.b_lower = self.as_tensor(b_lower)
        self.A_test = None if A_test is None else self.as_tensor(A_test)
        self.b_test = None if b_test is None else self.as_tensor(b_test)
        self.n_upper, self.dim = self.A_upper.shape
        self.n_lower = self.A_lower.shape[0]
        self.loss = loss
        self.c_upper = loss_scale(loss, self.n_upper)
        self.c_lower = loss_scale(loss, self.n_lower)
        self.Z = Z
        self.x0 = (torch.zeros(self.dim, dtype=self.dtype, device=self.device)
                   if x0 is None else self.as_tensor(x0))
        # (batch, A_B, b_B) per level, see _batch_rows; _NO_BATCH is
        # never a batch
        self._rows_cache = [(_NO_BATCH, None, None)] * 2

    def _batch_rows(self, level, batch):
        """(A_B, b_B) of ``level`` (0: upper, 1: lower) for ``batch``.

        The rows of the last batch of each level are kept: the STORM and
        SPIDER corrections evaluate one drawn batch at two points, and
        gathering its rows once is what a hand-written loop does. The key
        is the batch object itself, held by the cache so that its identity
        cannot be reused (a batch is never modified in place), so a cached
        answer is exactly the gathered one.
        """
        cached = self._rows_cache[level]
        if cached[0] is batch:
            return cached[1], cached[2]
        A, b = (self.A_upper, self.b_upper) if level == 0 else \
            (self.A_lower, self.b_lower)
        if is_full(batch):
            return A, b
        A_B, b_B = A.index_select(0, batch), b.index_select(0, batch)
        self._rows_cache[level] = (batch, A_B, b_B)
        return A_B, b_B

    # r = A_B x - b_B; value c/|B| ||r||^2, gradient 2c/|B| A_B^T r
    def _value(self, level, c, x, batch):
        A_B, b_B = self._batch_rows(level, batch)
        r = A_B @ x - b_B
        return c * (r @ r) / r.shape[0]

    def _grad(self, level, c, x, batch):
        A_B, b_B = self._batch_rows(level, batch)
        # s (A_B x - b_B) in one fused call (addmv), then one product
        s = 2.0 * c / b_B.shape[0]
        return torch.addmv(b_B, A_B, x, beta=-s, alpha=s) @ A_B

    def f(self, x, *, batch=None):
        return self._value(0, self.c_upper, x, batch)

    def grad_f(self, x, *, batch=None):
        return self._grad(0, self.c_upper, x, batch)

    def g(self, x, *, batch=None):
        return self._value(1, self.c_lower, x, batch)

    def grad_g(self, x, *, batch=None):
        return self._grad(1, self.c_lower, x, batch)

    def g_and_grad_g(self, x, *, batch=None):
        A_B, b_B = self._batch_rows(1, batch)
        r = torch.addmv(b_B, A_B, x, beta=-1.0)         # A_B x - b_B
        scale = self.c_lower / r.shape[0]
        return scale * (r @ r), (2.0 * scale) * (r @ A_B)

    def task_metrics(self, x):
        """``test_error``: mean squared error on the held-out test third."""
        if self.A_test is None:
            return {}
        r = self.A_test @ x - self.b_test
        return {"test_error": float((r @ r) / r.shape[0])}

    def __repr__(self):
        return (f"LeastSquaresBilevel(n_upper={self.n_upper}, "
                f"n_lower={self.n_lower}, dim={self.dim}, Z={self.Z!r}, "
                f"loss={self.loss!r})")
