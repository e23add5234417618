from benchmark_utils.solvers.implicit_differentiation import InnerLoopSolver
from benchmark_utils.solvers.unrolled import reverse_hypergradient


class Solver(InnerLoopSolver):
    """ITD: reverse-mode iterative differentiation through T inner steps.

    Franceschi, Donini, Frasconi, Pontil, "Forward and Reverse
    Gradient-Based Hyperparameter Optimization", ICML 2017, Algorithm 1
    (reverse-HG); Grazzi et al. 2020's ITD; a baseline of Huang et al.
    2021, run with mini-batches. Outer iteration:

    * forward (lines 2-4): y_t = y_{t-1} - alpha grad_y g(x, y_{t-1}; S_t),
      t = 1..T, a fresh lower batch S_t each, from the previous y_T,
      storing y_{t-1} and S_t;
    * reverse (lines 5-9, ``reverse_hypergradient`` of
      ``benchmark_utils/solvers/unrolled.py``): from
      p_T = grad_y f(x, y_T; D) and h = grad_x f(x, y_T; D), for t = T..1
      h <- h - alpha grad^2_xy g(x, y_{t-1}; S_t) p_t,
      p_{t-1} = p_t - alpha grad^2_yy g(x, y_{t-1}; S_t) p_t;
    * x <- x - beta h.

    ``inner_step`` = alpha, ``outer_step`` = beta (see
    GeneralBilevelSolver). Departures: the warm start y_0 is a constant
    (truncated back-propagation); the reverse pass reuses each S_t.
    The steps are InnerLoopSolver's; T and the batch size were tuned on
    the quick quadratic (docs/solvers.md).
    """

    name = "ITD"
    parameters = {}
    outer_batch_size_levels = ("upper",)     # D only

    def iterations(self):
        P = self.problem
        S = self.batch(self.sizes.batch_size)
        D = self.batch(self.sizes.outer_batch_size)
        alpha, beta = self.steps.inner_step, self.steps.outer_step
        x, y = self.x, self.y
        while True:
            trajectory = []
            for _ in range(self.sizes.T):                       # forward
                batch = P.batch_lower(S)
                trajectory.append((y, batch))
                y = y - alpha * P.grad_g_y(x, y, batch=batch)
            grad_x_f, grad_y_f = P.grad_f(x, y, batch=P.batch_upper(D))

            def hvp_yy(point, batch, p, x=x):
                return P.hvp_yy_g(x, point, p, batch=batch)

            def hvp_xy(point, batch, p, x=x):
                return P.hvp_xy_g(x, point, p, batch=batch)

            hypergrad = reverse_hypergradient(                  # reverse
                grad_x_f, grad_y_f, trajectory, alpha=alpha,
                hvp_yy=hvp_yy, hvp_xy=hvp_xy)
            x = self.to_X(x - beta * hypergrad)
            self.x, self.y = x, y
            yield
