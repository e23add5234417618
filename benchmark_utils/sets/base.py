"""The interface every feasible set implements, and the matrix-set base.

Algorithms never special-case a set: they only call the methods of
:class:`FeasibleSet`. Everything that depends on the kind of set (its LMO,
projection, diameter, CVXPY formulation, how the cut-LMO searches it, how
far a point lies outside it) is a method of the set, so adding a set means
writing one class.

Conventions shared by every set:

* A point is a flat 1-D torch tensor of length ``dim`` (float64 in the
  benchmark). ``lmo`` and ``project`` compute on the input's device and dtype
  and always return a *new* tensor of the same shape, dtype and device; they
  use torch only (no numpy, no generic solver) and never synchronise with the
  host, so they can run on an accelerator.
* Matrix-shaped sets view the flat vector row-major as
  ``M = x.reshape(n_rows, n_cols)``; the "columns" are ``M[:, j]``.
* ``random_point`` draws on the CPU with the given ``torch.Generator`` (so
  results are reproducible across devices), in float64, then moves the point
  to ``device`` / ``dtype``.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Hashable
from typing import Any

import torch
from torch import Tensor

from benchmark_utils.checks.parameters import (
    check_choice,
    check_int,
    check_positive,
)
from benchmark_utils.sets.cut_lmo import CUT_LMO_BACKENDS
from benchmark_utils.sets.cut_oracles import BlockOracle
from benchmark_utils.sets.cut_result import CutLMOResult


class UnboundedLMOError(NotImplementedError, ValueError):
    """Raised by ``lmo`` on an unbounded set (the minimum is -inf).

    Subclasses both ``NotImplementedError`` and ``ValueError`` so that either
    can be caught.
    """


def as_dimension(name: str, value: Any) -> int:
    """``value`` as a Python int >= 1 (numpy integers accepted)."""
    return int(check_int(name, value, 1))


def as_radius(value: Any) -> float:
    """``value`` as a finite Python float > 0 (numpy scalars accepted)."""
    return float(check_positive("radius", value))


class FeasibleSet(ABC):
    """A closed convex set of flat vectors of length ``dim``.

    Subclasses set ``self.dim`` and implement ``lmo``, ``project``,
    ``diameter``, ``contains``, ``excess``, ``random_point`` and
    ``cvxpy_constraints``; the cut-LMO hooks have defaults that are correct
    for every set and that a set overrides where it knows better.
    """

    dim: int

    #: whether the set is a polyhedron; the cut-LMO then takes tent
    #: (Newton-type) steps, exact after finitely many LMO calls.
    polyhedral: bool = False

    #: whether the projection decomposes coordinate by coordinate (a box,
    #: the whole space), so a projection in a diagonal metric
    #: argmin_s (s - x)^T D (s - x) is the Euclidean one.
    coordinate_separable: bool = False

    @abstractmethod
    def lmo(self, direction: Tensor) -> Tensor:
        """An exact minimizer of <direction, s> over the set (new tensor)."""

    @abstractmethod
    def project(self, point: Tensor) -> Tensor:
        """The Euclidean projection argmin_s ||s - point||_2 (new tensor)."""

    @property
    @abstractmethod
    def diameter(self) -> float:
        """Euclidean diameter max ||x - y||_2 over the set (float)."""

    @property
    def unbounded(self) -> bool:
        """True for the whole space: no LMO, projection is the identity."""
        return math.isinf(self.diameter)

    @property
    def norm_ball(self) -> tuple[str, float] | None:
        """``(norm, radius)`` for a single l1 / l2 ball, else None.

        Lets code that has closed forms for exactly these balls (the
        least-squares references) ask the set instead of testing its class.
        """
        return None

    @abstractmethod
    def contains(self, point: Tensor, tol: float = 1e-9) -> bool:
        """Whether ``point`` is finite and in the set up to a slack.

        Each defining constraint may be violated by ``tol * max(1, scale)``,
        with scale the radius (balls, simplex) or |bound| (box), so that the
        default works for large radii despite rounding in float64.
        """

    @abstractmethod
    def excess(self, point: Tensor) -> float:
        """How far ``point`` violates the set's defining constraint (float).

        0.0 for a point of the set, otherwise the violation in the units of
        that constraint (norm minus radius for a ball, largest bound
        violation for a box). Certificates use it to bound the error made
        by evaluating at a point slightly outside the set.
        """

    @abstractmethod
    def random_point(self, generator: torch.Generator | None = None, *,
                     device: str | torch.device = "cpu",
                     dtype: torch.dtype = torch.float64) -> Tensor:
        """A random point of the set, drawn with ``generator`` on the CPU."""

    def cvxpy_constraints(self, var: Any) -> list[Any]:
        """CVXPY constraints saying ``var`` (a vector of length ``dim``) is in
        the set; used by the CVXPY cut-LMO backend and the references."""
        raise NotImplementedError(
            f"{type(self).__name__} has no CVXPY formulation")

    @property
    def cache_key(self) -> Hashable:
        """Hashable key, equal for sets of the same type and parameters
        (compiled CVXPY problems are cached per key)."""
        return (type(self).__name__,) + tuple(sorted(vars(self).items()))

    # -- cut-LMO -----------------------------------------------------------
    def cut_lmo(self, c: Tensor, a: Tensor, beta: float, *,
                backend: str = "exact", fallback: Tensor | None = None,
                **options: Any) -> CutLMOResult:
        """min <c, s> over the set cut by <a, s> <= beta (a ``CutLMOResult``).

        ``backend`` "exact" is the 1-D dual search of
        :func:`benchmark_utils.sets.cut_lmo.cut_lmo`, "cvxpy" the CVXPY
        formulation (checking and reproduction only); ``options`` go to the
        backend.
        """
        check_choice("backend", backend, CUT_LMO_BACKENDS)
        return CUT_LMO_BACKENDS[backend].solve(
            self, c, a, beta, fallback=fallback, **options)

    def prepare_cut_lmo(self, backend: str) -> None:
        """One-time set-up of a cut-LMO backend, to be run untimed (the
        CVXPY backend compiles its parametrized problem; no-op for "exact")."""
        check_choice("backend", backend, CUT_LMO_BACKENDS)
        CUT_LMO_BACKENDS[backend].prepare(self)

    def cut_lmo_oracle(self, c: Tensor, a: Tensor) -> BlockOracle:
        """The LMO oracle the exact cut-LMO searches with (see
        :mod:`benchmark_utils.sets.cut_oracles`); generic by default."""
        return BlockOracle(self, c.detach().to(torch.float64),
                           a.detach().to(torch.float64), like=c)

    def leaf_sets(self, offset: int = 0) -> list[tuple[FeasibleSet, int]]:
        """(set, start) pairs of the non-product factors of the set."""
        return [(self, offset)]

    def lmo_direction_at_infinity(self, c: Tensor, a: Tensor) -> Tensor:
        """A direction whose LMO minimizes <a, s> over the set.

        Any minimizer is correct; a set may break ties towards small
        <c, s> where that is cheap, which speeds up the cut-LMO when the cut
        touches the set.
        """
        return a

    # -- helpers -------------------------------------------------------------
    def _check(self, x, name="point"):
        if not isinstance(x, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(x)}")
        if x.dim() != 1 or x.shape[0] != self.dim:
            raise ValueError(
                f"{name} must be a flat tensor of shape ({self.dim},), "
                f"got shape {tuple(x.shape)}"
            )

    def _slack(self, tol):  # for the sets that have a radius
        return tol * max(1.0, self.radius)

    @staticmethod
    def _finite(x):
        return bool(torch.isfinite(x).all())


class MatrixSet(FeasibleSet):
    """Shared code for sets of row-major (n_rows, n_cols) matrices."""

    def __init__(self, n_rows, n_cols):
        self.n_rows = as_dimension("n_rows", n_rows)
        self.n_cols = as_dimension("n_cols", n_cols)
        self.dim = self.n_rows * self.n_cols

    def _mat(self, x):
        # reshape, not view: also accepts non-contiguous 1-D inputs.
        return x.reshape(self.n_rows, self.n_cols)

    def _cvxpy_mat(self, var):
        import cvxpy as cp
        return cp.reshape(var, (self.n_rows, self.n_cols), order="C")
