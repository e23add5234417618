"""Every step-size, momentum and slack rule of the solvers, in one place.

A rule is a plain function of the iteration counter and the method's
constants; solvers call it and never write a schedule inline. Each keeps
the exact floating-point expression the method has always used (e.g.
``K0 * (t + 1.0) ** -K_exponent``), so the iterates are reproducible bit for
bit across refactors.

* Frank-Wolfe steps: :func:`frank_wolfe_step` (2/(k + offset)),
  :func:`spider_fw_step` (the warm start's gamma0/(t+1));
* slack: :func:`cut_slack` (the cutting plane's K_t);
* constant steps from the lower level's curvature:
  :func:`strongly_convex_step` (2/(mu + L)), :func:`neumann_step` (1/L),
  and the step rules built on them (:func:`curvature_rules`);
* decaying inner / outer steps shared by SOBA, TTSA and FSLA:
  :func:`decayed_steps` (``DECAYING_RULES``).
"""
from benchmark_utils.solvers.steps import StepRule

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


# -- slack of the cutting plane (Cao et al. 2023) ------------------------

def cut_slack(t, K0, K_exponent):
    """K_t = K0 (t+1)^-K_exponent, the widening of the stochastic cutting
    plane (Cao et al. 2023, eq. (9); §5 uses 1e-4 (t+1)^-1/2 on regression
    and 0.01 (t+1)^-1/3 on dictionary learning)."""
    return power_decay(t, K0, 1.0, K_exponent, divide=False)


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


# -- double-momentum bilevel methods (VR-BiAdam, SUSTAIN, MRBO) ----------

def double_momentum_schedule(t, *, scale, offset, c_upper, c_lower):
    """(eta_t, a_{t+1}, b_{t+1}): the step and the two STORM weights of
    the single-loop double-momentum methods, eta_t = scale/(offset + t)^{1/3},
    a_{t+1} = c_upper eta_t^2 (weight of the new hypergradient estimate),
    b_{t+1} = c_lower eta_t^2 (weight of the new grad_y g).

    VR-BiAdam (Huang et al. 2021, Thm 2): scale k, offset m, c1, c2.
    SUSTAIN (Khanduri et al. 2021, Thm 1): scale 1, offset w, alpha_t =
    eta_t, eta^f_{t+1} = c_eta alpha_t^2, eta^g_{t+1} = c_tau alpha_t^2.
    MRBO (Yang, Ji, Liang 2021, Thm 1): scale d, offset m, alpha_{k+1} =
    c1 eta_k^2, beta_{k+1} = c2 eta_k^2.
    """
    eta = power_decay(t, scale, offset, 1.0 / 3)
    return eta, c_upper * eta ** 2, c_lower * eta ** 2


def double_momentum_min_offset(scale, c_upper, c_lower):
    """max{2, k^3, (c1 k)^3, (c2 k)^3}: the smallest offset m that VR-BiAdam's
    Theorem 2 and MRBO's Theorem 1 allow; with it every value of
    :func:`double_momentum_schedule` is at most 1 for t >= 0."""
    return max(2.0, scale ** 3, (c_upper * scale) ** 3,
               (c_lower * scale) ** 3)


def check_offset(name, value, smallest, condition):
    """Raise unless the given schedule offset ``name`` satisfies smallest
    <= value < inf (``condition`` says which theorem's bound it is), so
    that the step and the momentum weights stay at most 1 (its default,
    the smallest, is a step rule)."""
    if not smallest <= value < float("inf"):
        raise ValueError(f"{name} must be a number >= {smallest:.6g} "
                         f"({condition}) or None, got {value!r}")
    return value


def strongly_convex_inner_step(letter, role="y step"):
    """The rule of a gradient step on g: :func:`strongly_convex_step` from
    the problem's declared mu_g and L_g."""
    return StepRule("inner_step", letter, role, "2/(mu_g + L_g)",
                    lambda solver, problem, steps: strongly_convex_step(
                        problem.mu_g, problem.L_g), needs=("mu_g", "L_g"))


def neumann_rule(name, letter, role="linear-system step"):
    """The rule of a step on the linear system (or of a Neumann series):
    :func:`neumann_step`, 1/L_g from the problem's declared L_g."""
    return StepRule(name, letter, role, "1/L_g",
                    lambda solver, problem, steps: neumann_step(problem.L_g),
                    needs=("L_g",))


def curvature_rules(inner_letter, linear_system_letter):
    """``inner_step`` 2/(mu_g + L_g) and ``linear_system_step`` 1/L_g
    (VRBO, Yang, Ji, Liang 2021; FSLA, Li, Gu, Huang 2022)."""
    return (strongly_convex_inner_step(inner_letter),
            neumann_rule("linear_system_step", linear_system_letter))


# -- decaying inner and outer steps ------------------------------------------

#: rule -> (exponent of the inner steps, exponent of the outer step):
#: "decreasing", the two-timescale rule (Dagréou et al. 2022's SOBA
#: theorem; Hong et al. 2023's TTSA exponents), "inverse_sqrt",
#: benchmark_bilevel's 1/sqrt(t+1) on every step
DECAYING_RULES = {"decreasing": (0.4, 0.6), "inverse_sqrt": (0.5, 0.5)}
STEP_RULES = ("constant", *DECAYING_RULES)


def decayed_steps(t, rule, inner_steps, outer_step, *, divide=True):
    """(inner steps, outer step) at iteration t >= 0: as given for
    ``rule="constant"``, else each times (t+1)^-e with the rule's exponents
    (``inner_steps``: a tuple, each decayed with the inner exponent).
    ``divide``: the floating-point form of :func:`power_decay`."""
    if rule == "constant":
        return inner_steps, outer_step
    a, b = DECAYING_RULES[rule]
    return (tuple(power_decay(t, step, 1.0, a, divide=divide)
                  for step in inner_steps),
            power_decay(t, outer_step, 1.0, b, divide=divide))
