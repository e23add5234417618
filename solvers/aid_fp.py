from benchmark_utils.checks.parameters import check_positive
from benchmark_utils.solvers.implicit_differentiation import (
    AID_PARAMETERS, AIDSolver, fixed_point_solve)
from benchmark_utils.solvers.schedules import neumann_step


class Solver(AIDSolver):
    """AID-FP: approximate implicit differentiation by fixed-point iteration.

    Grazzi, Franceschi, Pontil, Salzo, "On the Iteration Complexity of
    Hypergradient Computation", ICML 2020, §2.1 (AID with the fixed-point
    method, i.e. gradient descent on the quadratic of the linear system),
    run with mini-batches as in Huang et al. 2021's experiments (a
    baseline of BiAdam). This follows the papers' public descriptions (no
    code was copied).

    Outer iteration (the loop of
    :class:`~benchmark_utils.solvers.implicit_differentiation.AIDSolver`,
    whose docstring lists the shared parameters, defaults and choices):

    * y_t = y_{t-1} - alpha grad_y g(x, y_{t-1}; S_t), t = 1..T, from the
      previous outer iteration's y_T;
    * v_j = v_{j-1} - eta (grad^2_yy g(x, y_T; B) v_{j-1} - grad_y f(x, y_T;
      D)), j = 1..k, from v_0 = 0 (or the previous v with
      ``warm_start_v``), one lower batch B for all k steps; from 0 this is
      the truncated Neumann series eta sum_{q<k} (I - eta H_B)^q grad_y f,
      stocBiO's estimator with one batch instead of one per factor;
    * x <- x - beta [grad_x f(x, y_T; D) - grad^2_xy g(x, y_T; B) v_k].

    ``eta`` None is 1 / L_g, the step of Grazzi et al.'s contraction
    (||I - eta H|| <= 1 - mu_g / L_g); problems without L_g are skipped
    unless eta and alpha are given. ``k`` = 20 (AID-CG's is 10): from 0
    the k steps leave the error (I - eta H_B)^k H_B^{-1} grad_y f, about
    0.1 of it when k ~ 2 kappa_g (kappa_g ~ 10 on the quick quadratic,
    where k = 10 stalls at 7x below the start and k = 20 reaches 30x in
    300 iterations; stocBiO's Q = 20 for the same reason).

    Per outer iteration: T lower batches of ``batch_size``, one upper (D)
    and one lower (B) batch of ``outer_batch_size``; T + 1 gradient calls;
    k per-batch Hessian-vector products (k - 1 for the solve from 0, whose
    first step needs none, and the cross product; k + 1 with
    ``warm_start_v``).

    Outer step: ``beta`` None (the default) is 0.1 times the
    problem's declared ``outer_step_scale`` (1 on the quadratic, where
    0.1 was tuned; see ``GeneralBilevelSolver.outer_steps``); a
    given ``beta`` is used as is.
    """

    name = "AID-FP"
    parameters = {**AID_PARAMETERS, "k": [20], "eta": [None]}

    defaults_from_problem = ("alpha", "eta")

    def check_with_problem(self, problem):
        super().check_with_problem(problem)
        self.eta_ = self.eta
        if self.eta is None:
            self.eta_ = check_positive("eta", neumann_step(problem.L_g))

    def solve_linear_system(self, hvp, rhs, v0):
        return fixed_point_solve(hvp, rhs, eta=self.eta_, n_steps=self.k,
                                 v0=v0)
