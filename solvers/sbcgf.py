import math

from benchmark_utils.checks.parameters import check_in_interval, check_int
from benchmark_utils.solvers.cutting_plane import (
    CUT_PARAMETERS,
    CUT_SIZES,
    CUT_STEPS,
    StochasticCuttingPlaneSolver,
)
from benchmark_utils.solvers.estimators import Spider, at_both_points
from benchmark_utils.solvers.steps import SizeRule, given_step


class Solver(StochasticCuttingPlaneSolver):
    """SBCGF: Stochastic Bilevel Conditional Gradient, finite-sum setting.

    Cao, Jiang, Abolfazli, Yazdandoost Hamedani, Mokhtari, "Projection-Free
    Methods for Stochastic Simple Bilevel Optimization with Convex
    Lower-level Problem", NeurIPS 2023, Algorithm 2. Before the first step,
    x_0 by SPIDER-FW on g and the exact g(x_0). Per iteration t and level
    (Remark 3.3: S_u = q_u = sqrt(n_u), S_l = q_l = sqrt(n_l)):

    * t mod q == 0: exact grad f (upper), exact g and grad g (lower), one
      full pass each (lines 4-5);
    * otherwise SPIDER (eq. (11), lines 7-10) with S fresh samples at x_t
      and x_{t-1}: dF_t = dF_{t-1} + grad f_S(x_t) - grad f_S(x_{t-1}),
      and dG_t, g_hat_t from one ``g_and_grad_g`` pass per point;
    * s_t over Z cut by <dG_t, s - x_t> <= g(x_0) - g_hat_t + K_t (eq. (9));
    * x_{t+1} = (1 - gamma) x_t + gamma s_t with a constant gamma.

    ``outer_step`` = gamma; ``batch_size`` / ``period`` override S / q of both
    levels. The defaults are §5's regression values; the size rules round
    Remark 3.3's sqrt(n) down (ours).
    Ablations (App. F.4): ``K0 = 0`` is SBCGF-M, ``cut=False`` SPIDER-FW on
    the upper level.
    """

    name = "SBCGF"
    parameters = {
        "cut": [True],
        **CUT_PARAMETERS,
    }
    batch_size_may_be_none = True       # None: floor(sqrt(n)) per level
    test_config = {"warm_start_samples": 2000, "outer_step": 0.01}

    step_rules = (given_step("outer_step", "gamma", "x step (constant)",
                             1e-5),
                  *CUT_STEPS)
    # S and q per level: given (one value for both levels) or floor(sqrt(n))
    size_rules = tuple(
        SizeRule(f"{level}_{name}", f"floor(sqrt(n_{level}))",
                 lambda solver, problem, sizes, level=level: max(
                     1, math.isqrt(getattr(problem, f"n_{level}"))),
                 parameter=name)
        for level in ("upper", "lower") for name in ("batch_size", "period")
    ) + CUT_SIZES

    def check_parameters(self):
        super().check_parameters()
        check_in_interval("outer_step", self.outer_step, 0, 1,
                          closed=(False, True))
        if self.period is not None:
            check_int("period", self.period, 1)

    def iterations(self):
        P = self.problem
        x = self.warm_started_x0()
        S_u, q_u = self.sizes.upper_batch_size, self.sizes.upper_period
        S_l, q_l = self.sizes.lower_batch_size, self.sizes.lower_period
        grad_F, grad_G, value_G = Spider(), Spider(), Spider()
        x_prev, t = None, 0
        while True:
            if t % q_u == 0:
                dF = grad_F.refresh(P.grad_f(x, batch=P.full_upper()))
            else:
                dF = grad_F.update(*at_both_points(
                    P.grad_f, P.sample_upper(S_u), x, x_prev))
            if not self.use_cut:
                s = self.cut_direction(t, x, dF, None, None)
            else:
                if t % q_l == 0:
                    g_full, dG_full = P.g_and_grad_g(x, batch=P.full_lower())
                    g_hat = value_G.refresh(g_full)
                    dG = grad_G.refresh(dG_full)
                else:
                    (g_new, dG_new), (g_old, dG_old) = at_both_points(
                        P.g_and_grad_g, P.sample_lower(S_l), x, x_prev)
                    g_hat = value_G.update(g_new, g_old)
                    dG = grad_G.update(dG_new, dG_old)
                s = self.cut_direction(t, x, dF, dG, g_hat)
            x_prev, x = x, x + self.steps.outer_step * (s - x)
            self.x = x
            yield
            t += 1
