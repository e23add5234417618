"""What the cutting-plane methods of paper 000 share (SBCGI, SBCGF, CG-BiO).

Each iteration solves the linear minimization over Z cut by the (stochastic)
cutting plane of paper 000 eq. (9),

    s_t in argmin { <dF_t, s> : s in Z, <dG_t, s - x_t> <= g(x_0) - g_hat_t + K_t },

exactly, with ``benchmark_utils.sets.cut_lmo`` (through the counting view:
one LMO per call, empty subproblems counted in ``n_infeasible``), then takes
the Frank-Wolfe step x_{t+1} = (1 - gamma_{t+1}) x_t + gamma_{t+1} s_t (13).

Shared parameters (names of paper 000 where it has one):

* ``K0``, ``K_exponent``: the slack K_t = K0 (t+1)^-K_exponent (§5: 1e-4 and
  1/2 on regression, 0.01 and 1/3 on dictionary learning). ``K0 = 0`` is the
  un-widened cut (8) of the ablation SBCGI-M / SBCGF-M (App. F.4).
* ``on_infeasible``: what an empty subproblem does (the paper gives no rule
  for SBCGI / SBCGF; note 000 §6.6). ``"lower_lmo"`` (default) takes
  s_t = LMO_Z(dG_t), a step on the lower level only, our reading of the -M
  variants' "s_t = grad g_t" (a gradient is not a point of Z, note 000
  §2.10); ``"skip"`` keeps x_{t+1} = x_t. Either way the event is counted.
* ``lmo_backend``: ``"exact"`` (1-D dual search, the default) or
  ``"cvxpy"`` (the papers' own route, for checking and reproduction).
* ``warm_start``: ``"spider_fw"`` runs SPIDER-FW on the lower level from the
  start for ``warm_start_samples`` stochastic oracle queries with
  gamma_t = ``warm_start_gamma0`` / (t+1) (§5: 10^5 queries, 0.1);
  ``"none"`` uses the start as x_0 (the dictionary experiment's start
  [D_hat, 0] is already the lower-level fit). g(x_0) is then computed
  exactly by one full pass (Remark 3.1).
* ``charge_warm_start``: True (default, as paper 000 does) runs the warm
  start and g(x_0) inside the timed run, before the first step, so its
  samples and time appear in the curves from the first iterate on; False
  runs them untimed before the run and resets the counters.
"""
import torch

from benchmark_utils.sets.cut_lmo import cut_lmo_cvxpy

from benchmark_utils.solvers.base import BilevelSolver
from benchmark_utils.parameter_checks import (check_choice, check_int, check_nonnegative,
                         check_positive)
from benchmark_utils.solvers.warm_start import spider_fw_lower

INFEASIBLE_RULES = ("lower_lmo", "skip")
LMO_BACKENDS = ("exact", "cvxpy")
WARM_STARTS = ("spider_fw", "none")

CUT_PARAMETERS = {
    "K0": [1e-4],
    "K_exponent": [0.5],
    "on_infeasible": ["lower_lmo"],
    "lmo_backend": ["exact"],
    "warm_start": ["spider_fw"],
    "warm_start_samples": [100_000],
    "warm_start_gamma0": [0.1],
    "charge_warm_start": [True],
    "init": ["random"],
}


def lower_value_and_grad(P):
    """An oracle x, batch -> [g(x), grad g(x)] stacked in one tensor.

    The estimators of g_hat and dG share their sample (paper 000 Alg. 1:
    the same xi_t) and their correction, so one stacked estimate is kept;
    this also makes the momentum of g_hat (rho_t) equal to that of dG
    (beta_t), a choice the experiments leave open (note 000 §6.3).
    """
    def oracle(x, batch):
        value, grad = P.g_and_grad_g(x, batch=batch)
        return torch.cat([value.reshape(1), grad])
    return oracle


class CuttingPlaneSolver(BilevelSolver):
    """Base of SBCGI / SBCGF / CG-BiO and their no-cut ablations.

    Subclasses write ``iterations`` with ``self.start_point()`` and
    ``self.cut_direction(...)``; a ``cut`` parameter set to False drops the
    cut (the ablations STORM-FW / SPIDER-FW of App. F.4: an LMO over Z with
    dF_t only, no lower-level estimate at all).
    """

    family = "simple"

    @property
    def use_cut(self):
        # a method without a ``cut`` parameter (CG-BiO) always cuts
        return getattr(self, "cut", True)

    def validate(self, problem):
        check_nonnegative("K0", self.K0)
        check_nonnegative("K_exponent", self.K_exponent)
        check_choice("on_infeasible", self.on_infeasible, INFEASIBLE_RULES)
        check_choice("lmo_backend", self.lmo_backend, LMO_BACKENDS)
        check_choice("warm_start", self.warm_start, WARM_STARTS)
        check_int("warm_start_samples", self.warm_start_samples, 1)
        check_positive("warm_start_gamma0", self.warm_start_gamma0)
        check_choice("charge_warm_start", self.charge_warm_start,
                     (True, False))
        check_choice("init", self.init, ("random", "dataset"))
        check_choice("cut", self.use_cut, (True, False))

    def warm_up(self):
        """Compile the CVXPY cut subproblem once, outside every timed run.

        CVXPY canonicalizes a parametrized problem on its first solve (about
        20 s for the dictionary set); paid inside a run it would be charged
        to whichever method happens to run first (DESIGN.md, fair timing).
        """
        if self.lmo_backend == "cvxpy" and self.use_cut:
            Z = self.problem.problem.Z      # the uncounted set
            c = torch.ones(Z.dim, dtype=torch.float64)
            inactive = float(c @ Z.lmo(-c))     # max_Z <c, s>: never binds
            cut_lmo_cvxpy(Z, c, c, inactive)

    def pre_run_hook(self, callback):
        super().pre_run_hook(callback)
        self.g_x0 = None
        if not self.charge_warm_start:
            self.x, self.g_x0 = self.lower_warm_start(self.x)
            self.problem.reset_counts()

    def lower_warm_start(self, x):
        """x_0 from the start, and the exact g(x_0) (Remark 3.1)."""
        P = self.problem
        if self.warm_start == "spider_fw":
            x = spider_fw_lower(P, x, self.warm_start_samples,
                                self.warm_start_gamma0)
        return x, float(P.g(x, batch=P.full_lower()))

    def start_point(self):
        """x_0 and g(x_0): computed now (charged) unless done untimed."""
        if self.g_x0 is None:
            self.x, self.g_x0 = self.lower_warm_start(self.x)
        return self.x

    def slack(self, t):
        """K_t = K0 (t+1)^-K_exponent (paper 000 §5)."""
        return self.K0 * (t + 1.0) ** -self.K_exponent

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
