"""Hypergradient approximations shared by the general-bilevel solvers.

The implicit-function hypergradient (Ghadimi & Wang 2018, Lemma 2.1; Kwon
et al. 2023, eq. (1); Huang et al. 2021, Lemma 1)
``grad F(x) = grad_x f - grad^2_xy g [grad^2_yy g]^{-1} grad_y f`` needs
``w ~ [grad^2_yy g]^{-1} grad_y f``. This module gives the Neumann-type
ways to get it from Hessian-vector products only (the plain linear solve,
conjugate gradient, is :mod:`benchmark_utils.numerics.linear_systems`):

* :func:`neumann_series`: ``eta sum_{q<Q} (I - eta H)^q rhs`` (BSA;
  stocBiO, Ji et al. 2021, Alg. 3, a fresh batch per factor; Huang et al.
  2021, estimator (3));
* :func:`randomized_neumann` with :func:`draw_neumann_depth`: the
  randomized truncation of SUSTAIN, BiAdam's estimator (6) and TTSA;
* :func:`positive_depth_neumann` with :func:`draw_positive_depth`: SBFW's
  variant, a depth in 1..k.

A solver composes them with closures over the counting view (a closure
drawing a fresh batch per call gives the stochastic versions), so the
accounting stays in the view; :mod:`~benchmark_utils.solvers.
sampled_hypergradients` replays stored batches at a second point. The
functions take tensors of any shape ``hvp`` accepts and never count.
"""
import torch

from benchmark_utils.checks.parameters import check_int, check_positive


def neumann_series(hvp, rhs, *, eta, n_terms):
    """``eta sum_{q=0}^{n_terms-1} (I - eta H)^q rhs``, n_terms-1 hvp calls.

    Converges to ``H^{-1} rhs`` as n_terms grows when ``0 < eta <= 1/L``
    (the error is ``(I - eta H)^{n_terms} H^{-1} rhs``). Computed by the
    recursion ``p_0 = rhs``, ``p_q = p_{q-1} - eta hvp(p_{q-1})``, summed, so
    each call of ``hvp`` is one Hessian factor: with a closure that draws a
    fresh batch per call, term q is ``prod_{j<=q} (I - eta H_j) rhs``, i.e.
    stocBiO's stochastic ``v_Q`` (Ji, Yang, Liang 2021, Alg. 3: Q = n_terms
    - 1 Hessian samples, the q = -1 term being ``eta rhs``); the order of
    the factors is immaterial in distribution since the batches are i.i.d.
    """
    n_terms = check_int("n_terms", n_terms, 1)
    check_positive("eta", eta)
    p = rhs
    total = rhs
    for _ in range(n_terms - 1):
        p = p - eta * hvp(p)
        total = total + p
    return eta * total


def draw_neumann_depth(n_terms, generator):
    """k ~ U{0, ..., n_terms-1}: the depth of :func:`randomized_neumann`."""
    n_terms = check_int("n_terms", n_terms, 1)
    return int(torch.randint(n_terms, (1,), generator=generator))


def randomized_neumann(hvp, rhs, *, eta, n_terms, generator, k=None):
    """SUSTAIN's randomized-truncation estimator of ``H^{-1} rhs``.

    Huang et al. 2021, estimator (6) (Khanduri et al. 2021; Hong et al.
    2020):
    draw ``k ~ U{0, ..., n_terms-1}`` independently of the batches and return

        n_terms * eta * prod_{i=1}^{k} (I - eta H_i) rhs

    (``k = 0``: the empty product, ``n_terms * eta * rhs``), with one
    ``hvp`` call per factor (a fresh batch per call gives the paper's
    independent zeta^1..zeta^k). Over k and the batches its mean is
    ``eta sum_{q=0}^{n_terms-1} (I - eta H)^q rhs``, the truncated series of
    :func:`neumann_series` (unbiased for it; biased for H^{-1} rhs by
    ``(I - eta H)^{n_terms} H^{-1} rhs``, Lemma 3). The paper writes
    ``eta = 1/L_g`` and allows a tuned ``eta in (0, 1/L_g]`` (its theta).

    ``generator`` (a ``torch.Generator``, e.g. the view's ``rng``) draws k;
    pass ``k`` instead to reuse a depth (a STORM-type estimator evaluates it
    at two points with the same samples, which for Huang et al. 2021's
    VR-BiAdam, Alg. 2, includes the same depth; draw it with
    :func:`draw_neumann_depth`). Costs k hvp calls, n_terms-1 at most.
    """
    check_positive("eta", eta)
    if k is None:
        k = draw_neumann_depth(n_terms, generator)
    else:
        n_terms = check_int("n_terms", n_terms, 1)
        k = check_int("k", k, 0, n_terms - 1)
    p = rhs
    for _ in range(k):
        p = p - eta * hvp(p)
    return (n_terms * eta) * p


def implicit_hypergradient(grad_x_f, grad_y_f, hvp_yy, hvp_xy, inverse):
    """``grad_x f - hvp_xy(w)`` with ``w = inverse(hvp_yy, grad_y_f)``.

    ``grad_x_f``, ``grad_y_f``: the partial gradients of f (tensors);
    ``hvp_yy(v) = grad^2_yy g v`` and ``hvp_xy(v) = grad^2_xy g v`` (closures,
    typically over the view's oracles at (x, y) with their batches);
    ``inverse(hvp, rhs)``: any of the solvers above with its parameters
    bound, e.g. ``lambda h, r: neumann_series(h, r, eta=0.1, n_terms=10)``.
    At y = y*(x) with an exact inverse this is grad F(x) (Kwon et al. 2023,
    eq. (1)); at another y it is the surrogate bar-grad f(x, y) that Huang
    et al. 2021 define right after their Lemma 1 and estimate.
    """
    w = inverse(hvp_yy, grad_y_f)
    return grad_x_f - hvp_xy(w)



def draw_positive_depth(n_terms, generator):
    """l ~ U{1, ..., n_terms}: the depth of :func:`positive_depth_neumann`."""
    return 1 + draw_neumann_depth(n_terms, generator)


def positive_depth_neumann(hvp, rhs, *, eta, n_terms, depth):
    """``n_terms * eta * prod_{i=1}^{depth} (I - eta H_i) rhs``, depth >= 1.

    The estimator of SBFW (Akhtar, Bedi, Thomdapu, Rajawat 2022, as
    Abolfazli et al. 2023, App. G.1, write it): ``M = (k/L_g)
    prod_{i=1}^{l} (I - grad^2_yy g / L_g)`` with ``l ~ U{1..k}``
    (``eta = 1/L_g``, ``n_terms = k``, ``depth = l``). It differs from
    :func:`randomized_neumann` only by the depth's range (no empty product),
    so it is that estimator applied to ``(I - eta H_1) rhs`` with depth
    ``l - 1``. Its mean over l is ``eta sum_{q=1}^{n_terms} (I - eta H)^q
    rhs``: the Neumann series without its q = 0 term, i.e. biased for
    ``H^{-1} rhs`` by ``-eta rhs`` plus the truncation. Costs ``depth`` hvp
    calls (one per factor, in order: a closure over pre-drawn batches
    replays the same factors at a second point).
    """
    n_terms = check_int("n_terms", n_terms, 1)
    depth = check_int("depth", depth, 1, n_terms)
    check_positive("eta", eta)
    return randomized_neumann(hvp, rhs - eta * hvp(rhs), eta=eta,
                              n_terms=n_terms, generator=None, k=depth - 1)
