"""The three directions of the SOBA framework, shared by SOBA, SABA and SRBA.

Dagréou, Ablin, Vaiter, Moreau, NeurIPS 2022, eq. (6)-(7): instead of
solving grad^2_yy g v = -grad_y f at every iteration, a third variable v
follows it by gradient steps on 1/2 v^T grad^2_yy g v + grad_y f^T v,
jointly with y (gradient steps on g) and x:

    D_y(x, y, v) = grad_y g(x, y),
    D_v(x, y, v) = grad^2_yy g(x, y) v + grad_y f(x, y),
    D_x(x, y, v) = grad_x f(x, y) + grad^2_xy g(x, y) v.

At y = y*(x), v = v*(x) = -[grad^2_yy g]^-1 grad_y f, D_y = D_v = 0 and D_x
is the hypergradient (the sign convention of
:mod:`benchmark_utils.problems.general`). The stochastic versions take the
lower-level terms on a lower batch and the upper-level ones on an upper
batch (the paper's indices i and j).

:class:`SobaFamilySolver` holds what the three solvers share: the steps
``inner_step`` (y and v) and ``outer_step`` (x), benchmark_bilevel's
parametrization (``outer_ratio``) as an alternative, and v_0 = 0. See
docs/solvers.md, "SOBA", for the choices and measurements.
"""
import torch

from benchmark_utils.checks.parameters import check_positive
from benchmark_utils.solvers.general import GeneralBilevelSolver
from benchmark_utils.solvers.schedules import neumann_rule
from benchmark_utils.solvers.steps import StepRule


def soba_directions(P, x, y, v, lower, upper):
    """(D_y, D_v, D_x) at (x, y, v): the lower-level terms on the drawn
    batch ``lower``, the upper-level ones on ``upper`` (a FullBatch for a
    full pass). Oracle calls: grad_g_y, hvp_yy_g, hvp_xy_g on ``lower``,
    grad_f (both partials, one call) on ``upper``."""
    grad_x_f, grad_y_f = P.grad_f(x, y, batch=upper)
    return (P.grad_g_y(x, y, batch=lower),
            P.hvp_yy_g(x, y, v, batch=lower) + grad_y_f,
            grad_x_f + P.hvp_xy_g(x, y, v, batch=lower))


def project_to_ball(v, radius):
    """The Euclidean projection of v onto the ball of ``radius`` centred at
    0 (None: no projection), without a host synchronisation."""
    if radius is None:
        return v
    scale = torch.clamp(radius / torch.linalg.vector_norm(v), max=1.0)
    return v * scale


def soba_step_rules(outer_default, outer_rule, letters=("rho", "gamma")):
    """``inner_step`` (the y and v step; None: 1/L_g, the largest step with
    ||I - step grad^2_yy g_j|| <= 1 on every sample) and ``outer_step``
    (the x step; None: inner_step / outer_ratio where ``outer_ratio`` is
    given, benchmark_bilevel's parametrization, else ``outer_default(solver,
    problem)``, the rule ``outer_rule`` in words)."""
    inner, outer = letters
    return (
        neumann_rule("inner_step", inner, "y and v step"),
        StepRule("outer_step", outer, "x step",
                 "inner_step / outer_ratio where outer_ratio is given, "
                 f"else {outer_rule}",
                 lambda solver, problem, steps: (
                     steps["inner_step"] / solver.outer_ratio
                     if solver.outer_ratio is not None
                     else outer_default(solver, problem)),
                 branch=lambda solver: (
                     "inner_step / outer_ratio (outer_ratio given)"
                     if solver.outer_ratio is not None else outer_rule)))


def tuned_on_quadratic(value):
    """(default, rule) of an x step tuned on the quadratic: ``value`` times
    the problem's outer_step_scale (see
    :func:`~benchmark_utils.solvers.general.tuned_outer_step`)."""
    return (lambda solver, problem: value * problem.outer_step_scale,
            f"{value:g} x the problem's outer_step_scale")


class SobaFamilySolver(GeneralBilevelSolver):
    """Steps and start shared by SOBA, SABA and SRBA.

    Steps: :func:`soba_step_rules` (``step_rules``). ``outer_ratio`` (None:
    unused) sets outer_step = inner_step / outer_ratio instead,
    benchmark_bilevel's parametrization (its ``step_size`` is inner_step);
    giving it with ``outer_step`` is an error.
    """

    def check_parameters(self):
        super().check_parameters()
        if self.outer_ratio is not None:
            check_positive("outer_ratio", self.outer_ratio)
            if self.outer_step is not None:
                raise ValueError(
                    "outer_step and outer_ratio both set the x step "
                    "(outer_step = inner_step / outer_ratio); give one of "
                    f"them, the other None, got outer_step={self.outer_step!r}"
                    f", outer_ratio={self.outer_ratio!r}")

    def start_v(self):
        """v_0 = 0 (the paper leaves v_0 free; benchmark_bilevel uses 0)."""
        return torch.zeros_like(self.y)
