import math

from benchmark_utils.checks.parameters import check_batch_size, check_int
from benchmark_utils.solvers.estimators import Spider, at_both_points
from benchmark_utils.solvers.iterative_regularization import (
    SCHEDULE_PARAMETERS,
    IterativelyRegularizedSolver,
    schedule_rules,
)
from benchmark_utils.solvers.schedules import frank_wolfe_step
from benchmark_utils.solvers.steps import SizeRule


class Solver(IterativelyRegularizedSolver):
    """IR-FSCG: Iteratively Regularized Finite-Sum Conditional Gradient.

    Giang-Tran, Shafiee, Ho-Nguyen, "Conditional Gradient Methods with
    Standard LMO for Stochastic Simple Bilevel Optimization", NeurIPS 2025
    (arXiv 2505.18037), Algorithm 2. Per iteration t:

    * t mod q == 0: full gradients dF_t, dG_t; otherwise SPIDER with S
      fresh samples per level, dF_t = dF_{t-1} + grad f_S(x_t) -
      grad f_S(x_{t-1}), dG_t likewise;
    * v_t in argmin_{v in Z} <sigma_t dF_t + dG_t, v>, x_{t+1} = x_t +
      alpha_t (v_t - x_t); z_{t+1} averages over i in {q+1, ..., t+1}.

    Schedules: convex (Thm 3) alpha_t = log(q)/q for t < q, then 2/(t+2),
    sigma_t = varsigma (max(t, q)+1)^-p; nonconvex (Thm 4) alpha_t =
    log(q+1)/(q+1) for t <= q, then (t+1)^-omega, sigma_t =
    varsigma (max(t, q+1)+1)^-p. ``upper_weight`` = varsigma,
    ``upper_weight_exponent`` = p, ``outer_step_exponent`` = omega,
    ``period`` = q, ``batch_size`` = S. The defaults are App. D's, n =
    max(n_upper, n_lower) in S and q (equal levels in the paper).
    Departures: q >= 2 (q = 1 makes log(q)/q zero); the convex step after
    the warm phase is Thm 3's 2/(t+2), not App. D.2's 2/(t+1).
    ``schedule``, ``output``: see ``iterative_regularization.py``.
    """

    name = "IR-FSCG"
    parameters = {
        **SCHEDULE_PARAMETERS,
        "output": ["auto"],
    }
    batch_size_may_be_none = True       # None: the paper's floor(sqrt(n))
    test_config = {"batch_size": None}

    PAPER_DEFAULTS = {
        "convex": dict(upper_weight=10.0, upper_weight_exponent=0.5,
                       outer_step_exponent=1.0),
        "nonconvex": dict(upper_weight=0.1, upper_weight_exponent=0.5,
                          outer_step_exponent=0.75),
    }
    step_rules = schedule_rules(PAPER_DEFAULTS)
    size_rules = tuple(
        SizeRule(name, "floor(sqrt(max(n_upper, n_lower)))",
                 lambda solver, problem, sizes: math.isqrt(
                     max(problem.n_upper, problem.n_lower)))
        for name in ("batch_size", "period"))

    def check_parameters(self):
        super().check_parameters()
        # q >= 2: with q = 1 the warm-phase step log(q)/q is 0
        if self.period is not None:
            check_int("period", self.period, 2)

    def check_sizes(self, sizes, problem):
        # S and q, given or by default, fit the problem
        self.check_size(sizes, "batch_size", check_batch_size,
                        self.batch_size_bound(problem))
        self.check_size(sizes, "period", check_int, 2)

    def check_with_problem(self, problem):
        super().check_with_problem(problem)
        self.average_start = self.sizes.period + 1

    def step_sizes(self, t):
        """(alpha_t, sigma_t): Thm 3 (convex) or Thm 4 (nonconvex); sigma_t
        is frozen during the warm phase, so sigma_0 is not varsigma."""
        q = self.sizes.period
        if self.convex:
            alpha = math.log(q) / q if t < q else frank_wolfe_step(t)
            return alpha, self.regularization_weight(max(t, q))
        alpha = (math.log(q + 1) / (q + 1) if t <= q
                 else self.nonconvex_step(t))
        return alpha, self.regularization_weight(max(t, q + 1))

    def iterations(self):
        P, S, q = self.problem, self.sizes.batch_size, self.sizes.period
        grad_F, grad_G = Spider(), Spider()
        x, x_prev, t = self.x, None, 0
        while True:
            alpha, sigma = self.step_sizes(t)
            if t % q == 0:
                dF = grad_F.refresh(P.grad_f(x, batch=P.full_upper()))
                dG = grad_G.refresh(P.grad_g(x, batch=P.full_lower()))
            else:
                dF = grad_F.update(*at_both_points(
                    P.grad_f, P.sample_upper(S), x, x_prev))
                dG = grad_G.update(*at_both_points(
                    P.grad_g, P.sample_lower(S), x, x_prev))
            # v_t = LMO_Z(sigma_t dF_t + dG_t), x_{t+1}, z_{t+1}
            x_prev, x = x, self.regularized_step(t, x, dF, dG, alpha, sigma)
            yield
            t += 1
