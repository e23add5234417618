"""A minimal simple-bilevel solver, to copy when adding one.

    min_x f(x)   s.t.   x in argmin_{z in Z} g(z)

The method is deliberately naive: stochastic Frank-Wolfe on the penalized
objective f + penalty_weight * g, with STORM estimates of both gradients.
It has no guarantee for the bilevel problem (a fixed penalty only
approximates the lower-level constraint); it shows the pieces a real method
is made of.

Run it without copying it into ``solvers/``:

    python -m benchopt run . -s docs/examples/simple_solver.py \
        -d "regression[n_samples=150,n_features=80]" -n 5 -r 1
"""
from benchmark_utils.checks.parameters import check_positive
from benchmark_utils.solvers.estimators import Storm, at_both_points
from benchmark_utils.solvers.schedules import frank_wolfe_step
from benchmark_utils.solvers.simple import SimpleBilevelSolver


class Solver(SimpleBilevelSolver):
    """Penalized STORM Frank-Wolfe (an example, not a published method).

    A real solver's docstring cites its paper, algorithm and equations
    (e.g. "Cao et al. 2023, Alg. 1, eq. (10)"), maps each update to them,
    and lists every choice made where the paper is silent.
    """

    name = "Example-Simple"

    # benchopt runs every combination of these values. The base adds the
    # shared parameter ``init`` ("random" or "dataset" start) and checks
    # ``batch_size`` (an integer in [1, min(n_upper, n_lower)]). No class
    # attribute may share a parameter's name.
    parameters = {
        "penalty_weight": [10.0],
        "batch_size": [8],
    }

    def check_parameters(self):
        # called when benchopt builds the solver, before any run of the
        # benchmark: a bad value fails at once with a message naming the
        # parameter (benchmark_utils/checks/parameters.py); checks that need
        # the problem go in ``check_with_problem(self, problem)``
        super().check_parameters()
        check_positive("penalty_weight", self.penalty_weight)

    def iterations(self):
        # P is the counting view of the problem: every sample drawn, oracle
        # call, LMO and projection made through it is counted for the report
        P, S = self.problem, self.batch_size
        grad_F, grad_G = Storm(), Storm()
        x, x_prev, t = self.x, None, 0      # self.x: the start, drawn per run
        while True:
            step = frank_wolfe_step(t)      # every schedule lives there
            theta, xi = P.sample_upper(S), P.sample_lower(S)
            # STORM: the same fresh batch at x_t and x_{t-1} (none at t = 0)
            dF = grad_F.step(*at_both_points(P.grad_f, theta, x, x_prev),
                             momentum=step)
            dG = grad_G.step(*at_both_points(P.grad_g, xi, x, x_prev),
                             momentum=step)
            s = P.Z.lmo(dF + self.penalty_weight * dG)
            x_prev, x = x, x + step * (s - x)   # stays in Z
            self.x = x              # the iterate the objective evaluates
            yield                   # one iteration done
            t += 1
