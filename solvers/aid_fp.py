from benchmark_utils.solvers.implicit_differentiation import (
    AID_PARAMETERS,
    INNER_LOOP_STEP_RULES,
    AIDSolver,
    fixed_point_solve,
)
from benchmark_utils.solvers.schedules import neumann_rule
from benchmark_utils.solvers.steps import with_parameter_defaults


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
    = eta (see GeneralBilevelSolver). alpha's and beta's rules are
    InnerLoopSolver's, eta's is Grazzi et al.'s contraction; T and the
    batch size were tuned on the quick quadratic, k is about 2 kappa_g
    there (docs/solvers.md).
    """

    name = "AID-FP"
    parameters = AID_PARAMETERS
    size_rules = with_parameter_defaults(AIDSolver.size_rules, k=20)

    step_rules = (*INNER_LOOP_STEP_RULES,
                  neumann_rule("linear_system_step", "eta"))

    def solve_linear_system(self, hvp, rhs, v0):
        return fixed_point_solve(hvp, rhs, eta=self.steps.linear_system_step,
                                 n_steps=self.sizes.k, v0=v0)
