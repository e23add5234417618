from benchmark_utils.solvers.inner_loops import batch_smoothness_ratio
from benchmark_utils.solvers.saga_memory import (
    SagaMemory,
    per_sample,
    per_sample_failure,
)
from benchmark_utils.solvers.soba_family import SobaFamilySolver

# the per-sample oracles SABA stores, with the level they belong to
LOWER_ORACLES = ("grad_g_y", "hvp_yy_g", "hvp_xy_g")
UPPER_ORACLES = ("grad_f",)


class Solver(SobaFamilySolver):
    """SABA: SOBA with SAGA variance reduction of every direction.

    Dagréou, Ablin, Vaiter, Moreau, NeurIPS 2022 (the paper of SOBA),
    Algorithm 2 (benchmark_bilevel's "SABA"): SOBA's joint updates with each
    per-sample term of D_y, D_v, D_x replaced by its SAGA estimate
    (:class:`~benchmark_utils.solvers.saga_memory.SagaMemory`), five tables
    of per-sample values at the point each sample was last drawn:

    * t = 0: a full pass of both levels fills the tables; the directions
      are their means (no batch is drawn at t = 0);
    * t >= 1, on fresh batches B_t, D_t: S[h] = mean_{j in B}(h_j - a_j)
      + mean_j a_j, then a_j <- h_j; the directions from the estimates;
    * y_{t+1} = y_t - rho D_y, v_{t+1} = v_t - rho D_v,
      x_{t+1} = x_t - gamma D_x (constant steps, the paper's theorem).

    ``inner_step`` = rho, ``outer_step`` = gamma (``outer_ratio``: gamma =
    rho / outer_ratio, benchmark_bilevel's parametrization).

    Departures: mini-batches drawn with replacement instead of one sample;
    v_0 = 0; the table means updated incrementally; the reported y is y_{t+1}.

    Defaults: ``inner_step`` 1/L_g; ``outer_step`` 0.1 x
    ``outer_step_scale`` divided by the batch's smoothness ratio
    (SAGA's stable step is ~1/L(b)); ``batch_size`` 16. See docs/solvers.md.
    """

    name = "SABA"
    parameters = {
        "inner_step": [None],
        "outer_step": [None],
        "outer_ratio": [None],
        "batch_size": [16],
    }
    batch_size_may_be_none = True       # None: full passes

    tuned_outer_step = 0.1

    def skip_problem(self, problem):
        skip, reason = super().skip_problem(problem)
        if skip:
            return skip, reason
        x, y = problem.x0, problem.y0
        for name in LOWER_ORACLES + UPPER_ORACLES:
            args = (x, y, y) if name.startswith("hvp") else (x, y)
            failure = per_sample_failure(problem, name, *args)
            if failure is not None:
                return True, (f"SABA needs per-sample values of {name}: the "
                              f"problem declares no {name}_rows oracle and "
                              f"torch.func.vmap fails on it ({failure})")
        return False, None

    def check_with_problem(self, problem):
        super().check_with_problem(problem)
        if self.outer_step is None and self.outer_ratio is None:
            self.outer_step_ /= batch_smoothness_ratio(
                problem, self.batch(self.batch_size))

    def lower_values(self, x, y, v, batch):
        P = self.problem
        return [per_sample(P, "grad_g_y", x, y, batch=batch),
                per_sample(P, "hvp_yy_g", x, y, v, batch=batch),
                per_sample(P, "hvp_xy_g", x, y, v, batch=batch)]

    def upper_values(self, x, y, batch):
        (mean_x, mean_y), (rows_x, rows_y) = per_sample(
            self.problem, "grad_f", x, y, batch=batch)
        return [(mean_y, rows_y), (mean_x, rows_x)]

    def iterations(self):
        P = self.problem
        S = self.batch(self.batch_size)
        rho, gamma = self.inner_step_, self.outer_step_
        x, y, v = self.x, self.y, self.start_v()
        # t = 0: fill the tables on a full pass; the directions are their
        # means
        lower = SagaMemory([rows for _, rows in self.lower_values(
            x, y, v, P.full_lower())])
        upper = SagaMemory([rows for _, rows in self.upper_values(
            x, y, P.full_upper())])
        grad_y_g, hvp_yy, hvp_xy = lower.means
        grad_y_f, grad_x_f = upper.means
        while True:
            y_next = y - rho * grad_y_g
            v_next = v - rho * (hvp_yy + grad_y_f)
            x = self.to_X(x - gamma * (grad_x_f + hvp_xy))
            y, v = y_next, v_next
            self.x, self.y = x, y
            yield
            batch = P.batch_lower(S)
            grad_y_g, hvp_yy, hvp_xy = lower.step(
                batch, self.lower_values(x, y, v, batch))
            batch = P.batch_upper(S)
            grad_y_f, grad_x_f = upper.step(
                batch, self.upper_values(x, y, batch))

