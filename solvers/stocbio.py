from benchmark_utils.checks.parameters import check_batch_size, check_int
from benchmark_utils.solvers.general import (
    OUTER_BATCH_SIZE,
    GeneralBilevelSolver,
    tuned_outer_step,
)
from benchmark_utils.solvers.hypergradients import neumann_series
from benchmark_utils.solvers.schedules import (
    neumann_rule,
    strongly_convex_inner_step,
)
from benchmark_utils.solvers.steps import SizeRule, given_size

# the sample sets of Ji et al.'s Algorithm 2 besides the inner S_t
BATCH_SIZES = ("outer_batch_size", "cross_batch_size", "hessian_batch_size")


class Solver(GeneralBilevelSolver):
    """stocBiO: stochastic bilevel optimizer with a Neumann hypergradient.

    Ji, Yang, Liang, "Bilevel Optimization: Convergence Analysis and Enhanced
    Design", ICML 2021, Algorithm 2 with its Neumann subroutine (Algorithm
    3); Kwon et al. 2023's second-order baseline "SOBO" (Q = 5, i.e.
    ``neumann_terms`` = 6). Outer iteration k:

    * D steps y <- y - alpha grad_y g(x_k, y; S_t) from y_{k-1}^D;
    * v_0 = grad_y f(x_k, y; D_F), v_Q = eta sum_{q=-1}^{Q-1}
      prod_{j=Q-q}^{Q} (I - eta H_j) v_0, H_j on a fresh lower batch B_j
      (:func:`~benchmark_utils.solvers.hypergradients.neumann_series`);
    * x_{k+1} = x_k - beta (grad_x f(x_k, y; D_F)
      - grad^2_xy g(x_k, y; D_G) v_Q).

    ``inner_step`` = alpha, ``outer_step`` = beta, ``linear_system_step`` =
    eta; ``D`` the paper's; ``neumann_terms`` = Q + 1, the series' terms
    (Q Hessian samples). Batch sizes per sample set: ``batch_size`` (S_t),
    ``outer_batch_size`` (D_F; None: batch_size), ``cross_batch_size``
    (D_G) and ``hessian_batch_size`` (B_j) (None: outer_batch_size). The
    reported y is y_k^D.

    Why the defaults: alpha and eta are the analysis' steps; beta, D and
    the batch size were tuned on the quick quadratic; the series' length
    gives a bias of about 0.1 at kappa_g ~ 10 (docs/solvers.md).
    """

    name = "stocBiO"
    parameters = {}
    batch_size_may_be_none = True       # None: full passes everywhere
    batch_size_levels = ("lower",)      # the inner loop's S_t only

    step_rules = (strongly_convex_inner_step("alpha"),
                  tuned_outer_step(0.1, "beta"),
                  neumann_rule("linear_system_step", "eta"))
    # None: one batch size per run (outer -> batch_size, the others ->
    # outer_batch_size)
    size_rules = (
        given_size("D", 10), given_size("neumann_terms", 21),
        given_size("batch_size", 16),
        OUTER_BATCH_SIZE,
        SizeRule("cross_batch_size", "outer_batch_size",
                 lambda solver, problem, sizes: sizes["outer_batch_size"]),
        SizeRule("hessian_batch_size", "outer_batch_size",
                 lambda solver, problem, sizes: sizes["outer_batch_size"]))

    def check_parameters(self):
        super().check_parameters()
        check_int("D", self.D, 1)
        check_int("neumann_terms", self.neumann_terms, 1)
        # their upper bounds: in check_sizes
        for name in BATCH_SIZES:
            if getattr(self, name) is not None:
                check_int(name, getattr(self, name), 1)

    outer_batch_size_levels = ("upper",)     # D_F

    def check_sizes(self, sizes, problem):
        """The three upper-loop batch sizes, each bounded by the level it
        samples (``problem``: a problem or the run-list check's counts)."""
        super().check_sizes(sizes, problem)
        if self.single_sample(problem):
            return
        for name in ("cross_batch_size", "hessian_batch_size"):
            if sizes[name].value is not None:
                self.check_size(sizes, name, check_batch_size,
                                problem.n_lower)

    def iterations(self):
        P = self.problem
        S = self.batch(self.sizes.batch_size)
        B = self.batch(self.sizes.outer_batch_size)
        G = self.batch(self.sizes.cross_batch_size)
        B_H = self.batch(self.sizes.hessian_batch_size)
        alpha, beta = self.steps.inner_step, self.steps.outer_step
        eta = self.steps.linear_system_step
        x, y = self.x, self.y
        while True:
            for _ in range(self.sizes.D):
                y = y - alpha * P.grad_g_y(x, y, batch=P.batch_lower(S))
            grad_x_f, grad_y_f = P.grad_f(x, y, batch=P.batch_upper(B))

            def hessian_factor(v, x=x, y=y):
                # a fresh B_j per factor (the paper's D_H)
                return P.hvp_yy_g(x, y, v, batch=P.batch_lower(B_H))

            v_Q = neumann_series(hessian_factor, grad_y_f, eta=eta,
                                 n_terms=self.sizes.neumann_terms)
            hypergrad = grad_x_f - P.hvp_xy_g(x, y, v_Q,
                                              batch=P.batch_lower(G))
            x = self.to_X(x - beta * hypergrad)
            self.x, self.y = x, y
            yield
