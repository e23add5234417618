from benchmark_utils.checks.parameters import (
    check_choice,
    check_in_interval,
    check_int,
)
from benchmark_utils.solvers.general import (
    GeneralBilevelSolver,
    tuned_outer_step,
)
from benchmark_utils.solvers.kwon_steps import (
    DEFAULT_NOISE,
    F2SA_EXPONENTS,
    LAMBDA0,
    alpha0_rule,
    exponent_rules,
    kwon_exponents,
    kwon_steps,
    xi_rule,
)
from benchmark_utils.solvers.steps import StepRule, given_size, given_step


def next_multiplier(lam, alpha, gamma, *, T, mu_g, ratio):
    """lambda_{k+1} = lambda_k + delta_k of Alg. 1 line 9, eq. (6):
    delta_k = min(T mu_g / 16 alpha_k lambda_k^2, r gamma_k / alpha_k -
    lambda_k), r = ``ratio`` (eq. (6): 1/2). The first branch caps the
    multiplier's growth (Theorem 4.1); the second ties lambda_{k+1} to
    r gamma_k / alpha_k, so that beta_k = alpha_k lambda_k <= r gamma_k."""
    delta = min(T * mu_g / 16.0 * alpha * lam ** 2,
                ratio * gamma / alpha - lam)
    return lam + delta


def default_inner_step(mu_g, l_g1, T):
    """min(1/(4 l_g1), 1/(4 T mu_g)): the largest gamma_0 that condition
    (3a) allows."""
    return min(1.0 / (4.0 * l_g1), 1.0 / (4.0 * T * mu_g))


def smoothness(problem):
    """l_g1 of condition (3a): the problem's ``L_g_start`` (a problem
    constant, the curvature the run starts from) where it declares one,
    else ``L_g``."""
    return problem.L_g if problem.L_g_start is None else problem.L_g_start


class Solver(GeneralBilevelSolver):
    """F2SA: Fully First-order Stochastic Approximation.

    Kwon, Kwon, Wright, Nowak, ICML 2023, Algorithm 1 (first-order oracles
    only). Outer iteration k, a fresh batch for every gradient:

    * lines 3-6, T times: z <- z - gamma_k grad_y g(x_k, z),
      y <- y - alpha_k (grad_y f(x_k, y) + lambda_k grad_y g(x_k, y));
    * line 8: x_{k+1} = x_k - xi alpha_k (grad_x f(x_k, y) + lambda_k
      (grad_x g(x_k, y) - grad_x g(x_k, z)));
    * line 9: lambda_{k+1} by eq. (6) (``multiplier="recursion"``) or
      lambda_k = r gamma_k / alpha_k (``"closed_form"``, eq. (28)).

    Steps, eqs. (5), (7) (``kwon_steps``): ``inner_step`` = gamma_0,
    ``outer_step`` = xi alpha_0 (the x step at k = 0; xi = outer_step /
    alpha_0), ``step_offset`` = k0, alpha_0 = r gamma_0 / lambda0, r =
    ``y_step_ratio``: y's step on g, alpha_k lambda_k, is r gamma_k;
    ``noise_regime`` picks (a, c) of Cor. 4.2 (``outer_step_exponent``,
    ``inner_step_exponent``). Departures: r = 1 (eq. (7): 1/2):
    y and z, both started at y0, descend g alike (docs/solvers.md);
    ``shared_x_batch`` draws one batch for both x-gradients of g (App. C);
    the reported y is z. gamma_0's rule is (3a)'s bound, with l_g1 the
    problem's ``L_g_start`` where declared. See docs/solvers.md, "F2SA".
    """

    name = "F2SA"
    parameters = {
        "noise_regime": [DEFAULT_NOISE],
        "shared_x_batch": [True],
        "multiplier": ["recursion"],
    }
    size_rules = (given_size("T", 10),
                  given_size("batch_size", 16))
    batch_size_may_be_none = True       # None: full passes, regime (c)

    step_rules = (
        given_step("step_offset", "k0", "offset of alpha_k and gamma_k", 10),
        StepRule("inner_step", "gamma_0", "z step at k = 0",
                 "min(1/(4 l_g1), 1/(4 T mu_g)), l_g1 = L_g_start, else L_g",
                 lambda solver, problem, steps: default_inner_step(
                     problem.mu_g, smoothness(problem), solver.T),
                 needs=("mu_g", "L_g")),
        *exponent_rules(F2SA_EXPONENTS, "Cor. 4.2"),
        LAMBDA0,
        given_step("y_step_ratio", "r", "lambda_k alpha_k over gamma_k",
                   1.0),
        # alpha_0 lambda0 = beta_0 = r gamma_0 (eq. (7): r = 1/2)
        alpha0_rule("y_step_ratio x inner_step / lambda0", "y_step_ratio"),
        tuned_outer_step(0.05, "xi alpha_0", "x step at k = 0"),
        xi_rule(),
    )

    def skip_problem(self, problem):
        if self.multiplier == "recursion" and problem.mu_g is None:
            return True, ("F2SA's multiplier recursion (eq. (6)) needs the "
                          "problem's mu_g; use multiplier='closed_form'")
        return super().skip_problem(problem)

    def check_parameters(self):
        super().check_parameters()
        check_int("T", self.T, 1)
        kwon_exponents(self.noise_regime, self.outer_step_exponent,
                       self.inner_step_exponent, F2SA_EXPONENTS, "eq. (5)")
        check_int("step_offset", self.step_offset, 1)
        check_choice("shared_x_batch", self.shared_x_batch, (False, True))
        check_choice("multiplier", self.multiplier,
                     ("recursion", "closed_form"))
        check_in_interval("y_step_ratio", self.y_step_ratio, 0.0, 1.0,
                          closed=(False, True))

    def schedule(self, k):
        """(alpha_k, gamma_k, lambda_k = r gamma_k / alpha_k of eq. (28))
        of this run."""
        steps = self.steps
        alpha, gamma = kwon_steps(k, a=steps.outer_step_exponent,
                                  c=steps.inner_step_exponent,
                                  alpha0=steps.alpha0,
                                  gamma0=steps.inner_step,
                                  k0=steps.step_offset)
        return alpha, gamma, steps.y_step_ratio * gamma / alpha

    def iterations(self):
        P, S = self.problem, self.batch(self.sizes.batch_size)
        x, y, z = self.x, self.y, self.y.clone()
        xi = self.steps.xi
        k, lam = 0, None
        while True:
            alpha, gamma, closed_form = self.schedule(k)
            if lam is None or self.multiplier == "closed_form":
                lam = closed_form           # lambda_0 = lambda0
            for _ in range(self.sizes.T):                       # lines 3-6
                z = z - gamma * P.grad_g_y(x, z, batch=P.batch_lower(S))
                y = y - alpha * (
                    P.grad_f_y(x, y, batch=P.batch_upper(S))
                    + lam * P.grad_g_y(x, y, batch=P.batch_lower(S)))
            zeta_x, phi_xy = P.batch_upper(S), P.batch_lower(S)
            phi_xz = phi_xy if self.shared_x_batch else P.batch_lower(S)
            direction = P.grad_f_x(x, y, batch=zeta_x) + lam * (
                P.grad_g_x(x, y, batch=phi_xy)
                - P.grad_g_x(x, z, batch=phi_xz))
            x = self.to_X(x - xi * alpha * direction)             # line 8
            # z tracks y*(x): it is the lower-level iterate the metrics see
            self.x, self.y = x, z
            if self.multiplier == "recursion":           # line 9, eq. (6)
                lam = next_multiplier(lam, alpha, gamma, T=self.sizes.T,
                                      mu_g=self.problem.mu_g,
                                      ratio=self.steps.y_step_ratio)
            yield
            k += 1
