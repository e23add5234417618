from benchmark_utils.checks.parameters import check_int
from benchmark_utils.solvers.general import GeneralBilevelSolver
from benchmark_utils.solvers.implicit_differentiation import fixed_point_solve
from benchmark_utils.solvers.inner_loops import inner_gradient_steps
from benchmark_utils.solvers.schedules import neumann_step


class Solver(GeneralBilevelSolver):
    """AmIGO: amortized implicit gradient optimization.

    Arbel & Mairal, "Amortized Implicit Differentiation for Stochastic
    Bilevel Optimization", ICLR 2022, Algorithm 1 with its inner solvers
    Algorithm 2 (SGD on y) and 3 (SGD on the linear system), the stochastic
    variant (benchmark_bilevel's "AmIGO"). Outer iteration k:

    * Alg. 2: T steps y <- y - alpha grad_y g(x_k, y; S_t) from y_{k-1}
      (:func:`~benchmark_utils.solvers.inner_loops.inner_gradient_steps`);
    * u_k = grad_y f(x_k, y_k; D_f), with grad_x f from the same batch;
    * Alg. 3: N steps z <- z - beta (grad^2_yy g(B_t) z + u_k) from
      z_{k-1}, a fresh B_t each; carried as v = -z (:func:`fixed_point_solve`);
    * x_{k+1} = x_k - gamma (grad_x f + grad^2_xy g(x_k, y_k; D_xy) z_k).

    ``inner_step`` = alpha, ``linear_system_step`` = beta, ``outer_step`` =
    gamma; ``T``, ``N`` the paper's. Batches: ``batch_size`` for S_t and
    B_t, ``outer_batch_size`` (None: ``batch_size``) for D_f and D_xy.
    Departures: z_{-1} = 0 (the first solve is then a truncated Neumann
    series, one product fewer); the reported y is y_k.

    Defaults: ``inner_step`` = ``linear_system_step`` = 1/L_g (the
    analysis' bound for both SGD loops); T = N = 10 (benchmark_bilevel's);
    ``outer_step`` 0.1 x ``outer_step_scale`` and ``batch_size`` 16, tuned
    on the quick quadratic. See GeneralBilevelSolver and docs/solvers.md.
    """

    name = "AmIGO"
    parameters = {
        "T": [10],
        "N": [10],
        "inner_step": [None],
        "linear_system_step": [None],
        "outer_step": [None],
        "batch_size": [16],
        "outer_batch_size": [None],
    }
    batch_size_may_be_none = True       # None: full passes everywhere
    batch_size_levels = ("lower",)      # S_t and B_t

    defaults_from_problem = ("inner_step", "linear_system_step")
    problem_constants = ("L_g",)
    tuned_outer_step = 0.1

    def check_parameters(self):
        super().check_parameters()
        check_int("T", self.T, 1)
        check_int("N", self.N, 1)

    def check_with_problem(self, problem):
        def one_over_L_g():
            return neumann_step(self.lower_smoothness(problem))

        self.default_from_problem("inner_step", one_over_L_g)
        self.default_from_problem("linear_system_step", one_over_L_g)
        self.resolve_outer_batch_size(problem)

    def iterations(self):
        P = self.problem
        S, B = self.batch(self.batch_size), self.batch(self.outer_batch_size_)
        alpha, beta = self.inner_step_, self.linear_system_step_
        gamma = self.outer_step_
        x, y, v = self.x, self.y, None
        while True:
            y = inner_gradient_steps(P, x, y, step=alpha, n_steps=self.T,
                                     batch_size=S)            # Algorithm 2
            grad_x_f, grad_y_f = P.grad_f(x, y, batch=P.batch_upper(B))

            def hessian(u, x=x, y=y):
                # a fresh B_t per step of Algorithm 3
                return P.hvp_yy_g(x, y, u, batch=P.batch_lower(S))

            v = fixed_point_solve(hessian, grad_y_f, eta=beta,
                                  n_steps=self.N, v0=v)       # Algorithm 3
            hypergrad = grad_x_f - P.hvp_xy_g(x, y, v,
                                              batch=P.batch_lower(B))
            x = self.to_X(x - gamma * hypergrad)
            self.x, self.y = x, y
            yield
