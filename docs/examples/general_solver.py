"""A minimal general-bilevel solver, to copy when adding one.

    min_{x in X} f(x, y*(x)),   y*(x) = argmin_y g(x, y),

with g strongly convex in y.

The method is single-loop approximate implicit differentiation: one
gradient step on y, then the hypergradient

    grad_x f - grad^2_xy g [grad^2_yy g]^-1 grad_y f

at the current y with a truncated Neumann series for the inverse, and a
(projected) gradient step on x. It is close to stocBiO with one inner step
(Ji et al. 2021, Alg. 2); it shows the pieces a real method is made of.

Run it without copying it into ``solvers/``:

    python -m benchopt run . -s docs/examples/general_solver.py \
        -d "quadratic[dim_x=5,dim_y=5,n_samples=20]" -n 5 -r 1
"""
from functools import partial

from benchmark_utils.checks.parameters import check_int
from benchmark_utils.solvers.general import (
    GeneralBilevelSolver,
    tuned_outer_step,
)
from benchmark_utils.solvers.hypergradients import neumann_series
from benchmark_utils.solvers.schedules import curvature_rules
from benchmark_utils.solvers.steps import given_size


class Solver(GeneralBilevelSolver):
    """Single-loop AID with a Neumann inverse (an example; see
    ``docs/examples/simple_solver.py`` for what a real docstring holds).

    ``outer_step`` is the x step, ``inner_step`` the y step and
    ``linear_system_step`` the Neumann series' step (role names: see
    GeneralBilevelSolver). The base class appends the defaults, written
    from ``step_rules``, ``size_rules`` and ``parameters``: no default is
    written here.
    """

    name = "Example-General"
    # The parameters that are neither a step nor a size (the steps and
    # sizes come from ``step_rules`` and ``size_rules`` below: the base
    # adds them). ``init`` is added by the base.
    parameters = {}
    # Every integer size declared once: read from the frozen ``self.sizes``
    # and recorded with its source, as the steps are. ``batch_size`` is
    # checked by the base; for this method None means full passes, which
    # the solver declares below.
    size_rules = (given_size("neumann_terms", 10),
                  given_size("batch_size", 16))
    batch_size_may_be_none = True
    # Every step declared once, here, with the paper's letter and its
    # default rule (None = not given): the base adds each to benchopt's
    # ``parameters`` (steps.step_parameters) and resolves them into the frozen
    # ``self.steps`` before the run, each with its source (given, tuned,
    # default), and records them in the result file. Here: the x step 0.1
    # times the problem's outer_step_scale, inner_step 2 / (mu_g + L_g),
    # linear_system_step 1 / L_g (benchmark_utils/solvers/steps.py).
    # The two curvature rules read the problem's mu_g and L_g (their
    # ``needs``): a problem that does not declare them is skipped unless
    # these steps are given.
    step_rules = (tuned_outer_step(0.1, "beta"),
                  *curvature_rules("alpha", "eta"))

    def check_parameters(self):
        # before any run of the benchmark (see the simple example); the base
        # checks that the given steps are numbers > 0
        super().check_parameters()
        check_int("neumann_terms", self.neumann_terms, 1)

    def iterations(self):
        P, S = self.problem, self.sizes.batch_size
        x, y = self.x, self.y          # the start (x, y), drawn per run
        while True:
            # batch_lower(S) is a fresh batch, or a full pass for S = None
            y = y - self.steps.inner_step * P.grad_g_y(
                x, y, batch=P.batch_lower(S))
            grad_x, grad_y = P.grad_f(x, y, batch=P.batch_upper(S))
            lower = P.batch_lower(S)   # one batch for both second-order terms
            # w ~ [grad^2_yy g]^-1 grad_y f, products v -> grad^2_yy g v
            w = neumann_series(partial(P.hvp_yy_g, x, y, batch=lower),
                               grad_y, eta=self.steps.linear_system_step,
                               n_terms=self.sizes.neumann_terms)
            hypergrad = grad_x - P.hvp_xy_g(x, y, w, batch=lower)
            # to_X projects if X is a constrained set
            x = self.to_X(x - self.steps.outer_step * hypergrad)
            self.x, self.y = x, y      # the iterate the objective evaluates
            yield
