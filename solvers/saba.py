from benchmark_utils.solvers.inner_loops import batch_smoothness_ratio
from benchmark_utils.solvers.soba_family import SobaFamilySolver
from benchmark_utils.solvers.saga_memory import (SagaMemory, per_sample,
                                                 per_sample_failure)

# the per-sample oracles SABA stores, with the level they belong to
LOWER_ORACLES = ("grad_g_y", "hvp_yy_g", "hvp_xy_g")
UPPER_ORACLES = ("grad_f",)


class Solver(SobaFamilySolver):
    """SABA: SOBA with SAGA variance reduction of every direction.

    Dagréou, Ablin, Vaiter, Moreau, "A framework for bilevel optimization
    that enables stochastic and global variance reduction algorithms",
    NeurIPS 2022 (arXiv 2201.13409), Algorithm 2 (SABA), the method
    benchmark_bilevel runs as "SABA". Reconstructed from the paper's public
    description (no code was copied), with its names: rho the step of y and
    v, gamma the step of x.

    SABA runs SOBA's joint updates (Algorithm 1; see ``solvers/soba.py``
    and :mod:`benchmark_utils.solvers.soba_family`) with each
    per-sample term of the directions replaced by its SAGA estimate
    (:class:`~benchmark_utils.solvers.saga_memory.SagaMemory`): five
    tables, one row per sample, of the last values

    * lower samples j: grad_y g_j, grad^2_yy g_j v, grad^2_xy g_j v;
    * upper samples i: grad_y f_i, grad_x f_i;

    each taken at the point (x, y, v) where the sample was last drawn.

    * t = 0: a full pass over both levels fills the tables at
      (x_0, y_0, v_0); the directions are the tables' means (what the SAGA
      estimate gives on any batch right after the fill), so no batch is
      drawn at t = 0;
    * t >= 1, on a fresh lower batch B_t and upper batch D_t of
      ``batch_size`` samples (with replacement): for each stored term h,
      S[h] = 1/|B| sum_{j in B} (h_j(x_t, y_t, v_t) - alpha_j) + mean_j
      alpha_j, then alpha_j <- h_j(x_t, y_t, v_t) for j in the batch;
      D_y = S[grad_y g], D_v = S[grad^2_yy g v] + S[grad_y f],
      D_x = S[grad_x f] + S[grad^2_xy g v];
    * y_{t+1} = y_t - rho D_y, v_{t+1} = v_t - rho D_v,
      x_{t+1} = x_t - gamma D_x (constant steps, the paper's theorem for
      SABA).

    Per iteration (t >= 1): one lower and one upper batch; 2 gradient calls
    (grad_y g, grad_f) and 2 Hessian-vector products (yy, xy) on
    ``batch_size`` samples, as SOBA; at t = 0 the same calls on full
    passes (n_lower and n_upper samples). Per-sample values: the problem's
    ``<oracle>_rows`` oracles where it declares them, otherwise the counted
    batch-mean oracle plus the rows by ``torch.func.vmap`` on single-index
    batches (:func:`~benchmark_utils.solvers.saga_memory.per_sample`; same
    counts, more time). A problem on which neither works is skipped.
    Memory: n_lower (2 dim_y + dim_x) + n_upper (dim_x + dim_y) numbers.

    Defaults: ``rho`` None is 1/L_g (from the problem's declared L_g; a
    problem without it is skipped unless rho is given); ``gamma`` and
    ``batch_size`` are tuned on the quick quadratic (gamma up to 3 converges
    faster there; see "Outer step" for other problems).
    ``outer_ratio`` (None) gives benchmark_bilevel's parametrization
    instead: gamma = rho / outer_ratio (its ``step_size`` is rho).

    Choices where the paper is silent or that depart from it:

    * v_0 = 0; the tables are filled at the start point by a full pass,
      counted (benchmark_bilevel fills them the same way);
    * mini-batches of ``batch_size`` samples per level instead of one
      sample, drawn with replacement (a sample drawn twice in a batch
      counts twice in the estimate, its row is written once);
    * the table means are updated incrementally (exact up to rounding);
    * ``batch_size`` None uses full passes (the estimates are then the
      exact full-batch directions: deterministic SOBA); on a problem with
      one sample per level every batch is that sample;
    * the reported y is y_{t+1};
    * a constrained X (the paper's X = R^d): x_{t+1} is projected onto X
      (an extension without guarantee); unconstrained problems call no
      projection.

    Outer step: ``gamma`` None (the default) is 0.1 times the problem's
    declared ``outer_step_scale`` (1 on the quadratic, where 0.1 was tuned;
    see ``GeneralBilevelSolver.outer_steps``), divided by
    :func:`~benchmark_utils.solvers.inner_loops.batch_smoothness_ratio` of
    ``batch_size``: SAGA's stable step is of order 1/L(b), the expected
    smoothness of a b-sample batch (Gazagnadou, Gower, Salmon 2019), not
    the full sum's; the ratio is about 1 on the quadratic, whose samples
    are alike, and 4.7 on the default matrix completion (one row per
    sample, L_g = 128 against L_g_full = 2.15), where gamma = 0.1 sends the
    upper iterate away from the solution (the Frank-Wolfe gap rose from
    1.1e5 to 1.5e6 in 400 iterations) and 0.1 / 4.7 completes the matrix.
    A given ``gamma`` is used as is.
    """

    name = "SABA"
    parameters = {
        "rho": [None],
        "gamma": [None],
        "outer_ratio": [None],
        "batch_size": [16],
    }
    batch_size_may_be_none = True       # None: full passes

    outer_steps = {"gamma": 0.1}

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
        if self.gamma is None and self.outer_ratio is None:
            self.gamma_ /= batch_smoothness_ratio(
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
        rho, gamma = self.rho_, self.gamma_
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

