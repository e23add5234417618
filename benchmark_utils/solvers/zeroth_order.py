"""Zeroth-order (Gaussian-smoothing) estimate of the hypergradient through
the Jacobian of the inner solution map: the Hessian-free part of PZOBO.

Sow, Ji, Liang, "On the Convergence Theory for Hessian-Free Bilevel
Algorithms", NeurIPS 2022, Algorithm 1. With y_N(x) the end point of N
inner gradient steps from a fixed y^0, its Jacobian J = d y_N / d x is
probed along Q Gaussian directions u_j ~ N(0, I) (in x) by finite
differences of the solution map,

    delta_j = (y_N(x + mu u_j) - y_N(x)) / mu  ~  J u_j,

and since E[u u^T] = I, J^T v is estimated by (1/Q) sum_j <delta_j, v> u_j,
so that grad_x f + (1/Q) sum_j <delta_j, grad_y f> u_j estimates the
hypergradient of f(x, y_N(x)) with no Hessian-vector product.

The perturbed trajectories use the batches of the unperturbed one (common
random numbers): with mini-batches, different batches would make delta_j
measure the sampling noise divided by mu rather than the dependence on x.
Each batch is therefore drawn (and charged) once per inner step and
evaluated at Q + 1 points: ``n_grad_evals`` counts all Q + 1 evaluations,
the samples counters one draw, as for any batch re-used at another point.
"""
import torch


def gaussian_directions(n, like, generator):
    """``n`` directions u_j ~ N(0, I) shaped like ``like``, stacked along a
    new first dimension; drawn on the CPU stream ``generator`` (the
    counting view's ``rng``) and moved to ``like``'s device, so a run draws
    the same directions on every device."""
    directions = torch.randn((n, *like.shape), generator=generator,
                             dtype=like.dtype)
    return directions.to(like.device)


def perturbed_inner_steps(P, x, y, directions, *, smoothing, step, n_steps,
                          batch_size):
    """``(y_N(x), deltas)``: ``n_steps`` gradient steps
    y <- y - step grad_y g(x', y; S_t) from ``y`` at x' = x and at every
    x' = x + smoothing u_j, each S_t shared by the Q + 1 trajectories
    (``batch_size`` samples, or a full pass for None), and the finite
    differences delta_j = (y_N(x + smoothing u_j) - y_N(x)) / smoothing,
    stacked like ``directions``."""
    points = [x, *(x + smoothing * u for u in directions)]
    ys = [y] * len(points)
    for _ in range(n_steps):
        batch = P.batch_lower(batch_size)
        ys = [y_j - step * P.grad_g_y(x_j, y_j, batch=batch)
              for x_j, y_j in zip(points, ys, strict=True)]
    y_N = ys[0]
    deltas = (torch.stack(ys[1:]) - y_N) / smoothing
    return y_N, deltas


def jacobian_transpose_estimate(directions, deltas, v):
    """(1/Q) sum_j <delta_j, v> u_j, the estimate of J^T v from the Q
    directions u_j and their finite differences delta_j (one matrix
    product each way, no loop over j)."""
    n = directions.shape[0]
    weights = deltas.reshape(n, -1) @ v.reshape(-1)
    return torch.tensordot(weights, directions, dims=1) / n
