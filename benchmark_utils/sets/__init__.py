"""Feasible sets as objects, in the style of FrankWolfe.jl.

Algorithms never special-case a set: they only call the common interface of
:class:`FeasibleSet` (``dim``, ``lmo``, ``project``, ``diameter``,
``contains``, ``excess``, ``random_point``, ``cut_lmo``, ...), see
:mod:`benchmark_utils.sets.base` for the conventions. Modules:

* ``base``: the interface and the matrix-set base;
* ``row_ops``: batched row LMOs / projections shared by several sets;
* ``balls``: l1 / l2 balls (:class:`NormBall`) and :class:`ColumnBalls`;
* ``simplex``, ``nuclear``, ``box``, ``whole_space``, ``product``: one set
  each;
* ``cut_lmo`` (exact, by a 1-D dual search in ``dual_search`` over the
  oracles of ``cut_oracles``) and ``cut_lmo_cvxpy``: the LMO over a set cut
  by one halfspace, used by the cutting-plane methods.
"""

from benchmark_utils.sets.balls import ColumnBalls, L1Ball, L2Ball, NormBall
from benchmark_utils.sets.base import FeasibleSet, UnboundedLMOError
from benchmark_utils.sets.box import Box
from benchmark_utils.sets.nuclear import NuclearNormBall
from benchmark_utils.sets.product import ProductSet
from benchmark_utils.sets.simplex import Simplex
from benchmark_utils.sets.whole_space import WholeSpace

__all__ = [
    "FeasibleSet",
    "UnboundedLMOError",
    "NormBall",
    "L1Ball",
    "L2Ball",
    "ColumnBalls",
    "ProductSet",
    "Simplex",
    "NuclearNormBall",
    "Box",
    "WholeSpace",
]
