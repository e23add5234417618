from benchmark_utils.checks.parameters import (
    check_choice,
    check_in_interval,
    check_int,
)
from benchmark_utils.solvers.estimators import Storm, at_both_points
from benchmark_utils.solvers.general import GeneralBilevelSolver
from benchmark_utils.solvers.kwon_steps import (
    DEFAULT_NOISE,
    F3SA_EXPONENTS,
    LAMBDA0,
    alpha0_rule,
    exponent_rules,
    kwon_exponents,
    kwon_steps,
    xi_rule,
)
from benchmark_utils.solvers.schedules import power_decay
from benchmark_utils.solvers.steps import StepRule, given_size, given_step


def momentum_weight(k, exponent):
    """eta_k = max(k, 1)^-exponent (exponent 2c in eq. (9a)): (9a) prints
    (k + 1)^-2c, whose eta_1 < 1 breaks (8b)'s eta_0 = eta_1 = 1; the
    index shifted by one meets (8b) with the same decay."""
    return power_decay(max(k, 1), exponent=exponent, divide=False)


def default_inner_step(L_g):
    """1/(2 L_g): 8 times (8a)'s bound 1/(16 L_g), still a contracting
    gradient step on g (with the bound itself x barely moves)."""
    return 1.0 / (2.0 * L_g)


# xi of the default x step, in units of the problem's outer_step_scale
# (tuned on the quick quadratic)
XI = 20.0


def default_xi(solver, problem):
    """xi of the default x step: XI x the problem's outer_step_scale."""
    return XI * problem.outer_step_scale


class Solver(GeneralBilevelSolver):
    """F3SA: Faster Fully First-order Stochastic Approximation.

    Kwon, Kwon, Wright, Nowak, ICML 2023, Algorithm 2 (§3.2) with App. C's
    estimators: F2SA with T = 1 and each stochastic gradient h replaced by
    a STORM estimator h~^k = h(p_k; s_k) + (1 - eta_k)(h~^{k-1} -
    h(p_{k-1}; s_k)), one fresh batch s_k at the current and previous point.
    Iteration k:

    * y-directions h~_z, h~_fy, h~_gy at (x_k, z_k), (x_k, y_k);
      line 2: z_{k+1} = z_k - gamma_k h~_z;
      line 3: y_{k+1} = y_k - alpha_k (h~_fy + lambda_k h~_gy);
    * x-directions h~_fx, h~_gxy, h~_gxz at (x_k, y_{k+1}), (x_k, z_{k+1});
      line 4: x_{k+1} = x_k - xi alpha_k (h~_fx + lambda_k (h~_gxy - h~_gxz));
      line 5: lambda_{k+1} = lambda_k + delta_k of (9b).

    Steps, eq. (9) (``kwon_steps``): ``inner_step`` = gamma_0,
    ``outer_step`` = xi alpha_0 (the x step at k = 0), alpha_0 = gamma_0 /
    lambda0, ``step_offset`` = k0; ``noise_regime`` picks (a, c) of Cor. 4.4
    (``outer_step_exponent``, ``inner_step_exponent``), eta_k = max(k,
    1)^-``momentum_exponent`` (None: 2c). ``multiplier``: "literal" is
    line 5 (lambda_{k+1} = gamma_k / alpha_k), "closed" lambda_k =
    gamma_k / alpha_k. Departures: eta_k's index shifted by one, to meet
    (8b); gamma_0 = 1/(2 L_g), 8 times (8a)'s bound; ``shared_x_batch`` one
    phi_x for h~_gxy and h~_gxz as App. C; the reported y is z. See
    docs/solvers.md, "F3SA".
    """

    name = "F3SA"
    parameters = {
        "noise_regime": [DEFAULT_NOISE],
        "multiplier": ["literal"],
        "shared_x_batch": [True],
    }
    size_rules = (given_size("batch_size", 64),)
    batch_size_may_be_none = True       # None: full passes, regime (c)
    # benchopt's design checks run on a 30-sample quadratic
    test_config = {"batch_size": 16}

    step_rules = (
        given_step("step_offset", "k0", "offset of alpha_k and gamma_k",
                   100),
        StepRule("inner_step", "gamma_0", "z step at k = 0", "1/(2 L_g)",
                 lambda solver, problem, steps:
                     default_inner_step(problem.L_g), needs=("L_g",)),
        *exponent_rules(F3SA_EXPONENTS, "Cor. 4.4"),
        StepRule("momentum_exponent", "2c", "exponent of eta_k", "2 c",
                 lambda solver, problem, steps:
                     2 * steps["inner_step_exponent"],
                 positive=False),
        LAMBDA0,
        alpha0_rule("inner_step / lambda0 (eq. (9c))"),
        StepRule("outer_step", "xi alpha_0", "x step at k = 0",
                 f"xi alpha_0, xi = {XI:g} x the problem's "
                 "outer_step_scale",
                 lambda solver, problem, steps:
                     default_xi(solver, problem) * steps["alpha0"]),
        xi_rule(default_xi),
    )

    def check_parameters(self):
        super().check_parameters()
        _, c = kwon_exponents(self.noise_regime, self.outer_step_exponent,
                              self.inner_step_exponent, F3SA_EXPONENTS,
                              "eq. (9)")
        exponent = self.momentum_exponent
        check_in_interval("momentum_exponent",
                          2 * c if exponent is None else exponent, 0, 2)
        check_int("step_offset", self.step_offset, 1)
        check_choice("multiplier", self.multiplier, ("literal", "closed"))
        check_choice("shared_x_batch", self.shared_x_batch, (False, True))

    def step_sizes(self, k):
        """(alpha_k, gamma_k) of eqs. (9a), (9c)."""
        steps = self.steps
        return kwon_steps(k, a=steps.outer_step_exponent,
                          c=steps.inner_step_exponent, alpha0=steps.alpha0,
                          gamma0=steps.inner_step, k0=steps.step_offset)

    def schedule(self, k):
        """(alpha_k, gamma_k, lambda_k, eta_k) of this run."""
        alpha, gamma = self.step_sizes(k)
        # line 5, (9b): lambda_k = gamma_{k-1} / alpha_{k-1} ("literal",
        # lambda_0 = lambda0) or gamma_k / alpha_k ("closed")
        j = max(k - 1, 0) if self.multiplier == "literal" else k
        alpha_j, gamma_j = self.step_sizes(j)
        return (alpha, gamma, gamma_j / alpha_j,
                momentum_weight(k, self.steps.momentum_exponent))

    def iterations(self):
        P, S = self.problem, self.batch(self.sizes.batch_size)
        h_z, h_fy, h_gy, h_fx, h_gxy, h_gxz = (Storm() for _ in range(6))

        def at(oracle):
            # an oracle of one point p = (x, y), as at_both_points wants
            return lambda p, batch: oracle(*p, batch=batch)

        f_y, g_y = at(P.grad_f_y), at(P.grad_g_y)
        f_x, g_x = at(P.grad_f_x), at(P.grad_g_x)
        x, y, z = self.x, self.y, self.y.clone()
        x_prev = y_prev = z_prev = None     # none at k = 0: eta_0 = 1
        xi = self.steps.xi
        k = 0
        while True:
            alpha, gamma, lam, eta = self.schedule(k)
            old = None if x_prev is None else (x_prev, z_prev)
            d_z = h_z.step(*at_both_points(
                g_y, P.batch_lower(S), (x, z), old), momentum=eta)
            old = None if x_prev is None else (x_prev, y_prev)
            d_fy = h_fy.step(*at_both_points(
                f_y, P.batch_upper(S), (x, y), old), momentum=eta)
            d_gy = h_gy.step(*at_both_points(
                g_y, P.batch_lower(S), (x, y), old), momentum=eta)
            z_new = z - gamma * d_z                               # line 2
            y_new = y - alpha * (d_fy + lam * d_gy)               # line 3
            # x-directions at the updated y, z (and the old x_{k-1}, y_k, z_k)
            old_y = None if x_prev is None else (x_prev, y)
            old_z = None if x_prev is None else (x_prev, z)
            d_fx = h_fx.step(*at_both_points(
                f_x, P.batch_upper(S), (x, y_new), old_y), momentum=eta)
            phi_xy = P.batch_lower(S)
            phi_xz = phi_xy if self.shared_x_batch else P.batch_lower(S)
            d_gxy = h_gxy.step(*at_both_points(
                g_x, phi_xy, (x, y_new), old_y), momentum=eta)
            d_gxz = h_gxz.step(*at_both_points(
                g_x, phi_xz, (x, z_new), old_z), momentum=eta)
            x_new = self.to_X(x - xi * alpha * (
                d_fx + lam * (d_gxy - d_gxz)))                    # line 4
            x_prev, y_prev, z_prev = x, y, z
            x, y, z = x_new, y_new, z_new
            # z tracks y*(x): it is the lower-level iterate the metrics see
            self.x, self.y = x, z
            yield
            k += 1
