"""Norm balls: one vector ball, and products of balls on matrix columns.

The l1 and l2 versions differ only in the norm, so each class is written
once and takes its norm-specific rules (row LMO, row projection, CVXPY
formulation, ...) from :data:`NORMS`.
"""

import math
from dataclasses import dataclass
from typing import Callable, Optional

import torch

from benchmark_utils.checks.parameters import check_choice
from benchmark_utils.sets.base import (
    FeasibleSet,
    MatrixSet,
    as_dimension,
    as_radius,
)
from benchmark_utils.sets.cut_oracles import L1VertexOracle
from benchmark_utils.sets.row_ops import (
    lmo_l1_rows,
    lmo_l2_rows,
    project_l1_rows,
    project_l2_rows,
    random_direction_scaled,
)


def _l1_norm(x):
    return x.abs().sum()


def _cvxpy_l1_ball(var, radius):
    import cvxpy as cp
    return cp.norm1(var) <= radius


def _cvxpy_l2_ball(var, radius):
    import cvxpy as cp
    return cp.norm(var, 2) <= radius


def _cvxpy_l1_columns(M, radius):
    import cvxpy as cp
    return cp.sum(cp.abs(M), axis=0) <= radius


def _cvxpy_l2_columns(M, radius):
    import cvxpy as cp
    return cp.norm(M, 2, axis=0) <= radius


@dataclass(frozen=True)
class Norm:
    """What the l1 and l2 balls differ in."""

    ord: int                     # for torch.linalg.vector_norm
    lmo_rows: Callable           # (C, radius) -> LMO of each row
    project_rows: Callable       # (V, radius) -> projection of each row
    vector_norm: Callable        # x -> ||x|| (0-d tensor)
    cvxpy_ball: Callable         # (var, radius) -> ||var|| <= radius
    cvxpy_columns: Callable      # (M, radius) -> column norms <= radius
    polyhedral: bool
    # exact cut-LMO oracle of a single ball, None for the generic one
    vertex_oracle: Optional[type] = None


NORMS = {
    "l1": Norm(1, lmo_l1_rows, project_l1_rows, _l1_norm, _cvxpy_l1_ball,
               _cvxpy_l1_columns, polyhedral=True,
               vertex_oracle=L1VertexOracle),
    "l2": Norm(2, lmo_l2_rows, project_l2_rows, torch.linalg.vector_norm,
               _cvxpy_l2_ball, _cvxpy_l2_columns, polyhedral=False),
}


class _NormRulesMixin:
    """For the balls whose ``norm`` attribute picks their rules in NORMS."""

    @property
    def _rules(self):
        return NORMS[self.norm]

    @property
    def polyhedral(self):
        return self._rules.polyhedral


class NormBall(_NormRulesMixin, FeasibleSet):
    """{x in R^dim : ||x||_norm <= radius}, ``norm`` "l1" or "l2".

    * ``lmo``: for l1, ``-radius * sign(c_i) e_i`` with ``i`` the *first*
      index of max |c_j| (``torch.argmax`` semantics); for l2,
      ``-radius * c / ||c||_2``. A zero direction returns the zero vector
      (the center, which is a minimizer since every point is).
    * ``project``: for l1, the sort-based method of Duchi et al. (ICML
      2008), Fig. 1, O(dim log dim); for l2, ``x * radius / max(||x||_2,
      radius)``.
    * ``diameter = 2 * radius``.
    * ``excess``: ``max(||x|| - radius, 0)``.
    * ``random_point``: Gaussian direction rescaled to norm ``radius * u``,
      ``u ~ U(0, 1)`` (not uniform in the ball).
    * ``norm_ball = (norm, radius)``.
    * the exact cut-LMO of the l1 ball walks its vertices on host copies of
      ``c`` and ``a`` (``L1VertexOracle`` in ``cut_oracles``); the l2 ball
      uses the generic oracle.
    """

    _norm_in_repr = True

    def __init__(self, dim, radius=1.0, norm="l2"):
        self.dim = as_dimension("dim", dim)
        self.radius = as_radius(radius)
        self.norm = check_choice("norm", norm, NORMS)

    @property
    def norm_ball(self):
        return self.norm, self.radius

    def lmo(self, direction):
        self._check(direction, "direction")
        # the row rules take a 1-D tensor as one row: no reshaping in the
        # hot loop
        return self._rules.lmo_rows(direction, self.radius)

    def project(self, point):
        self._check(point)
        return self._rules.project_rows(point[None], self.radius)[0]

    @property
    def diameter(self):
        return 2.0 * self.radius

    def contains(self, point, tol=1e-9):
        self._check(point)
        return self._finite(point) and bool(
            self._rules.vector_norm(point) <= self.radius + self._slack(tol)
        )

    def excess(self, point):
        self._check(point)
        return max(float(self._rules.vector_norm(point)) - self.radius, 0.0)

    def random_point(self, generator=None, *, device="cpu",
                     dtype=torch.float64):
        u = torch.rand((), generator=generator, dtype=torch.float64)
        x = random_direction_scaled(
            (self.dim,), self._rules.ord, self.radius * u, generator
        )
        return x.to(device=device, dtype=dtype)

    def cvxpy_constraints(self, var):
        return [self._rules.cvxpy_ball(var, self.radius)]

    def cut_lmo_oracle(self, c, a):
        if self._rules.vertex_oracle is None:
            return super().cut_lmo_oracle(c, a)
        return self._rules.vertex_oracle(c, a, self.radius, c)

    def __repr__(self):
        norm = f", norm={self.norm!r}" if self._norm_in_repr else ""
        return (f"{type(self).__name__}(dim={self.dim}, "
                f"radius={self.radius}{norm})")


class L1Ball(NormBall):
    """{x in R^dim : ||x||_1 <= radius}: a :class:`NormBall` with norm "l1"."""

    _norm_in_repr = False

    def __init__(self, dim, radius=1.0):
        super().__init__(dim, radius, "l1")


class L2Ball(NormBall):
    """{x in R^dim : ||x||_2 <= radius}: a :class:`NormBall` with norm "l2"."""

    _norm_in_repr = False

    def __init__(self, dim, radius=1.0):
        super().__init__(dim, radius, "l2")


class ColumnBalls(_NormRulesMixin, MatrixSet):
    """Product of ``n_cols`` balls {M[:, j] : ||M[:, j]||_norm <= radius}.

    The point is the row-major flattening of an (n_rows, n_cols) matrix M.
    This is the dictionary-learning set: unit l2 columns for a dictionary,
    l1 columns of radius delta for the codes. Everything is vectorised over
    columns (the l1 projection sorts all columns at once).

    * ``lmo``: the :class:`NormBall` rule per column (first argmax of |c|
      per column for l1; a zero column returns a zero column).
    * ``project``: per-column projection (Duchi et al. 2008 for l1, rescaling
      for l2).
    * ``diameter = 2 * radius * sqrt(n_cols)`` (sqrt of the sum of squared
      per-column diameters).
    * ``excess``: the largest column norm minus the radius (0 inside).
    * ``random_point``: each column drawn independently as in
      :class:`NormBall`.
    * cut-LMO: at lam = inf, columns where the cut normal ``a`` is zero
      follow ``c`` (their LMO does not depend on lam).
    """

    def __init__(self, n_rows, n_cols, norm="l2", radius=1.0):
        super().__init__(n_rows, n_cols)
        self.norm = check_choice("norm", norm, NORMS)
        self.radius = as_radius(radius)

    def _cols(self, x):
        # Columns as rows of the transpose, so the row-wise helpers apply.
        return self._mat(x).T

    def _from_cols(self, C):
        return C.T.reshape(-1)

    def lmo(self, direction):
        self._check(direction, "direction")
        return self._from_cols(
            self._rules.lmo_rows(self._cols(direction), self.radius))

    def project(self, point):
        self._check(point)
        return self._from_cols(
            self._rules.project_rows(self._cols(point), self.radius))

    def column_norms(self, point):
        """The ``norm`` of each column, shape (n_cols,)."""
        self._check(point)
        return torch.linalg.vector_norm(self._mat(point),
                                        ord=self._rules.ord, dim=0)

    @property
    def diameter(self):
        return 2.0 * self.radius * math.sqrt(self.n_cols)

    def contains(self, point, tol=1e-9):
        return self._finite(point) and bool(
            (self.column_norms(point)
             <= self.radius + self._slack(tol)).all()
        )

    def excess(self, point):
        return max(float(self.column_norms(point).max()) - self.radius, 0.0)

    def random_point(self, generator=None, *, device="cpu",
                     dtype=torch.float64):
        u = torch.rand((self.n_cols, 1), generator=generator,
                       dtype=torch.float64)
        C = random_direction_scaled(
            (self.n_cols, self.n_rows), self._rules.ord, self.radius * u,
            generator
        )
        return self._from_cols(C).to(device=device, dtype=dtype)

    def cvxpy_constraints(self, var):
        return [self._rules.cvxpy_columns(self._cvxpy_mat(var), self.radius)]

    def lmo_direction_at_infinity(self, c, a):
        A = a.reshape(self.n_rows, self.n_cols)
        zero_col = (A == 0).all(dim=0, keepdim=True)
        return torch.where(zero_col, c.reshape(self.n_rows, self.n_cols),
                           A).reshape(-1)

    def __repr__(self):
        return (f"ColumnBalls(n_rows={self.n_rows}, n_cols={self.n_cols}, "
                f"norm={self.norm!r}, radius={self.radius})")
