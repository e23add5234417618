"""What IR-SCG and IR-FSCG (Giang-Tran et al. 2025) share: parameters,
defaults, the reported iterate.

Both methods take one Frank-Wolfe step per iteration on the regularized
objective Phi_t = sigma_t F + G with a vanishing sigma_t and a step alpha_t
(schedules in :mod:`benchmark_utils.solvers.schedules`), and can report the
last iterate x_t or the weighted average z_t
(:class:`~benchmark_utils.solvers.averaging.RegularizedAverage`).

``schedule="auto"`` uses the convex schedule (Thm 1 / Thm 3) when the
problem's upper level is convex and the nonconvex one (Thm 2 / Thm 4)
otherwise, which is what the paper runs on its regression and dictionary
experiments; ``None`` for varsigma, p, omega picks the paper's own values
for that schedule (App. D); ``output="auto"`` reports the weighted average
z_t under the convex schedule (Thms 1 and 3 hold for z_t) and the last
iterate x_t under the nonconvex one (Thms 2 and 4 hold for x_t). The paper
never says which of the two its plots show.
"""
import torch

from benchmark_utils.checks.parameters import (check_choice, check_in_interval,
                                              check_positive)
from benchmark_utils.solvers.averaging import RegularizedAverage
from benchmark_utils.solvers.simple import SimpleBilevelSolver

SCHEDULES = ("auto", "convex", "nonconvex")
OUTPUTS = ("auto", "average", "last")

# the schedule parameters both methods list first in their ``parameters``
SCHEDULE_PARAMETERS = {
    "schedule": ["auto"],
    "varsigma": [None],
    "p": [None],
    "omega": [None],
}


class IterativelyRegularizedSolver(SimpleBilevelSolver):
    """Base of IR-SCG / IR-FSCG; subclasses define PAPER_DEFAULTS,
    ``average_start`` and ``step_sizes``, and write ``iterations`` with
    :meth:`regularized_step`."""

    PAPER_DEFAULTS = {}     # "convex"/"nonconvex" -> varsigma, p, omega
    average_start = 1       # first index of the weighted sum in z_t

    def check_parameters(self):
        super().check_parameters()
        check_choice("schedule", self.schedule, SCHEDULES)
        check_choice("output", self.output, OUTPUTS)
        if self.schedule == "auto":
            # the problem picks the schedule (check_with_problem): for now, the values
            # given, each on its own (None: the paper's default, valid)
            _check_schedule_values(self.varsigma, self.p, self.omega)
        else:
            self.set_schedule(self.schedule == "convex")

    def check_with_problem(self, problem):
        super().check_with_problem(problem)
        if self.schedule == "auto":
            self.set_schedule(problem.f_convex)

    def set_schedule(self, convex):
        """The schedule's values (given, or the paper's defaults for the
        convex or nonconvex analysis), checked together."""
        defaults = self.PAPER_DEFAULTS["convex" if convex else "nonconvex"]
        self.convex = convex
        self.varsigma_, self.p_, self.omega_ = _check_schedule_values(
            _pick(self.varsigma, defaults["varsigma"]),
            _pick(self.p, defaults["p"]), _pick(self.omega, defaults["omega"]))
        if not convex and self.p_ > self.omega_:
            raise ValueError(
                "p must be <= omega for the nonconvex schedule (Giang-Tran "
                f"et al. 2025, Thms 2 and 4 need 0 < p <= omega), got "
                f"p={self.p_}, omega={self.omega_}")
        self.average = (self.output == "average"
                        or (self.output == "auto" and convex))

    def pre_run_hook(self, callback):
        super().pre_run_hook(callback)
        self.z = RegularizedAverage(self.x, start=self.average_start)

    def regularized_step(self, t, x, grad_F, grad_G, alpha, sigma,
                         sigma_next=None):
        """x_{t+1} from the estimates of grad f and grad g at x_t.

        The lines shared by Giang-Tran et al. 2025, Algs. 1 and 2: one LMO
        on the regularized direction, v_t in argmin_{v in Z} <sigma_t dF_t
        + dG_t, v>, the Frank-Wolfe step x_{t+1} = x_t + alpha_t (v_t - x_t)
        and the weighted average z_{t+1}, which needs sigma_{t+1}
        (``sigma_next``; None computes it from the schedule).

        Each formula is one fused torch call (``add`` with a scale,
        ``lerp``), equal to the plain expression up to rounding.
        """
        v = self.problem.Z.lmo(torch.add(grad_G, grad_F, alpha=sigma))
        x = torch.lerp(x, v, alpha)
        if sigma_next is None:
            sigma_next = self.step_sizes(t + 1)[1]
        self.z.update(t + 1, x, sigma, sigma_next)
        self.x = x
        return x

    def result(self):
        return {"x": self.z.value() if self.average else self.x}


def _pick(value, default):
    return default if value is None else value


def _check_schedule_values(varsigma, p, omega):
    """Each schedule value in its range; None (a default) is passed over."""
    if varsigma is not None:
        check_positive("varsigma", varsigma)
    if p is not None:
        check_in_interval("p", p, 0, 1, closed=(False, False))
    if omega is not None:
        check_in_interval("omega", omega, 0, 1, closed=(False, True))
    return varsigma, p, omega
