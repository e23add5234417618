from benchmark_utils.checks.parameters import check_int, check_positive
from benchmark_utils.solvers.estimators import Storm
from benchmark_utils.solvers.general import GeneralBilevelSolver
from benchmark_utils.solvers.sampled_hypergradients import (
    draw_samples,
    neumann_hypergradient,
)
from benchmark_utils.solvers.schedules import (
    checked_offset,
    double_momentum_min_offset,
    double_momentum_schedule,
    neumann_step,
)


class Solver(GeneralBilevelSolver):
    """MRBO: momentum-based recursive bilevel optimizer.

    Yang, Ji, Liang, "Provably Faster Algorithms for Bilevel Optimization",
    NeurIPS 2021 (arXiv 2106.04692), Algorithm 1, Theorem 1's steps.
    Iteration k = 0, 1, ...:

    * fresh batches D_F, D_G, B_1..B_Q, B_y; hatgrad Phi = the Q + 1 term
      Neumann estimate (stocBiO's) with eta = ``linear_system_step``;
    * k > 0 (STORM, same batches at both points): u_k = hatgrad Phi(x_k,
      y_k) + (1 - alpha_k) (u_{k-1} - hatgrad Phi(x_{k-1}, y_{k-1})), v_k
      likewise with beta_k and grad_y g(B_y); k = 0: the plain estimates;
    * x_{k+1} = x_k - lambda eta_k u_k, y_{k+1} = y_k - gamma eta_k v_k
      (lambda = ``outer_step``, gamma = ``inner_step``);
    * Theorem 1: eta_k = d/(m + k)^{1/3} (d, m = ``step_scale``,
      ``step_offset``; m >= max{2, d^3, (c1 d)^3, (c2 d)^3}),
      alpha_{k+1} = c1 eta_k^2, beta_{k+1} = c2 eta_k^2.

    Departures: one ``batch_size`` for every batch; the last iterate is
    reported; x is projected on a constrained X.

    Defaults (Theorem 1's constants need bounds no problem declares):
    outer_step 0.3, inner_step 0.2, Q = 20, d = 1, c1 = c2 = 0.3, m the
    smallest allowed (2), eta = 1/L_g, batch 16; see GeneralBilevelSolver
    and docs/solvers.md.
    """

    name = "MRBO"
    parameters = {
        "Q": [20],
        "linear_system_step": [None],
        "outer_step": [None],
        "inner_step": [None],
        "step_scale": [1.0],
        "step_offset": [None],
        "c1": [0.3],
        "c2": [0.3],
        "batch_size": [16],
    }
    batch_size_may_be_none = True       # None: full passes

    defaults_from_problem = ("linear_system_step",)
    tuned_outer_step = 0.3
    problem_constants = ("L_g",)

    def check_parameters(self):
        super().check_parameters()
        check_int("Q", self.Q, 0)
        self.check_positive_if_given("inner_step")
        for name in ("step_scale", "c1", "c2"):
            check_positive(name, getattr(self, name))
        self.inner_step_ = 0.2 if self.inner_step is None else self.inner_step
        smallest = double_momentum_min_offset(self.step_scale, self.c1,
                                              self.c2)
        self.step_offset_ = checked_offset(
            "step_offset", self.step_offset, smallest,
            "Theorem 1's max{2, d^3, (c1 d)^3, (c2 d)^3} with these "
            "step_scale, c1 and c2")

    def check_with_problem(self, problem):
        self.default_from_problem("linear_system_step",
                                  lambda: neumann_step(problem.L_g))

    def schedule(self, k):
        """(eta_k, alpha_{k+1}, beta_{k+1}) of Theorem 1."""
        return double_momentum_schedule(
            k, scale=self.step_scale, offset=self.step_offset_,
            c_upper=self.c1, c_lower=self.c2)

    def estimates(self, x, y, samples):
        """(hatgrad Phi, grad_y g) at (x, y) on the stored ``samples``."""
        P = self.problem
        _, hypergrad = neumann_hypergradient(
            P, x, y, samples, eta=self.linear_system_step_, Q=self.Q)
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
            x = self.to_X(x - self.outer_step_ * eta_k * u.value)
            y = y - self.inner_step_ * eta_k * v.value
            self.x, self.y = x, y
            yield
            k += 1
