"""Reverse-mode iterative differentiation (ITD) of an unrolled inner loop.

Franceschi, Donini, Frasconi, Pontil, "Forward and Reverse Gradient-Based
Hyperparameter Optimization", ICML 2017 (reverse-HG, Alg. 1); Franceschi et
al. 2018, "Bilevel Programming for Hyperparameter Optimization and
Meta-Learning"; analysed by Grazzi et al. 2020 (ITD). The inner loop

    y_t = y_{t-1} - alpha grad_y g(x, y_{t-1}; S_t),  t = 1..T,

is differentiated with respect to x through its T steps, by the adjoint
(back-propagation) recursion, from p_T = grad_y f(x, y_T) and
h = grad_x f(x, y_T):

    for t = T..1:  h <- h - alpha grad^2_xy g(x, y_{t-1}; S_t) p_t
                   p_{t-1} = p_t - alpha grad^2_yy g(x, y_{t-1}; S_t) p_t

which returns h = d f(x, y_T(x)) / dx, what torch autograd computes on the
unrolled graph, but through the counting view's Hessian-vector and cross
products, so every product is counted. The start y_0 is treated as a
constant (its dependence on x through earlier outer iterations is dropped:
truncated back-propagation), so p_0 is never needed and the step t = 1
costs the cross product only.

Memory: every y_{t-1} and S_t, O(T dim_y) numbers, what autograd's graph
would keep (ITD's known cost against AID's O(dim_y)).
"""


def reverse_hypergradient(grad_x_f, grad_y_f, trajectory, *, alpha,
                          hvp_yy, hvp_xy):
    """The reverse pass above: d f(x, y_T(x)) / dx.

    ``grad_x_f``, ``grad_y_f``: the partial gradients of f at (x, y_T);
    ``trajectory``: the pairs (y_{t-1}, S_t) of the forward steps t = 1..T,
    in order; ``hvp_yy(y, batch, p)`` and ``hvp_xy(y, batch, p)``: the
    products grad^2_yy g(x, y; batch) p and grad^2_xy g(x, y; batch) p;
    ``alpha``: the inner step. Costs T cross products and T - 1
    Hessian-vector products.
    """
    h, p = grad_x_f, grad_y_f
    for t in range(len(trajectory) - 1, -1, -1):
        y, batch = trajectory[t]
        h = h - alpha * hvp_xy(y, batch, p)
        if t > 0:           # p_0 is not needed: y_0 is a constant
            p = p - alpha * hvp_yy(y, batch, p)
    return h
