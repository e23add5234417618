from benchmark_utils.checks.parameters import check_choice
from benchmark_utils.solvers.averaging import RunningAverage
from benchmark_utils.solvers.schedules import power_decay
from benchmark_utils.solvers.simple import SimpleBilevelSolver
from benchmark_utils.solvers.steps import given_size, given_step


class Solver(SimpleBilevelSolver):
    """aR-IP-SeG: averaged regularized iteratively penalized extragradient.

    Jalilzadeh, Yousefian, Ebrahimi, "Stochastic approximation for estimating
    the price of stability in stochastic Nash games" (arXiv 2203.01271), as
    stated by Cao et al. 2023 (App. F, eq. (81)), a baseline there and in
    Giang-Tran et al. 2025 (App. D). Per iteration t, with fresh batches
    (theta_t, xi_t), then (theta'_t, xi'_t) for the two gradients:

        y_{t+1}    = Pi_Z(x_t - gamma_t (grad f + rho_t grad g)(x_t))
        x_{t+1}    = Pi_Z(x_t - gamma_t (grad f + rho_t grad g)(y_{t+1}))
        ybar_{t+1} = (Gamma_t ybar_t + (gamma_t rho_t)^r y_{t+1}) / Gamma_{t+1}

    with gamma_t = gamma0 / (t+1)^{3/4}, rho_t = rho0 (t+1)^{1/4}, Gamma_{t+1}
    = Gamma_t + (gamma_t rho_t)^r. ``outer_step`` = gamma0,
    ``penalty_weight`` = rho0 (``step_rules``).
    The defaults are Cao et al. 2023's regression values (the "short
    step"); configs/ carry the other experiments'.
    Departures: the second step is evaluated at y_{t+1} (eq. (81) prints
    y_t, which breaks the extragradient); Gamma_0 = 0, ybar_0 = x_0;
    ``output`` reports ybar (the formal output) or x_t; 4 samples
    per iteration with batch 1 (Giang-Tran et al. 2025's counts).
    """

    name = "aR-IP-SeG"
    parameters = {
        "output": ["average"],
    }
    size_rules = (given_size("batch_size", 1),)
    test_config = {"outer_step": 1e-3, "penalty_weight": 1.0}

    step_rules = (given_step("outer_step", "gamma0",
                             "scale of the x step gamma_t", 1e-7),
                  given_step("penalty_weight", "rho0",
                             "scale of the penalty rho_t on g", 1e3),
                  given_step("r", "r", "exponent of y's weight in the "
                             "average", 0.5))

    def check_parameters(self):
        super().check_parameters()
        check_choice("output", self.output, ("average", "last"))

    def schedule(self, t):
        """(gamma_t, rho_t) = (gamma0 / (t+1)^{3/4}, rho0 (t+1)^{1/4}), the
        rule Cao et al. 2023 run (App. F, after eq. (81))."""
        return (power_decay(t, self.steps.outer_step, 1, 0.75),
                power_decay(t, self.steps.penalty_weight, 1, -0.25,
                            divide=False))

    def pre_run_hook(self, callback):
        super().pre_run_hook(callback)
        self.y_bar = RunningAverage(self.x)

    def penalized_gradient(self, point, rho):
        P, S = self.problem, self.sizes.batch_size
        return (P.grad_f(point, batch=P.sample_upper(S))
                + rho * P.grad_g(point, batch=P.sample_lower(S)))

    def iterations(self):
        Z = self.problem.Z
        x, t, r = self.x, 0, self.steps.r
        while True:
            gamma, rho = self.schedule(t)
            y = Z.project(x - gamma * self.penalized_gradient(x, rho))
            x = Z.project(x - gamma * self.penalized_gradient(y, rho))
            # the weight (gamma_t rho_t)^r of y_{t+1} in ybar
            self.y_bar.add(y, (gamma * rho) ** r)
            self.x = x
            yield
            t += 1

    def result(self):
        return {"x": self.y_bar.value if self.output == "average"
                else self.x}
