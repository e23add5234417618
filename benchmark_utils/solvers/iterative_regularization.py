"""What IR-SCG and IR-FSCG (Giang-Tran et al. 2025) share: parameters,
defaults, the regularized Frank-Wolfe step, the reported iterate.

Both methods take one Frank-Wolfe step per iteration on the regularized
objective Phi_t = sigma_t F + G, with a vanishing weight sigma_t =
``upper_weight`` (t+1)^-``upper_weight_exponent`` (varsigma and p in the
paper) and a step alpha_t, 2/(t+2) (convex) or
(t+1)^-``outer_step_exponent`` (nonconvex; omega in the paper). They report the
last iterate x_t or the weighted average z_t
(:class:`~benchmark_utils.solvers.averaging.RegularizedAverage`).

``schedule="auto"`` uses the convex schedule (Thms 1 and 3) when the upper
level is convex and the nonconvex one (Thms 2 and 4) otherwise, as the
paper's experiments do; None for the three schedule values picks the
paper's values for that schedule (App. D; :func:`schedule_rules`, the
solvers' ``step_rules``); ``output="auto"`` reports z_t under the convex
schedule and x_t under the nonconvex one, the iterates the theorems bound.
"""
import torch

from benchmark_utils.checks.parameters import (
    check_choice,
    check_in_interval,
    check_positive,
)
from benchmark_utils.solvers.averaging import RegularizedAverage
from benchmark_utils.solvers.schedules import power_decay
from benchmark_utils.solvers.simple import SimpleBilevelSolver
from benchmark_utils.solvers.steps import StepRule

SCHEDULES = ("auto", "convex", "nonconvex")
OUTPUTS = ("auto", "average", "last")
# (name, paper letter, role) of the schedule's three numbers
VALUES = (("upper_weight", "varsigma", "scale of the weight sigma_t of f"),
          ("upper_weight_exponent", "p", "decay exponent of sigma_t"),
          ("outer_step_exponent", "omega",
           "decay exponent of the nonconvex schedule's step alpha_t "
           "(unused by the convex schedule)"))

# the schedule parameters both methods list first in their ``parameters``
SCHEDULE_PARAMETERS = {
    "schedule": ["auto"],
}


def schedule_rules(paper_defaults):
    """The ``step_rules`` of the three schedule values: None is the
    paper's value (``paper_defaults``: ``{"convex": {...}, "nonconvex":
    {...}}``, App. D) for the schedule the run takes
    (:meth:`IterativelyRegularizedSolver.schedule_on`)."""
    def rule(name, letter, role):
        convex, nonconvex = (paper_defaults[kind][name]
                             for kind in ("convex", "nonconvex"))
        return StepRule(
            name, letter, role,
            f"the paper's for the run's schedule (App. D): {convex:.4g} "
            f"convex, {nonconvex:.4g} nonconvex",
            lambda solver, problem, steps: paper_defaults[
                solver.schedule_on(problem)][name])
    return tuple(rule(*value) for value in VALUES)


class IterativelyRegularizedSolver(SimpleBilevelSolver):
    """Base of IR-SCG / IR-FSCG; subclasses define PAPER_DEFAULTS,
    ``step_rules = schedule_rules(PAPER_DEFAULTS)``, ``average_start`` and
    ``step_sizes``, and write ``iterations`` with :meth:`regularized_step`.
    The loop reads the schedule's values from ``self.steps``."""

    PAPER_DEFAULTS = {}     # "convex"/"nonconvex" -> the three VALUES
    average_start = 1       # first index of the weighted sum in z_t

    def check_parameters(self):
        super().check_parameters()
        check_choice("schedule", self.schedule, SCHEDULES)
        check_choice("output", self.output, OUTPUTS)
        given = {name: getattr(self, name) for name, _, _ in VALUES}
        _check_schedule_values(**given)
        if self.schedule != "auto":
            # the schedule is known, so are its values (None: the declared
            # rule, which needs no problem then); checked together now, the
            # auto schedule waits for the problem
            self.check_schedule(self.schedule == "convex", **{
                rule.name: rule.default(self, None, {})
                if given[rule.name] is None else given[rule.name]
                for rule in self.step_rules})

    def schedule_on(self, problem):
        """``"convex"`` or ``"nonconvex"``: the schedule the run takes on
        ``problem`` (``schedule="auto"``: convex iff f is convex)."""
        if self.schedule != "auto":
            return self.schedule
        return "convex" if problem.f_convex else "nonconvex"

    def check_with_problem(self, problem):
        # the schedule and the iterate reported (choices, not numbers),
        # and the resolved values checked together
        super().check_with_problem(problem)
        self.convex = self.schedule_on(problem) == "convex"
        self.average = (self.output == "average"
                        or (self.output == "auto" and self.convex))
        self.check_schedule(self.convex, **{
            name: getattr(self.steps, name) for name, _, _ in VALUES})

    def check_sample_counts(self, counts):
        super().check_sample_counts(counts)
        # the auto schedule follows f's convexity: where the dataset
        # declares it, the exponent it never reads is refused before any run
        if counts.family == self.family and counts.f_convex is not None:
            self.refuse_unread_exponent(
                self.schedule_on(counts) == "convex")

    def check_schedule(self, convex, upper_weight, upper_weight_exponent,
                       outer_step_exponent):
        """The schedule's values checked together (ValueError); a given
        ``outer_step_exponent`` is refused under the convex schedule
        (:meth:`refuse_unread_exponent`)."""
        _check_schedule_values(upper_weight, upper_weight_exponent,
                               outer_step_exponent)
        self.refuse_unread_exponent(convex)
        if not convex and upper_weight_exponent > outer_step_exponent:
            raise ValueError(
                "upper_weight_exponent must be <= outer_step_exponent for "
                "the nonconvex schedule (Giang-Tran et al. 2025, Thms 2 and "
                "4 need 0 < p <= omega), got upper_weight_exponent="
                f"{upper_weight_exponent}, outer_step_exponent="
                f"{outer_step_exponent}")

    def refuse_unread_exponent(self, convex):
        """ValueError for a given ``outer_step_exponent`` under the convex
        schedule, whose step is Frank-Wolfe's 2/(t+2) and never reads
        it."""
        if convex and getattr(self, "outer_step_exponent", None) is not None:
            raise ValueError(
                f"outer_step_exponent is the nonconvex schedule's (alpha_t = "
                f"(t+1)^-omega); the convex schedule's step is 2/(t+2) and "
                f"never reads it: drop outer_step_exponent or set "
                f"schedule=nonconvex, got outer_step_exponent="
                f"{self.outer_step_exponent} with the convex schedule")

    def regularization_weight(self, t):
        """sigma_t = varsigma (t+1)^-p."""
        return power_decay(t, self.steps.upper_weight, 1.0,
                           self.steps.upper_weight_exponent, divide=False)

    def nonconvex_step(self, t):
        """alpha_t = (t+1)^-omega, the step of the nonconvex schedule."""
        return power_decay(t, 1.0, 1.0, self.steps.outer_step_exponent,
                           divide=False)

    def pre_run_hook(self, callback):
        super().pre_run_hook(callback)
        self.z = RegularizedAverage(self.x, start=self.average_start)

    def regularized_step(self, t, x, grad_F, grad_G, alpha, sigma,
                         sigma_next=None):
        """x_{t+1} from the estimates of grad f and grad g at x_t (the lines
        shared by Algs. 1 and 2): v_t in argmin_{v in Z} <sigma_t dF_t +
        dG_t, v>, x_{t+1} = x_t + alpha_t (v_t - x_t) and the weighted
        average z_{t+1}, which needs sigma_{t+1} (``sigma_next``; None
        computes it). Each formula is one fused torch call (``add`` with a
        scale, ``lerp``)."""
        v = self.problem.Z.lmo(torch.add(grad_G, grad_F, alpha=sigma))
        x = torch.lerp(x, v, alpha)
        if sigma_next is None:
            sigma_next = self.step_sizes(t + 1)[1]
        self.z.update(t + 1, x, sigma, sigma_next)
        self.x = x
        return x

    def result(self):
        return {"x": self.z.value() if self.average else self.x}


def _check_schedule_values(upper_weight, upper_weight_exponent,
                           outer_step_exponent):
    """Each schedule value in its range; None (a default) is passed over."""
    if upper_weight is not None:
        check_positive("upper_weight", upper_weight)
    if upper_weight_exponent is not None:
        check_in_interval("upper_weight_exponent", upper_weight_exponent,
                          0, 1, closed=(False, False))
    if outer_step_exponent is not None:
        check_in_interval("outer_step_exponent", outer_step_exponent, 0, 1,
                          closed=(False, True))
