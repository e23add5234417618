import torch

from benchmark_utils.checks.parameters import check_in_interval, check_positive
from benchmark_utils.solvers.cutting_plane import (
    CUT_PARAMETERS, StochasticCuttingPlaneSolver)
from benchmark_utils.solvers.estimators import Storm, at_both_points
from benchmark_utils.solvers.schedules import sbcgi_step, storm_weight


class Solver(StochasticCuttingPlaneSolver):
    """SBCGI: Stochastic Bilevel Conditional Gradient, infinite-sample setting.

    Cao, Jiang, Abolfazli, Yazdandoost Hamedani, Mokhtari, "Projection-Free
    Methods for Stochastic Simple Bilevel Optimization with Convex
    Lower-level Problem", NeurIPS 2023, Algorithm 1.

    Before the first step: x_0 by SPIDER-FW on g and the exact g(x_0)
    (§5, Remark 3.1; see ``benchmark_utils/solvers/cutting_plane.py``).
    Then per iteration t, with fresh batches theta_t (upper) and xi_t
    (lower) of size ``batch_size``:

    * three STORM estimates (eq. (10); Alg. 1 lines 7-9), plain one-batch
      estimates at t = 0 (line 5):
      dF_t = (1-alpha_t) dF_{t-1} + grad f(x_t; theta_t) - (1-alpha_t) grad f(x_{t-1}; theta_t),
      dG_t = (1-beta_t) dG_{t-1} + grad g(x_t; xi_t) - (1-beta_t) grad g(x_{t-1}; xi_t),
      g_hat_t = (1-rho_t) g_hat_{t-1} + g(x_t; xi_t) - (1-rho_t) g(x_{t-1}; xi_t),
      the last two from one ``g_and_grad_g`` pass per point on xi_t;
    * s_t = argmin <dF_t, s> over Z cut by
      <dG_t, s - x_t> <= g(x_0) - g_hat_t + K_t  (eqs. (9), (12));
    * x_{t+1} = (1 - gamma_{t+1}) x_t + gamma_{t+1} s_t  (eq. (13)), with
      gamma_t = gamma0 (t+1)^-omega, so iteration t steps with
      gamma0 (t+2)^-omega (line 12 indexes the step by t+1).

    Defaults are the regression experiment (§5): gamma0 = 0.01, omega = 1,
    K_t = 1e-4 / sqrt(t+1), batch 1, warm start 10^5 queries. Dictionary
    learning: gamma0 = 0.1, omega = 2/3, K_t = 0.01 (t+1)^-1/3, batch 8,
    no SPIDER-FW warm start (configs/cao2023_dictionary.yml).

    Choices where the paper is silent:
    * the STORM weights alpha_t = beta_t = rho_t = (t+1)^-storm_exponent
      (:meth:`storm_weights`), ``storm_exponent`` = omega by default:
      Lemma 4.1 sets them to (t+1)^-omega, unscaled, while the experiments
      scale gamma_t by gamma0 and never report the weights;
    * g_hat_t and dG_t share their sample xi_t (Alg. 1 writes the same
      xi_t); upper and lower batches are independent draws (separate
      streams);
    * the infeasible-subproblem rule and the warm-start accounting: see
      ``benchmark_utils/solvers/cutting_plane.py``; ``K0 = 0`` with the
      fallback is the ablation SBCGI-M and ``cut=False`` the ablation
      STORM-FW (App. F.4: no cut, no lower-level estimate, one upper batch
      per iteration);
    * the reported iterate is x_t: the paper's output for convex f; for
      nonconvex f its output is the iterate of smallest Frank-Wolfe gap,
      which needs the exact gradient and is not computable by the method.
    """

    name = "SBCGI"
    parameters = {
        "gamma0": [0.01],
        "omega": [1.0],
        "storm_exponent": [None],
        "batch_size": [1],
        "cut": [True],
        **CUT_PARAMETERS,
    }
    test_config = {"warm_start_samples": 2000}

    def check_parameters(self):
        super().check_parameters()
        check_in_interval("gamma0", self.gamma0, 0, 1, closed=(False, True))
        check_in_interval("omega", self.omega, 0, 1, closed=(False, True))
        self.storm_exponent_ = check_positive(
            "storm_exponent", self.omega if self.storm_exponent is None
            else self.storm_exponent)

    def storm_weights(self, t):
        """(alpha_t, beta_t, rho_t): the weights of dF_t, dG_t and g_hat_t."""
        weight = storm_weight(t, self.storm_exponent_)
        return weight, weight, weight

    def iterations(self):
        P, S = self.problem, self.batch_size
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
            x_prev, x = x, torch.lerp(x, s, sbcgi_step(t, self.gamma0,
                                                       self.omega))
            self.x = x
            yield
            t += 1
