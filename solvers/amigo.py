from benchmark_utils.checks.parameters import check_int
from benchmark_utils.solvers.general import GeneralBilevelSolver
from benchmark_utils.solvers.implicit_differentiation import fixed_point_solve
from benchmark_utils.solvers.inner_loops import inner_gradient_steps
from benchmark_utils.solvers.schedules import neumann_step


class Solver(GeneralBilevelSolver):
    """AmIGO: amortized implicit gradient optimization.

    Arbel & Mairal, "Amortized Implicit Differentiation for Stochastic
    Bilevel Optimization", ICLR 2022 (arXiv 2111.14580), Algorithm 1 with
    its inner solvers Algorithm 2 (SGD on y) and Algorithm 3 (SGD on the
    linear system), the stochastic variant; benchmark_bilevel's "AmIGO".
    This follows the paper's public description (no code was copied), with
    its names: T inner steps of step alpha, N linear-system steps of step
    beta, outer step gamma.

    Outer iteration k (the amortization is the two warm starts):

    * Algorithm 2, y_k = A_k(x_k, y_{k-1}): T steps
      y^t = y^{t-1} - alpha grad_y g(x_k, y^{t-1}; S_t) from y^0 = y_{k-1}
      (:func:`~benchmark_utils.solvers.inner_loops.inner_gradient_steps`);
    * a fresh upper batch D_f: u_k = grad_y f(x_k, y_k; D_f) and
      grad_x f(x_k, y_k; D_f) from the same batch;
    * Algorithm 3, z_k = B_k(x_k, y_k, u_k, z_{k-1}): N steps
      z^t = z^{t-1} - beta (grad^2_yy g(x_k, y_k; B_t) z^{t-1} + u_k) from
      z^0 = z_{k-1}, a fresh lower batch B_t per step: SGD on the quadratic
      1/2 z^T H z + u_k^T z, whose minimizer is -H^{-1} u_k. We carry
      v = -z, for which the step reads v <- v - beta (H_t v - u_k):
      :func:`~benchmark_utils.solvers.implicit_differentiation.fixed_point_solve`
      with v0 = v_{k-1} and a Hessian closure that draws B_t per call;
    * psi_k = grad_x f(x_k, y_k; D_f) + grad^2_xy g(x_k, y_k; D_xy) z_k
      = grad_x f - grad^2_xy g v_k, with a fresh lower batch D_xy;
    * x_{k+1} = x_k - gamma psi_k.

    Per outer iteration: T + N + 1 lower batches (T of ``batch_size`` for
    y, N of ``batch_size`` for z, one of ``outer_batch_size`` for the cross
    product) and one upper batch of ``outer_batch_size``; T + 1 gradient
    calls; N Hessian-vector products and one cross product (N - 1 at the
    first iteration, whose solve starts from z = 0 and whose first step
    needs no product).

    Defaults: ``alpha`` None and ``beta`` None are 1/L_g (the analysis'
    steps are at most 1/L_g for both SGD loops; L_g bounds every batch's
    Hessian, and with full passes (``batch_size`` None) the full sum's
    ``L_g_full`` is used where the problem declares it); problems without
    L_g are skipped unless both are given. T = N = 10 as in
    benchmark_bilevel's runs; the paper's theory only needs T and N
    constant (independent of k), which is the point of the warm starts.
    ``gamma`` (the analysis' gamma_k needs constants no problem declares)
    and ``batch_size`` are tuned on the quick quadratic: constant steps, as
    in the paper's stochastic analysis.

    Choices where the paper is silent or that we make:

    * batch sizes: ``batch_size`` for the lower batches of both SGD loops
      (S_t and B_t), ``outer_batch_size`` for D_f and D_xy (None:
      ``batch_size``); ``batch_size`` None uses full passes everywhere (the
      deterministic AmIGO); on a problem with one sample per level every
      batch is that sample (full passes);
    * z_{-1} = 0 (v starts at zero): the first solve is then the truncated
      Neumann series of
      :func:`~benchmark_utils.solvers.hypergradients.neumann_series`, the
      same iterate as SGD from zero (identical with full passes, equal in
      distribution with fresh batches, one product fewer);
    * the reported y is y_k, the point the hypergradient was estimated at;
    * a constrained X (the paper's X = R^d): x_{k+1} is projected onto X
      (an extension without guarantee); unconstrained problems call no
      projection.

    Outer step: ``gamma`` None (the default) is 0.1 times the
    problem's declared ``outer_step_scale`` (1 on the quadratic, where
    0.1 was tuned; see ``GeneralBilevelSolver.outer_steps``); a
    given ``gamma`` is used as is.
    """

    name = "AmIGO"
    parameters = {
        "T": [10],
        "N": [10],
        "alpha": [None],
        "beta": [None],
        "gamma": [None],
        "batch_size": [16],
        "outer_batch_size": [None],
    }
    batch_size_may_be_none = True       # None: full passes everywhere
    batch_size_levels = ("lower",)      # S_t and B_t

    defaults_from_problem = ("alpha", "beta")
    problem_constants = ("L_g",)
    outer_steps = {"gamma": 0.1}

    def check_parameters(self):
        super().check_parameters()
        check_int("T", self.T, 1)
        check_int("N", self.N, 1)

    def check_with_problem(self, problem):
        if self.alpha is None or self.beta is None:
            L_g = self.lower_smoothness(problem)
        self.alpha_ = neumann_step(L_g) if self.alpha is None else self.alpha
        self.beta_ = neumann_step(L_g) if self.beta is None else self.beta
        self.resolve_outer_batch_size(problem)

    def iterations(self):
        P = self.problem
        S, B = self.batch(self.batch_size), self.batch(self.outer_batch_size_)
        alpha, beta, gamma = self.alpha_, self.beta_, self.gamma_
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
            self.x, self.y, self.v = x, y, v
            yield
