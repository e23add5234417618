import math

from benchmark_utils.checks.parameters import (
    check_choice,
    check_in_interval,
    check_int,
    check_positive,
)
from benchmark_utils.solvers.general import GeneralBilevelSolver
from benchmark_utils.solvers.hypergradients import (
    draw_neumann_depth,
    randomized_neumann,
)
from benchmark_utils.solvers.sampled_hypergradients import (
    EstimatorSamples,
    sampled_hypergradient,
)
from benchmark_utils.solvers.schedules import (
    decayed_steps,
    neumann_step,
    power_decay,
)

STEP_RULES = ("constant", "decaying", "decreasing")


def theory_beta(mu_g, L_g, K):
    """beta = min{mu_g/L_g^2, 2 K^{-2/5}/mu_g}, the lower-level step for the
    horizon K (Hong et al. 2023, as Abolfazli et al. 2023, App. G.1)."""
    return min(mu_g / L_g ** 2,
               power_decay(K, 2.0, exponent=0.4, divide=False) / mu_g)


def neumann_terms(k, kappa):
    """t_max(k) = (L_g/mu_g) log(k+1) at k >= 1, rounded up to an integer
    >= 1 (our choice: the depth p ~ U{0..t_max-1} needs one)."""
    return max(1, math.ceil(kappa * math.log(k + 1)))


def decaying_steps(k, *, alpha, beta, k0):
    """(alpha k0/(k0 + k), beta (k0/(k0 + k))^{2/3}) at k >= 0: the shape of
    Hong et al.'s steps for a strongly convex outer objective."""
    ratio = power_decay(k, k0, k0)
    return alpha * ratio, beta * ratio ** (2.0 / 3.0)


class Solver(GeneralBilevelSolver):
    """TTSA: Two-Timescale Stochastic Approximation.

    Hong, Wai, Wang, Yang, SIAM J. Optim. 2023 (arXiv 2007.05170),
    Algorithm 1, as Abolfazli et al. 2023 (App. G.1) transcribe and ran it.
    Iteration k = 0, 1, ..., both updates at (x_k, y_k):

    * y_{k+1} = y_k - beta_k grad_y g(x_k, y_k);
    * x_{k+1} = P_X(x_k - alpha_k h^f_k), h^f_k = grad_x f - grad^2_xy g
      w_k, w_k = [t_max c_h / L_g] prod_{i<=p} (I - (c_h/L_g) grad^2_yy g)
      grad_y f, p ~ U{0..t_max - 1}, t_max = ceil((L_g/mu_g) log(k + 2)).

    ``outer_step`` = alpha, ``inner_step`` = beta (None: the theory's
    min{mu_g/L_g^2, 2 K^{-2/5}/mu_g} times ``beta_factor``, capped at
    1/L_g). ``step_rule``: "constant"; "decaying" alpha k0/(k0 + k), beta
    (k0/(k0 + k))^{2/3} (k0 = ``step_offset``, Hong et al.'s strongly
    convex shape); "decreasing" alpha (k+1)^{-3/5}, beta (k+1)^{-2/5}
    (benchmark_bilevel's).
    ``neumann_terms`` / ``linear_system_step`` fix the depth bound and the
    Neumann step (None: t_max(k), c_h/L_g; benchmark_bilevel: 10, 0.1).
    L_g is ``L_g_full`` with full passes, where declared. docs/solvers.md.
    Departures: t_max's counter starts at 1 (t_max(0) = 0) and is rounded
    up; ``c_h`` is ours; ``batch_size`` None (default) uses full passes.
    Defaults: "decaying", alpha = ``tuned_outer_step`` (see
    GeneralBilevelSolver), k0 = 20, c_h = 0.5, ``beta_factor`` 10: the
    estimator's variance floors constant steps.
    """

    name = "TTSA"
    parameters = {
        "outer_step": [None],
        "inner_step": [None],
        "beta_factor": [10.0],
        "K": [1000],
        "c_h": [0.5],
        "step_rule": ["decaying"],
        "step_offset": [20],
        "neumann_terms": [None],
        "linear_system_step": [None],
        "batch_size": [None],
    }
    tuned_outer_step = 0.1
    batch_size_may_be_none = True       # None: full passes, as Abolfazli ran

    def skip_problem(self, problem):
        # unlike a default step, these two have no explicit alternative
        if not self.declares_curvature(problem):
            return True, ("TTSA's Neumann depth t_max = (L_g/mu_g) log(k+1) "
                          "and step c_h/L_g need the problem's mu_g and L_g")
        return False, None

    def check_parameters(self):
        super().check_parameters()
        self.check_positive_if_given("inner_step")
        check_positive("beta_factor", self.beta_factor)
        check_int("K", self.K, 1)
        check_in_interval("c_h", self.c_h, 0.0, 1.0, closed=(False, True))
        check_choice("step_rule", self.step_rule, STEP_RULES)
        check_int("step_offset", self.step_offset, 1)
        if self.neumann_terms is not None:
            check_int("neumann_terms", self.neumann_terms, 1)
        self.check_positive_if_given("linear_system_step")

    def check_with_problem(self, problem):
        L_g = self.lower_smoothness(problem)
        beta = self.default_from_problem(
            "inner_step", lambda: theory_beta(problem.mu_g, L_g, self.K))
        self.beta0_ = self.beta_factor * beta
        if self.inner_step is None:
            # the tuned multiplier never takes beta above 1/L_g
            self.beta0_ = min(self.beta0_, neumann_step(L_g))
        check_positive("inner_step", self.beta0_)
        self.kappa_ = L_g / problem.mu_g
        self.default_from_problem("linear_system_step", lambda: self.c_h / L_g)

    def steps(self, k):
        """(alpha_k, beta_k) of iteration k >= 0."""
        if self.step_rule == "constant":
            return self.outer_step_, self.beta0_
        if self.step_rule == "decreasing":
            (beta,), alpha = decayed_steps(k, "decreasing", (self.beta0_,),
                                           self.outer_step_)
            return alpha, beta
        return decaying_steps(k, alpha=self.outer_step_, beta=self.beta0_,
                              k0=self.step_offset)

    def iterations(self):
        P, S = self.problem, self.batch(self.batch_size)
        x, y = self.x, self.y
        k = 0
        while True:
            k += 1                       # t_max(k) is 0 at k = 0
            t_max = (neumann_terms(k, self.kappa_)
                     if self.neumann_terms is None else self.neumann_terms)
            depth = draw_neumann_depth(t_max, P.rng)
            upper, lower = P.batch_upper(S), P.batch_lower(S)
            factors = [lower if S is None else P.batch_lower(S)
                       for _ in range(depth)]
            cross = lower if S is None else P.batch_lower(S)
            samples = EstimatorSamples(xi=upper, cross=cross,
                                       hessian=tuple(factors), lower=lower)
            h_g = P.grad_g_y(x, y, batch=lower)

            def inverse(hvp, rhs, t_max=t_max, depth=depth):
                return randomized_neumann(
                    hvp, rhs, eta=self.linear_system_step_, n_terms=t_max,
                    generator=None, k=depth)

            _, h_f = sampled_hypergradient(P, x, y, samples, inverse)
            alpha, beta = self.steps(k - 1)
            x, y = self.to_X(x - alpha * h_f), y - beta * h_g
            self.x, self.y = x, y
            yield
