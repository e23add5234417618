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
from benchmark_utils.checks.parameters import check_int, check_positive
from benchmark_utils.solvers.general import GeneralBilevelSolver
from benchmark_utils.solvers.hypergradients import neumann_series
from benchmark_utils.solvers.schedules import (neumann_step,
                                               strongly_convex_step)


class Solver(GeneralBilevelSolver):
    """Single-loop AID with a Neumann inverse (an example; see
    ``docs/examples/simple_solver.py`` for what a real docstring holds)."""

    name = "Example-General"
    # ``init`` is added by the base, ``batch_size`` checked there; for this
    # method None means full passes, which the solver declares below
    parameters = {
        "step": [0.1],
        "n_terms": [10],
        "batch_size": [16],
    }
    batch_size_may_be_none = True

    def skip_problem(self, problem):
        # the default inner steps need the problem's curvature constants
        if not self.declares_curvature(problem):
            return True, "needs the problem's mu_g and L_g"
        return False, None

    def check_parameters(self):
        # before any run of the benchmark (see the simple example)
        super().check_parameters()
        check_positive("step", self.step)
        check_int("n_terms", self.n_terms, 1)

    def check_with_problem(self, problem):
        # what needs the problem; derived values get a trailing underscore (never a parameter name)
        self.inner_step_ = strongly_convex_step(problem.mu_g, problem.L_g)
        self.neumann_step_ = neumann_step(problem.L_g)

    def iterations(self):
        P, S = self.problem, self.batch_size
        x, y = self.x, self.y          # the start (x, y), drawn per run
        while True:
            # batch_lower(S) is a fresh batch, or a full pass for S = None
            y = y - self.inner_step_ * P.grad_g_y(x, y,
                                                  batch=P.batch_lower(S))
            grad_x, grad_y = P.grad_f(x, y, batch=P.batch_upper(S))
            lower = P.batch_lower(S)   # one batch for both second-order terms
            w = neumann_series(lambda v: P.hvp_yy_g(x, y, v, batch=lower),
                               grad_y, eta=self.neumann_step_,
                               n_terms=self.n_terms)
            hypergrad = grad_x - P.hvp_xy_g(x, y, w, batch=lower)
            x = self.to_X(x - self.step * hypergrad)   # projects if X is a set
            self.x, self.y = x, y      # the iterate the objective evaluates
            yield
