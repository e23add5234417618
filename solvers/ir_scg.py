from benchmark_utils.checks.parameters import check_in_interval
from benchmark_utils.solvers.estimators import Storm, at_both_points
from benchmark_utils.solvers.iterative_regularization import (
    SCHEDULE_PARAMETERS, IterativelyRegularizedSolver)
from benchmark_utils.solvers.schedules import ir_scg_schedule


class Solver(IterativelyRegularizedSolver):
    """IR-SCG: Iteratively Regularized Stochastic Conditional Gradient.

    Giang-Tran, Shafiee, Ho-Nguyen, "Conditional Gradient Methods with
    Standard LMO for Stochastic Simple Bilevel Optimization", NeurIPS 2025
    (arXiv 2505.18037), Algorithm 1.

    Per iteration t (one fresh upper sample theta_t and lower sample xi_t):

    * STORM estimates, with the step alpha_t as the momentum (Alg. 1 has
      no separate momentum weight):
      dF_t = (1-alpha_t) dF_{t-1} + grad f(x_t; theta_t) - (1-alpha_t) grad f(x_{t-1}; theta_t)
      and the same for dG_t with xi_t; dF_0, dG_0 are plain one-sample
      gradients;
    * one LMO over the base set: v_t in argmin_{v in Z} <sigma_t dF_t + dG_t, v>;
    * the Frank-Wolfe step x_{t+1} = x_t + alpha_t (v_t - x_t);
    * the weighted average z_{t+1} (Alg. 1, last two lines), kept in O(d).

    Schedules (``benchmark_utils.solvers.schedules.ir_scg_schedule``):
    convex (Thm 1) alpha_t = 2/(t+2), sigma_t = varsigma (t+1)^-p;
    nonconvex (Thm 2) alpha_t = (t+1)^-omega, sigma_t = varsigma (t+1)^-p.
    Defaults are the paper's experiments (App. D): convex varsigma = 10,
    p = 1/4 (regression); nonconvex varsigma = 0.1, p = 2/7, omega = 6/7
    (dictionary learning). See
    ``benchmark_utils/solvers/iterative_regularization.py`` for
    ``schedule``/``output`` = "auto".

    Choices where the paper is silent:
    * the reported iterate: ``output`` (the paper never says which one its
      plots show; "auto" follows the theorems);
    * the start: a random point of Z per repetition (``init="random"``, the
      paper's "randomized starting points"; the distribution is the set's
      ``random_point``), or the dataset's x0 (``init="dataset"``);
    * ``batch_size`` > 1 averages a mini-batch per level (the paper uses 1);
    * upper and lower samples are drawn independently (separate streams).
    """

    name = "IR-SCG"
    parameters = {
        **SCHEDULE_PARAMETERS,
        "batch_size": [1],
        "output": ["auto"],
    }
    test_config = {"batch_size": 1}

    PAPER_DEFAULTS = {
        "convex": dict(varsigma=10.0, p=0.25, omega=1.0),
        "nonconvex": dict(varsigma=0.1, p=2 / 7, omega=6 / 7),
    }

    def set_schedule(self, convex):
        super().set_schedule(convex)
        if self.convex:
            # Condition 3 of the paper (the convex analysis) needs p < 1/2
            check_in_interval("p", self.p_, 0, 0.5, closed=(False, False))

    def step_sizes(self, t):
        return ir_scg_schedule(t, self.convex, self.varsigma_, self.p_,
                               self.omega_)

    def iterations(self):
        P, S = self.problem, self.batch_size
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
