"""LMO oracles that the exact cut-LMO's dual search evaluates.

A set picks its oracle with :meth:`FeasibleSet.cut_lmo_oracle`: the l1 ball
has a dedicated vertex oracle on host numpy copies, every other set the
generic block-wise torch oracle, which asks each non-product factor of the
set for its LMO, its tie-breaking direction at ``lam = inf`` and whether it
is a polyhedron. The protocol (``at``, ``at_inf``, ``y_const``, ``smooth``,
``point``) is described in :mod:`benchmark_utils.sets.dual_search`.
"""

import math

import numpy as np
import torch

from benchmark_utils.sets.cut_result import host_f64


class L1VertexOracle:
    """LMO of the l1 ball of radius r on host numpy copies of c and a.

    The LMO of ``c + lam a`` is ``-r sign(w_j) e_j`` with ``j`` the first
    argmax of ``|w| = |c + lam a|``, so one evaluation is a few vectorised
    numpy operations (one device->host copy of ``c`` and ``a`` at the start,
    no device synchronisation per step). A vertex ``sigma r e_j`` is stored
    as ``(j, sigma)``, sigma in {-1, 0, 1} (sigma = 0 is the center,
    returned for a zero direction like the ball's ``lmo``), and the optimal
    point is rebuilt from two such pairs.
    """

    smooth = False  # a polyhedron: tent steps are exact

    def __init__(self, c, a, radius, like):
        self.c, self.a, self.r, self.like = host_f64(c), host_f64(a), \
            radius, like
        self.y_const = 0.0
        # work buffers: the search evaluates |c + lam a| a handful of times
        self._w = np.empty_like(self.c)
        self._abs_w = np.empty_like(self.c)

    def _vertex(self, j, w_j):
        sig = -1.0 if w_j > 0 else (1.0 if w_j < 0 else 0.0)
        return (sig * self.r * float(self.c[j]),
                sig * self.r * float(self.a[j]), (j, sig))

    def at(self, lam):
        if lam:
            w = np.multiply(self.a, lam, out=self._w)
            np.add(w, self.c, out=w)
        else:
            w = self.c
        j = int(np.abs(w, out=self._abs_w).argmax())
        return self._vertex(j, float(w[j]))

    def at_inf(self):
        abs_a = np.abs(self.a)
        amax = abs_a.max()
        if not amax > 0:  # a = 0: every point minimizes <a, s>
            return self.at(0.0)
        ties = np.flatnonzero(abs_a == amax)
        if ties.size == 1:
            j = int(ties[0])
        else:  # the face minimizer: smallest <c, s> among tied vertices
            j = int(ties[np.argmin(-np.sign(self.a[ties]) * self.c[ties])])
        return self._vertex(j, float(self.a[j]))

    def point(self, theta, st1, st2):
        out = np.zeros(self.c.shape[0])
        j1, sig1 = st1
        out[j1] += theta * sig1 * self.r
        if st2 is not None and theta != 1.0:
            j2, sig2 = st2
            out[j2] += (1.0 - theta) * sig2 * self.r
        return torch.from_numpy(out).to(device=self.like.device,
                                        dtype=self.like.dtype)


class BlockOracle:
    """Block-wise LMO in torch on the input's device (any set with an LMO).

    The set is split into its non-product factors (``Z.leaf_sets()``).
    Factors on which ``a`` is identically zero (e.g. the code block of the
    dictionary problem) do not depend on ``lam``: their LMO answer for ``c``
    is computed once. The others call their own ``lmo`` on
    ``c_b + lam a_b``, with one host synchronisation per evaluation to read
    the two scalars ``<c, s>`` and ``<a, s>``.
    """

    def __init__(self, Z, c, a, like):
        self.like = like
        self.parts = []  # per factor: its fixed LMO answer, or None
        self.var = []    # (set, c_b, a_b) of the factors that the cut sees
        y_const = c.new_zeros(())
        leaves = Z.leaf_sets()
        zero_flags = torch.stack(
            [(a[st:st + S.dim] == 0).all() for S, st in leaves]).tolist()
        for (S, st), zero in zip(leaves, zero_flags, strict=True):
            c_b, a_b = c[st:st + S.dim], a[st:st + S.dim]
            if zero:
                s_b = S.lmo(c_b)
                y_const = y_const + torch.dot(c_b, s_b)
                self.parts.append(s_b)
            else:
                self.parts.append(None)
                self.var.append((S, c_b, a_b))
        self.y_const = float(y_const)
        self.smooth = not all(S.polyhedral for S, _, _ in self.var)

    def _eval(self, directions):
        pts, terms = [], []
        for (S, c_b, a_b), d in zip(self.var, directions, strict=True):
            s_b = S.lmo(d)
            pts.append(s_b)
            terms.append(torch.dot(c_b, s_b))
            terms.append(torch.dot(a_b, s_b))
        if not terms:
            return self.y_const, 0.0, pts
        vals = torch.stack(terms).tolist()  # the one host sync per call
        return self.y_const + math.fsum(vals[0::2]), math.fsum(vals[1::2]), \
            pts

    def at(self, lam):
        if lam:
            return self._eval([torch.add(c_b, a_b, alpha=lam)
                               for _, c_b, a_b in self.var])
        return self._eval([c_b for _, c_b, _ in self.var])

    def at_inf(self):
        return self._eval([S.lmo_direction_at_infinity(c_b, a_b)
                           for S, c_b, a_b in self.var])

    def point(self, theta, st1, st2):
        var1 = iter(st1)
        var2 = iter(st2) if st2 is not None and theta != 1.0 else None
        out = []
        for fixed in self.parts:
            if fixed is not None:
                out.append(fixed)
            elif var2 is None:  # theta == 1
                out.append(next(var1))
            else:
                out.append(torch.lerp(next(var2), next(var1), theta))
        point = torch.cat(out) if len(out) > 1 else out[0].clone()
        return point.to(self.like.dtype)
