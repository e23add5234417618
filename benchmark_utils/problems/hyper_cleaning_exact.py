"""The exact quantities of hyper-cleaning: y*(x) and grad F(x).

Untimed, for the metrics (:class:`~benchmark_utils.problems.hyper_cleaning.
HyperCleaningBilevel` mixes :class:`ExactSoftmaxSolves` in).
``inner_solution`` is Newton's method with a backtracking line search on
the strongly convex g(x, .)
(:mod:`benchmark_utils.numerics.newton_inner_solver`), warm-started at the
last solution and stopped at the gradient's rounding floor. Its Newton
systems are solved with the dense Hessian (Cholesky) when ``dim_y <=
DENSE_MAX_DIM``, otherwise by conjugate gradient on closed-form
Hessian-vector products, preconditioned by a Kronecker-factored
approximation of the Hessian
(:mod:`benchmark_utils.numerics.kronecker_preconditioner`; ``"jacobi"``:
its diagonal), with float32 products refined by float64 residuals
(``hvp_precision="mixed"``,
:func:`benchmark_utils.numerics.linear_systems.refined_conjugate_gradient`)
or float64 throughout. ``hypergradient`` solves one more Hessian system
(``grad_x f = 0``), warm-started at the last adjoint solution.
``inner_accuracy`` (the certified ||y - y*||, the metric
``inner_tolerance``) and ``inner_work`` (Newton steps, CG iterations)
describe the last inner solve. Why each choice and what it saves:
docs/problems.md, "Data hyper-cleaning".
"""
import torch

from benchmark_utils.numerics.kronecker_preconditioner import (
    blas_threads,
    class_factor,
    kronecker_inverse,
    symmetric_eigh,
)
from benchmark_utils.numerics.linear_systems import refined_conjugate_gradient
from benchmark_utils.numerics.newton_inner_solver import newton_minimize
from benchmark_utils.numerics.softmax_sum import SoftmaxSum

HESSIAN_SOLVERS = ("auto", "dense", "cg")
# preconditioners of the CG path: Kronecker-factored (default) or the
# Hessian's diagonal (thousands of CG iterations per solve at Kwon et al.
# 2023's size)
PRECONDITIONERS = ("kronecker", "jacobi")
# products of the CG iterations: float32 refined by float64 residuals, or
# float64 throughout
HVP_PRECISIONS = ("mixed", "float64")
# largest dim_y for which the Newton systems use the dense Hessian (forming
# it costs n K^2 D^2): digits and MNIST go through CG, tiny instances stay
# dense (docs/problems.md)
DENSE_MAX_DIM = 300
# cap on the conjugate-gradient iterations of one Hessian solve
CG_MAX_ITER = 10_000
# the Kronecker preconditioner's data factor S = A^T diag(w(x)) A is kept
# while max_i |x_i - x_i at S| stays below this (each weight sigma(x_i) is
# then within a factor e^0.5 of the one S holds)
PRECONDITIONER_REUSE = 0.5


class ExactSoftmaxSolves:
    """Newton / CG solves on the full training sum of hyper-cleaning.

    Reads the problem's ``A_train``, ``labels_train``, ``n_classes``, ``c``,
    ``scale_lower``, ``n_lower``, ``y0``, ``mu_g``, ``dense``,
    ``preconditioner``, ``hvp_precision`` and its warm-start state
    (``_cache``, ``_adjoint``, ``_data_eig``, ``_sum``, ``_noise``,
    ``hvp_count``, ``hvp_count_low``, ``inner_work``), all set by
    :class:`~benchmark_utils.problems.hyper_cleaning.HyperCleaningBilevel`.
    """

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
        or all in float64."""
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
