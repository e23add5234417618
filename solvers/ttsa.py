import math

from benchmark_utils.checks.parameters import (
    check_choice,
    check_in_interval,
    check_int,
    refuse_unread,
)
from benchmark_utils.solvers.general import (
    GeneralBilevelSolver,
    tuned_outer_step,
)
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
from benchmark_utils.solvers.steps import StepRule, given_size, given_step

STEP_RULES = ("constant", "harmonic", "decreasing")
# the default y step: this multiple of the theory's beta (capped at 1/L_g)
THEORY_BETA_MULTIPLE = 10.0


def theory_beta(mu_g, L_g, horizon):
    """beta = min{mu_g/L_g^2, 2 K^{-2/5}/mu_g}, the lower-level step for the
    horizon K (Hong et al. 2023, as Abolfazli et al. 2023, App. G.1)."""
    return min(mu_g / L_g ** 2,
               power_decay(horizon, 2.0, exponent=0.4, divide=False) / mu_g)


def theory_depth_bound(k, kappa):
    """t_max(k) = (L_g/mu_g) log(k+1) at k >= 1, rounded up to an integer
    >= 1 (our choice: the depth p ~ U{0..t_max-1} needs one)."""
    return max(1, math.ceil(kappa * math.log(k + 1)))


# the depth bound of the randomized Neumann product: "theory" t_max(k) =
# kappa log(k + 1) capped at neumann_depth_bound, or "fixed"
# neumann_depth_bound (benchmark_bilevel's)
DEPTH_RULES = ("fixed", "theory")


def harmonic_steps(k, *, alpha, beta, k0):
    """(alpha k0/(k0 + k), beta (k0/(k0 + k))^{2/3}) at k >= 0: the shape of
    Hong et al.'s steps for a strongly convex outer objective."""
    ratio = power_decay(k, k0, k0)
    return alpha * ratio, beta * ratio ** (2.0 / 3.0)


def default_inner_step(solver, problem, steps):
    """10 x :func:`theory_beta` for the ``horizon``, capped at 1/L_g."""
    L_g = solver.lower_smoothness(problem)
    beta = theory_beta(problem.mu_g, L_g, solver.horizon)
    # the tuned multiple never takes beta above 1/L_g
    return min(THEORY_BETA_MULTIPLE * beta, neumann_step(L_g))


class Solver(GeneralBilevelSolver):
    """TTSA: Two-Timescale Stochastic Approximation.

    Hong, Wai, Wang, Yang, SIAM J. Optim. 2023 (arXiv 2007.05170),
    Algorithm 1, as Abolfazli et al. 2023 (App. G.1) transcribe and ran it.
    Iteration k = 0, 1, ..., both updates at (x_k, y_k):

    * y_{k+1} = y_k - beta_k grad_y g(x_k, y_k);
    * x_{k+1} = P_X(x_k - alpha_k h^f_k), h^f_k = grad_x f - grad^2_xy g
      w_k, w_k = [t_max c_h / L_g] prod_{i<=p} (I - (c_h/L_g) grad^2_yy g)
      grad_y f, p ~ U{0..t_max - 1}, t_max = ceil((L_g/mu_g) log(k + 2)).

    ``outer_step`` = alpha_0, ``inner_step`` = beta_0; ``step_rule``:
    "constant"; "harmonic" alpha_0 k0/(k0 + k), beta_0 (k0/(k0 + k))^{2/3}
    (k0 = ``step_offset``, Hong et al.'s strongly convex shape);
    "decreasing" alpha_0 (k+1)^{-3/5}, beta_0 (k+1)^{-2/5}
    (benchmark_bilevel's). ``depth_rule`` "theory": the depth bound is
    t_max(k) capped at ``neumann_depth_bound`` (None: no cap); "fixed":
    ``neumann_depth_bound`` (benchmark_bilevel: 10). ``linear_system_step``:
    c_h/L_g (benchmark_bilevel: 0.1). L_g is ``L_g_full`` with full passes,
    where declared. Departures: t_max's counter starts at 1 (t_max(0) = 0)
    and is rounded up; ``c_h`` is ours; ``batch_size`` None uses full
    passes. beta_0's rule scales the theory's min{mu_g/L_g^2, 2
    K^{-2/5}/mu_g} for K = ``horizon``; the depth is capped because,
    uncapped, t_max(k) costs ~kappa log k products an iteration (1e5 on
    hyper-cleaning, kappa ~ 1e4). See docs/solvers.md.
    """

    name = "TTSA"
    parameters = {
        "c_h": [0.5],
        "step_rule": ["harmonic"],
        "depth_rule": ["theory"],
    }
    # recorded: the cap as given (neumann_depth_bound) and the bound t_max
    # the schedule set at the last iteration (t_max, schedule_sizes)
    size_rules = (given_size("horizon", 1000),
                  given_size("neumann_depth_bound", 100, "no cap"),
                  given_size("batch_size", None))
    batch_size_may_be_none = True       # None: full passes, as Abolfazli ran

    step_rules = (
        given_step("step_offset", "k0", "offset of the harmonic steps", 20),
        tuned_outer_step(0.1, "alpha_0"),
        StepRule("inner_step", "beta_0", "y step",
                 "min(10 x the theory's beta for the horizon, 1/L_g)",
                 default_inner_step),
        StepRule("linear_system_step", "c_h/L_g", "Neumann step", "c_h/L_g",
                 lambda solver, problem, steps:
                     solver.c_h / solver.lower_smoothness(problem)),
        StepRule("kappa", "L_g/mu_g", "t_max(k)'s growth", "L_g/mu_g",
                 lambda solver, problem, steps:
                     solver.lower_smoothness(problem) / problem.mu_g,
                 parameter=False),
    )

    def skip_problem(self, problem):
        # unlike a default step, these two have no explicit alternative
        if not self.declares_curvature(problem):
            return True, ("TTSA's Neumann depth t_max = (L_g/mu_g) log(k+1) "
                          "and step c_h/L_g need the problem's mu_g and L_g")
        return False, None

    def check_parameters(self):
        super().check_parameters()
        check_int("horizon", self.horizon, 1)
        check_in_interval("c_h", self.c_h, 0.0, 1.0, closed=(False, True))
        check_choice("step_rule", self.step_rule, STEP_RULES)
        check_int("step_offset", self.step_offset, 1)
        if self.step_rule != "harmonic":
            refuse_unread(self, ("step_offset",), f"with step_rule="
                          f"{self.step_rule!r} (the harmonic rule's k0)")
        check_choice("depth_rule", self.depth_rule, DEPTH_RULES)
        if self.neumann_depth_bound is not None or self.depth_rule == "fixed":
            check_int("neumann_depth_bound", self.neumann_depth_bound, 1)

    def step_sizes(self, k):
        """(alpha_k, beta_k) of iteration k >= 0."""
        alpha, beta = self.steps.outer_step, self.steps.inner_step
        if self.step_rule == "constant":
            return alpha, beta
        if self.step_rule == "decreasing":
            (beta,), alpha = decayed_steps(k, "decreasing", (beta,), alpha)
            return alpha, beta
        return harmonic_steps(k, alpha=alpha, beta=beta,
                              k0=self.steps.step_offset)

    def depth_bound(self, k):
        """The Neumann depth bound of iteration k >= 1: t_max(k) capped at
        ``neumann_depth_bound`` (None: no cap), or that bound itself
        (``depth_rule="fixed"``)."""
        if self.depth_rule == "fixed":
            return self.sizes.neumann_depth_bound
        t_max = theory_depth_bound(k, self.steps.kappa)
        return t_max if self.sizes.neumann_depth_bound is None else min(
            t_max, self.sizes.neumann_depth_bound)

    def schedule_sizes(self, k):
        # iteration k (from 0) draws its depth below t_max(k + 1)
        return {"t_max": (
            self.depth_bound(k + 1),
            "neumann_depth_bound" if self.depth_rule == "fixed" else
            "min(kappa log(k + 1), neumann_depth_bound), k from 1")}

    def iterations(self):
        P, S = self.problem, self.batch(self.sizes.batch_size)
        eta = self.steps.linear_system_step
        x, y = self.x, self.y
        k = 0
        while True:
            k += 1                       # t_max(k) is 0 at k = 0
            t_max = self.depth_bound(k)
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
                    hvp, rhs, eta=eta,
                    n_terms=t_max, generator=None, k=depth)

            _, h_f = sampled_hypergradient(P, x, y, samples, inverse)
            alpha, beta = self.step_sizes(k - 1)
            x, y = self.to_X(x - alpha * h_f), y - beta * h_g
            self.x, self.y = x, y
            yield
