from benchmark_utils.checks.parameters import (check_choice, check_in_interval,
                                              check_int, check_positive)
from benchmark_utils.solvers.estimators import Storm, at_both_points
from benchmark_utils.solvers.general import GeneralBilevelSolver
from benchmark_utils.solvers.schedules import (
    F3SA_EXPONENTS,
    f3sa_default_gamma0,
    f3sa_momentum,
    f3sa_multiplier,
    f3sa_steps,
    kwon_exponents)


class Solver(GeneralBilevelSolver):
    """F3SA: Faster Fully First-order Stochastic Approximation.

    Kwon, Kwon, Wright, Nowak, "A Fully First-Order Method for Stochastic
    Bilevel Optimization", ICML 2023 (arXiv 2301.10945), Algorithm 2 (§3.2)
    with the estimators of Appendix C and the step sizes of eq. (9). F2SA's
    single-loop form (T = 1) in which every plain stochastic gradient h is
    replaced by a STORM-type momentum estimator h~ (Khanduri et al. 2021):

        h~^k = h(p_k; s_k) + (1 - eta_k) (h~^{k-1} - h(p_{k-1}; s_k))

    with one fresh batch s_k evaluated at the current point p_k and at the
    previous one p_{k-1} (``Storm`` and ``at_both_points``).

    Iteration k (App. C, then Alg. 2):

    * y-directions at (x_k, z_k), (x_k, y_k) and (x_{k-1}, z_{k-1}),
      (x_{k-1}, y_{k-1}):
      h~_z   from grad_y g(., z; phi_z^k),
      h~_fy  from grad_y f(., y; zeta_y^k),
      h~_gy  from grad_y g(., y; phi_y^k);
    * (line 2) z_{k+1} = z_k - gamma_k h~_z
      (line 3) y_{k+1} = y_k - alpha_k (h~_fy + lambda_k h~_gy);
    * x-directions at the updated lower iterates, (x_k, y_{k+1}),
      (x_k, z_{k+1}) and (x_{k-1}, y_k), (x_{k-1}, z_k):
      h~_fx  from grad_x f(x, y; zeta_x^k),
      h~_gxy from grad_x g(x, y; phi_x^k),
      h~_gxz from grad_x g(x, z; phi_x^k)   (the same phi_x^k, App. C);
    * (line 4) x_{k+1} = x_k - xi alpha_k (h~_fx + lambda_k (h~_gxy
                                                          - h~_gxz))
      (line 5) lambda_{k+1} = lambda_k + delta_k, delta_k of (9b).

    Batches per iteration, as the paper counts them: five fresh ones, two
    upper (zeta_y, zeta_x) and three lower (phi_z, phi_y, phi_x), each drawn
    once and charged once although it is evaluated at two points; that is
    12 gradient evaluations per iteration (6 at k = 0, where there is no
    previous point and h~^0 = h(p_0; s_0), eta_0 = 1).

    Step sizes, eq. (9): alpha_k = c_alpha / (k + k0)^a, gamma_k = c_gamma /
    (k + k0)^c, eta_k ~ k^-2c, lambda_k ~ gamma_k / alpha_k, with (9c)'s
    constants written through the values at k = 0 (alpha_0 = gamma0 /
    lambda0, see ``schedules.f3sa_steps``). ``noise`` picks (a, c) of
    Corollary 4.4: "both" (3/5, 2/5), "upper" (1/2, 1/4), "none" (1/3, 0);
    ``a`` / ``c`` override them, ``momentum_exponent`` overrides 2c.
    ``gamma0`` is gamma at k = 0 (None: 1/(2 L_g), see below),
    ``lambda0`` the multiplier at k = 0 (theory: >= 2 l_f1 / mu_g), ``k0``
    the offset and ``xi`` the step-size ratio (theory: small, xi <=
    c_xi mu_g / (l_g1 l_*0^2)).

    Choices where the paper is silent or that depart from it:

    * ``multiplier``: "literal" (default) is line 5 with (9b)'s delta_k =
      gamma_k / alpha_k - lambda_k, so lambda_{k+1} = gamma_k / alpha_k,
      one index behind; "closed" is lambda_k = gamma_k / alpha_k. (9c)
      makes gamma_0 / alpha_0 = lambda0, so the two differ from k = 1 on,
      and both meet beta_k = alpha_k lambda_k <= gamma_k of (8a), which is
      what Theorem 4.3 needs (``schedules.f3sa_multiplier``);
    * eta_k: (9a) prints (k + 1)^-2c, i.e. eta_1 < 1, against (8b)'s
      eta_0 = eta_1 = 1; max(k, 1)^-2c keeps the decay and meets (8b). In
      regime (c) (c = 0) eta_k = 1: no momentum, plain gradients;
    * gamma0, lambda0, k0, xi, batch_size: (9c)'s k0 and (9b)'s xi need
      constants (c_eta, c_xi, l_F1, l_*0) no problem provides, so they are
      parameters; (9c)'s gamma_0 = 8/(mu_g k0) is dropped (the theory's
      k0 gives steps below (8a)'s bound 1/(16 L_g)), and the default
      gamma_0 is 1/(2 L_g), 8 times that bound: with 1/(16 L_g) the
      hypergradient norm of the quick quadratic falls by less than 2x in
      1000 iterations. Defaults (noise "both", gamma0 = 1/(2 L_g),
      lambda0 = 10, k0 = 100, xi = 20, batch 64) are tuned on the quick
      quadratic; with batch 16 the momentum estimators leave a noise floor
      near a tenth of the start there. A problem without L_g is skipped
      unless gamma0 is given;
    * ``shared_x_batch``: True (default) evaluates h~_gxy and h~_gxz on
      one batch phi_x^k, as App. C writes them (five batches); False draws
      phi_xy and phi_xz independently, as Alg. 1 does (six batches);
    * ``batch_size``: one size for every estimator; None uses full passes
      (regime (c)); on a problem with one sample per level every batch is
      that sample;
    * z_0 = y_0 = the start's y; the reported iterate is the last
      (x_K, z_K), z being the tracker of y*(x) (Corollary 4.4 bounds a
      random iterate x_R in the stochastic regimes);
    * a constrained X (the paper has X = R^d): x_{k+1} is projected onto X
      after line 4, an extension without guarantee.

    Outer step: ``xi`` None (the default) is 20 times the
    problem's declared ``outer_step_scale`` (1 on the quadratic, where
    20 was tuned; see ``GeneralBilevelSolver.outer_steps``); a
    given ``xi`` is used as is.
    """

    name = "F3SA"
    parameters = {
        "xi": [None],
        "noise": ["both"],
        "a": [None],
        "c": [None],
        "momentum_exponent": [None],
        "gamma0": [None],
        "lambda0": [10.0],
        "k0": [100],
        "multiplier": ["literal"],
        "batch_size": [64],
        "shared_x_batch": [True],
    }
    batch_size_may_be_none = True       # None: full passes, regime (c)
    # benchopt's design checks run on a 30-sample quadratic
    test_config = {"batch_size": 16}

    defaults_from_problem = ("gamma0",)
    outer_steps = {"xi": 20.0}
    problem_constants = ("L_g",)

    def check_parameters(self):
        super().check_parameters()
        self.a_, self.c_ = kwon_exponents(self.noise, self.a, self.c,
                                          F3SA_EXPONENTS, "eq. (9)")
        exponent = self.momentum_exponent
        self.momentum_exponent_ = check_in_interval(
            "momentum_exponent", 2 * self.c_ if exponent is None else exponent,
            0, 2)
        check_positive("lambda0", self.lambda0)
        check_int("k0", self.k0, 1)
        check_choice("multiplier", self.multiplier, ("literal", "closed"))
        check_choice("shared_x_batch", self.shared_x_batch, (False, True))

    def check_with_problem(self, problem):
        self.gamma0_ = self.gamma0
        if self.gamma0_ is None:    # the default, from the problem's L_g
            self.gamma0_ = check_positive(
                "gamma0", f3sa_default_gamma0(problem.L_g))

    def schedule(self, k):
        """(alpha_k, gamma_k, lambda_k, eta_k) with this run's parameters."""
        constants = dict(a=self.a_, c=self.c_, gamma0=self.gamma0_,
                         lambda0=self.lambda0, k0=self.k0)
        alpha, gamma = f3sa_steps(k, **constants)
        lam = f3sa_multiplier(k, literal=self.multiplier == "literal",
                              **constants)
        return alpha, gamma, lam, f3sa_momentum(k, self.momentum_exponent_)

    def iterations(self):
        P, S = self.problem, self.batch(self.batch_size)
        h_z, h_fy, h_gy, h_fx, h_gxy, h_gxz = (Storm() for _ in range(6))

        def at(oracle):
            # an oracle of one point p = (x, y), as at_both_points wants
            return lambda p, batch: oracle(*p, batch=batch)

        f_y, g_y = at(P.grad_f_y), at(P.grad_g_y)
        f_x, g_x = at(P.grad_f_x), at(P.grad_g_x)
        x, y, z = self.x, self.y, self.y.clone()
        x_prev = y_prev = z_prev = None     # none at k = 0: eta_0 = 1
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
            x_new = self.to_X(
                x - self.xi_ * alpha * (d_fx + lam * (d_gxy - d_gxz)))  # line 4
            x_prev, y_prev, z_prev = x, y, z
            x, y, z = x_new, y_new, z_new
            # z tracks y*(x): it is the lower-level iterate the metrics see
            self.x, self.y = x, z
            yield
            k += 1
