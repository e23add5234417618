from benchmark_utils.solvers.cutting_plane import (CUT_PARAMETERS, CuttingPlaneSolver,
                                           lower_value_and_grad)
from benchmark_utils.solvers.estimators import Storm
from benchmark_utils.parameter_checks import (check_batch_size, check_in_interval,
                                        check_positive)


class Solver(CuttingPlaneSolver):
    """SBCGI: Stochastic Bilevel Conditional Gradient, infinite-sample setting.

    Cao, Jiang, Abolfazli, Yazdandoost Hamedani, Mokhtari, "Projection-Free
    Methods for Stochastic Simple Bilevel Optimization with Convex
    Lower-level Problem", NeurIPS 2023, Algorithm 1; note 000 §2.3.

    Before the first step: x_0 by SPIDER-FW on g and the exact g(x_0)
    (§5, Remark 3.1; see ``benchmark_utils/cutting_plane.py``). Then per
    iteration t, with fresh batches theta_t (upper) and xi_t (lower) of
    size ``batch_size``:

    * STORM estimates (eq. (10)), plain one-batch estimates at t = 0:
      dF_t = (1-a_t) dF_{t-1} + grad f(x_t; theta_t) - (1-a_t) grad f(x_{t-1}; theta_t),
      and the same for dG_t and g_hat_t with xi_t;
    * s_t = argmin <dF_t, s> over Z cut by
      <dG_t, s - x_t> <= g(x_0) - g_hat_t + K_t  (eqs. (9), (12));
    * x_{t+1} = (1 - gamma_{t+1}) x_t + gamma_{t+1} s_t  (eq. (13)), with
      gamma_t = gamma0 (t+1)^-omega, so iteration t steps with
      gamma0 (t+2)^-omega (note 000 §6.1).

    Defaults are the regression experiment (§5): gamma0 = 0.01, omega = 1,
    K_t = 1e-4 / sqrt(t+1), batch 1, warm start 10^5 queries. Dictionary
    learning: gamma0 = 0.1, omega = 2/3, K_t = 0.01 (t+1)^-1/3, batch 8,
    no SPIDER-FW warm start (configs/cao2023_dictionary.yml).

    Choices where the paper is silent:
    * the STORM weights alpha_t = beta_t = rho_t = (t+1)^-storm_exponent,
      ``storm_exponent`` = omega by default (Lemma 4.1 ties them to
      gamma_t unscaled; the experiments do not report them, note 000 §6.3);
      g_hat and dG share one estimate (same sample, same weight);
    * upper and lower batches are independent draws (separate streams);
    * the infeasible-subproblem rule and the warm-start accounting: see
      ``benchmark_utils/cutting_plane.py``; ``K0 = 0`` with the fallback is
      the ablation SBCGI-M and ``cut=False`` the ablation STORM-FW (App.
      F.4: no cut, no lower-level estimate, one upper batch per iteration);
    * the reported iterate is x_t (the paper's output for convex f; the
      nonconvex x_{t*} is not computable, note 000 §6.21).
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

    def validate(self, problem):
        super().validate(problem)
        check_in_interval("gamma0", self.gamma0, 0, 1, closed=(False, True))
        check_in_interval("omega", self.omega, 0, 1, closed=(False, True))
        self.storm_exponent_ = check_positive(
            "storm_exponent", self.omega if self.storm_exponent is None
            else self.storm_exponent)
        check_batch_size("batch_size", self.batch_size,
                         min(problem.n_upper, problem.n_lower))

    def iterations(self):
        P, S = self.problem, self.batch_size
        x = self.start_point()
        grad_F = Storm(P.grad_f)
        lower = Storm(lower_value_and_grad(P)) if self.use_cut else None
        x_prev, t = None, 0
        while True:
            momentum = (t + 1.0) ** -self.storm_exponent_
            dF = grad_F.step(x, x_prev, P.sample_upper(S), momentum)
            if lower is None:
                s = self.cut_direction(t, x, dF, None, None)
            else:
                estimate = lower.step(x, x_prev, P.sample_lower(S), momentum)
                g_hat, dG = estimate[0], estimate[1:]
                s = self.cut_direction(t, x, dF, dG, g_hat)
            gamma = self.gamma0 * (t + 2.0) ** -self.omega
            x_prev, x = x, x + gamma * (s - x)
            self.x = x
            yield
            t += 1
