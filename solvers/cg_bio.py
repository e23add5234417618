from benchmark_utils.checks.parameters import (
    check_int,
    check_nonnegative,
)
from benchmark_utils.solvers.cutting_plane import CuttingPlaneSolver
from benchmark_utils.solvers.schedules import frank_wolfe_step
from benchmark_utils.solvers.steps import given_size, given_step
from benchmark_utils.solvers.warm_start import fw_lower


class Solver(CuttingPlaneSolver):
    """CG-BiO: the deterministic conditional-gradient bilevel method.

    Jiang, Abolfazli, Mokhtari, Yazdandoost Hamedani, "A Conditional
    Gradient-based Method for Simple Bilevel Optimization with Convex
    Lower-level Problem", AISTATS 2023, Algorithm 1; the method Cao et al.
    2023 make stochastic (their eq. (7)), and the benchmark's deterministic
    reference: full gradients and values at every iteration.

    * x_0: Frank-Wolfe on g alone (gamma_k = 2/(k+2), full gradients)
      until its Frank-Wolfe gap is <= epsilon_g / 2 (the warm start of the
      public CG-BiO code; at most ``warm_start_max_iter`` steps), then
      g(x_0) exactly;
    * s_k = argmin <grad f(x_k), s> over X_k = {s in Z : <grad g(x_k),
      s - x_k> <= g(x_0) - g(x_k)} (eq. (7)), by the set's exact cut-LMO;
    * x_{k+1} = (1 - gamma_k) x_k + gamma_k s_k, gamma_k = 2/(k +
      ``step_offset``) (``step_rules``; the default is the theory's
      offset, the public code uses 12).

    An empty X_k can only come from rounding; it takes the fallback of
    ``on_infeasible`` and is counted (``cutting_plane.py``).
    """

    name = "CG-BiO"
    parameters = {
        "on_infeasible": ["lower_lmo"],
        "lmo_backend": ["exact"],
        "charge_warm_start": [True],
    }
    size_rules = (given_size("warm_start_max_iter", 10_000),)
    step_rules = (given_step("step_offset", "none: the 2 of k + 2",
                             "offset of gamma_k = 2/(k + step_offset)",
                             2),
                  given_step("epsilon_g", "epsilon_g", "lower-level "
                             "accuracy: the warm start's Frank-Wolfe gap "
                             "bound is epsilon_g / 2", 1e-4))

    def check_parameters(self):
        super().check_parameters()
        check_int("warm_start_max_iter", self.warm_start_max_iter, 0)
        check_nonnegative("step_offset", self.step_offset)
        if self.step_offset < 2:
            raise ValueError("step_offset must be >= 2 so that gamma_k <= 1,"
                             f" got {self.step_offset!r}")

    def approach_lower_level(self, x):
        return fw_lower(self.problem, x, self.steps.epsilon_g / 2,
                        self.sizes.warm_start_max_iter)

    def slack(self, t):
        # the deterministic cut (7) contains the solution set as it is
        return 0.0

    def iterations(self):
        P = self.problem
        x = self.warm_started_x0()
        k = 0
        while True:
            grad_f = P.grad_f(x, batch=P.full_upper())
            g_value, grad_g = P.g_and_grad_g(x, batch=P.full_lower())
            s = self.cut_direction(k, x, grad_f, grad_g, g_value)
            x = x + frank_wolfe_step(k, self.steps.step_offset) * (s - x)
            self.x = x
            yield
            k += 1
