import math

from benchmark_utils.checks.parameters import check_choice, check_int
from benchmark_utils.solvers.general import (
    OUTER_BATCH_SIZE,
    GeneralBilevelSolver,
    tuned_outer_step,
)
from benchmark_utils.solvers.hypergradients import (
    draw_neumann_depth,
    randomized_neumann,
)
from benchmark_utils.solvers.inner_loops import inner_gradient_steps
from benchmark_utils.solvers.schedules import (
    neumann_step,
    power_decay,
    strongly_convex_step,
)
from benchmark_utils.solvers.steps import StepRule, given_size

# t_k = ceil(T (k + 1)^e): the growth of the inner loop with k
INNER_STEPS_GROWTH = {"constant": 0.0, "sqrt": 0.5, "linear": 1.0}
# a step constant, or divided by sqrt(k + 1) (schedules.DECAYING_RULES's
# "inverse_sqrt" shape)
STEP_RULES = ("inverse_sqrt", "constant")


class Solver(GeneralBilevelSolver):
    """BSA: bilevel stochastic approximation.

    Ghadimi & Wang, "Approximation Methods for Bilevel Programming", arXiv
    1802.02246, 2018, the BSA method of §3 with its stochastic
    Hessian-inverse approximation (Algorithm 3; benchmark_bilevel's "BSA").
    Outer iteration k:

    * t_k steps y <- y - beta grad_y g(x_k, y; S_t) from y_{k-1};
    * with a fresh upper batch xi and lower batches zeta^0..zeta^p, p drawn
      uniformly in {0..b-1} (:func:`randomized_neumann`):
      d_k = grad_x f(xi) - grad^2_xy g(zeta^0) [b eta prod_{i<=p}
      (I - eta grad^2_yy g(zeta^i))] grad_y f(xi);
    * x_{k+1} = Pi_X(x_k - alpha_k d_k).

    ``outer_step`` = alpha (``step_rule`` "inverse_sqrt": alpha / sqrt(k +
    1), the anytime form of the analysis' 1/sqrt(K); or "constant"),
    ``inner_step`` = beta (``inner_step_rule``: "constant", or
    "inverse_sqrt", benchmark_bilevel's), ``linear_system_step`` = eta,
    ``neumann_depth_bound`` = b; t_k = ceil(T (k + 1)^e), e = 0, 1/2 or 1
    (``inner_steps_growth`` "constant", "sqrt", "linear").
    Departures: mini-batches (``batch_size`` for S_t, ``outer_batch_size``
    for xi and the zeta^i), not single samples; the reported y is y_k.
    In the step rules, L is the lower smoothness of the batches
    (docs/solvers.md).
    """

    name = "BSA"
    parameters = {
        "step_rule": ["inverse_sqrt"],
        "inner_step_rule": ["constant"],
        "inner_steps_growth": ["constant"],
    }
    batch_size_may_be_none = True       # None: full passes everywhere
    batch_size_levels = ("lower",)      # the inner loop's S_t

    step_rules = (
        StepRule("inner_step", "beta", "y step", "2/(L + mu_g)",
                 lambda solver, problem, steps: strongly_convex_step(
                     problem.mu_g, solver.lower_smoothness(problem)),
                 needs=("mu_g", "L_g")),
        StepRule("linear_system_step", "eta", "Neumann step", "1/L",
                 lambda solver, problem, steps: neumann_step(
                     solver.lower_smoothness(problem)), needs=("L_g",)),
        tuned_outer_step(0.3, "alpha"),
    )
    size_rules = (given_size("T", 10),
                  given_size("neumann_depth_bound", 20),
                  given_size("batch_size", 16),
                  OUTER_BATCH_SIZE)

    def check_parameters(self):
        super().check_parameters()
        check_choice("step_rule", self.step_rule, STEP_RULES)
        check_choice("inner_step_rule", self.inner_step_rule, STEP_RULES)
        check_int("T", self.T, 1)
        check_choice("inner_steps_growth", self.inner_steps_growth,
                     INNER_STEPS_GROWTH)
        check_int("neumann_depth_bound", self.neumann_depth_bound, 1)

    def inner_step_count(self, k):
        """t_k = ceil(T (k + 1)^e) at outer iteration k >= 0."""
        exponent = INNER_STEPS_GROWTH[self.inner_steps_growth]
        return math.ceil(power_decay(k, self.sizes.T, 1, -exponent,
                                     divide=False))

    def schedule_sizes(self, k):
        return {"inner_steps": (self.inner_step_count(k),
                                "t_k = ceil(T (k + 1)^e)")}

    @staticmethod
    def step_at(step, rule, k):
        """A step at outer iteration k >= 0 under ``rule``: constant, or
        "inverse_sqrt" step / sqrt(k + 1)."""
        return step if rule == "constant" else step / math.sqrt(k + 1)

    def iterations(self):
        P = self.problem
        S = self.batch(self.sizes.batch_size)
        B = self.batch(self.sizes.outer_batch_size)
        b, eta = self.sizes.neumann_depth_bound, self.steps.linear_system_step
        inner_step, outer_step = self.steps.inner_step, self.steps.outer_step
        x, y = self.x, self.y
        k = 0
        while True:
            beta = self.step_at(inner_step, self.inner_step_rule, k)
            y = inner_gradient_steps(P, x, y, step=beta,
                                     n_steps=self.inner_step_count(k),
                                     batch_size=S)
            grad_x_f, grad_y_f = P.grad_f(x, y, batch=P.batch_upper(B))

            def hessian_factor(v, x=x, y=y):
                # a fresh zeta^i per factor
                return P.hvp_yy_g(x, y, v, batch=P.batch_lower(B))

            p = draw_neumann_depth(b, P.rng)
            w = randomized_neumann(hessian_factor, grad_y_f, eta=eta,
                                   n_terms=b, generator=None, k=p)
            hypergrad = grad_x_f - P.hvp_xy_g(x, y, w, batch=P.batch_lower(B))
            alpha = self.step_at(outer_step, self.step_rule, k)
            x = self.to_X(x - alpha * hypergrad)
            self.x, self.y = x, y
            k += 1
            yield
