from benchmark_utils.checks.parameters import (check_batch_size, check_int,
                                              check_positive)
from benchmark_utils.solvers.general import GeneralBilevelSolver
from benchmark_utils.solvers.hypergradients import neumann_series
from benchmark_utils.solvers.schedules import (neumann_step,
                                               strongly_convex_step)


# the sample sets of Ji et al.'s Algorithm 2 besides the inner S_t
BATCH_SIZES = ("outer_batch_size", "cross_batch_size", "hessian_batch_size")


class Solver(GeneralBilevelSolver):
    """stocBiO: stochastic bilevel optimizer with a Neumann hypergradient.

    Ji, Yang, Liang, "Bilevel Optimization: Convergence Analysis and Enhanced
    Design", ICML 2021 (arXiv 2010.07962), Algorithm 2, with its Neumann
    subroutine (Algorithm 3, "v_Q"); the second-order baseline ("SOBO") of
    Kwon et al. 2023, §5, which ran it with a Neumann series of degree
    Q = 5 and batch sizes 50 and 500. This follows the paper's public
    description (no code was copied), with the paper's names: D inner
    steps, inner step alpha, outer step beta, Neumann step eta, Q Hessian
    samples.

    Outer iteration k:

    * inner loop, warm-started at the previous outer iteration's last y
      (y_k^0 = y_{k-1}^D): for t = 1..D, a fresh lower batch S_{t-1} and
      y_k^t = y_k^{t-1} - alpha grad_y g(x_k, y_k^{t-1}; S_{t-1});
    * the hypergradient estimate at y = y_k^D, with fresh batches D_F
      (upper), D_H = {B_1..B_Q} (lower, one per Hessian factor) and D_G
      (lower):
      v_0 = grad_y f(x_k, y; D_F),
      v_Q = eta sum_{q=-1}^{Q-1} prod_{j=Q-q}^{Q} (I - eta H_j) v_0 with
      H_j = grad^2_yy g(x_k, y; B_j)
      (:func:`benchmark_utils.solvers.hypergradients.neumann_series` with Q + 1
      terms and a closure drawing B_j per call: Q Hessian-vector products),
      grad Phi = grad_x f(x_k, y; D_F) - grad^2_xy g(x_k, y; D_G) v_Q;
    * x_{k+1} = x_k - beta grad Phi.

    Per outer iteration: D + Q + 1 lower batches and one upper batch.

    Defaults (``benchmark_utils.solvers.schedules``): ``alpha`` None is
    2/(L_g + mu_g) and ``eta`` None is 1/L_g
    (the analysis' alpha = 2/(L + mu) and eta <= 1/L, from the problem's
    declared ``L_g`` / ``mu_g``; a problem without them is skipped unless
    both are given). ``Q`` = 20: the truncation leaves the bias
    (I - eta H)^(Q+1) H^-1 grad_y f, about 0.1 of it when Q ~ 2 kappa_g
    (kappa_g ~ 10 on the quick quadratic; Kwon et al. 2023's Q = 5 leaves
    half of it there). ``beta`` (the analysis'
    1/(4 L_Phi) needs constants no problem provides), ``D`` and the batch
    sizes are tuned on the quick quadratic instance.

    Choices where the paper is silent or that depart from it:

    * batch sizes, as Ji et al. have them, one per sample set:
      ``batch_size`` is that of each S_t (inner loop), ``outer_batch_size``
      that of D_F, ``cross_batch_size`` that of D_G and
      ``hessian_batch_size`` that of each B_j in D_H. ``None`` for
      ``outer_batch_size`` reuses ``batch_size``, and ``None`` for the
      other two reuses ``outer_batch_size``: one batch size per run, as
      Kwon et al. 2023's experiment did; ``batch_size`` None uses full
      passes everywhere (deterministic AID with a Neumann inverse); on a
      problem with one sample per level (the coreset toy) every batch is
      that sample: full passes;
    * the reported y is the inner loop's last iterate y_k^D;
    * a constrained X (the paper's X = R^d): x_{k+1} is projected onto X
      (projected stocBiO, an extension without guarantee); unconstrained
      problems call no projection.

    Outer step: ``beta`` None (the default) is 0.1 times the
    problem's declared ``outer_step_scale`` (1 on the quadratic, where
    0.1 was tuned; see ``GeneralBilevelSolver.outer_steps``); a
    given ``beta`` is used as is.
    """

    name = "stocBiO"
    parameters = {
        "D": [10],
        "Q": [20],
        "alpha": [None],
        "beta": [None],
        "eta": [None],
        "batch_size": [16],
        "outer_batch_size": [None],
        "cross_batch_size": [None],
        "hessian_batch_size": [None],
    }
    batch_size_may_be_none = True       # None: full passes everywhere
    batch_size_levels = ("lower",)      # the inner loop's S_t only

    defaults_from_problem = ("alpha", "eta")
    outer_steps = {"beta": 0.1}

    def check_parameters(self):
        super().check_parameters()
        check_int("D", self.D, 1)
        check_int("Q", self.Q, 0)
        for name in BATCH_SIZES:       # their upper bounds: in check_with_problem
            if getattr(self, name) is not None:
                check_int(name, getattr(self, name), 1)

    def check_with_problem(self, problem):
        self.alpha_ = self.alpha
        self.eta_ = self.eta
        if self.alpha is None:
            self.alpha_ = check_positive("alpha", strongly_convex_step(
                problem.mu_g, problem.L_g))
        if self.eta is None:
            self.eta_ = check_positive("eta", neumann_step(problem.L_g))
        # None: one batch size per run (outer -> batch_size, the others
        # -> outer_batch_size)
        self.outer_batch_size_ = self.outer_batch_size or self.batch_size
        self.cross_batch_size_ = (self.cross_batch_size
                                  or self.outer_batch_size_)
        self.hessian_batch_size_ = (self.hessian_batch_size
                                    or self.outer_batch_size_)
        if self.single_sample(problem):
            return
        bounds = {"outer_batch_size": problem.n_upper,
                  "cross_batch_size": problem.n_lower,
                  "hessian_batch_size": problem.n_lower}
        for name, bound in bounds.items():
            size = getattr(self, name + "_")
            if size is not None:
                check_batch_size(name, size, bound)

    def iterations(self):
        P = self.problem
        S, B = self.batch(self.batch_size), self.batch(self.outer_batch_size_)
        G = self.batch(self.cross_batch_size_)
        B_H = self.batch(self.hessian_batch_size_)
        alpha, beta, eta = self.alpha_, self.beta_, self.eta_
        x, y = self.x, self.y
        while True:
            for _ in range(self.D):
                y = y - alpha * P.grad_g_y(x, y, batch=P.batch_lower(S))
            grad_x_f, grad_y_f = P.grad_f(x, y, batch=P.batch_upper(B))

            def hessian_factor(v, x=x, y=y):
                # a fresh B_j per factor (the paper's D_H)
                return P.hvp_yy_g(x, y, v, batch=P.batch_lower(B_H))

            v_Q = neumann_series(hessian_factor, grad_y_f, eta=eta,
                                 n_terms=self.Q + 1)
            hypergrad = grad_x_f - P.hvp_xy_g(x, y, v_Q,
                                              batch=P.batch_lower(G))
            x = self.to_X(x - beta * hypergrad)
            self.x, self.y = x, y
            yield
