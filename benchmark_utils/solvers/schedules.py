"""Every step-size, momentum and slack rule of the solvers, in one place.

A rule is a plain function of the iteration counter and the method's
constants; solvers call it and never write a schedule inline. Each keeps
the exact floating-point expression the method has always used (e.g.
``gamma0 * (t + 2.0) ** -omega``), so the iterates are reproducible bit for
bit across refactors.

* Frank-Wolfe steps: :func:`frank_wolfe_step` (2/(k + offset)),
  :func:`spider_fw_step` (the warm start's gamma0/(t+1)),
  :func:`sbcgi_step` (SBCGI's gamma_{t+1}), :func:`ibcg_step` (IBCG's
  constant step);
* iterative regularization: :func:`ir_scg_schedule`,
  :func:`ir_fscg_schedule` (alpha_t, sigma_t);
* momentum and slack: :func:`storm_weight` (SBCGI's STORM weights),
  :func:`cut_slack` (the cut's K_t);
* penalty methods: :func:`ar_ip_seg_schedule` (gamma_t, rho_t) and
  :func:`ar_ip_seg_average_weight`,
  :func:`f2sa_schedule` (alpha_k, gamma_k, lambda_k) with
  :data:`F2SA_EXPONENTS` and :func:`f2sa_default_gamma0`;
* constant steps from the lower level's curvature:
  :func:`strongly_convex_step` (2/(mu + L)), :func:`neumann_step` (1/L),
  :func:`ibcg_linear_system_step`.
"""
import math

from benchmark_utils.checks.parameters import check_choice, check_in_interval


# -- the primitive: a power of the shifted iteration counter --------------

def power_decay(t, scale=1.0, offset=0.0, exponent=1.0, *, divide=True):
    """scale / (t + offset)^exponent: the one power rule every schedule uses
    (a negative ``exponent`` gives a growth, ``offset`` shifts the counter).

    ``divide`` picks the floating-point form, equal in exact arithmetic:
    ``scale / (t + offset) ** exponent`` (True) or
    ``scale * (t + offset) ** -exponent`` (False). Each rule keeps the form
    it was written in, so iterates reproduce bit for bit across refactors.
    """
    if divide:
        return scale / (t + offset) ** exponent
    return scale * (t + offset) ** -exponent


# -- Frank-Wolfe steps ---------------------------------------------------

def frank_wolfe_step(k, offset=2):
    """2/(k + offset): the classic open-loop Frank-Wolfe step (offset 2:
    Jaggi 2013; CG-BiO, Jiang et al. 2023, Alg. 1, whose public code uses an
    offset of 12; the convex IR schedules of Giang-Tran et al. 2025)."""
    return power_decay(k, 2.0, offset)


def spider_fw_step(t, gamma0):
    """gamma0/(t+1): the step of the SPIDER-FW warm start on the lower level
    (Cao et al. 2023, App. F.1: gamma0 = 0.1)."""
    return power_decay(t, gamma0, 1)


def sbcgi_step(t, gamma0, omega):
    """The step of SBCGI's iteration t, gamma_{t+1} = gamma0 (t+2)^-omega.

    Cao et al. 2023, Alg. 1 line 12 steps with gamma_{t+1} (not gamma_t),
    and §5 writes gamma_t = gamma0 (t+1)^-omega, so the first step is
    gamma0 2^-omega.
    """
    return gamma0 * (t + 2.0) ** -omega


def ibcg_step(gamma, K):
    """The constant Frank-Wolfe step gamma of IBCG (Abolfazli et al. 2023).

    ``gamma`` is a number in (0, 1], or a rule tied to the horizon K:
    "nonconvex" gives 1/sqrt(K) (Corollary 4.4) and "convex" gives
    log(K)/K (Corollary 4.2; K >= 2, since log 1 = 0).
    """
    if gamma == "nonconvex":
        return 1.0 / math.sqrt(K)
    if gamma == "convex":
        return math.log(K) / K
    return float(gamma)


# -- iterative regularization (Giang-Tran et al. 2025) -------------------

def ir_scg_schedule(t, convex, varsigma, p, omega):
    """(alpha_t, sigma_t) of IR-SCG, Giang-Tran et al. 2025, Thm 1 (convex)
    and Thm 2 (nonconvex).

    convex:    alpha_t = 2/(t+2),          sigma_t = varsigma (t+1)^-p
    nonconvex: alpha_t = (t+1)^-omega,     sigma_t = varsigma (t+1)^-p
    """
    alpha = frank_wolfe_step(t) if convex else (t + 1.0) ** -omega
    return alpha, varsigma * (t + 1.0) ** -p


def ir_fscg_schedule(t, q, convex, varsigma, p, omega):
    """(alpha_t, sigma_t) of IR-FSCG, Giang-Tran et al. 2025, Thm 3 (convex)
    and Thm 4 (nonconvex).

    convex:    alpha_t = log(q)/q for t < q, 2/(t+2) after;
               sigma_t = varsigma (max(t, q) + 1)^-p
    nonconvex: alpha_t = log(q+1)/(q+1) for t <= q, (t+1)^-omega after;
               sigma_t = varsigma (max(t, q+1) + 1)^-p

    sigma_t is frozen during the first q (q+1) steps, so sigma_0 is
    varsigma (q+1)^-p, not varsigma. The paper's App. D.2 prints 2/(t+1)
    for the convex step after the warm phase; Thm 3's 2/(t+2) is used here:
    it is what the analysis covers and it keeps alpha_q < 1.
    """
    if convex:
        alpha = math.log(q) / q if t < q else frank_wolfe_step(t)
        return alpha, varsigma * (max(t, q) + 1.0) ** -p
    alpha = math.log(q + 1) / (q + 1) if t <= q else (t + 1.0) ** -omega
    return alpha, varsigma * (max(t, q + 1) + 1.0) ** -p


# -- momentum and slack (Cao et al. 2023) --------------------------------

def storm_weight(t, exponent):
    """(t+1)^-exponent: a STORM weight of SBCGI (alpha_t, beta_t, rho_t of
    Cao et al. 2023, Alg. 1; Lemma 4.1 sets them to (t+1)^-omega)."""
    return (t + 1.0) ** -exponent


def cut_slack(t, K0, K_exponent):
    """K_t = K0 (t+1)^-K_exponent, the widening of the stochastic cutting
    plane (Cao et al. 2023, eq. (9); §5 uses 1e-4 (t+1)^-1/2 on regression
    and 0.01 (t+1)^-1/3 on dictionary learning)."""
    return power_decay(t, K0, 1.0, K_exponent, divide=False)


# -- penalty methods -----------------------------------------------------

def ar_ip_seg_schedule(t, gamma0, rho0):
    """(gamma_t, rho_t) of aR-IP-SeG as Cao et al. 2023 run it (App. F,
    after eq. (81)): gamma_t = gamma0/(t+1)^{3/4}, rho_t = rho0 (t+1)^{1/4}."""
    return gamma0 / (t + 1) ** 0.75, rho0 * (t + 1) ** 0.25


def ar_ip_seg_average_weight(gamma, rho, r):
    """(gamma_t rho_t)^r: the weight of y_{t+1} in aR-IP-SeG's average ybar
    (Cao et al. 2023, eq. (81); r = 1/2 in their experiments)."""
    return (gamma * rho) ** r


# Kwon et al. 2023, Corollary 4.2: exponents (a, c) of alpha_k and gamma_k
# per noise regime
F2SA_EXPONENTS = {
    "both": (5 / 7, 4 / 7),     # (a) sigma_f, sigma_g > 0
    "upper": (3 / 5, 2 / 5),    # (b) sigma_f > 0, sigma_g = 0
    "none": (1 / 3, 0.0),       # (c) deterministic
}


def kwon_exponents(noise, a, c, table, equation):
    """(a, c), the decay exponents of alpha_k and gamma_k in Kwon et al.
    2023: the noise regime's row of ``table`` (``F2SA_EXPONENTS`` or
    ``F3SA_EXPONENTS``), each overridden by ``a`` / ``c`` when given, both
    in [0, 1] and a >= c, so that lambda_k ~ k^(a - c) does not decrease
    (``equation`` names the paper's step-size equation in the message)."""
    check_choice("noise", noise, table)
    default_a, default_c = table[noise]
    a = check_in_interval("a", default_a if a is None else a, 0, 1)
    c = check_in_interval("c", default_c if c is None else c, 0, 1)
    if a < c:
        raise ValueError(
            f"a must be >= c (Kwon et al. 2023, {equation}: lambda_k ~ "
            f"k^(a-c) must not decrease), got a={a}, c={c}")
    return a, c


def f2sa_schedule(k, *, a, c, gamma0, lambda0, k0):
    """(alpha_k, gamma_k, lambda_k) of F2SA, Kwon et al. 2023, eqs. (5)-(7)
    and (28).

    alpha_k = c_alpha / (k + k0)^a, gamma_k = c_gamma / (k + k0)^c with the
    constants of eq. (7) written through the values at k = 0:
    c_gamma = gamma0 k0^c (eq. (7) has gamma0 = 1 / (mu_g k0)) and
    c_alpha = gamma0 / (2 lambda0) k0^a
    (eq. (7) has alpha_0 = 1 / (2 lambda0 mu_g k0)).
    The multiplier is tied to the steps, lambda_k = gamma_k / (2 alpha_k)
    (App. B.5, eq. (28)), i.e. lambda_k = lambda0 ((k + k0) / k0)^(a - c),
    so the effective y step beta_k = alpha_k lambda_k = gamma_k / 2
    (condition (3a)). The increments delta_k = lambda_{k+1} - lambda_k
    follow from it: eq. (6) read literally sets lambda_{k+1} from gamma_k
    and alpha_k, one index behind what eq. (28) states, so the closed form
    is used instead.
    """
    c_gamma = gamma0 * k0 ** c
    c_alpha = gamma0 / (2.0 * lambda0) * k0 ** a
    alpha = c_alpha / (k + k0) ** a
    gamma = c_gamma / (k + k0) ** c
    return alpha, gamma, gamma / (2.0 * alpha)


def f2sa_next_multiplier(lam, alpha, gamma, *, T, mu_g):
    """lambda_{k+1} of F2SA read literally, Kwon et al. 2023, Alg. 1 line 9
    with eq. (6): lambda_k + delta_k, delta_k = min(T mu_g / 16 alpha_k
    lambda_k^2, gamma_k / (2 alpha_k) - lambda_k).

    The first branch caps how fast the multiplier may grow (the growth
    condition Theorem 4.1 asks of delta_k); the second ties lambda_{k+1} to
    gamma_k / (2 alpha_k), one index behind the closed form of eq. (28)
    (:func:`f2sa_schedule`), which the paper's appendix B.5 reaches by
    arguing that with its constants (T >= 32) the first branch never binds.
    With tuned constants it can bind, and then only this recursion keeps
    the theorem's condition.
    """
    delta = min(T * mu_g / 16.0 * alpha * lam ** 2,
                gamma / (2.0 * alpha) - lam)
    return lam + delta


def f2sa_default_gamma0(mu_g, L_g, T):
    """min(1/(4 L_g), 1/(4 T mu_g)): the largest gamma_0 that condition (3a)
    of Kwon et al. 2023 allows."""
    return min(1.0 / (4.0 * L_g), 1.0 / (4.0 * T * mu_g))


# -- constant steps from the lower level's curvature ---------------------

def strongly_convex_step(mu, L):
    """2/(mu + L): the gradient step that contracts fastest on a
    mu-strongly convex, L-smooth function (IBCG's alpha, Abolfazli et al.
    2023, Lemma 3.1; stocBiO's inner step, Ji et al. 2021)."""
    return 2.0 / (L + mu)


def neumann_step(L):
    """1/L: the largest Neumann-series step eta with ||I - eta H|| <= 1 for
    0 < H <= L I (stocBiO, Ji et al. 2021)."""
    return 1.0 / L


def ibcg_linear_system_step(alpha):
    """eta = alpha / 2 for IBCG's linear-system variable w: Abolfazli et al.
    2023 need eta < (1 - beta)/mu_g, which equals alpha = 2/(mu_g + L_g),
    and never give a value; half of the bound is our choice."""
    return 0.5 * alpha


# -- F3SA (Kwon et al. 2023, Algorithm 2) --------------------------------

# Kwon et al. 2023, Corollary 4.4: exponents (a, c) of alpha_k and gamma_k
# per noise regime of F3SA
F3SA_EXPONENTS = {
    "both": (3 / 5, 2 / 5),     # (a) sigma_f, sigma_g > 0
    "upper": (1 / 2, 1 / 4),    # (b) sigma_f > 0, sigma_g = 0
    "none": (1 / 3, 0.0),       # (c) deterministic
}


def f3sa_steps(k, *, a, c, gamma0, lambda0, k0):
    """(alpha_k, gamma_k) of F3SA, Kwon et al. 2023, eqs. (9a) and (9c).

    alpha_k = c_alpha / (k + k0)^a, gamma_k = c_gamma / (k + k0)^c with the
    constants of (9c) written through the values at k = 0: (9c) has
    gamma_0 = 8 / (mu_g k0) and alpha_0 = 8 / (mu_g lambda0 k0) =
    gamma_0 / lambda0, so c_gamma = gamma0 k0^c and
    c_alpha = gamma0 / lambda0 k0^a.
    """
    alpha = gamma0 / lambda0 * k0 ** a / (k + k0) ** a
    gamma = gamma0 * k0 ** c / (k + k0) ** c
    return alpha, gamma


def f3sa_multiplier(k, *, a, c, gamma0, lambda0, k0, literal):
    """lambda_k of F3SA, Kwon et al. 2023, Alg. 2 line 5 with (9b).

    Literal (``literal`` True): lambda_0 = lambda0 and lambda_{k+1} =
    lambda_k + delta_k with delta_k = gamma_k / alpha_k - lambda_k, i.e.
    lambda_k = gamma_{k-1} / alpha_{k-1} for k >= 1. Closed form (False):
    lambda_k = gamma_k / alpha_k = lambda0 ((k + k0) / k0)^(a - c), one
    index ahead. Both keep beta_k = alpha_k lambda_k <= gamma_k, the first
    condition of (8a) (a >= c makes alpha_k / alpha_{k-1} <=
    gamma_k / gamma_{k-1}); the closed form makes it an equality.
    """
    j = max(k - 1, 0) if literal else k
    alpha, gamma = f3sa_steps(j, a=a, c=c, gamma0=gamma0, lambda0=lambda0,
                              k0=k0)
    return gamma / alpha


def f3sa_momentum(k, exponent):
    """eta_k of F3SA: max(k, 1)^-exponent (exponent 2c in eq. (9a)).

    (9a) prints eta_k = (k + 1)^-2c, which gives eta_1 = 2^-2c < 1, while
    Theorem 4.3's (8b) needs eta_0 = eta_1 = 1; shifting the index by one
    (k instead of k + 1, and 1 at k = 0) meets (8b) with the same decay.
    """
    return max(k, 1) ** -exponent


def f3sa_default_gamma0(L_g):
    """1/(2 L_g): F3SA's default gamma_0. Condition (8a) of Kwon et al.
    2023 (Theorem 4.3) asks gamma_k <= 1/(16 L_g), an analysis constant
    with which x barely moves in a few hundred iterations on the quick
    quadratic; 1/(2 L_g) is still a contracting gradient step on g."""
    return 1.0 / (2.0 * L_g)


# -- adaptive bilevel methods (Huang et al. 2021, BiAdam) ----------------

def adaptive_bilevel_schedule(t, *, k, m, c1, c2, variance_reduced):
    """(eta_t, alpha_{t+1}, beta_{t+1}) of BiAdam / VR-BiAdam.

    Huang, Li, Gao, Huang 2021, Theorem 1 (BiAdam): eta_t = k/(m+t)^{1/2},
    alpha_{t+1} = c1 eta_t, beta_{t+1} = c2 eta_t; Theorem 2 (VR-BiAdam,
    ``variance_reduced``): eta_t = k/(m+t)^{1/3}, alpha_{t+1} = c1 eta_t^2,
    beta_{t+1} = c2 eta_t^2. alpha and beta weight the new stochastic
    estimate in the momentum (v and w) updates.
    """
    power = 2 if variance_reduced else 1
    eta = power_decay(t, k, m, 1.0 / (power + 1))
    return eta, c1 * eta ** power, c2 * eta ** power


def checked_offset(m, smallest, condition):
    """The schedule offset m: ``smallest`` when None, else m itself if
    smallest <= m < inf (``condition`` says which theorem's bound it is),
    so that the step and the momentum weights stay at most 1."""
    if m is None:
        return smallest
    if not smallest <= m < float("inf"):
        raise ValueError(f"m must be a number >= {smallest:.6g} "
                         f"({condition}) or None, got {m!r}")
    return m


def adaptive_bilevel_min_offset(k, c1, c2, variance_reduced):
    """The smallest m that Theorem 1 (max{k^2, (c1 k)^2, (c2 k)^2}) or
    Theorem 2 (max{2, k^3, (c1 k)^3, (c2 k)^3}) allows: with it eta_t,
    alpha_{t+1} and beta_{t+1} of :func:`adaptive_bilevel_schedule` are at
    most 1 for every t >= 0."""
    if variance_reduced:
        return max(2.0, k ** 3, (c1 * k) ** 3, (c2 * k) ** 3)
    return max(k ** 2, (c1 * k) ** 2, (c2 * k) ** 2)


# -- double-momentum bilevel methods (SUSTAIN, MRBO) ---------------------

def double_momentum_schedule(t, *, scale, offset, c_upper, c_lower):
    """(eta_t, a_{t+1}, b_{t+1}): the step and the two STORM weights of
    the single-loop double-momentum methods, eta_t = scale/(offset + t)^{1/3},
    a_{t+1} = c_upper eta_t^2 (weight of the new hypergradient estimate),
    b_{t+1} = c_lower eta_t^2 (weight of the new grad_y g).

    SUSTAIN (Khanduri et al. 2021, Thm 1): scale 1, offset w, alpha_t =
    eta_t, eta^f_{t+1} = c_eta alpha_t^2, eta^g_{t+1} = c_tau alpha_t^2.
    MRBO (Yang, Ji, Liang 2021, Thm 1): scale d, offset m, alpha_{k+1} =
    c1 eta_k^2, beta_{k+1} = c2 eta_k^2. The same rule as VR-BiAdam's
    (Huang et al. 2021, Thm 2), so it delegates to it.
    """
    eta, upper, lower = adaptive_bilevel_schedule(
        t, k=scale, m=offset, c1=c_upper, c2=c_lower, variance_reduced=True)
    return eta, upper, lower


# -- SBFW and TTSA (Abolfazli et al. 2023, App. G.1) ---------------------

def sbfw_a0(mu_g, L_g):
    """a_0 = min{2/(3 mu_g), mu_g/(2 L_g^2)}: SBFW's lower-level step
    constant (Akhtar et al. 2022, as Abolfazli et al. 2023, App. G.1)."""
    return min(2.0 / (3.0 * mu_g), mu_g / (2.0 * L_g ** 2))


def sbfw_schedule(k, *, a0, eta_factor):
    """(rho_k, eta_k, delta_k) of SBFW at iteration k >= 1.

    rho_k = 2/k^{1/2}, eta_k = 2/(k+1)^{3/4}, delta_k = a_0/k^{1/2}, with
    the experiments' multiplier on eta (the one on delta is part of the
    ``a0`` the solver passes). rho_k and eta_k exceed 1
    for the first iterations (rho_1 = 2, eta_1 = 1.19): both are clipped at
    1 (our choice: a momentum weight above 1 flips the sign of the
    correction and a Frank-Wolfe step above 1 leaves X).
    """
    rho = min(1.0, 2.0 / math.sqrt(k))
    eta = min(1.0, eta_factor * 2.0 / (k + 1) ** 0.75)
    return rho, eta, a0 / math.sqrt(k)


def ttsa_beta(mu_g, L_g, K):
    """beta = min{mu_g/L_g^2, 2 K^{-2/5}/mu_g}: TTSA's lower-level step for
    the horizon K (Hong et al. 2023, as Abolfazli et al. 2023, App. G.1)."""
    return min(mu_g / L_g ** 2, 2.0 * K ** -0.4 / mu_g)


def ttsa_neumann_terms(k, kappa):
    """t_max(k) = (L_g/mu_g) log(k+1) at iteration k >= 1, rounded up to an
    integer >= 1 (our choice: the depth p ~ U{0..t_max-1} needs one)."""
    return max(1, math.ceil(kappa * math.log(k + 1)))


def ttsa_decaying_steps(k, *, alpha, beta, k0):
    """(alpha_k, beta_k) = (alpha k0/(k0 + k), beta (k0/(k0 + k))^{2/3}) at
    iteration k >= 0: the shape of Hong et al. 2023's steps for a strongly
    convex outer objective (alpha_k ~ 1/k, beta_k ~ k^{-2/3}), starting
    at (alpha, beta)."""
    ratio = k0 / (k0 + k)
    return alpha * ratio, beta * ratio ** (2.0 / 3.0)


def curvature_steps(mu_g, L_g, step=None, eta=None):
    """(step, eta): a gradient step on g and a Neumann / linear-system step,
    each the given value or, when None, :func:`strongly_convex_step` and
    :func:`neumann_step` from the problem's declared mu_g and L_g (VRBO's
    beta and eta, Yang, Ji, Liang 2021; FSLA's beta and eta, Li, Gu, Huang
    2022)."""
    return (strongly_convex_step(mu_g, L_g) if step is None else step,
            neumann_step(L_g) if eta is None else eta)
