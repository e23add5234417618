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

from benchmark_utils.parameter_checks import check_choice
from benchmark_utils.problems.simple import SimpleBilevelProblem

LOSS_SCALINGS = ("mse", "half_mse", "half_sse")


def loss_scale(loss, n):
    """Per-sample factor c for a loss convention over n samples."""
    check_choice("loss", loss, LOSS_SCALINGS)
    return {"mse": 1.0, "half_mse": 0.5, "half_sse": 0.5 * n}[loss]


class LeastSquaresBilevel(SimpleBilevelProblem):
    """min_x c_f/n_f ||A_f x - b_f||^2  s.t.  x in argmin_{z in Z} c_g/n_g ||A_g z - b_g||^2."""

    f_convex = True

    def __init__(self, A_upper, b_upper, A_lower, b_lower, Z, loss="mse",
                 A_test=None, b_test=None, x0=None, device="cpu"):
        self.device = torch.device(device)
        self.A_upper, self.b_upper = self.as_tensor(A_upper), self.as_tensor(b_upper)
        self.A_lower, self.b_lower = self.as_tensor(A_lower), self.as_tensor(b_lower)
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

    # r = A_B x - b_B; value c/|B| ||r||^2, gradient 2c/|B| A_B^T r
    def _value(self, A, b, c, x, batch):
        A_B, b_B = self.rows(A, batch), self.rows(b, batch)
        r = A_B @ x - b_B
        return c * (r @ r) / r.shape[0]

    def _grad(self, A, b, c, x, batch):
        A_B, b_B = self.rows(A, batch), self.rows(b, batch)
        r = A_B @ x - b_B
        return (2.0 * c / r.shape[0]) * (r @ A_B)

    def f(self, x, *, batch=None):
        return self._value(self.A_upper, self.b_upper, self.c_upper, x, batch)

    def grad_f(self, x, *, batch=None):
        return self._grad(self.A_upper, self.b_upper, self.c_upper, x, batch)

    def g(self, x, *, batch=None):
        return self._value(self.A_lower, self.b_lower, self.c_lower, x, batch)

    def grad_g(self, x, *, batch=None):
        return self._grad(self.A_lower, self.b_lower, self.c_lower, x, batch)

    def g_and_grad_g(self, x, *, batch=None):
        A_B, b_B = self.rows(self.A_lower, batch), self.rows(self.b_lower, batch)
        r = A_B @ x - b_B
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
