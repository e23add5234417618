"""Which parameters the tuning command tunes, per solver, and the grid rule.

The one place where the tuned parameters are declared: every solver of the
benchmark appears in :data:`TUNED_PARAMETERS` (a test checks it), with the
role-named steps (README, "Adding a solver") its grid spans, or none with
the reason in :data:`UNTUNED_REASONS`; and in :data:`FIXED_KNOBS`, the
knobs its paper tunes or varies that stay fixed, each with its reason.
Equal effort: every method of an experiment gets the same number of grid
points per tuned dimension (``--grid-points``), and spans its steps alone
unless ``--parameters`` names more (:data:`TUNABLE_KNOBS`).

Grid rule: one log lattice per tuned parameter, ``centre * 10 ** ((k +
o) * step)`` for every integer ``k``, ``step = 2 / (N - 1)`` decades, ``o
= 0`` for an odd ``N`` (the centre is a point) and ``1/2`` for an even
one, each value rounded to 3 significant digits; the first grid is the
``N`` values spanning two decades around the centre (N = 3: x0.1, x1,
x10), and widening adds lattice points, so a value is always computed
from ``(centre, k)`` the same way and points coincide exactly. An integer
knob (``T``) has the lattice ``round(centre * 2 ** (k + o))``, integers
>= 1 (N = 3: x1/2, x1, x2).
"""
import math

import numpy as np

GENERAL_STEPS = ("outer_step", "inner_step")

TUNED_PARAMETERS = {
    # general family: the x step (or its scale) and the y step
    **{name: GENERAL_STEPS for name in (
        "AID-CG", "AID-FP", "AmIGO", "BOME", "BSA", "BiAdam", "F2SA",
        "F3SA", "FSLA", "IBCG", "ITD", "MRBO", "PZOBO", "SABA", "SBFW",
        "SOBA", "SRBA", "TTSA", "VR-BiAdam", "VRBO", "stocBiO")},
    # the x step's scale and the y step's ratio to it (Khanduri et al.'s
    # beta_t = c_beta alpha_t)
    "SUSTAIN": ("outer_step", "inner_step_ratio"),
    # x stays at x0: F(x) = F(x0) whatever its y step, so every grid point
    # would tie on the upper-level criterion
    "Without-BO": (),
    # black-box search: x follows the sampler, y is solved to a tolerance
    "Optuna": (),
    # simple family: the x step where the method has one, the weight of f in
    # the iterative-regularization methods (their steps are schedules)
    "SBCGI": ("outer_step",),
    "SBCGF": ("outer_step",),
    "aR-IP-SeG": ("outer_step",),
    "SDBGD": ("outer_step",),
    "IR-SCG": ("upper_weight",),
    "IR-FSCG": ("upper_weight",),
    # deterministic reference with the 2 / (k + 2) rule: no step to tune
    "CG-BiO": (),
}

# The role-named steps (README, "Adding a solver") a tuning may span with
# ``--parameters`` instead of the table's, and that a default instance's
# tuned table may set (benchmark_utils/tuning/tuned_defaults.py)
STEP_PARAMETERS = ("outer_step", "inner_step", "inner_step_ratio",
                   "linear_system_step", "joint_y_step", "upper_weight")

UNTUNED_REASONS = {
    "Without-BO": "x stays at x0, so F(x) does not depend on its steps "
                  "(every grid point would tie)",
    "Optuna": "x is searched by the TPE sampler, not stepped, and y is "
              "solved to inner_tol by L-BFGS: no step to tune",
    "CG-BiO": "the deterministic reference runs the step rule 2 / (k + 2) "
              "of Jiang et al. 2023: nothing to tune",
}

# Knobs other than steps that ``--parameters`` may span, per solver (fixed
# by default: each is in FIXED_KNOBS), and the lattice of each knob
TUNABLE_KNOBS = {
    "F2SA": ("lambda0", "T"),
    "BiAdam": ("rho", "neumann_depth_bound"),
    "VR-BiAdam": ("rho", "neumann_depth_bound"),
    **{name: ("neumann_depth_bound",) for name in ("BSA", "SUSTAIN")},
    **{name: ("neumann_terms",) for name in ("MRBO", "stocBiO", "VRBO")},
}
KNOB_LATTICES = {"lambda0": "log", "rho": "log", "T": "integer",
                 "neumann_terms": "integer",
                 "neumann_depth_bound": "integer"}
# what --parameters accepts
TUNABLE_PARAMETERS = STEP_PARAMETERS + tuple(KNOB_LATTICES)


def _work(what):
    return (f"{what}: work per iteration, which the iteration budget does "
            "not charge (a larger value would buy unpaid progress); kept "
            "at the default")


def _fixed(what):
    return (f"{what}: kept at the default, so that every method spans its "
            "steps alone (equal effort)")


def _tunable(what, name, lattice):
    return (f"{what}: fixed by default (equal effort); --parameters {name} "
            f"spans it ({lattice})")


_LOG, _INTEGER = "log lattice like a step", "integer lattice centre x 2^k"
_NEUMANN = _tunable("Neumann terms (Hessian-vector products per "
                    "hypergradient: work an iteration budget does not "
                    "charge, a sample budget does)", "neumann_terms",
                    _INTEGER)
_DEPTH = _tunable("bound of the random Neumann depth (its samples per "
                  "hypergradient: work an iteration budget does not "
                  "charge, a sample budget does)", "neumann_depth_bound",
                  _INTEGER)
_INNER = _work("inner steps on y per outer iteration")

# The knobs each solver's paper tunes or varies that the tuning keeps
# fixed, with the reason (a test checks every solver is here, each knob a
# parameter of the solver and not a tuned one)
def _adaptive_knobs(theorem):
    """BiAdam's and VR-BiAdam's knobs (``theorem`` gives their schedule's
    momentum constants)."""
    return {"rho": _tunable("A_t's offset rho", "rho", _LOG),
            "neumann_depth_bound": _DEPTH,
            "decay_x": _fixed("A_t's averaging weight"),
            "decay_y": _fixed("B_t's averaging weight"),
            "c1": _fixed(f"{theorem}'s momentum constant c1"),
            "c2": _fixed(f"{theorem}'s momentum constant c2")}


FIXED_KNOBS = {
    "AID-CG": {"T": _INNER, "k": _work("conjugate-gradient steps")},
    "AID-FP": {"T": _INNER, "k": _work("fixed-point steps")},
    "AmIGO": {"T": _INNER, "N": _work("SGD steps on the linear system")},
    "aR-IP-SeG": {"penalty_weight": _fixed("the penalty's scale rho0"),
                  "r": _fixed("the penalty's growth exponent")},
    "BiAdam": _adaptive_knobs("Theorem 1"),
    "BOME": {"T": _INNER, "eta": _fixed("the dynamic barrier's eta")},
    "BSA": {"T": _INNER, "neumann_depth_bound": _DEPTH,
            "inner_steps_growth": _work("the growth of the inner steps")},
    "CG-BiO": {"epsilon_g": _fixed("the lower level's target accuracy")},
    "F2SA": {"lambda0": _tunable("the multiplier's start lambda0",
                                 "lambda0", _LOG),
             "T": _tunable("inner steps per iteration (3T + 2 batches: "
                           "work the iteration budget does not charge)",
                           "T", _INTEGER),
             "step_offset": _fixed("the schedule's offset k0")},
    "F3SA": {"lambda0": _fixed("the multiplier's start lambda0"),
             "step_offset": _fixed("the schedule's offset k0"),
             "momentum_exponent": _fixed("the STORM weights' exponent")},
    "FSLA": {"momentum": _fixed("the hypergradient's momentum weight")},
    "IBCG": {"horizon": _fixed("the horizon K of the step rule")},
    "IR-FSCG": {"upper_weight_exponent": _fixed("sigma_t's exponent p"),
                "outer_step_exponent": _fixed("the step's exponent omega"),
                "period": _work("the full-gradient period q")},
    "IR-SCG": {"upper_weight_exponent": _fixed("sigma_t's exponent p"),
               "outer_step_exponent": _fixed("the step's exponent omega")},
    "ITD": {"T": _INNER},
    "MRBO": {"neumann_terms": _NEUMANN,
             "c1": _fixed("the momentum constant c1"),
             "c2": _fixed("the momentum constant c2")},
    "Optuna": {"inner_tol": _work("the inner solve's tolerance")},
    "PZOBO": {"T": _INNER,
              "n_directions": _work("the Gaussian directions Q"),
              "smoothing": _fixed("the smoothing radius mu")},
    "SABA": {},
    "SBCGF": {"K0": _fixed("the cut's slack K0"),
              "K_exponent": _fixed("the slack's exponent"),
              "period": _work("the full-pass period q")},
    "SBCGI": {"outer_step_exponent": _fixed("the step's exponent omega"),
              "K0": _fixed("the cut's slack K0"),
              "K_exponent": _fixed("the slack's exponent")},
    "SBFW": {"delta_factor": _fixed("the smoothing factor of delta")},
    "SDBGD": {"barrier_gap_scale": _fixed("the barrier's gap scale"),
              "barrier_gradient_scale": _fixed("the barrier's gradient "
                                               "scale")},
    "SOBA": {},
    "SRBA": {"period": _work("the full-pass restart period")},
    "stocBiO": {"D": _INNER, "neumann_terms": _NEUMANN},
    "SUSTAIN": {"neumann_depth_bound": _DEPTH,
                "c_eta": _fixed("the momentum constant c_eta"),
                "c_tau": _fixed("the momentum constant c_tau")},
    "TTSA": {"horizon": _fixed("the horizon of the step rule"),
             "c_h": _fixed("the Neumann depth's constant c_h")},
    "VR-BiAdam": _adaptive_knobs("Theorem 2"),
    "VRBO": {"neumann_terms": _NEUMANN,
             "period": _work("the large-batch period q"),
             "inner_loop_length": _work("the SPIDER corrections m per x "
                                        "step")},
    "Without-BO": {},
}

# two decades around the centre: wide enough to see a method's sensitivity
# on either side, narrow enough that 3 points bracket the usual optimum
DECADES = 1.0
SIGNIFICANT_DIGITS = 3


# what a solver not in TUNED_PARAMETERS (one a user added) tunes: the
# role-named steps it declares (docs/adding.md)
DEFAULT_TUNED = ("outer_step", "inner_step")


def tuned_parameters(solver_name, parameters=()):
    """The parameters the tuning spans for ``solver_name``: its entry of
    :data:`TUNED_PARAMETERS`, or, for a solver the table does not list,
    the role-named steps among its ``parameters`` (:data:`DEFAULT_TUNED`;
    a solver that has none is kept as it is, with :func:`untuned_reason`)."""
    if solver_name in TUNED_PARAMETERS:
        return TUNED_PARAMETERS[solver_name]
    return tuple(name for name in DEFAULT_TUNED if name in parameters)


def untuned_reason(solver_name):
    """Why a solver with no tuned parameter is kept as it is."""
    return UNTUNED_REASONS.get(
        solver_name, "it declares none of the role-named steps "
        f"({', '.join(DEFAULT_TUNED)}) and is not in TUNED_PARAMETERS "
        "(benchmark_utils/tuning/grids.py)")


def round_significant(value, digits=SIGNIFICANT_DIGITS):
    """``value`` rounded to ``digits`` significant digits."""
    if value == 0 or not math.isfinite(value):
        return value
    return float(f"{value:.{digits - 1}e}")


def lattice_offset(n_points):
    """The lattice's offset ``o``: 0 for an odd N (the centre is a
    point), 1/2 for an even one."""
    return 0.0 if n_points % 2 else 0.5


def first_indices(n_points):
    """The lattice indices ``k`` of the first grid (N values)."""
    return list(range(-(n_points // 2), n_points - n_points // 2))


def _check_center(center):
    if not (isinstance(center, (int, float)) and math.isfinite(center)
            and center > 0):
        raise ValueError(f"a grid centre must be a number > 0, got {center!r}")


class Axis:
    """One tuned parameter's lattice (module doc): the value of index
    ``k``, and why an index has no value (an integer lattice's floor)."""

    def __init__(self, name, center, n_points, kind="log"):
        _check_center(center)
        if kind not in ("log", "integer"):
            raise ValueError(f"unknown lattice {kind!r}")
        self.name, self.center, self.kind = name, center, kind
        self.n_points = n_points
        self.offset = lattice_offset(n_points)
        self.step = 2 * DECADES / (n_points - 1)      # decades per index

    def value(self, k):
        if self.kind == "integer":
            return max(1, math.floor(self.center * 2.0 ** (k + self.offset)
                                     + 0.5))
        return round_significant(
            self.center * 10.0 ** ((k + self.offset) * self.step))

    def end_reason(self, k):
        """Why index ``k`` is no point of the lattice (None: it is): its
        value repeats the one next to it towards the centre."""
        inward = k + 1 if k < 0 else k - 1
        if k != 0 and self.value(k) == self.value(inward):
            return (f"{self.name}: no other value beyond "
                    f"{plain_number(self.value(inward))} on the lattice"
                    + (" (integers >= 1)" if self.kind == "integer" else ""))
        return None

    def first(self):
        """The first grid's indices (those with a value)."""
        return [k for k in first_indices(self.n_points)
                if self.end_reason(k) is None]


def log_grid(center, n_points):
    """The first grid of the log lattice around ``center``: ``n_points``
    values ``center * 10 ** linspace(-1, 1, n_points)``, rounded to 3
    significant digits, ascending, without duplicates."""
    _check_center(center)
    axis = Axis("value", center, n_points)
    return sorted({axis.value(k) for k in axis.first()})


def plain_number(value):
    """``value`` written as a plain decimal (``0.00001``, not ``1e-05``):
    what the tuned config and the score table show."""
    text = np.format_float_positional(float(value), trim="-")
    return text


def log_distance(point, center):
    """How far a grid point lies from the centre, in decades summed over
    its parameters."""
    return sum(abs(math.log10(point[name] / center[name]))
               for name in point)


def step_log_ratio(point, center):
    """log10 of the product of the tuned steps' ratios to the centre (the
    role-named steps of :data:`STEP_PARAMETERS` only): the tie-break
    among points other than the default (the smaller wins)."""
    return sum(math.log10(point[name] / center[name]) for name in point
               if name in STEP_PARAMETERS)
