from functools import partial

import torch

from benchmark_utils.checks.parameters import check_choice
from benchmark_utils.solvers.inner_loops import batch_smoothness_ratio
from benchmark_utils.solvers.saga_memory import (
    BlockSagaMemory,
    SagaMemory,
    per_block,
    per_sample,
    per_sample_failure,
)
from benchmark_utils.solvers.soba_family import (
    SobaFamilySolver,
    soba_step_rules,
)
from benchmark_utils.solvers.steps import given_size

# the per-sample oracles SABA stores, with the level they belong to
LOWER_ORACLES = ("grad_g_y", "hvp_yy_g", "hvp_xy_g")
UPPER_ORACLES = ("grad_f",)
INIT_MEMORY = ("full", "zero")


# the default x step in units of the problem's outer_step_scale (tuned on
# the quick quadratic), before the batch's smoothness ratio
OUTER_STEP = 0.1


class Solver(SobaFamilySolver):
    """SABA: SOBA with SAGA variance reduction of every direction.

    Dagréou, Ablin, Vaiter, Moreau, NeurIPS 2022, Algorithm 2: SOBA's
    joint updates with each per-sample term of D_y, D_v, D_x replaced by
    its SAGA estimate (:mod:`~benchmark_utils.solvers.saga_memory`), five
    tables of the values at the point each sample was last drawn:

    * t = 0 (``init_memory="full"``): a full pass of both levels fills the
      tables; the directions are their means (no batch drawn at t = 0);
      ``"zero"``: empty tables, the first directions from fresh batches
      (benchmark_bilevel's default ``mode_init_memory``);
    * on fresh batches B_t, D_t: S[h] = mean_{j in B}(h_j - a_j) + mean_j
      a_j, then a_j <- h_j; the directions from the estimates;
    * y_{t+1} = y_t - rho D_y, v_{t+1} = v_t - rho D_v,
      x_{t+1} = x_t - gamma D_x (constant steps, the paper's theorem).

    ``inner_step`` = rho, ``outer_step`` = gamma (``outer_ratio``: gamma =
    rho / outer_ratio, benchmark_bilevel's parametrization).

    Departures: mini-batches instead of one sample; v_0 = 0; the reported
    y is y_{t+1}; where batches are fixed blocks (benchmark_bilevel's
    sampling) the tables hold one mean per block (the same estimates).

    See docs/solvers.md.
    """

    name = "SABA"
    parameters = {
        "outer_ratio": [None],
        "init_memory": ["full"],
    }
    size_rules = (given_size("batch_size", 16),)
    batch_size_may_be_none = True       # None: full passes

    step_rules = soba_step_rules(
        lambda solver, problem: OUTER_STEP * problem.outer_step_scale
        / batch_smoothness_ratio(problem, solver.batch(solver.batch_size)),
        f"{OUTER_STEP:g} x the problem's outer_step_scale / the batch's "
        "smoothness ratio")
    # tables per block where batches are fixed blocks (exact, no
    # per-sample rows); False keeps per-sample tables (tests compare both)
    block_tables = True

    def check_parameters(self):
        super().check_parameters()
        check_choice("init_memory", self.init_memory, INIT_MEMORY)

    def skip_problem(self, problem):
        skip, reason = super().skip_problem(problem)
        if skip:
            return skip, reason
        if self.block_tables and self._blocks(
                problem, self.batch_size) is not None:
            return False, None          # block means: no per-sample rows
        x, y = problem.x0, problem.y0
        for name in LOWER_ORACLES + UPPER_ORACLES:
            args = (x, y, y) if name.startswith("hvp") else (x, y)
            failure = per_sample_failure(problem, name, *args)
            if failure is not None:
                return True, (f"SABA needs per-sample values of {name}: the "
                              f"problem declares no {name}_rows oracle and "
                              f"torch.func.vmap fails on it ({failure})")
        return False, None

    def _blocks(self, problem, batch_size):
        """The fixed blocks of each level's batches ((lower, upper)) of
        ``batch_size``, or None where batches are drawn indices or full
        passes."""
        size = None if self.single_sample(problem) else batch_size
        fixed = getattr(problem, "fixed_blocks", None)
        if size is None or fixed is None:
            return None
        blocks = fixed("lower", size), fixed("upper", size)
        return None if None in blocks else blocks

    # -- the quantities of each level, as (mean, rows) pairs ------------------
    def lower_values(self, x, y, v, batch, values):
        return [values(self.problem, "grad_g_y", x, y, batch=batch),
                values(self.problem, "hvp_yy_g", x, y, v, batch=batch),
                values(self.problem, "hvp_xy_g", x, y, v, batch=batch)]

    def upper_values(self, x, y, batch, values):
        (mean_x, mean_y), rows = values(self.problem, "grad_f", x, y,
                                        batch=batch)
        rows_x, rows_y = (None, None) if rows is None else rows
        return [(mean_y, rows_y), (mean_x, rows_x)]

    def memories(self, x, y, v):
        """The SAGA memories (lower, upper): per block where batches are
        fixed blocks (``block_tables``), else per sample; filled on a full
        pass of both levels or empty (``init_memory``)."""
        P = self.problem
        blocks = (self._blocks(P, self.sizes.batch_size) if self.block_tables
                  else None)
        if blocks is None:
            memory, sizes = SagaMemory, (P.n_lower, P.n_upper)
            oracle_values = (per_sample,) * 2
        else:
            memory = BlockSagaMemory
            sizes = len(blocks[0]), len(blocks[1])
            oracle_values = [partial(per_block, blocks=level)
                             for level in blocks]
        if self.init_memory == "full":
            lower = self.lower_values(x, y, v, P.full_lower(),
                                      oracle_values[0])
            upper = self.upper_values(x, y, P.full_upper(), oracle_values[1])
            lower, upper = [r for _, r in lower], [r for _, r in upper]
        else:
            def zeros(n, dims):
                return [torch.zeros(n, d, dtype=y.dtype, device=y.device)
                        for d in dims]
            lower = zeros(sizes[0], (P.dim_y, P.dim_y, P.dim_x))
            upper = zeros(sizes[1], (P.dim_y, P.dim_x))
        if blocks is None:
            return memory(lower), memory(upper)
        return memory(lower, blocks[0]), memory(upper, blocks[1])

    def estimates(self, lower, upper, x, y, v, size):
        """The SAGA estimates of the five terms on fresh batches of both
        levels (the memories are updated)."""
        P = self.problem
        batch = P.batch_lower(size)
        low = lower.step(batch, self.lower_values(x, y, v, batch,
                                                  lower.oracle_values))
        batch = P.batch_upper(size)
        up = upper.step(batch, self.upper_values(x, y, batch,
                                                 upper.oracle_values))
        return low, up

    def iterations(self):
        S = self.batch(self.sizes.batch_size)
        rho, gamma = self.steps.inner_step, self.steps.outer_step
        x, y, v = self.x, self.y, self.start_v()
        lower, upper = self.memories(x, y, v)
        if self.init_memory == "full":      # t = 0: the tables' means
            low, up = list(lower.means), list(upper.means)
        else:
            low, up = self.estimates(lower, upper, x, y, v, S)
        while True:
            (grad_y_g, hvp_yy, hvp_xy), (grad_y_f, grad_x_f) = low, up
            y_next = y - rho * grad_y_g
            v_next = v - rho * (hvp_yy + grad_y_f)
            x = self.to_X(x - gamma * (grad_x_f + hvp_xy))
            y, v = y_next, v_next
            self.x, self.y = x, y
            yield
            low, up = self.estimates(lower, upper, x, y, v, S)
