"""The whole space R^dim (no constraint)."""

import math

import torch

from benchmark_utils.sets.base import (
    FeasibleSet,
    UnboundedLMOError,
    as_dimension,
)


class WholeSpace(FeasibleSet):
    """R^dim (unconstrained).

    * ``lmo`` raises :class:`UnboundedLMOError` (a ``NotImplementedError``
      and ``ValueError``): a linear function has no minimizer on R^dim; so
      does the cut-LMO, which needs the LMO.
    * ``project`` returns a copy of the point (never the same tensor, like
      every other set).
    * ``diameter = inf``; ``contains`` is True for every finite point and
      ``excess`` is 0; no CVXPY constraint.
    * ``random_point``: standard Gaussian.
    """

    coordinate_separable = True

    def __init__(self, dim):
        self.dim = as_dimension("dim", dim)

    def lmo(self, direction):
        raise UnboundedLMOError(
            f"{self!r} has no linear minimization oracle: the whole space is "
            "unbounded (use a projection-based method or a bounded set)"
        )

    def project(self, point):
        self._check(point)
        return point.clone()

    @property
    def diameter(self):
        return math.inf

    def contains(self, point, tol=1e-9):
        self._check(point)
        return self._finite(point)

    def excess(self, point):
        self._check(point)
        return 0.0

    def random_point(self, generator=None, *, device="cpu",
                     dtype=torch.float64):
        x = torch.randn(self.dim, generator=generator, dtype=torch.float64)
        return x.to(device=device, dtype=dtype)

    def cvxpy_constraints(self, var):
        return []

    def __repr__(self):
        return f"WholeSpace(dim={self.dim})"
