"""The scaled probability simplex."""

import math

import torch

from benchmark_utils.sets.base import FeasibleSet, as_dimension, as_radius
from benchmark_utils.sets.row_ops import project_simplex_rows


class Simplex(FeasibleSet):
    """{x in R^dim : x >= 0, sum x = radius} (probability simplex if 1).

    * ``lmo(c) = radius * e_i`` with ``i`` the *first* index of min c_j.
    * ``project``: sort-based, Duchi et al. (2008) Fig. 1 / Held et al.
      (1974).
    * ``diameter = radius * sqrt(2)`` (0 when dim = 1: a single point).
    * ``excess``: the larger of the most negative entry and
      ``|sum x - radius|``.
    * ``random_point``: ``radius`` times a Dirichlet(1, ..., 1) draw
      (uniform on the simplex), via normalised Exp(1) variables.
    """

    polyhedral = True

    def __init__(self, dim, radius=1.0):
        self.dim = as_dimension("dim", dim)
        self.radius = as_radius(radius)

    def lmo(self, direction):
        self._check(direction, "direction")
        out = torch.zeros_like(direction)
        out[direction.argmin()] = self.radius
        return out

    def project(self, point):
        self._check(point)
        return project_simplex_rows(point[None], self.radius)[0]

    @property
    def diameter(self):
        return self.radius * math.sqrt(2.0) if self.dim > 1 else 0.0

    def contains(self, point, tol=1e-9):
        self._check(point)
        return self._finite(point) and bool(
            (point >= -self._slack(tol)).all()
            and (point.sum() - self.radius).abs() <= self._slack(tol)
        )

    def excess(self, point):
        self._check(point)
        return max(float((-point).max()),
                   abs(float(point.sum()) - self.radius), 0.0)

    def random_point(self, generator=None, *, device="cpu",
                     dtype=torch.float64):
        e = torch.empty(self.dim, dtype=torch.float64).exponential_(
            generator=generator
        )
        return (self.radius * e / e.sum()).to(device=device, dtype=dtype)

    def cvxpy_constraints(self, var):
        import cvxpy as cp
        return [var >= 0, cp.sum(var) == self.radius]

    def __repr__(self):
        return f"Simplex(dim={self.dim}, radius={self.radius})"
