import torch

from benchmark_utils.checks.parameters import check_in_interval
from benchmark_utils.solvers.cutting_plane import (
    CUT_PARAMETERS,
    CUT_SIZES,
    CUT_STEPS,
    StochasticCuttingPlaneSolver,
)
from benchmark_utils.solvers.estimators import Storm, at_both_points
from benchmark_utils.solvers.schedules import power_decay
from benchmark_utils.solvers.steps import StepRule, given_size, given_step


class Solver(StochasticCuttingPlaneSolver):
    """SBCGI: Stochastic Bilevel Conditional Gradient, infinite-sample setting.

    Cao, Jiang, Abolfazli, Yazdandoost Hamedani, Mokhtari, "Projection-Free
    Methods for Stochastic Simple Bilevel Optimization with Convex
    Lower-level Problem", NeurIPS 2023, Algorithm 1. Before the first step,
    x_0 by SPIDER-FW on g and the exact g(x_0) (Remark 3.1). Per iteration
    t, fresh batches theta_t (upper) and xi_t (lower):

    * STORM estimates dF_t, dG_t, g_hat_t with weights alpha_t, beta_t,
      rho_t (eq. (10), lines 7-9; plain estimates at t = 0, line 5), dG_t
      and g_hat_t from one ``g_and_grad_g`` pass per point on xi_t;
    * s_t = argmin <dF_t, s> over Z cut by <dG_t, s - x_t> <= g(x_0) -
      g_hat_t + K_t (eqs. (9), (12));
    * x_{t+1} = (1 - gamma_{t+1}) x_t + gamma_{t+1} s_t (eq. (13), line 12)
      with gamma_t = gamma0 (t+1)^-omega: iteration t steps with gamma0
      (t+2)^-omega.

    ``outer_step`` = gamma0, ``outer_step_exponent`` = omega,
    ``momentum_exponent`` = a with alpha_t = beta_t = rho_t = (t+1)^-a
    (``step_rules``; a's rule follows Lemma 4.1; the paper reports no
    weights), K_t = K0 (t+1)^-``K_exponent``. The defaults are Cao et al.
    2023's regression values (§5).
    Ablations (App. F.4): ``K0 = 0`` is SBCGI-M, ``cut=False`` STORM-FW.
    Reported: x_t (the paper's output for convex f; its nonconvex output,
    the iterate of smallest Frank-Wolfe gap, needs the exact gradient).
    """

    name = "SBCGI"
    parameters = {
        "cut": [True],
        **CUT_PARAMETERS,
    }
    size_rules = (given_size("batch_size", 1), *CUT_SIZES)
    test_config = {"warm_start_samples": 2000}

    step_rules = (
        given_step("outer_step", "gamma0", "scale of the x step gamma_t",
                   0.01),
        given_step("outer_step_exponent", "omega",
                   "decay exponent of gamma_t", 1.0),
        StepRule("momentum_exponent", "a",
                 "decay exponent of the STORM weights",
                 "outer_step_exponent (omega, Lemma 4.1)",
                 lambda solver, problem, steps: steps["outer_step_exponent"]),
        *CUT_STEPS,
    )

    def check_parameters(self):
        super().check_parameters()
        check_in_interval("outer_step", self.outer_step, 0, 1,
                          closed=(False, True))
        check_in_interval("outer_step_exponent", self.outer_step_exponent,
                          0, 1, closed=(False, True))

    def step_at(self, t):
        """gamma_{t+1} = gamma0 (t+2)^-omega, the step of iteration t."""
        steps = self.steps
        return power_decay(t, steps.outer_step, 2.0,
                           steps.outer_step_exponent, divide=False)

    def storm_weights(self, t):
        """(alpha_t, beta_t, rho_t): the weights of dF_t, dG_t and g_hat_t."""
        weight = power_decay(t, 1.0, 1.0, self.steps.momentum_exponent,
                             divide=False)
        return weight, weight, weight

    def iterations(self):
        P, S = self.problem, self.sizes.batch_size
        x = self.warm_started_x0()
        grad_F, grad_G, value_G = Storm(), Storm(), Storm()
        x_prev, t = None, 0
        while True:
            # x_prev is None at t = 0: plain one-batch estimates (line 5)
            alpha, beta, rho = self.storm_weights(t)
            dF = grad_F.step(*at_both_points(
                P.grad_f, P.sample_upper(S), x, x_prev), alpha)
            if not self.use_cut:
                s = self.cut_direction(t, x, dF, None, None)
            else:
                (g_new, dG_new), old = at_both_points(
                    P.g_and_grad_g, P.sample_lower(S), x, x_prev)
                g_old, dG_old = old or (None, None)
                g_hat = value_G.step(g_new, g_old, rho)
                dG = grad_G.step(dG_new, dG_old, beta)
                s = self.cut_direction(t, x, dF, dG, g_hat)
            # x + gamma (s - x), one fused call
            x_prev, x = x, torch.lerp(x, s, self.step_at(t))
            self.x = x
            yield
            t += 1
