from benchmark_utils.checks.parameters import check_int, check_positive
from benchmark_utils.solvers.estimators import Storm
from benchmark_utils.solvers.general import GeneralBilevelSolver
from benchmark_utils.solvers.sampled_hypergradients import (
    draw_samples, neumann_hypergradient)
from benchmark_utils.solvers.schedules import (adaptive_bilevel_min_offset,
                                               checked_offset,
                                               double_momentum_schedule,
                                               neumann_step)


class Solver(GeneralBilevelSolver):
    """MRBO: momentum-based recursive bilevel optimizer.

    Yang, Ji, Liang, "Provably Faster Algorithms for Bilevel Optimization",
    NeurIPS 2021 (arXiv 2106.04692), Algorithm 1, with the hyperparameters
    of its Theorem 1; a baseline of Huang et al. 2021 (BiAdam). This
    follows the paper's public description (no code was copied), with its
    names: lam and gamma the x and y steps (lambda, gamma), d, m, c1, c2 the
    schedule's constants, Q the Hessian samples and eta the Neumann step of
    the hypergradient estimator (the paper's eta < 1/L, distinct from the
    step eta_k).

    Iteration k = 0, 1, ...:

    * samples B_x = {D_F (upper), D_G, B_1..B_Q (lower)} and B_y (lower),
      each of ``batch_size`` samples, drawn fresh
      (:func:`benchmark_utils.solvers.sampled_hypergradients.draw_samples`
      with K = Q + 1);
    * the hypergradient estimate (the paper's eq. for hatgrad Phi, stocBiO's
      estimator): hatgrad Phi(x, y; B_x) = grad_x f(x, y; D_F) -
      grad^2_xy g(x, y; D_G) eta sum_{q=-1}^{Q-1} prod_{j=Q-q}^{Q}
      (I - eta grad^2_yy g(x, y; B_j)) grad_y f(x, y; D_F)
      (:func:`~benchmark_utils.solvers.sampled_hypergradients.neumann_hypergradient`;
      Huang et al. 2021's estimator (3));
    * k = 0: v_0 = grad_y g(x_0, y_0; B_y), u_0 = hatgrad Phi(x_0, y_0;
      B_x);
    * k > 0 (STORM, the same batches at both points):
      v_k = grad_y g(x_k, y_k; B_y)
      + (1 - beta_k) (v_{k-1} - grad_y g(x_{k-1}, y_{k-1}; B_y)),
      u_k = hatgrad Phi(x_k, y_k; B_x)
      + (1 - alpha_k) (u_{k-1} - hatgrad Phi(x_{k-1}, y_{k-1}; B_x));
    * x_{k+1} = x_k - lam eta_k u_k, y_{k+1} = y_k - gamma eta_k v_k;
    * eta_k = d/(m + k)^{1/3}, alpha_{k+1} = c1 eta_k^2, beta_{k+1} =
      c2 eta_k^2
      (:func:`benchmark_utils.solvers.schedules.double_momentum_schedule`),
      m >= max{2, d^3, (c1 d)^3, (c2 d)^3} (Theorem 1's condition, which
      keeps eta_k, alpha_k, beta_k <= 1).

    Per iteration: one upper and Q + 2 lower mini-batches, drawn and
    charged once; at k > 0 they are evaluated at two points: 4 gradient
    calls (grad_f, both partials of f on D_F, and grad_y g on B_y, at each
    point) and 2 (Q + 1) Hessian-vector products (Q on the B_j, one cross
    product on D_G, at each point); k = 0 half of that.

    Choices where the paper is silent or that depart from it:

    * one ``batch_size`` for every batch (the paper's analysis takes
      O(1) sizes; its experiments use one size);
    * defaults: Theorem 1's constants (c1, c2, lam, gamma from L, mu and
      the Lipschitz constants of the hypergradient) need constants no
      problem provides; d = 1, c1 = c2 = 0.3 (m None: the smallest m
      Theorem 1 allows, here 2), lam = 0.3, gamma = 0.2, Q = 20 (as
      stocBiO) and batch 16 are tuned on the quick quadratic; eta None is
      1/L_g from the problem's declared L_g (a problem without it is
      skipped unless eta is given);
    * the reported iterate is the last (x_k, y_k), not the paper's
      uniformly drawn one;
    * a constrained X (the paper's X = R^d): x_{k+1} is projected onto X
      (an extension without guarantee); ``batch_size`` None uses full
      passes for every batch; on a problem with one sample per level
      every batch is that sample.

    Outer step: ``lam`` None (the default) is 0.3 times the
    problem's declared ``outer_step_scale`` (1 on the quadratic, where
    0.3 was tuned; see ``GeneralBilevelSolver.outer_steps``); a
    given ``lam`` is used as is.
    """

    name = "MRBO"
    parameters = {
        "Q": [20],
        "eta": [None],
        "lam": [None],
        "gamma": [0.2],
        "d": [1.0],
        "m": [None],
        "c1": [0.3],
        "c2": [0.3],
        "batch_size": [16],
    }
    batch_size_may_be_none = True       # None: full passes

    defaults_from_problem = ("eta",)
    outer_steps = {"lam": 0.3}
    problem_constants = ("L_g",)

    def check_parameters(self):
        super().check_parameters()
        check_int("Q", self.Q, 0)
        for name in ("gamma", "d", "c1", "c2"):
            check_positive(name, getattr(self, name))
        smallest = adaptive_bilevel_min_offset(self.d, self.c1, self.c2,
                                               variance_reduced=True)
        self.m_ = checked_offset(
            self.m, smallest, "Theorem 1's max{2, d^3, (c1 d)^3, (c2 d)^3} "
            "with these d, c1 and c2")

    def check_with_problem(self, problem):
        self.eta_ = neumann_step(problem.L_g) if self.eta is None else self.eta

    def schedule(self, k):
        """(eta_k, alpha_{k+1}, beta_{k+1}) of Theorem 1."""
        return double_momentum_schedule(k, scale=self.d, offset=self.m_,
                                        c_upper=self.c1, c_lower=self.c2)

    def estimates(self, x, y, samples):
        """(hatgrad Phi, grad_y g) at (x, y) on the stored ``samples``."""
        P = self.problem
        _, hypergrad = neumann_hypergradient(P, x, y, samples,
                                             eta=self.eta_, Q=self.Q)
        return hypergrad, P.grad_g_y(x, y, batch=samples.lower)

    def iterations(self):
        P, size = self.problem, self.batch(self.batch_size)
        u, v = Storm(), Storm()
        x, y, old_point = self.x, self.y, None
        k = 0
        while True:
            samples = draw_samples(P, self.Q + 1, size)
            new_u, new_v = self.estimates(x, y, samples)
            if old_point is None:
                old_u = old_v = alpha = beta = None
            else:
                old_u, old_v = self.estimates(*old_point, samples)
                _, alpha, beta = self.schedule(k - 1)
            u.step(new_u, old_u, alpha)
            v.step(new_v, old_v, beta)
            eta_k = self.schedule(k)[0]
            old_point = (x, y)
            x = self.to_X(x - self.lam_ * eta_k * u.value)
            y = y - self.gamma * eta_k * v.value
            self.x, self.y = x, y
            yield
            k += 1
