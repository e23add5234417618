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
from benchmark_utils.solvers.estimators import Storm, at_both_points
from benchmark_utils.solvers.schedules import frank_wolfe_step
from benchmark_utils.solvers.simple import SimpleBilevelSolver
from benchmark_utils.solvers.steps import given_size, given_step


class Solver(SimpleBilevelSolver):
    """Penalized STORM Frank-Wolfe (an example, not a published method).

    A real solver's docstring cites its paper, algorithm and equations
    (e.g. "Cao et al. 2023, Alg. 1, eq. (10)"), maps each update to them,
    and lists every choice made where the paper is silent.
    """

    name = "Example-Simple"

    # benchopt runs every combination of the parameters' values. The base
    # adds the shared parameter ``init`` ("random" or "dataset" start),
    # and one entry per declared step and size below: each is declared
    # once, resolved before the run into the frozen ``self.steps`` /
    # ``self.sizes`` (the only values the loop reads) and recorded in the
    # result file with its source. The base checks that a given step is a
    # number > 0 and that ``batch_size`` is an integer in
    # [1, min(n_upper, n_lower)]. No class attribute may share a
    # parameter's name.
    parameters = {}
    step_rules = (given_step("penalty_weight", "rho",
                             "weight of g in the penalized direction",
                             10.0),)
    size_rules = (given_size("batch_size", 8),)

    # checks of other parameters go in ``check_parameters(self)``, called
    # when benchopt builds the solver, before any run of the benchmark (a
    # bad value fails at once with a message naming the parameter,
    # benchmark_utils/checks/parameters.py); checks that need the problem
    # go in ``check_with_problem(self, problem)``

    def iterations(self):
        # P is the counting view of the problem: every sample drawn, oracle
        # call, LMO and projection made through it is counted for the report
        P, S = self.problem, self.sizes.batch_size
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
            s = P.Z.lmo(dF + self.steps.penalty_weight * dG)
            x_prev, x = x, x + step * (s - x)   # stays in Z
            self.x = x              # the iterate the objective evaluates
            yield                   # one iteration done
            t += 1
