"""The problem object of the general-bilevel family.

    min_{x in X} F(x) = f(x, y*(x)),    y*(x) = argmin_y g(x, y),

with ``g(x, .)`` strongly convex, ``X`` a feasible set of
:mod:`benchmark_utils.sets` (``WholeSpace`` when unconstrained), ``f =
mean_i f_i`` (``n_upper`` terms) and ``g = mean_j g_j`` (``n_lower``
terms). Oracles are torch functions in float64; ``batch`` is keyword-only
(:data:`~benchmark_utils.problems.batches.Batch`: sample indices, values
and derivatives being means over them, or None / ``FullBatch`` for the
whole sum), as in the simple family. The oracles (``ORACLES``, all counted
by the counting view):

* ``f(x, y)``, ``g(x, y)``: values;
* ``grad_f``, ``grad_g``: the pair ``(d/dx, d/dy)`` from one pass;
  ``grad_f_x``, ``grad_f_y``, ``grad_g_x``, ``grad_g_y``: one partial;
* ``hvp_yy_g(x, y, v) = grad^2_yy g v`` (shape of y) and ``hvp_xy_g(x, y,
  v) = grad^2_xy g v`` (shape of x), the products of the hypergradient
  ``grad F = grad_x f - grad^2_xy g [grad^2_yy g]^-1 grad_y f``.

The defaults here derive the partial gradients and the products from ``f``
and ``g`` with ``torch.func``; problems with cheap closed forms override
them. Exact, untimed quantities for the metrics (never called by solvers):
``inner_solution(x)`` (accurate to 1e-10), ``hypergradient(x)``,
``value(x)`` = F(x), ``F_star`` (None where unknown), ``task_metrics``.
"""
from __future__ import annotations

import torch
from torch import Tensor
from torch.func import grad as func_grad
from torch.func import jvp

from benchmark_utils.metrics import general_metrics
from benchmark_utils.problems.batches import Batch
from benchmark_utils.problems.finite_sum import FiniteSumProblem
from benchmark_utils.sets.base import FeasibleSet


class GeneralBilevelProblem(FiniteSumProblem):
    """Base class; subclasses implement ``f``, ``g``, ``inner_solution``.

    Attributes set by subclasses: ``X`` (a feasible set, ``WholeSpace`` if
    unconstrained), ``dim_x``, ``dim_y``, ``n_upper``, ``n_lower``, ``x0``
    (in X) and ``y0`` (the dataset's starts), ``mu_g`` (a lower bound on the
    strong convexity of g in y), ``L_g`` (an upper bound on the smoothness of
    every per-sample g_j in y, so that steps <= 1/L_g are safe on any batch)
    and ``L_g_full`` (the same for the full sum), optionally ``L_g_start``
    (a constant of the problem, not of a solver: the largest eigenvalue of
    the full sum's grad^2_yy g at the dataset's start (x0, y0), a
    curvature, not a bound, declared where the bounds over-estimate it by
    far; None elsewhere, where a default step that reads it falls back on
    a bound), and ``F_star`` with its
    accuracy ``F_star_accuracy`` (None where unknown). Solvers whose default
    steps need ``mu_g`` / ``L_g`` skip a problem that leaves them None.
    ``outer_step_scale`` (default 1) is how much larger than on the
    benchmark's quadratic, whose hypergradient entries are of order 1, the
    outer (x) steps must be on this problem: the general solvers' default
    outer steps are tuned on the quadratic and multiplied by it (a step
    the user gives is used as is). A problem whose hypergradient entries
    are of order 1/n (mean losses over n per-sample weights) declares a
    scale of order n, and says why.
    ``F_convex`` (default False) is a mathematical fact about the
    problem: True where F(x) = f(x, y*(x)) is known to be convex on X,
    False where it is not, or not known (a solver whose theory differs in
    the convex case may choose its rule by it).
    ``single_level_x`` (default None) is the upper variable at which the
    lower level alone is the problem's usual single-level training, where
    there is one (hyper-cleaning: x = 0 weighs every training sample
    sigma(0) = 1/2, plain training on the noisy labels); None where the
    problem has no such single-level counterpart.
    ``levels_share_samples`` (default False): True where sample i of the
    upper level and sample i of the lower level are one unit (a task whose
    query set is f's sample and whose support set is g's), so that an
    upper batch's indices name lower-level samples too.
    """

    family = "general"
    ORACLES = {
        "f": ("upper", "value"),
        "grad_f": ("upper", "grad"),
        "grad_f_x": ("upper", "grad"),
        "grad_f_y": ("upper", "grad"),
        "g": ("lower", "value"),
        "grad_g": ("lower", "grad"),
        "grad_g_x": ("lower", "grad"),
        "grad_g_y": ("lower", "grad"),
        "hvp_yy_g": ("lower", "hvp"),
        "hvp_xy_g": ("lower", "hvp"),
    }
    SETS = ("X",)

    X: FeasibleSet
    dim_x: int
    dim_y: int
    n_upper: int
    n_lower: int
    x0: Tensor
    y0: Tensor
    F_star: float | None = None
    F_star_accuracy: float | None = None
    F_convex: bool = False
    levels_share_samples: bool = False
    outer_step_scale: float = 1.0
    mu_g: float | None = None
    L_g: float | None = None
    L_g_full: float | None = None
    single_level_x: Tensor | None = None
    L_g_start: float | None = None

    # -- values (override) ---------------------------------------------------
    def f(self, x: Tensor, y: Tensor, *, batch: Batch = None) -> Tensor:
        raise NotImplementedError

    def g(self, x: Tensor, y: Tensor, *, batch: Batch = None) -> Tensor:
        raise NotImplementedError

    # -- first order (override where a closed form is cheaper) ---------------
    def grad_f(self, x: Tensor, y: Tensor, *,
               batch: Batch = None) -> tuple[Tensor, Tensor]:
        """(grad_x f, grad_y f) on the batch."""
        return func_grad(lambda a, b: self.f(a, b, batch=batch),
                         argnums=(0, 1))(x, y)

    def grad_g(self, x: Tensor, y: Tensor, *,
               batch: Batch = None) -> tuple[Tensor, Tensor]:
        """(grad_x g, grad_y g) on the batch."""
        return func_grad(lambda a, b: self.g(a, b, batch=batch),
                         argnums=(0, 1))(x, y)

    def grad_f_x(self, x: Tensor, y: Tensor, *,
                 batch: Batch = None) -> Tensor:
        return func_grad(lambda a: self.f(a, y, batch=batch))(x)

    def grad_f_y(self, x: Tensor, y: Tensor, *,
                 batch: Batch = None) -> Tensor:
        return func_grad(lambda b: self.f(x, b, batch=batch))(y)

    def grad_g_x(self, x: Tensor, y: Tensor, *,
                 batch: Batch = None) -> Tensor:
        return func_grad(lambda a: self.g(a, y, batch=batch))(x)

    def grad_g_y(self, x: Tensor, y: Tensor, *,
                 batch: Batch = None) -> Tensor:
        return func_grad(lambda b: self.g(x, b, batch=batch))(y)

    # -- second order: forward-over-reverse products -------------------------
    def hvp_yy_g(self, x: Tensor, y: Tensor, v: Tensor, *,
                 batch: Batch = None) -> Tensor:
        """grad^2_yy g(x, y) v, shape of y."""
        return jvp(lambda b: self.grad_g_y(x, b, batch=batch), (y,), (v,))[1]

    def hvp_xy_g(self, x: Tensor, y: Tensor, v: Tensor, *,
                 batch: Batch = None) -> Tensor:
        """grad^2_xy g(x, y) v = d/dt grad_x g(x, y + t v), shape of x."""
        return jvp(lambda b: self.grad_g_x(x, b, batch=batch), (y,), (v,))[1]

    # -- exact quantities for the metrics (override) -------------------------
    def inner_solution(self, x: Tensor) -> Tensor:
        """y*(x), accurate to 1e-10."""
        raise NotImplementedError

    def hypergradient(self, x: Tensor,
                      y_star: Tensor | None = None) -> Tensor:
        """Exact grad F(x) at y*(x), by a tight conjugate-gradient solve.

        Subclasses with a closed form override it.
        """
        from benchmark_utils.numerics.linear_systems import conjugate_gradient
        y = self.inner_solution(x) if y_star is None else y_star
        grad_x, grad_y = self.grad_f(x, y)
        w = conjugate_gradient(lambda v: self.hvp_yy_g(x, y, v), grad_y,
                               tol=1e-13, max_iter=10 * self.dim_y)
        return grad_x - self.hvp_xy_g(x, y, w)

    def value(self, x: Tensor, y_star: Tensor | None = None) -> Tensor:
        """F(x) = f(x, y*(x)) on the full upper-level sum."""
        y = self.inner_solution(x) if y_star is None else y_star
        return self.f(x, y)

    def metrics(self, x: Tensor, y: Tensor) -> dict[str, float]:
        """The objective's metrics of an iterate (x, y) (exact, full batch)."""
        return general_metrics(self, x, y)

    def task_metrics(self, x: Tensor, y: Tensor) -> dict[str, float]:
        """Problem-specific metrics (test accuracy, normalized error, ...)."""
        return {}

    # -- starts --------------------------------------------------------------
    def random_start(self, generator: torch.Generator
                     ) -> tuple[Tensor, Tensor]:
        """(x, y): a random point of X (whole space: standard Gaussian)
        and y0."""
        x = self.X.random_point(generator, dtype=self.dtype).to(self.device)
        return x, self.y0.clone()

    def dataset_start(self) -> dict[str, Tensor]:
        """The dataset's starting iterate, as a solver reports one."""
        return {"x": self.x0, "y": self.y0}
