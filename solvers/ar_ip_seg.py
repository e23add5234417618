from benchmark_utils.checks.parameters import check_choice, check_positive
from benchmark_utils.solvers.averaging import RunningAverage
from benchmark_utils.solvers.schedules import (ar_ip_seg_average_weight,
                                               ar_ip_seg_schedule)
from benchmark_utils.solvers.simple import SimpleBilevelSolver


class Solver(SimpleBilevelSolver):
    """aR-IP-SeG: averaged, regularized, iteratively penalized stochastic extragradient.

    Jalilzadeh, Yousefian, Ebrahimi, "Stochastic approximation for estimating
    the price of stability in stochastic Nash games" (arXiv 2203.01271), as
    stated by Cao et al. 2023 (App. F, eq. (81)) and used as a baseline by
    Cao et al. 2023 and Giang-Tran et al. 2025 (App. D).

    Per iteration t, with fresh batches for each of the two steps:

        y_{t+1}   = Pi_Z(x_t - gamma_t (grad f(x_t; theta_t) + rho_t grad g(x_t; xi_t)))
        x_{t+1}   = Pi_Z(x_t - gamma_t (grad f(y_{t+1}; theta'_t) + rho_t grad g(y_{t+1}; xi'_t)))
        Gamma_{t+1} = Gamma_t + (gamma_t rho_t)^r
        ybar_{t+1}  = (Gamma_t ybar_t + (gamma_t rho_t)^r y_{t+1}) / Gamma_{t+1}

    gamma_t = gamma0 / (t+1)^{3/4}, rho_t = rho0 (t+1)^{1/4}, r = 1/2
    (``benchmark_utils.solvers.schedules.ar_ip_seg_schedule``).
    Defaults: gamma0 = 1e-7, rho0 = 1e3 (Cao et al. 2023, regression, the
    "short step"); dictionary: gamma0 = 1e-4, rho0 = 1, batch 8;
    Giang-Tran et al. 2025's "long step": gamma0 = 1e-2 (configs/ carry
    each).

    Choices where the papers are silent or garbled:
    * the second step is evaluated at y_{t+1}: eq. (81) prints y_t, which
      breaks the extragradient logic (the point just computed is the one
      to extrapolate from);
    * Gamma_0 = 0 and ybar_0 = x_0, so ybar_1 = y_1;
    * the reported iterate: the formal output ybar (``output="average"``)
      or x_t (``output="last"``); the papers do not say which one they
      plot;
    * two fresh draws per level per iteration: 4 samples per iteration with
      batch 1 (the per-iteration counts of Giang-Tran et al. 2025's tables);
    * the start: a random point of Z per repetition (``init``).
    """

    name = "aR-IP-SeG"
    parameters = {
        "gamma0": [1e-7],
        "rho0": [1e3],
        "r": [0.5],
        "batch_size": [1],
        "output": ["average"],
    }
    test_config = {"gamma0": 1e-3, "rho0": 1.0}

    def check_parameters(self):
        super().check_parameters()
        check_positive("gamma0", self.gamma0)
        check_positive("rho0", self.rho0)
        check_positive("r", self.r)
        check_choice("output", self.output, ("average", "last"))

    def pre_run_hook(self, callback):
        super().pre_run_hook(callback)
        self.y_bar = RunningAverage(self.x)

    def penalized_gradient(self, point, rho):
        P, S = self.problem, self.batch_size
        return (P.grad_f(point, batch=P.sample_upper(S))
                + rho * P.grad_g(point, batch=P.sample_lower(S)))

    def iterations(self):
        Z = self.problem.Z
        x, t = self.x, 0
        while True:
            gamma, rho = ar_ip_seg_schedule(t, self.gamma0, self.rho0)
            y = Z.project(x - gamma * self.penalized_gradient(x, rho))
            x = Z.project(x - gamma * self.penalized_gradient(y, rho))
            self.y_bar.add(y, ar_ip_seg_average_weight(gamma, rho, self.r))
            self.x = x
            yield
            t += 1

    def result(self):
        return {"x": self.y_bar.value if self.output == "average"
                else self.x}
