"""Which parameters the tuning command tunes, per solver, and the grid rule.

The one place where the tuned parameters are declared: every solver of the
benchmark appears in :data:`TUNED_PARAMETERS` (a test checks it), with the
role-named steps (README, "Adding a solver") its grid spans, or none with
the reason in :data:`UNTUNED_REASONS`.

Grid rule: ``N`` values log-spaced over two decades around the solver's
resolved default (or the value set in the config's entry),
``center * 10 ** linspace(-1, 1, N)``, rounded to 3 significant digits. For
an odd ``N`` the centre itself is a grid point (N = 3: x0.1, x1, x10).
"""
import math

import numpy as np

GENERAL_STEPS = ("outer_step", "inner_step")

TUNED_PARAMETERS = {
    # general family: the x step (or its scale) and the y step
    **{name: GENERAL_STEPS for name in (
        "AID-CG", "AID-FP", "AmIGO", "BOME", "BSA", "BiAdam", "F2SA",
        "F3SA", "FSLA", "IBCG", "ITD", "MRBO", "PZOBO", "SABA", "SBFW",
        "SOBA", "SRBA", "SUSTAIN", "TTSA", "VR-BiAdam", "VRBO", "stocBiO")},
    # x stays at x0: F(x) = F(x0) whatever its y step, so every grid point
    # would tie on the upper-level criterion
    "Without-BO": (),
    # black-box search: x follows the sampler, y is solved to a tolerance
    "Optuna": (),
    # simple family: the step where the method has one, the weight of f in
    # the iterative-regularization methods (their steps are schedules)
    "SBCGI": ("step",),
    "SBCGF": ("step",),
    "aR-IP-SeG": ("step",),
    "SDBGD": ("step",),
    "IR-SCG": ("upper_weight",),
    "IR-FSCG": ("upper_weight",),
    # deterministic reference with the 2 / (k + 2) rule: no step to tune
    "CG-BiO": (),
}

# The role-named steps (README, "Adding a solver") a tuning may span with
# ``--parameters`` instead of the table's, and that a default instance's
# tuned table may set (benchmark_utils/tuning/tuned_defaults.py)
STEP_PARAMETERS = ("outer_step", "inner_step", "linear_system_step",
                   "joint_y_step", "step", "upper_weight")

UNTUNED_REASONS = {
    "Without-BO": "x stays at x0, so F(x) does not depend on its steps "
                  "(every grid point would tie)",
    "Optuna": "x is searched by the TPE sampler, not stepped, and y is "
              "solved to inner_tol by L-BFGS: no step to tune",
    "CG-BiO": "the deterministic reference runs the step rule 2 / (k + 2) "
              "of Jiang et al. 2023: nothing to tune",
}

# two decades around the centre: wide enough to see a method's sensitivity
# on either side, narrow enough that 3 points bracket the usual optimum
DECADES = 1.0
SIGNIFICANT_DIGITS = 3


def tuned_parameters(solver_name):
    """The parameters the tuning spans for ``solver_name``."""
    if solver_name not in TUNED_PARAMETERS:
        raise ValueError(
            f"solver {solver_name!r} is not in TUNED_PARAMETERS "
            "(benchmark_utils/tuning/grids.py): declare the parameters to "
            "tune for it there")
    return TUNED_PARAMETERS[solver_name]


def round_significant(value, digits=SIGNIFICANT_DIGITS):
    """``value`` rounded to ``digits`` significant digits."""
    if value == 0 or not math.isfinite(value):
        return value
    return float(f"{value:.{digits - 1}e}")


def log_grid(center, n_points):
    """``n_points`` values ``center * 10 ** linspace(-1, 1, n_points)``,
    rounded to 3 significant digits, ascending, without duplicates."""
    if not (isinstance(center, (int, float)) and math.isfinite(center)
            and center > 0):
        raise ValueError(f"a grid centre must be a number > 0, got {center!r}")
    exponents = np.linspace(-DECADES, DECADES, n_points)
    values = [round_significant(center * 10.0 ** e) for e in exponents]
    return sorted(set(values))


def plain_number(value):
    """``value`` written as a plain decimal (``0.00001``, not ``1e-05``):
    what the tuned config and the score table show."""
    text = np.format_float_positional(float(value), trim="-")
    return text


def log_distance(point, center):
    """How far a grid point lies from the centre, in decades summed over
    its parameters: the tie-break of the selection (nearest wins)."""
    return sum(abs(math.log10(point[name] / center[name]))
               for name in point)
