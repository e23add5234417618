"""The problem object of the simple-bilevel family.

    min_x f(x)   s.t.   x in argmin_{z in Z} g(z),

with ``Z`` compact and convex, ``g`` convex, ``f`` convex or not, both finite
sums ``f = mean_i f_i`` (``n_upper`` terms) and ``g = mean_j g_j``
(``n_lower`` terms). Oracles are torch functions in float64; ``batch`` is a
1-D tensor of sample indices (values and gradients are means over it), or
``None`` / a :class:`~benchmark_utils.problems.batches.FullBatch` for the
whole sum.
``batch`` is keyword-only so that the counting view can never mistake it for
a point.
"""
from __future__ import annotations

import torch
from torch import Tensor

from benchmark_utils.metrics import simple_metrics
from benchmark_utils.problems.batches import Batch
from benchmark_utils.problems.finite_sum import FiniteSumProblem
from benchmark_utils.sets.base import FeasibleSet


class SimpleBilevelProblem(FiniteSumProblem):
    """Base class; subclasses implement the four oracles and ``task_metrics``.

    Attributes set by subclasses: ``Z`` (a feasible set), ``x0`` (the
    dataset's default start, in ``Z``), ``n_upper``, ``n_lower``, ``dim``,
    ``f_convex`` (whether a certified ``f_star`` exists), and the certified
    references ``g_star``, ``f_star`` (None when f is nonconvex) with their
    accuracies ``g_star_accuracy`` / ``f_star_accuracy``.
    """

    family = "simple"
    ORACLES = {
        "f": ("upper", "value"),
        "grad_f": ("upper", "grad"),
        "g": ("lower", "value"),
        "grad_g": ("lower", "grad"),
        "g_and_grad_g": ("lower", "value_and_grad"),
    }
    SETS = ("Z",)

    Z: FeasibleSet
    dim: int
    n_upper: int
    n_lower: int
    x0: Tensor
    f_convex: bool
    f_star: float | None = None
    f_star_accuracy: float | None = None
    g_star: float | None = None
    g_star_accuracy: float | None = None

    # -- oracles (override) -----------------------------------------------
    def f(self, x: Tensor, *, batch: Batch = None) -> Tensor:
        raise NotImplementedError

    def grad_f(self, x: Tensor, *, batch: Batch = None) -> Tensor:
        raise NotImplementedError

    def g(self, x: Tensor, *, batch: Batch = None) -> Tensor:
        raise NotImplementedError

    def grad_g(self, x: Tensor, *, batch: Batch = None) -> Tensor:
        raise NotImplementedError

    def g_and_grad_g(self, x: Tensor, *,
                     batch: Batch = None) -> tuple[Tensor, Tensor]:
        """Value and gradient of g on the same batch (one data pass)."""
        return self.g(x, batch=batch), self.grad_g(x, batch=batch)

    # -- starts and metrics ------------------------------------------------
    def random_start(self, generator: torch.Generator) -> Tensor:
        """A random point of Z, the papers' "randomized starting points"."""
        return self.Z.random_point(generator).to(self.device)

    def dataset_start(self) -> dict[str, Tensor]:
        """The dataset's starting iterate, as a solver reports one."""
        return {"x": self.x0}

    def metrics(self, x: Tensor) -> dict[str, float]:
        """The objective's metrics of an iterate x (full-batch values)."""
        return simple_metrics(self, x)

    def task_metrics(self, x: Tensor) -> dict[str, float]:
        """Problem-specific metrics (test error, recovery rate, ...)."""
        return {}

    def set_references(self, references: dict[str, float | None]) -> None:
        """Attach certified reference values (computed and certified by
        ``benchmark_utils.references``)."""
        self.g_star = references["g_star"]
        self.g_star_accuracy = references["g_star_accuracy"]
        self.f_star = references.get("f_star")
        self.f_star_accuracy = references.get("f_star_accuracy")
