from benchmark_utils.solvers.implicit_differentiation import (
    AID_PARAMETERS,
    AIDSolver,
    fixed_point_solve,
)
from benchmark_utils.solvers.schedules import neumann_step


class Solver(AIDSolver):
    """AID-FP: approximate implicit differentiation by fixed-point iteration.

    Grazzi, Franceschi, Pontil, Salzo, "On the Iteration Complexity of
    Hypergradient Computation", ICML 2020, §2.1 (AID with the fixed-point
    method), run with mini-batches as in Huang et al. 2021 (a baseline of
    BiAdam). Outer iteration (the loop of
    :class:`~benchmark_utils.solvers.implicit_differentiation.AIDSolver`):

    * y_t = y_{t-1} - alpha grad_y g(x, y_{t-1}; S_t), t = 1..T;
    * v_j = v_{j-1} - eta (grad^2_yy g(x, y_T; B) v_{j-1} - grad_y f(x, y_T;
      D)), j = 1..k, from v_0 = 0 (or the previous v with
      ``warm_start_v``), one lower batch B for all k steps (from 0: the
      truncated Neumann series on B);
    * x <- x - beta [grad_x f(x, y_T; D) - grad^2_xy g(x, y_T; B) v_k].

    ``inner_step`` = alpha, ``outer_step`` = beta, ``linear_system_step``
    = eta (see GeneralBilevelSolver). Defaults: ``inner_step``
    2/(L_g + mu_g), ``linear_system_step`` 1/L_g (Grazzi et al.'s
    contraction); ``outer_step`` 0.1, T = 10, batch 16 tuned on the quick
    quadratic; k = 20, about 2 kappa_g there (docs/solvers.md).
    """

    name = "AID-FP"
    parameters = {**AID_PARAMETERS, "k": [20], "linear_system_step": [None]}

    defaults_from_problem = ("inner_step", "linear_system_step")

    def check_with_problem(self, problem):
        super().check_with_problem(problem)
        self.default_from_problem("linear_system_step",
                                  lambda: neumann_step(problem.L_g))

    def solve_linear_system(self, hvp, rhs, v0):
        return fixed_point_solve(hvp, rhs, eta=self.linear_system_step_,
                                 n_steps=self.k, v0=v0)
