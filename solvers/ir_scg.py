from benchmark_utils.checks.parameters import check_in_interval
from benchmark_utils.solvers.estimators import Storm, at_both_points
from benchmark_utils.solvers.iterative_regularization import (
    SCHEDULE_PARAMETERS,
    IterativelyRegularizedSolver,
    schedule_rules,
)
from benchmark_utils.solvers.schedules import frank_wolfe_step
from benchmark_utils.solvers.steps import given_size


class Solver(IterativelyRegularizedSolver):
    """IR-SCG: Iteratively Regularized Stochastic Conditional Gradient.

    Giang-Tran, Shafiee, Ho-Nguyen, "Conditional Gradient Methods with
    Standard LMO for Stochastic Simple Bilevel Optimization", NeurIPS 2025
    (arXiv 2505.18037), Algorithm 1. Per iteration t, one fresh upper
    sample theta_t and lower sample xi_t:

    * STORM estimates with the step alpha_t as momentum: dF_t = (1-alpha_t)
      (dF_{t-1} - grad f(x_{t-1}; theta_t)) + grad f(x_t; theta_t), dG_t
      likewise with xi_t; plain gradients at t = 0;
    * v_t in argmin_{v in Z} <sigma_t dF_t + dG_t, v>, x_{t+1} = x_t +
      alpha_t (v_t - x_t), and the weighted average z_{t+1} in O(d).

    Schedules: convex (Thm 1) alpha_t = 2/(t+2); nonconvex (Thm 2)
    alpha_t = (t+1)^-omega; sigma_t = varsigma (t+1)^-p in both.
    ``upper_weight`` = varsigma, ``upper_weight_exponent`` = p (< 1/2 under
    the convex schedule, Condition 3), ``outer_step_exponent`` = omega.
    The default rules take App. D's values: its regression ones under the
    convex schedule, its dictionary learning ones under the nonconvex one.
    ``schedule``, ``output``: see ``iterative_regularization.py``; start,
    batches: see SimpleBilevelSolver.
    """

    name = "IR-SCG"
    parameters = {
        **SCHEDULE_PARAMETERS,
        "output": ["auto"],
    }
    size_rules = (given_size("batch_size", 1),)
    test_config = {"batch_size": 1}

    PAPER_DEFAULTS = {
        "convex": dict(upper_weight=10.0, upper_weight_exponent=0.25,
                       outer_step_exponent=1.0),
        "nonconvex": dict(upper_weight=0.1, upper_weight_exponent=2 / 7,
                          outer_step_exponent=6 / 7),
    }
    step_rules = schedule_rules(PAPER_DEFAULTS)

    def check_schedule(self, convex, upper_weight, upper_weight_exponent,
                       outer_step_exponent):
        super().check_schedule(convex, upper_weight, upper_weight_exponent,
                               outer_step_exponent)
        if convex:
            # Condition 3 of the paper (the convex analysis) needs p < 1/2
            check_in_interval("upper_weight_exponent",
                              upper_weight_exponent, 0, 0.5,
                              closed=(False, False))

    def step_sizes(self, t):
        """(alpha_t, sigma_t): Thm 1 (convex) or Thm 2 (nonconvex)."""
        alpha = frank_wolfe_step(t) if self.convex else self.nonconvex_step(t)
        return alpha, self.regularization_weight(t)

    def iterations(self):
        P, S = self.problem, self.sizes.batch_size
        grad_F, grad_G = Storm(), Storm()
        x, x_prev, t = self.x, None, 0
        steps = self.step_sizes(0)
        while True:
            # (alpha_t, sigma_t); those of t + 1 serve z_{t+1} now and the
            # next iteration's step
            (alpha, sigma), steps = steps, self.step_sizes(t + 1)
            theta, xi = P.sample_upper(S), P.sample_lower(S)
            # x_prev is None at t = 0: plain one-sample gradients
            dF = grad_F.step(*at_both_points(P.grad_f, theta, x, x_prev),
                             momentum=alpha)
            dG = grad_G.step(*at_both_points(P.grad_g, xi, x, x_prev),
                             momentum=alpha)
            # v_t = LMO_Z(sigma_t dF_t + dG_t), x_{t+1}, z_{t+1}
            x_prev, x = x, self.regularized_step(t, x, dF, dG, alpha, sigma,
                                                 sigma_next=steps[1])
            yield
            t += 1
