import math

from benchmark_utils.checks.parameters import check_int
from benchmark_utils.solvers.estimators import Spider
from benchmark_utils.solvers.soba_family import (
    SobaFamilySolver,
    project_to_ball,
    soba_directions,
    soba_step_rules,
    tuned_on_quadratic,
)
from benchmark_utils.solvers.steps import SizeRule, given_size


def restart_period(solver, problem):
    """One restart per pass of the recursions: ceil(n / batch size), n the
    larger level's sample count; 1 for full batches."""
    size = None if solver.single_sample(problem) else solver.batch_size
    larger = max(problem.n_upper, problem.n_lower)
    return 1 if size is None else math.ceil(larger / size)


class Solver(SobaFamilySolver):
    """SRBA: SOBA's joint updates with SARAH directions and restarts.

    Dagréou, Moreau, Vaiter, Ablin, "A Lower Bound and a Near-Optimal
    Algorithm for Bilevel Empirical Risk Minimization", AISTATS 2024,
    Algorithm 1 (benchmark_bilevel's "SRBA"). The directions D_y, D_v, D_x
    of :func:`soba_directions` are SARAH recursions
    (:class:`~benchmark_utils.solvers.estimators.Spider`). Iteration t:

    * t mod q = 0: D^t = D(x_t, y_t, v_t) on full passes (restart);
    * else, on fresh batches B_t, D_t evaluated at both points:
      D^t = D^{t-1} + D(x_t, y_t, v_t) - D(x_{t-1}, y_{t-1}, v_{t-1});
    * y_{t+1} = y_t - rho D_y^t, v_{t+1} = Pi_r(v_t - rho D_v^t),
      x_{t+1} = x_t - gamma D_x^t.

    ``inner_step`` = rho, ``outer_step`` = gamma, ``period`` = q,
    ``v_radius`` = r (``outer_ratio``: gamma = rho / outer_ratio).
    Departures: ``v_radius`` None skips the projection of v (the paper's r
    needs a bound no problem declares); mini-batches with replacement
    instead of single samples; v_0 = 0; the reported y is y_{t+1}.

    Why the defaults: the outer step and the batch size were tuned on the
    quick quadratic; the period restarts the recursions once per pass
    (SARAH's n / b). See docs/solvers.md.
    """

    name = "SRBA"
    parameters = {
        "outer_ratio": [None],
        "v_radius": [None],
    }
    batch_size_may_be_none = True       # None: full passes

    step_rules = soba_step_rules(*tuned_on_quadratic(0.2))
    size_rules = (given_size("batch_size", 16), SizeRule(
        "period",
        "ceil(max(n_upper, n_lower) / batch_size), 1 for full batches",
        lambda solver, problem, sizes: restart_period(solver, problem)))

    def check_parameters(self):
        super().check_parameters()
        if self.period is not None:
            check_int("period", self.period, 1)
        self.check_positive_if_given("v_radius")

    def iterations(self):
        P = self.problem
        S = self.batch(self.sizes.batch_size)
        rho, gamma = self.steps.inner_step, self.steps.outer_step
        radius = self.v_radius
        d_y, d_v, d_x = Spider(), Spider(), Spider()
        x, y, v = self.x, self.y, self.start_v()
        previous = None                     # (x_{t-1}, y_{t-1}, v_{t-1})
        q, t = self.sizes.period, 0
        while True:
            if t % q == 0:                                      # restart
                directions = soba_directions(P, x, y, v, P.full_lower(),
                                             P.full_upper())
                for d, new in zip((d_y, d_v, d_x), directions, strict=True):
                    d.refresh(new)
            else:                                               # SARAH
                lower, upper = P.batch_lower(S), P.batch_upper(S)
                new = soba_directions(P, x, y, v, lower, upper)
                old = soba_directions(P, *previous, lower, upper)
                for d, n_, o_ in zip((d_y, d_v, d_x), new, old, strict=True):
                    d.update(n_, o_)
            previous = (x, y, v)
            y_next = y - rho * d_y.value
            v = project_to_ball(v - rho * d_v.value, radius)
            x = self.to_X(x - gamma * d_x.value)
            y = y_next
            self.x, self.y = x, y
            t += 1
            yield
