from benchmark_utils.checks.memory import check_fits
from benchmark_utils.checks.parameters import check_int
from benchmark_utils.solvers.general import (
    GeneralBilevelSolver,
    tuned_outer_step,
)
from benchmark_utils.solvers.schedules import strongly_convex_inner_step
from benchmark_utils.solvers.steps import given_size, given_step
from benchmark_utils.solvers.zeroth_order import (
    gaussian_directions,
    jacobian_transpose_estimate,
    perturbed_inner_steps,
)


class Solver(GeneralBilevelSolver):
    """PZOBO: Hessian-free hypergradient by a zeroth-order Jacobian.

    Sow, Ji, Liang, "On the Convergence Theory for Hessian-Free Bilevel
    Algorithms", NeurIPS 2022 (arXiv 2110.07004), Algorithm 1 (PZOBO;
    benchmark_bilevel's "PZOBO"). Outer iteration k, from y_k^0 = y_{k-1}^N:

    * y_k^t = y_k^{t-1} - alpha grad_y g(x_k, y_k^{t-1}; S_t), t = 1..N;
    * u_{k,j} ~ N(0, I) in x, j = 1..Q, from the view's ``rng``;
    * delta_j = (y_k^N(x_k + mu u_{k,j}) - y_k^N(x_k)) / mu, the perturbed
      trajectory run from the same y_k^0 with the same steps;
    * x_{k+1} = x_k - beta [grad_x f(x_k, y_k^N)
      + 1/Q sum_j <delta_j, grad_y f(x_k, y_k^N)> u_{k,j}]
      (benchmark_utils/solvers/zeroth_order.py).

    ``inner_step`` = alpha, ``outer_step`` = beta, ``T`` = N,
    ``n_directions`` = Q, ``smoothing`` = mu. ``batch_size`` None: full
    passes (Algorithm 1, as benchmark_bilevel runs it); an integer gives
    mini-batches S_t (the upper batch too), shared by the Q + 1
    trajectories. Departures: a constrained X projects x_{k+1}; the
    reported y is y_k^N. T, Q and mu are benchmark_bilevel's; alpha's rule
    is the bound for any batch, beta was tuned on the quick quadratic
    (docs/solvers.md).
    """

    name = "PZOBO"
    parameters = {}
    size_rules = (given_size("T", 10),
                  given_size("n_directions", 10),
                  given_size("batch_size", None))
    batch_size_may_be_none = True       # None: full passes (Algorithm 1)

    # alpha from the bound for any batch, as AID and ITD: on problems whose
    # full-sum bound holds only near x0 (an exp(x) penalty) it keeps y stable
    step_rules = (strongly_convex_inner_step("alpha"),
                  tuned_outer_step(0.05, "beta"),
                  given_step("smoothing", "mu", "smoothing radius of the "
                             "directional derivatives", 0.1))

    def check_parameters(self):
        super().check_parameters()
        check_int("T", self.T, 1)
        check_int("n_directions", self.n_directions, 1)

    def check_with_problem(self, problem):
        # the Q directions in x and the Q perturbed trajectories' y
        check_fits("n_directions", self.n_directions,
                   self.n_directions * (problem.dim_x + problem.dim_y))

    def iterations(self):
        P = self.problem
        S = self.batch(self.sizes.batch_size)
        alpha, beta = self.steps.inner_step, self.steps.outer_step
        smoothing, x, y = self.steps.smoothing, self.x, self.y
        while True:
            directions = gaussian_directions(self.sizes.n_directions, x, P.rng)
            y, deltas = perturbed_inner_steps(
                P, x, y, directions, smoothing=smoothing, step=alpha,
                n_steps=self.sizes.T, batch_size=S)
            grad_x_f, grad_y_f = P.grad_f(x, y, batch=P.batch_upper(S))
            hypergrad = grad_x_f + jacobian_transpose_estimate(
                directions, deltas, grad_y_f)
            x = self.to_X(x - beta * hypergrad)
            self.x, self.y = x, y
            yield
