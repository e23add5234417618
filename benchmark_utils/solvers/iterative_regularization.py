"""What IR-SCG and IR-FSCG (Giang-Tran et al. 2025) share: parameters,
defaults, the regularized Frank-Wolfe step, the reported iterate.

Both methods take one Frank-Wolfe step per iteration on the regularized
objective Phi_t = sigma_t F + G, with a vanishing weight sigma_t =
``upper_weight`` (t+1)^-``upper_weight_exponent`` (varsigma and p in the
paper) and a step alpha_t, 2/(t+2) (convex) or
(t+1)^-``step_exponent`` (nonconvex; omega in the paper). They report the
last iterate x_t or the weighted average z_t
(:class:`~benchmark_utils.solvers.averaging.RegularizedAverage`).

``schedule="auto"`` uses the convex schedule (Thms 1 and 3) when the upper
level is convex and the nonconvex one (Thms 2 and 4) otherwise, as the
paper's experiments do; None for the three schedule values picks the
paper's values for that schedule (App. D); ``output="auto"`` reports z_t
under the convex schedule and x_t under the nonconvex one, the iterates
the theorems bound.
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

SCHEDULES = ("auto", "convex", "nonconvex")
OUTPUTS = ("auto", "average", "last")
VALUES = ("upper_weight", "upper_weight_exponent", "step_exponent")

# the schedule parameters both methods list first in their ``parameters``
SCHEDULE_PARAMETERS = {
    "schedule": ["auto"],
    "upper_weight": [None],
    "upper_weight_exponent": [None],
    "step_exponent": [None],
}


class IterativelyRegularizedSolver(SimpleBilevelSolver):
    """Base of IR-SCG / IR-FSCG; subclasses define PAPER_DEFAULTS,
    ``average_start`` and ``step_sizes``, and write ``iterations`` with
    :meth:`regularized_step`."""

    PAPER_DEFAULTS = {}     # "convex"/"nonconvex" -> the three VALUES
    average_start = 1       # first index of the weighted sum in z_t

    def check_parameters(self):
        super().check_parameters()
        check_choice("schedule", self.schedule, SCHEDULES)
        check_choice("output", self.output, OUTPUTS)
        if self.schedule == "auto":
            # the problem picks the schedule (check_with_problem): for now
            # each value given on its own (None: the paper's, valid)
            _check_schedule_values(
                *(getattr(self, name) for name in VALUES))
        else:
            self.set_schedule(self.schedule == "convex")

    def check_with_problem(self, problem):
        super().check_with_problem(problem)
        if self.schedule == "auto":
            self.set_schedule(problem.f_convex)

    def set_schedule(self, convex):
        """The schedule's values (given, or the paper's for the convex or
        nonconvex analysis), checked together."""
        defaults = self.PAPER_DEFAULTS["convex" if convex else "nonconvex"]
        self.convex = convex
        (self.upper_weight_, self.upper_weight_exponent_,
         self.step_exponent_) = _check_schedule_values(*(
             defaults[name] if getattr(self, name) is None
             else getattr(self, name) for name in VALUES))
        if not convex and self.upper_weight_exponent_ > self.step_exponent_:
            raise ValueError(
                "upper_weight_exponent must be <= step_exponent for the "
                "nonconvex schedule (Giang-Tran et al. 2025, Thms 2 and 4 "
                "need 0 < p <= omega), got upper_weight_exponent="
                f"{self.upper_weight_exponent_}, "
                f"step_exponent={self.step_exponent_}")
        self.average = (self.output == "average"
                        or (self.output == "auto" and convex))

    def regularization_weight(self, t):
        """sigma_t = varsigma (t+1)^-p."""
        return power_decay(t, self.upper_weight_, 1.0,
                           self.upper_weight_exponent_, divide=False)

    def nonconvex_step(self, t):
        """alpha_t = (t+1)^-omega, the step of the nonconvex schedule."""
        return power_decay(t, 1.0, 1.0, self.step_exponent_, divide=False)

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
                           step_exponent):
    """Each schedule value in its range; None (a default) is passed over."""
    if upper_weight is not None:
        check_positive("upper_weight", upper_weight)
    if upper_weight_exponent is not None:
        check_in_interval("upper_weight_exponent", upper_weight_exponent,
                          0, 1, closed=(False, False))
    if step_exponent is not None:
        check_in_interval("step_exponent", step_exponent, 0, 1,
                          closed=(False, True))
    return upper_weight, upper_weight_exponent, step_exponent
