"""Hypergradient estimates on stored mini-batches, for the single-loop
methods that evaluate one estimate at two points on the same samples.

A STORM- or SPIDER-type correction (SUSTAIN, MRBO, VRBO, VR-BiAdam)
needs the estimate at (x_t, y_t) and at (x_{t-1}, y_{t-1}) on one sample
set, so the batches are drawn once (:func:`draw_samples`, charged once by
the counting view) and replayed in the same order at both points:

* :class:`EstimatorSamples`: xi (upper: grad_x f, grad_y f), zeta^0 (the
  cross derivative grad^2_xy g), zeta^1.. (one per Hessian factor) and
  zeta (grad_y g of the lower-level estimator);
* :func:`sampled_hypergradient`: grad_x f(xi) - grad^2_xy g(zeta^0) w
  with w from any inverse of :mod:`~benchmark_utils.solvers.hypergradients`
  applied with the stored Hessian batches in order;
* :func:`neumann_hypergradient`: the n_terms-term Neumann series with a
  batch per factor (Ji et al. 2021's stocBiO estimator; Yang, Ji, Liang
  2021's MRBO / VRBO estimator with Q = n_terms - 1 factors; Huang et al.
  2021's estimator (3));
* :func:`truncated_hypergradient`: the randomized truncation at a given
  depth (Khanduri et al. 2021's SUSTAIN estimator; Huang et al. 2021's
  estimator (6)).
"""
from typing import NamedTuple

from benchmark_utils.solvers.hypergradients import (
    implicit_hypergradient,
    neumann_series,
    randomized_neumann,
)


class EstimatorSamples(NamedTuple):
    """The mini-batches of one hypergradient estimate and of grad_y g:
    xi (upper) and zeta^0, zeta^1..zeta^{n_terms-1}, zeta (lower)."""
    xi: object
    cross: object           # zeta^0: the cross derivative grad^2_xy g
    hessian: tuple          # zeta^1..zeta^{n_terms-1}: Hessian factors
    lower: object           # zeta: grad_y g


def draw_samples(P, n_terms, size):
    """xi, zeta^0, n_terms - 1 Hessian batches and zeta: n_terms + 2
    batches of ``size`` samples (None: full passes) for an estimate with
    ``n_terms`` Neumann terms, drawn (and charged) as the papers count them,
    even the factors a truncation depth leaves untouched."""
    return EstimatorSamples(
        xi=P.batch_upper(size), cross=P.batch_lower(size),
        hessian=tuple(P.batch_lower(size) for _ in range(n_terms - 1)),
        lower=P.batch_lower(size))


def sampled_hypergradient(P, x, y, samples, inverse):
    """(grad_x f(x, y; xi), grad_x f - grad^2_xy g(zeta^0) w) with
    w = ``inverse(hvp_yy, grad_y f(x, y; xi))``, where ``hvp_yy`` uses the
    stored Hessian batches one per call, in order, so two points see the
    same factors."""
    grad_x_f, grad_y_f = P.grad_f(x, y, batch=samples.xi)
    factors = iter(samples.hessian)

    def hvp_yy(v):
        return P.hvp_yy_g(x, y, v, batch=next(factors))

    def hvp_xy(v):
        return P.hvp_xy_g(x, y, v, batch=samples.cross)

    return grad_x_f, implicit_hypergradient(grad_x_f, grad_y_f, hvp_yy,
                                            hvp_xy, inverse)


def neumann_hypergradient(P, x, y, samples, *, eta, n_terms):
    """(grad_x f, grad_x f(xi) - grad^2_xy g(zeta^0) eta sum_{q=-1}^{Q-1}
    prod_{j=Q-q}^{Q} (I - eta grad^2_yy g(zeta^j)) grad_y f(xi)) with
    Q = n_terms - 1: ``n_terms`` Hessian-vector products on ``samples``
    with Q Hessian batches."""
    def inverse(hvp, rhs):
        return neumann_series(hvp, rhs, eta=eta, n_terms=n_terms)

    return sampled_hypergradient(P, x, y, samples, inverse)


def truncated_hypergradient(P, x, y, samples, depth, *, vartheta,
                            n_terms):
    """(grad_x f, estimator (6) of Huang et al. 2021 at (x, y)).

    grad_x f - grad^2_xy g(zeta^0) [K vartheta prod_{i=1}^{depth}
    (I - vartheta grad^2_yy g(zeta^i))] grad_y f(xi), computed right to
    left with ``depth`` + 1 Hessian-vector products; ``vartheta`` is the
    paper's practical tuning parameter in (0, 1/L_g] (1/L_g in theory),
    K = ``n_terms``.
    Evaluating it at two points with the same ``samples`` and ``depth``
    gives the pair Lemma 4's mean-square Lipschitz bound is about.
    """
    def inverse(hvp, rhs):
        return randomized_neumann(hvp, rhs, eta=vartheta, n_terms=n_terms,
                                  generator=None, k=depth)

    return sampled_hypergradient(P, x, y, samples, inverse)
