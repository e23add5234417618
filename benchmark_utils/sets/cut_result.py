"""The result type and the input checks shared by both cut-LMO backends."""

import math
from dataclasses import dataclass
from typing import Optional

import torch


@dataclass(frozen=True)
class CutLMOResult:
    """Outcome of a cut-LMO (``min <c, s> s.t. s in Z, <a, s> <= beta``).

    Attributes
    ----------
    point : torch.Tensor or None
        A minimizer (dtype / device of ``c``) when ``feasible``; otherwise
        the ``fallback`` argument, unchanged (``None`` by default).
    feasible : bool
        Whether ``Z ∩ {<a, s> <= beta}`` is non-empty (up to ``feas_tol``).
    multiplier : float
        The optimal Lagrange multiplier ``lam* >= 0`` of the cut (0 when the
        cut is inactive). When the cut only touches Z (``beta = min_Z <a,
        s>``) the dual optimum may be unattained for curved sets; then this
        is the largest ``lam`` evaluated. ``inf`` when infeasible.
    value : float
        ``<c, point>`` (``inf`` when infeasible).
    cut_min : float
        ``min_{s in Z} <a, s>``; the problem is feasible iff
        ``cut_min <= beta``.
    gap : float
        Certified bound on ``value - optimal value`` (0 for the CVXPY
        backend, which reports none).
    n_evals : int
        Number of LMO evaluations (solver iterations for CVXPY).
    """

    point: Optional[torch.Tensor]
    feasible: bool
    multiplier: float
    value: float
    cut_min: float
    gap: float = 0.0
    n_evals: int = 0


def infeasible_result(fallback, cut_min, n_evals):
    """The result for an empty cut set: ``point`` is the caller's fallback."""
    return CutLMOResult(fallback, False, math.inf, math.inf, cut_min, 0.0,
                        n_evals)


def check_cut_inputs(Z, c, a, beta):
    """Validate ``c``, ``a`` (flat tensors of length ``Z.dim``) and return
    ``beta`` as a float (a 0-d tensor is accepted, NaN is not)."""
    for name, v in (("c", c), ("a", a)):
        if not isinstance(v, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(v)}")
        if v.dim() != 1 or v.shape[0] != Z.dim:
            raise ValueError(f"{name} must be a flat tensor of shape "
                             f"({Z.dim},), got {tuple(v.shape)}")
    beta = float(beta)
    if math.isnan(beta):
        raise ValueError("beta must not be NaN")
    return beta


def host_f64(t):
    """A float64 numpy array with the values of a 1-D tensor (no copy for a
    contiguous float64 CPU tensor)."""
    return t.detach().to("cpu", torch.float64).contiguous().numpy()
