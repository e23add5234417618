from benchmark_utils.solvers.general import GeneralBilevelSolver
from benchmark_utils.solvers.schedules import strongly_convex_step


class Solver(GeneralBilevelSolver):
    """Without BO: train the lower level alone, the upper variable fixed.

    The "Without BO" baseline of Kwon, Kwon, Wright, Nowak, ICML 2023, §5
    (Fig. 2): "train on all samples as usual, ignoring the label
    corruption". The upper variable never moves and the lower level runs
    plain SGD on g at that x, one fresh lower batch S_k per iteration:

    * x_k = x0, the dataset's start (on hyper-cleaning x0 = 0 gives every
      training sample the weight sigma(0) = 1/2: usual training);
    * y_{k+1} = y_k - alpha grad_y g(x0, y_k; S_k).

    ``inner_step`` = alpha (None: 2/(mu_g + L_g), the standard step on a
    mu_g-strongly convex, L_g-smooth g; the paper states no optimizer).
    ``outer_step`` exists for a uniform grid and must stay None (x does
    not move). "All samples" is read as the lower level's (training)
    samples. x ignores ``init`` (a random x is no "usual training"); y
    starts as the other solvers' y. Runs only where the problem declares
    ``x0_is_no_bilevel_baseline`` (hyper-cleaning); elsewhere a fixed x
    shows nothing.
    """

    name = "Without-BO"
    # benchopt's design checks run it where it applies (see skip_problem)
    test_config = {"dataset": {"name": "hyper_cleaning"}}

    parameters = {
        "outer_step": [None],
        "inner_step": [None],
        "batch_size": [16],
    }
    batch_size_may_be_none = True       # None: full passes
    batch_size_levels = ("lower",)      # only lower batches are drawn

    defaults_from_problem = ("inner_step",)

    def skip_problem(self, problem):
        if not getattr(problem, "x0_is_no_bilevel_baseline", False):
            return True, ("Without-BO fixes x at x0, which is not the "
                          "no-bilevel baseline on this problem")
        return super().skip_problem(problem)

    def check_parameters(self):
        super().check_parameters()
        if self.outer_step is not None:
            raise ValueError(
                "outer_step must be None for Without-BO: x stays at x0 "
                f"(no outer update), got {self.outer_step!r}")

    def check_with_problem(self, problem):
        self.default_from_problem("inner_step", lambda: strongly_convex_step(
            problem.mu_g, problem.L_g))

    def draw_start(self):
        super().draw_start()
        self.x = self.problem.x0.clone()    # uniform weights: no bilevel

    def iterations(self):
        P, S = self.problem, self.batch(self.batch_size)
        x, y, alpha = self.x, self.y, self.inner_step_
        while True:
            y = y - alpha * P.grad_g_y(x, y, batch=P.batch_lower(S))
            self.y = y
            yield
