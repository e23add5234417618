from benchmark_utils.solvers.general import GeneralBilevelSolver
from benchmark_utils.solvers.schedules import strongly_convex_inner_step
from benchmark_utils.solvers.steps import given_size


class Solver(GeneralBilevelSolver):
    """Without BO: train the lower level alone, the upper variable fixed.

    The "Without BO" baseline of Kwon, Kwon, Wright, Nowak, ICML 2023, §5
    (Fig. 2): "train on all samples as usual, ignoring the label
    corruption". The upper variable never moves and the lower level runs
    plain SGD on g at that x, one fresh lower batch S_k per iteration:

    * x_k = x_s, the problem's ``single_level_x`` (on hyper-cleaning x_s =
      0 gives every training sample the weight sigma(0) = 1/2: usual
      training);
    * y_{k+1} = y_k - alpha grad_y g(x_s, y_k; S_k).

    Steps (``step_rules``): ``inner_step`` = alpha (None: 2/(mu_g + L_g),
    the standard step on a mu_g-strongly convex, L_g-smooth g; the paper
    states no optimizer). No x step: no ``outer_step``. "All samples" is
    read as the lower level's (training) samples. x ignores ``init`` (a
    random x is no "usual training"); y starts as the other solvers' y.
    Runs only where the problem declares a ``single_level_x``
    (hyper-cleaning); elsewhere a fixed x shows nothing.
    """

    name = "Without-BO"
    # benchopt's design checks run it where it applies (see skip_problem)
    test_config = {"dataset": {"name": "hyper_cleaning"}}

    parameters = {}
    size_rules = (given_size("batch_size", 16),)
    batch_size_may_be_none = True       # None: full passes
    batch_size_levels = ("lower",)      # only lower batches are drawn

    step_rules = (strongly_convex_inner_step("alpha"),)

    def skip_problem(self, problem):
        if problem.single_level_x is None:
            return True, ("Without-BO fixes x at the problem's single-level "
                          "x, and this problem declares none")
        return super().skip_problem(problem)

    def draw_start(self):
        super().draw_start()
        # the single-level training's x (uniform weights on hyper-cleaning)
        self.x = self.problem.single_level_x.clone()

    def iterations(self):
        P, S = self.problem, self.batch(self.sizes.batch_size)
        x, y, alpha = self.x, self.y, self.steps.inner_step
        while True:
            y = y - alpha * P.grad_g_y(x, y, batch=P.batch_lower(S))
            self.y = y
            yield
