from benchmark_utils.checks.parameters import check_int
from benchmark_utils.solvers.estimators import Storm
from benchmark_utils.solvers.general import GeneralBilevelSolver
from benchmark_utils.solvers.hypergradients import draw_neumann_depth
from benchmark_utils.solvers.inner_loops import batch_smoothness_ratio
from benchmark_utils.solvers.sampled_hypergradients import (
    draw_samples,
    truncated_hypergradient,
)
from benchmark_utils.solvers.schedules import (
    double_momentum_schedule,
    neumann_rule,
)
from benchmark_utils.solvers.steps import (
    StepRule,
    constant_rule,
    given_size,
    given_step,
)


def default_x_step(solver, problem, steps):
    """alpha_1 times the problem's outer_step_scale over the batch
    smoothness ratio: the paper's first x step (s = 1), scaled."""
    scale = 1.0 * problem.outer_step_scale / batch_smoothness_ratio(
        problem, solver.batch(solver.batch_size))
    return scale * solver.schedule(1, steps)[0]


class Solver(GeneralBilevelSolver):
    """SUSTAIN: single-timescale double-momentum stochastic approximation.

    Khanduri, Zeng, Hong, Wai, Wang, Yang, NeurIPS 2021 (arXiv 2102.07367),
    Algorithm 1 with the steps of Theorem 1. Iteration t = 1, 2, ...:

    * samples xi, zeta^0..zeta^{K-1}, zeta and a depth k ~ U{0..K-1} (K =
      ``neumann_depth_bound``); hatgrad f = Huang et al.'s estimator (6) with
      theta = ``linear_system_step`` (the paper's 1/L_g);
    * STORM (same samples and depth at both points): h_g^t = grad_y g(x_t,
      y_t) + (1 - tau_t) (h_g^{t-1} - grad_y g(x_{t-1}, y_{t-1})), h_f^t
      likewise with eta_t and hatgrad f; t = 1: the plain estimates;
    * x_{t+1} = x_t - s alpha_t h_f^t, s alpha_1 = ``outer_step`` (the x
      step at t = 1); y_{t+1} = y_t - beta_t h_g^t, beta_t = c_beta alpha_t
      (c_beta = ``inner_step_ratio``);
    * Theorem 1: alpha_t = 1/(w + t)^{1/3} (w = ``step_offset``),
      eta_{t+1} = c_eta alpha_t^2, tau_{t+1} = c_tau alpha_t^2.

    Departures: beta_t is capped at theta; the x step's scale s (1 in the
    paper); the depth is shared by the two points; the last iterate is
    reported; x is projected on a constrained X.

    Theorem 1's constants need bounds no problem declares
    (docs/solvers.md).
    """

    name = "SUSTAIN"
    parameters = {}
    size_rules = (given_size("neumann_depth_bound", 30),
                  given_size("batch_size", 16))
    batch_size_may_be_none = True       # None: full passes

    step_rules = (
        given_step("step_offset", "w", "offset of alpha_t", 4.0),
        given_step("c_eta", "c_eta", "eta_{t+1} over alpha_t^2", 0.2),
        given_step("c_tau", "c_tau", "tau_{t+1} over alpha_t^2", 0.2),
        neumann_rule("linear_system_step", "theta"),
        constant_rule("inner_step_ratio", "c_beta", "y step over alpha_t",
                      0.5),
        StepRule("outer_step", "s alpha_1", "x step at t = 1",
                 "alpha_1 = (w + 1)^(-1/3) x the problem's outer_step_scale"
                 " / the batch smoothness ratio", default_x_step),
        StepRule("x_step_scale", "s", "x step over alpha_t",
                 "outer_step / alpha_1",
                 lambda solver, problem, steps:
                 steps["outer_step"] / solver.schedule(1, steps)[0],
                 parameter=False),
    )

    def check_parameters(self):
        super().check_parameters()
        check_int("neumann_depth_bound", self.neumann_depth_bound, 1)
        largest = (self.step_offset + 1.0) ** (2.0 / 3.0)     # 1/alpha_1^2
        for name in ("c_eta", "c_tau"):
            if getattr(self, name) > largest:
                # the STORM weight c alpha_1^2 would exceed 1
                raise ValueError(
                    f"{name} must be in (0, (step_offset + 1)^(2/3)] = (0, "
                    f"{largest:.6g}] so that its STORM weight stays <= 1, "
                    f"got {getattr(self, name)!r}")

    def schedule(self, t, steps):
        """(alpha_t, eta_{t+1}, tau_{t+1}) of Theorem 1 with the ``steps``
        resolved so far (floats: w = ``step_offset``, ``c_eta``,
        ``c_tau``)."""
        return double_momentum_schedule(
            t, scale=1.0, offset=steps["step_offset"],
            c_upper=steps["c_eta"], c_lower=steps["c_tau"])

    def estimates(self, x, y, samples, depth):
        """(hatgrad f, grad_y g) at (x, y) on ``samples`` with ``depth``."""
        P = self.problem
        _, hypergrad = truncated_hypergradient(
            P, x, y, samples, depth, vartheta=self.steps.linear_system_step,
            n_terms=self.sizes.neumann_depth_bound)
        return hypergrad, P.grad_g_y(x, y, batch=samples.lower)

    def iterations(self):
        P, size = self.problem, self.batch(self.sizes.batch_size)
        s, c_beta = self.steps.x_step_scale, self.steps.inner_step_ratio
        theta, constants = self.steps.linear_system_step, self.steps.values()
        h_f, h_g = Storm(), Storm()
        x, y, old_point = self.x, self.y, None
        t = 1
        while True:
            samples = draw_samples(P, self.sizes.neumann_depth_bound, size)
            depth = draw_neumann_depth(self.sizes.neumann_depth_bound, P.rng)
            new_f, new_g = self.estimates(x, y, samples, depth)
            if old_point is None:
                old_f = old_g = eta = tau = None
            else:
                old_f, old_g = self.estimates(*old_point, samples, depth)
                _, eta, tau = self.schedule(t - 1, constants)
            h_f.step(new_f, old_f, eta)
            h_g.step(new_g, old_g, tau)
            alpha = self.schedule(t, constants)[0]
            beta = min(c_beta * alpha, theta)
            old_point = (x, y)
            x = self.to_X(x - s * alpha * h_f.value)
            y = y - beta * h_g.value
            self.x, self.y = x, y
            yield
            t += 1
