from benchmark_utils.solvers.implicit_differentiation import (
    AID_PARAMETERS,
    AIDSolver,
    conjugate_gradient_solve,
)


class Solver(AIDSolver):
    """AID-CG: approximate implicit differentiation with conjugate gradient.

    Grazzi, Franceschi, Pontil, Salzo, "On the Iteration Complexity of
    Hypergradient Computation", ICML 2020, §2.1 (AID with the conjugate
    gradient method of Hestenes & Stiefel 1952), run with mini-batches as
    in Huang et al. 2021 (a baseline of BiAdam). Outer iteration (the loop
    of :class:`~benchmark_utils.solvers.implicit_differentiation.AIDSolver`):

    * y_t = y_{t-1} - alpha grad_y g(x, y_{t-1}; S_t), t = 1..T, from the
      previous outer iteration's y_T;
    * v = k steps of conjugate gradient on
      grad^2_yy g(x, y_T; B) v = grad_y f(x, y_T; D), from 0 (or the
      previous v with ``warm_start_v``), one lower batch B for all k steps
      and no tolerance stop (the k steps are the budget);
    * x <- x - beta [grad_x f(x, y_T; D) - grad^2_xy g(x, y_T; B) v].

    ``inner_step`` = alpha, ``outer_step`` = beta (see
    GeneralBilevelSolver); the step rules are InnerLoopSolver's. T, k and
    the batch size were tuned on the quick quadratic (docs/solvers.md).
    """

    name = "AID-CG"
    parameters = dict(AID_PARAMETERS)

    def solve_linear_system(self, hvp, rhs, v0):
        return conjugate_gradient_solve(hvp, rhs, n_steps=self.sizes.k,
                                        v0=v0)
