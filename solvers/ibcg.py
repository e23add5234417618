import math

from benchmark_utils.checks.parameters import (
    check_choice,
    check_in_interval,
    check_int,
)
from benchmark_utils.solvers.general import GeneralBilevelSolver
from benchmark_utils.solvers.schedules import strongly_convex_step
from benchmark_utils.solvers.steps import StepRule, given_size

STEP_RULES = ("by_problem", "nonconvex", "convex")


def horizon_step(rule, horizon):
    """IBCG's constant Frank-Wolfe step gamma of a rule tied to the horizon
    K: "nonconvex" 1/sqrt(K) (Cor. 4.4) or "convex" log(K)/K (Cor. 4.2;
    K >= 2, since log 1 = 0)."""
    if rule == "nonconvex":
        return 1.0 / math.sqrt(horizon)
    if rule == "convex":
        return math.log(horizon) / horizon
    raise ValueError(f"no horizon rule {rule!r}; rules: nonconvex, convex")


def horizon_rule(step_rule, problem):
    """The rule gamma follows: ``step_rule``, "by_problem" read as "convex"
    where the problem declares F convex (Cor. 4.2 needs it), else
    "nonconvex" (Cor. 4.4 does not)."""
    if step_rule != "by_problem":
        return step_rule
    return "convex" if problem.F_convex else "nonconvex"


def default_linear_system_step(alpha):
    """eta = alpha / 2: the theory asks eta < (1 - beta)/mu_g, which equals
    alpha = 2/(mu_g + L_g), and gives no value; half the bound is ours."""
    return 0.5 * alpha


class Solver(GeneralBilevelSolver):
    """IBCG: Inexact Bilevel Conditional Gradient.

    Abolfazli, Jiang, Mokhtari, Yazdandoost Hamedani, "An Inexact
    Conditional Gradient Method for Constrained Bilevel Optimization",
    arXiv 2306.02429 (v1), Algorithm 1: one LMO per iteration, y_k tracks
    y*(x_k) and w_k tracks [grad^2_yy g]^-1 grad_y f (eqs. (7a), (8)).
    Iteration k (line 2: w_0 = y_0):

    * line 4: w_{k+1} = w_k - eta (grad^2_yy g(x_k, y_k) w_k - grad_y f);
    * line 5: F_k = grad_x f(x_k, y_k) - grad^2_xy g(x_k, y_k) w_{k+1};
    * line 6: s_k = argmin_{s in X} <F_k, s>;
    * line 7: x_{k+1} = (1 - gamma) x_k + gamma s_k;
    * line 8: y_{k+1} = y_k - alpha grad_y g(x_{k+1}, y_k), at the new x.

    Steps (``step_rules``): ``outer_step`` = gamma, constant, in (0, 1];
    its rule reads ``step_rule`` and the ``horizon`` K: "nonconvex" is
    Cor. 4.4's, "convex" Cor. 4.2's, "by_problem" the convex rule where
    the problem declares F convex (``F_convex``), else the nonconvex one.
    ``inner_step`` = alpha (Lemma 3.1's rule), ``linear_system_step`` =
    eta (the paper gives no value). L_g is ``L_g_full`` with full passes,
    where declared (:meth:`lower_smoothness`). ``batch_size`` None: full
    passes, the paper's deterministic setting; an integer draws fresh
    mini-batches (outside the analysis). Needs a bounded X with an LMO;
    the reported iterate is the last.
    """

    name = "IBCG"
    parameters = {
        "step_rule": ["by_problem"],
    }
    size_rules = (given_size("horizon", 1000),
                  given_size("batch_size", None))
    batch_size_may_be_none = True       # None: full passes, as in the paper

    step_rules = (
        StepRule("outer_step", "gamma", "x step (Frank-Wolfe)",
                 "step_rule of the horizon: nonconvex 1/sqrt(horizon), "
                 "convex log(horizon)/horizon; by_problem: convex where the "
                 "problem declares F convex, else nonconvex",
                 lambda solver, problem, steps: horizon_step(
                     horizon_rule(solver.step_rule, problem),
                     solver.horizon)),
        StepRule("inner_step", "alpha", "y step", "2/(mu_g + L_g)",
                 lambda solver, problem, steps: strongly_convex_step(
                     problem.mu_g, solver.lower_smoothness(problem)),
                 needs=("mu_g", "L_g")),
        StepRule("linear_system_step", "eta", "w step", "inner_step / 2",
                 lambda solver, problem, steps: default_linear_system_step(
                     steps["inner_step"])),
    )

    def skip_problem(self, problem):
        if problem.X.unbounded:
            return True, ("IBCG needs a bounded X with a linear minimization "
                          "oracle; this problem's X is the whole space")
        return super().skip_problem(problem)

    def check_parameters(self):
        super().check_parameters()
        check_int("horizon", self.horizon, 2)
        check_choice("step_rule", self.step_rule, STEP_RULES)
        if self.outer_step is not None:
            check_in_interval("outer_step", self.outer_step, 0.0, 1.0,
                              closed=(False, True))

    def check_with_problem(self, problem):
        # a step of a tuned table is checked here, as a given one above
        check_in_interval("outer_step", self.steps.outer_step, 0.0, 1.0,
                          closed=(False, True))

    def iterations(self):
        P, S = self.problem, self.batch(self.sizes.batch_size)
        gamma, alpha = self.steps.outer_step, self.steps.inner_step
        eta = self.steps.linear_system_step
        x, y = self.x, self.y
        w = y.clone()                                           # line 2
        while True:
            grad_x_f, grad_y_f = P.grad_f(x, y, batch=P.batch_upper(S))
            lower = P.batch_lower(S)   # both products are at (x_k, y_k)
            w = w - eta * (P.hvp_yy_g(x, y, w, batch=lower) - grad_y_f)
            direction = grad_x_f - P.hvp_xy_g(x, y, w, batch=lower)
            s = P.X.lmo(direction)                              # line 6
            x = x + gamma * (s - x)                             # line 7
            y = y - alpha * P.grad_g_y(x, y, batch=P.batch_lower(S))
            self.x, self.y = x, y
            yield
