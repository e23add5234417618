from benchmark_utils.checks.parameters import check_int
from benchmark_utils.solvers.general import (
    OUTER_BATCH_SIZE,
    GeneralBilevelSolver,
    tuned_outer_step,
)
from benchmark_utils.solvers.implicit_differentiation import fixed_point_solve
from benchmark_utils.solvers.inner_loops import inner_gradient_steps
from benchmark_utils.solvers.schedules import neumann_step
from benchmark_utils.solvers.steps import StepRule, given_size


def one_over_lower_smoothness(name, letter, role):
    """The rule of a step of an SGD loop on y or on the linear system: 1/L,
    L the run's lower smoothness (``L_g_full`` with full passes where
    declared, else ``L_g``: GeneralBilevelSolver.lower_smoothness)."""
    return StepRule(name, letter, role, "1/L_g (L_g_full with full passes)",
                    lambda solver, problem, steps: neumann_step(
                        solver.lower_smoothness(problem)), needs=("L_g",))


class Solver(GeneralBilevelSolver):
    """AmIGO: amortized implicit gradient optimization.

    Arbel & Mairal, "Amortized Implicit Differentiation for Stochastic
    Bilevel Optimization", ICLR 2022, Algorithm 1 with its inner solvers
    Algorithm 2 (SGD on y) and 3 (SGD on the linear system), the stochastic
    variant (benchmark_bilevel's "AmIGO"). Outer iteration k:

    * Alg. 2: T steps y <- y - alpha grad_y g(x_k, y; S_t) from y_{k-1}
      (:func:`~benchmark_utils.solvers.inner_loops.inner_gradient_steps`);
    * u_k = grad_y f(x_k, y_k; D_f), with grad_x f from the same batch;
    * Alg. 3: N steps z <- z - beta (grad^2_yy g(B_t) z + u_k) from
      z_{k-1}, a fresh B_t each; carried as v = -z (:func:`fixed_point_solve`);
    * x_{k+1} = x_k - gamma (grad_x f + grad^2_xy g(x_k, y_k; D_xy) z_k).

    ``inner_step`` = alpha, ``linear_system_step`` = beta, ``outer_step`` =
    gamma; ``T``, ``N`` the paper's. Batches: ``batch_size`` for S_t and
    B_t, ``outer_batch_size`` (None: ``batch_size``) for D_f and D_xy.
    Departures: z_{-1} = 0 (the first solve is then a truncated Neumann
    series, one product fewer); the reported y is y_k.

    Why the defaults: alpha and beta are the analysis' bound for both SGD
    loops, gamma and the batch size were tuned on the quick quadratic, T
    and N are benchmark_bilevel's (docs/solvers.md).
    """

    name = "AmIGO"
    parameters = {}
    batch_size_may_be_none = True       # None: full passes everywhere
    batch_size_levels = ("lower",)      # S_t and B_t

    step_rules = (
        one_over_lower_smoothness("inner_step", "alpha", "y step"),
        one_over_lower_smoothness("linear_system_step", "beta",
                                  "linear-system (z) step"),
        tuned_outer_step(0.1, "gamma"),
    )
    size_rules = (given_size("T", 10),
                  given_size("N", 10),
                  given_size("batch_size", 16),
                  OUTER_BATCH_SIZE)

    def check_parameters(self):
        super().check_parameters()
        check_int("T", self.T, 1)
        check_int("N", self.N, 1)

    def iterations(self):
        P = self.problem
        S = self.batch(self.sizes.batch_size)
        B = self.batch(self.sizes.outer_batch_size)
        alpha, beta = self.steps.inner_step, self.steps.linear_system_step
        gamma = self.steps.outer_step
        x, y, v = self.x, self.y, None
        while True:
            y = inner_gradient_steps(P, x, y, step=alpha, n_steps=self.sizes.T,
                                     batch_size=S)            # Algorithm 2
            grad_x_f, grad_y_f = P.grad_f(x, y, batch=P.batch_upper(B))

            def hessian(u, x=x, y=y):
                # a fresh B_t per step of Algorithm 3
                return P.hvp_yy_g(x, y, u, batch=P.batch_lower(S))

            v = fixed_point_solve(hessian, grad_y_f, eta=beta,
                                  n_steps=self.sizes.N, v0=v)  # Alg. 3
            hypergrad = grad_x_f - P.hvp_xy_g(x, y, v,
                                              batch=P.batch_lower(B))
            x = self.to_X(x - gamma * hypergrad)
            self.x, self.y = x, y
            yield
