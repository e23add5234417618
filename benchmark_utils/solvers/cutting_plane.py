"""What the cutting-plane methods share: SBCGI, SBCGF (Cao et al. 2023) and
their deterministic ancestor CG-BiO (Jiang et al. 2023).

Each iteration solves the linear minimization over Z cut by a halfspace
that contains the lower-level solution set (Cao et al. 2023, eqs. (9),
(12); Jiang et al. 2023, eq. (7) without the slack),

    s_t in argmin { <dF_t, s> : s in Z,
                    <dG_t, s - x_t> <= g(x_0) - g_hat_t + K_t },

exactly, with the set's own ``cut_lmo``, then takes the Frank-Wolfe step
x_{t+1} = (1 - gamma) x_t + gamma s_t (eq. (13)). The cut needs an x_0
close to the lower-level optimum and the exact g(x_0), both from a
lower-level warm start (:meth:`CuttingPlaneSolver.warm_started_x0`).

Shared parameters: ``on_infeasible`` (an empty subproblem takes s_t =
LMO_Z(dG_t), ``"lower_lmo"``, or keeps x_t, ``"skip"``; counted either
way), ``lmo_backend`` (``"exact"`` dual search or the papers' ``"cvxpy"``),
``charge_warm_start`` (True: the warm start runs inside the timed run, as
Cao et al. 2023 count it). SBCGI / SBCGF add :data:`CUT_PARAMETERS`: the
slack K_t = ``K0`` (t+1)^-``K_exponent`` (``K0 = 0``: the un-widened cut
of the ablations SBCGI-M / SBCGF-M) and the lower-level warm start
(``warm_start_method``: SPIDER-FW on g, ``"spider_fw"``, or none,
``warm_start_samples`` queries, step ``warm_start_step`` / (t+1), the
step rule :data:`WARM_START_STEP`; App. F.1: 10^5 and 0.1). See
``docs/solvers.md`` for the choices where the papers are silent.
"""
from benchmark_utils.checks.parameters import (
    check_choice,
    check_int,
    check_nonnegative,
    check_positive,
    refuse_unread,
)
from benchmark_utils.solvers.schedules import cut_slack
from benchmark_utils.solvers.simple import SimpleBilevelSolver
from benchmark_utils.solvers.steps import given_size, given_step
from benchmark_utils.solvers.warm_start import spider_fw_lower

INFEASIBLE_RULES = ("lower_lmo", "skip")
LMO_BACKENDS = ("exact", "cvxpy")
WARM_START_METHODS = ("spider_fw", "none")

CUT_PARAMETERS = {
    "on_infeasible": ["lower_lmo"],
    "lmo_backend": ["exact"],
    "warm_start_method": ["spider_fw"],
    "charge_warm_start": [True],
}
# SBCGI's / SBCGF's shared ``step_rules``: the slack's constants and the
# warm start's step scale
CUT_STEPS = (
    given_step("K0", "K_0", "scale of the slack K_t", 1e-4, positive=False),
    given_step("K_exponent", "none", "exponent of the slack K_t", 0.5,
               positive=False),
    given_step("warm_start_step", "gamma0",
               "scale of the SPIDER-FW warm start's step gamma0/(t+1)", 0.1),
)
# their shared ``size_rules``: the SPIDER-FW warm start's sample budget
CUT_SIZES = (given_size("warm_start_samples", 100_000),)


class CuttingPlaneSolver(SimpleBilevelSolver):
    """Base of SBCGI / SBCGF / CG-BiO and their no-cut ablations.

    Subclasses write ``iterations`` with ``self.warm_started_x0()`` and
    ``self.cut_direction(...)``, and say how the warm start approaches the
    lower level (:meth:`approach_lower_level`) and what the slack K_t is
    (:meth:`slack`). A ``cut`` parameter set to False drops the cut (the
    ablations STORM-FW / SPIDER-FW of Cao et al. 2023, App. F.4: an LMO over
    Z with dF_t only, no lower-level estimate at all).
    """

    # the parameters only the cut subproblem reads
    cut_only = ("on_infeasible", "lmo_backend")

    @property
    def use_cut(self):
        # a method without a ``cut`` parameter (CG-BiO) always cuts
        return getattr(self, "cut", True)

    def check_parameters(self):
        super().check_parameters()
        check_choice("on_infeasible", self.on_infeasible, INFEASIBLE_RULES)
        check_choice("lmo_backend", self.lmo_backend, LMO_BACKENDS)
        check_choice("charge_warm_start", self.charge_warm_start,
                     (True, False))
        check_choice("cut", self.use_cut, (True, False))
        if not self.use_cut:
            refuse_unread(self, self.cut_only,
                          "with cut=False (no cut subproblem)")

    def warm_up(self):
        """Set up the cut subproblem's backend once, outside every run.

        CVXPY compiles a parametrized problem on its first solve (seconds
        at the papers' sizes); paid inside a run it would be charged to
        whichever method happens to run first.
        """
        if self.use_cut:
            self.problem.Z.prepare_cut_lmo(self.lmo_backend)

    def pre_run_hook(self, callback):
        super().pre_run_hook(callback)
        self.g_x0 = None
        if not self.charge_warm_start:
            self.x, self.g_x0 = self.lower_level_warm_start(self.x)
            self.problem.reset_counts()

    def approach_lower_level(self, x):
        """The warm-start method's last iterate from x (hook)."""
        raise NotImplementedError

    def slack(self, t):
        """K_t, the widening of the cut at iteration t (hook)."""
        raise NotImplementedError

    def lower_level_warm_start(self, x):
        """x_0 from the start x, and the exact g(x_0) (Cao et al. 2023,
        Remark 3.1: one full pass in the finite-sum setting)."""
        P = self.problem
        x = self.approach_lower_level(x)
        return x, float(P.g(x, batch=P.full_lower()))

    def warm_started_x0(self):
        """x_0 (and g(x_0)): computed now, charged, unless done untimed."""
        if self.g_x0 is None:
            self.x, self.g_x0 = self.lower_level_warm_start(self.x)
        return self.x

    def cut_direction(self, t, x, grad_f, grad_g, g_value):
        """s_t of eq. (12) over the cut set (9), or its fallback."""
        Z = self.problem.Z
        if not self.use_cut:
            return Z.lmo(grad_f)
        beta = float(grad_g @ x) + self.g_x0 - float(g_value) + self.slack(t)
        result = Z.cut_lmo(grad_f, grad_g, beta, backend=self.lmo_backend)
        if result.feasible:
            return result.point
        if self.on_infeasible == "lower_lmo":
            return Z.lmo(grad_g)
        return x


class StochasticCuttingPlaneSolver(CuttingPlaneSolver):
    """Base of SBCGI / SBCGF: the slack K_t and the SPIDER-FW warm start of
    :data:`CUT_PARAMETERS`, which each solver lists in its ``parameters``
    (and :data:`CUT_STEPS` in its ``step_rules``, :data:`CUT_SIZES` in its
    ``size_rules``)."""

    cut_only = CuttingPlaneSolver.cut_only + ("K0", "K_exponent")

    def check_parameters(self):
        super().check_parameters()
        check_nonnegative("K0", self.K0)
        check_nonnegative("K_exponent", self.K_exponent)
        check_choice("warm_start_method", self.warm_start_method,
                     WARM_START_METHODS)
        check_int("warm_start_samples", self.warm_start_samples, 1)
        check_positive("warm_start_step", self.warm_start_step)
        if self.warm_start_method == "none":
            refuse_unread(self, ("warm_start_samples", "warm_start_step"),
                          "with warm_start_method='none'")

    def slack(self, t):
        return cut_slack(t, self.steps.K0, self.steps.K_exponent)

    def approach_lower_level(self, x):
        if self.warm_start_method == "spider_fw":
            x = spider_fw_lower(self.problem, x,
                                self.sizes.warm_start_samples,
                                self.steps.warm_start_step)
        return x
