"""The step sizes F2SA and F3SA share (Kwon, Kwon, Wright, Nowak, "A Fully
First-Order Method for Stochastic Bilevel Optimization", ICML 2023).

Both methods step with alpha_k = c_alpha / (k + k0)^a on y (and, times the
ratio xi, on x) and gamma_k = c_gamma / (k + k0)^c on z, the exponents
(a, c) set by the noise regime (F2SA: Corollary 4.2, eq. (5); F3SA:
Corollary 4.4, eq. (9a)). The paper fixes the constants through the
values at k = 0 (F2SA eq. (7), F3SA eq. (9c)), so here
c_alpha = alpha_0 k0^a and c_gamma = gamma_0 k0^c, with alpha_0 =
r gamma_0 / lambda_0 for F2SA (r its ``y_step_ratio``: 1 by default, 1/2
in eq. (7); docs/solvers.md, "F2SA") and gamma_0 / lambda_0 for F3SA.

The step rules both declare (benchmark_utils/solvers/steps.py):
:func:`exponent_rules` (a, c), :func:`alpha0_rule` and :func:`xi_rule`:
``outer_step`` is the x step at k = 0, xi alpha_0, and the paper's ratio
xi = outer_step / alpha_0 is derived from it.
"""
from benchmark_utils.checks.parameters import check_choice, check_in_interval
from benchmark_utils.solvers.schedules import power_decay
from benchmark_utils.solvers.steps import StepRule, given_step

# Corollary 4.2 (F2SA) and 4.4 (F3SA): (a, c) per noise regime
F2SA_EXPONENTS = {
    "both": (5 / 7, 4 / 7),     # (a) sigma_f, sigma_g > 0
    "upper": (3 / 5, 2 / 5),    # (b) sigma_f > 0, sigma_g = 0
    "none": (1 / 3, 0.0),       # (c) deterministic
}
F3SA_EXPONENTS = {
    "both": (3 / 5, 2 / 5),
    "upper": (1 / 2, 1 / 4),
    "none": (1 / 3, 0.0),
}


# the solvers' default noise regime (F2SA, F3SA)
DEFAULT_NOISE = "both"
# the parameters a and c: the decay exponents of the x step (and y's) and
# of the z step
A, C = "outer_step_exponent", "inner_step_exponent"


def kwon_exponents(noise, a, c, table, equation):
    """(a, c): the noise regime's row of ``table``, each overridden by
    ``a`` / ``c`` when given, both in [0, 1] and a >= c, so that lambda_k ~
    k^(a - c) does not decrease (``equation`` names the paper's step-size
    equation in the message)."""
    check_choice("noise_regime", noise, table)
    if a is not None and c is not None and noise != DEFAULT_NOISE:
        # noise only picks (a, c): with both given it would be ignored
        raise ValueError(
            f"noise_regime={noise!r} picks the exponents a and c, and both "
            f"are given (outer_step_exponent={a}, inner_step_exponent={c}): "
            "drop noise_regime or one of the two")
    default_a, default_c = table[noise]
    a = check_in_interval(A, default_a if a is None else a, 0, 1)
    c = check_in_interval(C, default_c if c is None else c, 0, 1)
    if a < c:
        raise ValueError(
            f"{A} (a) must be >= {C} (c) (Kwon et al. 2023, {equation}: "
            f"lambda_k ~ k^(a-c) must not decrease), got {A}={a}, {C}={c}")
    return a, c


def kwon_steps(k, *, a, c, alpha0, gamma0, k0):
    """(alpha_k, gamma_k) = (alpha0 k0^a / (k + k0)^a,
    gamma0 k0^c / (k + k0)^c): the values alpha0, gamma0 at k = 0."""
    alpha = power_decay(k, alpha0 * k0 ** a, k0, a)
    gamma = power_decay(k, gamma0 * k0 ** c, k0, c)
    return alpha, gamma


def exponent_rules(table, corollary):
    """``outer_step_exponent`` = a and ``inner_step_exponent`` = c, the
    exponents of alpha_k (the x and y steps) and gamma_k (the z step)
    (parameters; None: the ``noise_regime``'s row of ``table``, Kwon et
    al.'s ``corollary``; checked by :func:`kwon_exponents`)."""
    return tuple(
        StepRule(name, letter, f"exponent of {step}",
                 f"the noise regime's {letter} ({corollary})",
                 lambda solver, problem, steps, i=i:
                     table[solver.noise_regime][i],
                 positive=False)
        for i, (name, letter, step) in enumerate((
            (A, "a", "alpha_k (the x and y steps)"),
            (C, "c", "gamma_k (the z step)"))))


# lambda_0, the multiplier at k = 0 (F2SA's eq. (7), F3SA's eq. (9c))
LAMBDA0 = given_step("lambda0", "lambda_0", "multiplier at k = 0", 10.0)


def alpha0_rule(rule, ratio=None):
    """``alpha0`` (derived): alpha_0 = r gamma_0 / lambda0, r = the step
    named ``ratio`` (None: 1), gamma_0 = ``inner_step``; ``rule`` in
    words."""
    return StepRule(
        "alpha0", "alpha_0", "y step on f at k = 0", rule,
        lambda solver, problem, steps:
            (1.0 if ratio is None else steps[ratio])
            * steps["inner_step"] / steps["lambda0"],
        parameter=False)


def xi_rule(default_xi=None):
    """``xi`` (derived): the x step over the y step, outer_step / alpha_0.
    ``default_xi(solver, problem)``: the xi of a default x step given as
    xi alpha_0 (F3SA), taken exactly where ``outer_step`` is that default,
    so that the quotient's rounding does not change the default runs."""
    def xi(solver, problem, steps):
        if default_xi is not None:
            value = default_xi(solver, problem)
            if steps["outer_step"] == value * steps["alpha0"]:
                return value
        return steps["outer_step"] / steps["alpha0"]
    return StepRule("xi", "xi", "x step over y step", "outer_step / alpha0",
                    xi, parameter=False)
