"""Cartesian products of feasible sets."""

import math

import torch

from benchmark_utils.sets.base import FeasibleSet


class ProductSet(FeasibleSet):
    """Cartesian product sets[0] x sets[1] x ... on concatenated points.

    A point is the concatenation of the blocks' flat vectors, split by each
    set's ``dim``; ``lmo`` / ``project`` / ``contains`` / ``random_point`` /
    ``cvxpy_constraints`` act block-wise, ``excess`` is the largest block
    excess. ``diameter = sqrt(sum_i d_i^2)`` (inf if one block is
    unbounded); ``lmo`` raises if a block has no LMO. The cut-LMO sees the
    non-product factors (nested products are flattened), so a block on which
    the cut normal vanishes is solved once.
    """

    def __init__(self, sets):
        sets = list(sets) if not isinstance(sets, FeasibleSet) else None
        if not sets or not all(isinstance(s, FeasibleSet) for s in sets):
            raise ValueError(
                "sets must be a non-empty sequence of FeasibleSet instances"
            )
        self.sets = sets
        self.dims = [s.dim for s in sets]
        self.dim = sum(self.dims)

    def blocks(self, x):
        """The list of block views of ``x`` (no copy)."""
        self._check(x)
        return list(torch.split(x, self.dims))

    @property
    def polyhedral(self):
        return all(s.polyhedral for s in self.sets)

    @property
    def coordinate_separable(self):
        return all(s.coordinate_separable for s in self.sets)

    def lmo(self, direction):
        return torch.cat([s.lmo(b) for s, b in
                          zip(self.sets, self.blocks(direction), strict=True)])

    def project(self, point):
        return torch.cat([s.project(b) for s, b in
                          zip(self.sets, self.blocks(point), strict=True)])

    @property
    def diameter(self):
        return math.sqrt(sum(s.diameter ** 2 for s in self.sets))

    def contains(self, point, tol=1e-9):
        return all(s.contains(b, tol=tol) for s, b in
                   zip(self.sets, self.blocks(point), strict=True))

    def excess(self, point):
        return max(s.excess(b) for s, b in
                   zip(self.sets, self.blocks(point), strict=True))

    def random_point(self, generator=None, *, device="cpu",
                     dtype=torch.float64):
        return torch.cat([s.random_point(generator, device=device,
                                         dtype=dtype) for s in self.sets])

    def cvxpy_constraints(self, var):
        constraints, start = [], 0
        for s in self.sets:
            constraints += s.cvxpy_constraints(var[start:start + s.dim])
            start += s.dim
        return constraints

    @property
    def cache_key(self):
        return ("ProductSet",) + tuple(s.cache_key for s in self.sets)

    def leaf_sets(self, offset=0):
        out = []
        for s in self.sets:
            out += s.leaf_sets(offset)
            offset += s.dim
        return out

    def __getitem__(self, i):
        return self.sets[i]

    def __len__(self):
        return len(self.sets)

    def __repr__(self):
        return f"ProductSet([{', '.join(repr(s) for s in self.sets)}])"
