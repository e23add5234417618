from benchmark_utils.solvers.cutting_plane import CuttingPlaneSolver
from benchmark_utils.parameter_checks import (check_choice, check_int,
                                        check_nonnegative, check_positive)
from benchmark_utils.solvers.warm_start import fw_lower


class Solver(CuttingPlaneSolver):
    """CG-BiO: the deterministic conditional-gradient bilevel method.

    Jiang, Abolfazli, Mokhtari, Yazdandoost Hamedani, "A Conditional
    Gradient-based Method for Simple Bilevel Optimization with Convex
    Lower-level Problem", AISTATS 2023, Algorithm 1; the deterministic
    method that paper 000 makes stochastic (note 000 §2.1, eq. (7)). It is
    the deterministic reference of this benchmark: full gradients and values
    at every iteration (n_upper + n_lower samples each).

    * x_0: Frank-Wolfe on g alone (gamma_k = 2/(k+2), full gradients) until
      its Frank-Wolfe gap is <= epsilon_g / 2 (the CG-BiO code's warm start;
      at most ``warm_start_max_iter`` steps), then g(x_0) exactly;
    * s_k = argmin <grad f(x_k), s> over
      X_k = {s in Z : <grad g(x_k), s - x_k> <= g(x_0) - g(x_k)}, which
      contains the lower-level solution set by convexity (eq. (7)), solved
      exactly (``benchmark_utils/cut_lmo.py``);
    * x_{k+1} = (1 - gamma_k) x_k + gamma_k s_k, gamma_k = 2/(k + step_offset)
      (the paper's theory: 2/(k+2); its public code uses an offset of 12).

    Choices where the paper is silent: an empty X_k can only come from
    rounding; it then takes the fallback of ``on_infeasible`` and is counted
    (``benchmark_utils/cutting_plane.py``). The warm start is charged to the
    method unless ``charge_warm_start=False``. The reported iterate is x_k.
    """

    name = "CG-BiO"
    parameters = {
        "epsilon_g": [1e-4],
        "warm_start_max_iter": [10_000],
        "step_offset": [2],
        "on_infeasible": ["lower_lmo"],
        "lmo_backend": ["exact"],
        "charge_warm_start": [True],
        "init": ["random"],
    }
    # the deterministic cut has no slack
    K0, K_exponent = 0.0, 0.0
    warm_start = "fw"
    warm_start_samples, warm_start_gamma0 = 1, 1.0

    def validate(self, problem):
        check_positive("epsilon_g", self.epsilon_g)
        check_int("warm_start_max_iter", self.warm_start_max_iter, 0)
        check_nonnegative("step_offset", self.step_offset)
        if self.step_offset < 2:
            raise ValueError("step_offset must be >= 2 so that gamma_k <= 1,"
                             f" got {self.step_offset!r}")
        check_choice("on_infeasible", self.on_infeasible,
                     ("lower_lmo", "skip"))
        check_choice("lmo_backend", self.lmo_backend, ("exact", "cvxpy"))
        check_choice("charge_warm_start", self.charge_warm_start,
                     (True, False))
        check_choice("init", self.init, ("random", "dataset"))

    def lower_warm_start(self, x):
        P = self.problem
        x = fw_lower(P, x, self.epsilon_g / 2, self.warm_start_max_iter)
        return x, float(P.g(x, batch=P.full_lower()))

    def iterations(self):
        P = self.problem
        x = self.start_point()
        k = 0
        while True:
            grad_f = P.grad_f(x, batch=P.full_upper())
            g_value, grad_g = P.g_and_grad_g(x, batch=P.full_lower())
            s = self.cut_direction(k, x, grad_f, grad_g, g_value)
            x = x + (2.0 / (k + self.step_offset)) * (s - x)
            self.x = x
            yield
            k += 1
