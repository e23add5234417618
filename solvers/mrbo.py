from benchmark_utils.checks.parameters import check_int
from benchmark_utils.solvers.estimators import Storm
from benchmark_utils.solvers.general import (
    GeneralBilevelSolver,
    tuned_outer_step,
)
from benchmark_utils.solvers.sampled_hypergradients import (
    draw_samples,
    neumann_hypergradient,
)
from benchmark_utils.solvers.schedules import (
    check_offset,
    double_momentum_min_offset,
    double_momentum_schedule,
    neumann_rule,
)
from benchmark_utils.solvers.steps import (
    constant_rule,
    given_size,
    given_step,
    method_rule,
)


class Solver(GeneralBilevelSolver):
    """MRBO: momentum-based recursive bilevel optimizer.

    Yang, Ji, Liang, "Provably Faster Algorithms for Bilevel Optimization",
    NeurIPS 2021 (arXiv 2106.04692), Algorithm 1, Theorem 1's steps.
    Iteration k = 0, 1, ...:

    * fresh batches D_F, D_G, B_1..B_Q, B_y; hatgrad Phi = the Q + 1 term
      Neumann estimate (stocBiO's; Q + 1 = ``neumann_terms``) with eta =
      ``linear_system_step``;
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

    Theorem 1's constants need bounds no problem declares; m's rule is
    the smallest the theorem allows (docs/solvers.md).
    """

    name = "MRBO"
    parameters = {}
    size_rules = (given_size("neumann_terms", 21),
                  given_size("batch_size", 16))
    batch_size_may_be_none = True       # None: full passes

    step_rules = (
        neumann_rule("linear_system_step", "eta"),
        tuned_outer_step(0.3, "lambda"),
        constant_rule("inner_step", "gamma", "y step", 0.2),
        given_step("step_scale", "d", "numerator of eta_k", 1.0),
        given_step("c1", "c1", "alpha_{k+1} over eta_k^2", 0.3),
        given_step("c2", "c2", "beta_{k+1} over eta_k^2", 0.3),
        method_rule("step_offset", "m", "offset of eta_k",
                    "Theorem 1's max{2, d^3, (c1 d)^3, (c2 d)^3}",
                    "smallest_step_offset"),
    )

    def check_parameters(self):
        super().check_parameters()
        check_int("neumann_terms", self.neumann_terms, 1)
        if self.step_offset is not None:
            check_offset("step_offset", self.step_offset,
                           self.smallest_step_offset(),
                           "Theorem 1's max{2, d^3, (c1 d)^3, (c2 d)^3} "
                           "with these step_scale, c1 and c2")

    def smallest_step_offset(self):
        """Theorem 1's max{2, d^3, (c1 d)^3, (c2 d)^3}: every eta_k,
        alpha_k, beta_k at most 1."""
        return double_momentum_min_offset(self.step_scale, self.c1, self.c2)

    def schedule(self, k):
        """(eta_k, alpha_{k+1}, beta_{k+1}) of Theorem 1."""
        return double_momentum_schedule(
            k, scale=self.steps.step_scale, offset=self.steps.step_offset,
            c_upper=self.steps.c1, c_lower=self.steps.c2)

    def estimates(self, x, y, samples):
        """(hatgrad Phi, grad_y g) at (x, y) on the stored ``samples``."""
        P = self.problem
        _, hypergrad = neumann_hypergradient(
            P, x, y, samples, eta=self.steps.linear_system_step,
            n_terms=self.sizes.neumann_terms)
        return hypergrad, P.grad_g_y(x, y, batch=samples.lower)

    def iterations(self):
        P, size = self.problem, self.batch(self.sizes.batch_size)
        lam, gamma = self.steps.outer_step, self.steps.inner_step
        u, v = Storm(), Storm()
        x, y, old_point = self.x, self.y, None
        k = 0
        while True:
            samples = draw_samples(P, self.sizes.neumann_terms, size)
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
            x = self.to_X(x - lam * eta_k * u.value)
            y = y - gamma * eta_k * v.value
            self.x, self.y = x, y
            yield
            k += 1
