from benchmark_utils.checks.parameters import check_choice
from benchmark_utils.solvers.schedules import STEP_RULES, decayed_steps
from benchmark_utils.solvers.soba_family import (
    SobaFamilySolver,
    soba_directions,
    soba_step_rules,
    tuned_on_quadratic,
)
from benchmark_utils.solvers.steps import given_size


def soba_steps(t, inner_step, outer_step, rule):
    """(rho_t, gamma_t) at iteration t = 0, 1, ...: constant, the paper's
    decreasing rule rho (t+1)^{-2/5}, gamma (t+1)^{-3/5} (the paper counts
    from t = 1), or benchmark_bilevel's rho / sqrt(t+1), gamma / sqrt(t+1)
    (its ``update_lr``, written as a division as there)."""
    (rho,), gamma = decayed_steps(t, rule, (inner_step,), outer_step,
                                  divide=rule == "inverse_sqrt")
    return rho, gamma


class Solver(SobaFamilySolver):
    """SOBA: joint stochastic steps on y, the linear system v, and x.

    Dagréou, Ablin, Vaiter, Moreau, "A framework for bilevel optimization
    that enables stochastic and global variance reduction algorithms",
    NeurIPS 2022, Algorithm 1 (benchmark_bilevel's "SOBA"). Iteration t,
    on a fresh lower batch B_t and upper batch D_t, every direction at
    (x_t, y_t, v_t) (eq. (6)-(7), :func:`soba_directions`):

    * y_{t+1} = y_t - rho_t D_y, v_{t+1} = v_t - rho_t D_v,
      x_{t+1} = x_t - gamma_t D_x (the paper's z is our y).

    ``inner_step`` = rho, ``outer_step`` = gamma; ``step_rule`` "constant",
    "decreasing" (the theorem's rho (t+1)^{-2/5}, gamma (t+1)^{-3/5}) or
    "inverse_sqrt" (benchmark_bilevel's: both divided by sqrt(t+1)).
    ``outer_ratio`` gives benchmark_bilevel's parametrization gamma = rho /
    outer_ratio.

    Departures: v_0 = 0; one lower batch for every lower-level term and one
    upper batch for the upper ones; the reported y is y_{t+1}.

    The inner step is non-expansive on every sample; the outer step and
    the batch size were tuned on the quick quadratic. See
    GeneralBilevelSolver and docs/solvers.md.
    """

    name = "SOBA"
    parameters = {
        "outer_ratio": [None],
        "step_rule": ["constant"],
    }
    size_rules = (given_size("batch_size", 32),)
    # benchopt's own tests run on the 30-sample test quadratic
    test_config = {"batch_size": 16}
    batch_size_may_be_none = True       # None: full passes

    step_rules = soba_step_rules(*tuned_on_quadratic(0.05))

    def check_parameters(self):
        super().check_parameters()
        check_choice("step_rule", self.step_rule, STEP_RULES)

    def iterations(self):
        P = self.problem
        S = self.batch(self.sizes.batch_size)
        x, y, v = self.x, self.y, self.start_v()
        inner_step, outer_step = self.steps.inner_step, self.steps.outer_step
        t = 0
        while True:
            lower, upper = P.batch_lower(S), P.batch_upper(S)
            d_y, d_v, d_x = soba_directions(P, x, y, v, lower, upper)
            rho, gamma = soba_steps(t, inner_step, outer_step,
                                    self.step_rule)
            y = y - rho * d_y
            v = v - rho * d_v
            x = self.to_X(x - gamma * d_x)
            self.x, self.y = x, y
            t += 1
            yield
