"""The three directions of the SOBA framework, shared by SOBA, SABA and SRBA.

Dagréou, Ablin, Vaiter, Moreau, "A framework for bilevel optimization that
enables stochastic and global variance reduction algorithms", NeurIPS 2022,
eq. (6)-(7): instead of solving the linear system
grad^2_yy g v = -grad_y f at every iteration, a third variable v follows
it by gradient steps on the quadratic 1/2 v^T grad^2_yy g v + grad_y f^T v,
jointly with y (gradient steps on g) and x:

    D_y(x, y, v) = grad_y g(x, y),
    D_v(x, y, v) = grad^2_yy g(x, y) v + grad_y f(x, y),
    D_x(x, y, v) = grad_x f(x, y) + grad^2_xy g(x, y) v.

At y = y*(x) and v = v*(x) = -[grad^2_yy g]^-1 grad_y f, D_y = D_v = 0 and
D_x is the hypergradient grad F(x) = grad_x f - grad^2_xy g [grad^2_yy
g]^-1 grad_y f (the problems' sign convention,
:mod:`benchmark_utils.problems.general`). The stochastic versions take the
lower-level terms on a lower batch and the upper-level ones on an upper
batch (the paper's indices i and j).

:class:`SobaFamilySolver` holds what the three solvers share: the steps
rho (y and v) and gamma (x), with benchmark_bilevel's parametrization
(``step_size`` = rho, ``outer_ratio`` = rho / gamma) as an alternative,
and the start v_0 = 0.
"""
import torch

from benchmark_utils.checks.parameters import check_positive
from benchmark_utils.solvers.general import GeneralBilevelSolver
from benchmark_utils.solvers.schedules import neumann_step


def soba_directions(P, x, y, v, lower, upper):
    """(D_y, D_v, D_x) at (x, y, v): the lower-level terms on the drawn
    batch ``lower``, the upper-level ones on ``upper`` (a FullBatch for a
    full pass). Oracle calls: grad_g_y, hvp_yy_g, hvp_xy_g on ``lower``,
    grad_f (both partials, one call) on ``upper``."""
    grad_x_f, grad_y_f = P.grad_f(x, y, batch=upper)
    return (P.grad_g_y(x, y, batch=lower),
            P.hvp_yy_g(x, y, v, batch=lower) + grad_y_f,
            grad_x_f + P.hvp_xy_g(x, y, v, batch=lower))


# Dagréou et al. 2022, the SOBA convergence theorem (decreasing steps):
# rho_t = rho t^{-2/5}, gamma_t = gamma t^{-3/5}
SOBA_DECAY_EXPONENTS = (0.4, 0.6)
STEP_RULES = ("constant", "decreasing")


def soba_steps(t, rho, gamma, rule):
    """(rho_t, gamma_t) at iteration t = 0, 1, ...: constant, or the
    paper's decreasing rule rho (t+1)^{-2/5}, gamma (t+1)^{-3/5} (the
    paper counts from t = 1; ours from 0, hence t + 1)."""
    if rule == "constant":
        return rho, gamma
    a, b = SOBA_DECAY_EXPONENTS
    return rho * (t + 1.0) ** -a, gamma * (t + 1.0) ** -b


def project_to_ball(v, radius):
    """The Euclidean projection of v onto the ball of ``radius`` centred at
    0 (None: no projection), without a host synchronisation."""
    if radius is None:
        return v
    scale = torch.clamp(radius / torch.linalg.vector_norm(v), max=1.0)
    return v * scale


class SobaFamilySolver(GeneralBilevelSolver):
    """Steps and start shared by SOBA, SABA and SRBA.

    ``rho`` (y and v step; None: 1/L_g, the largest step with
    ||I - rho grad^2_yy g_j|| <= 1 on every sample, from the problem's
    declared L_g) and ``gamma`` (x step; None: the subclass's tuned value
    times the problem's ``outer_step_scale``). ``outer_ratio`` (None: not
    used) sets gamma = rho / outer_ratio instead, benchmark_bilevel's
    parametrization (its ``step_size`` is rho); giving both ``gamma`` and
    ``outer_ratio`` is an error.
    """

    defaults_from_problem = ("rho",)
    problem_constants = ("L_g",)

    def check_parameters(self):
        super().check_parameters()
        if self.outer_ratio is not None:
            check_positive("outer_ratio", self.outer_ratio)
            if self.gamma is not None:
                raise ValueError(
                    "gamma and outer_ratio both set the x step (gamma = rho"
                    " / outer_ratio); give one of them, the other None, got"
                    f" gamma={self.gamma!r}, outer_ratio={self.outer_ratio!r}")

    def check_with_problem(self, problem):
        self.rho_ = neumann_step(problem.L_g) if self.rho is None else self.rho
        if self.outer_ratio is not None:
            self.gamma_ = self.rho_ / self.outer_ratio

    def start_v(self):
        """v_0 = 0 (the paper leaves v_0 free; benchmark_bilevel uses 0)."""
        return torch.zeros_like(self.y)
