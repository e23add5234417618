from benchmark_utils.checks.parameters import check_positive
from benchmark_utils.solvers.general import GeneralBilevelSolver
from benchmark_utils.solvers.schedules import strongly_convex_step


class Solver(GeneralBilevelSolver):
    """Without BO: train the lower level alone, the upper variable fixed.

    The "Without BO" baseline of Kwon, Kwon, Wright, Nowak, "A Fully
    First-Order Method for Stochastic Bilevel Optimization", ICML 2023,
    §5 (Fig. 2): "training without bilevel formulation, i.e., train on all
    samples as usual, ignoring the label corruption". In this benchmark's
    terms the upper-level variable never moves and the lower level is
    trained by plain SGD on g at that x:

    * x_k = x0, the dataset's start, for every k (no outer update; on
      hyper-cleaning x0 = 0 gives every training sample the same weight
      sigma(0) = 1/2, i.e. the uniform weights of usual training);
    * y_{k+1} = y_k - alpha grad_y g(x0, y_k; S_k), a fresh lower batch
      S_k of ``batch_size`` samples per iteration (None: full passes).

    Per iteration: one lower batch, one gradient call; no upper sample, no
    Hessian-vector product. The curves show what the lower level reaches
    with the data as given, the reference a bilevel method must beat.

    Choices where the paper is silent:

    * "all samples" is read as the lower level's (training) samples: the
      paper does not say whether the 1000 clean validation samples were
      added, and the lower level of the problem contract holds only the
      training samples;
    * the optimizer and its step are not stated: plain SGD with the
      constant step ``alpha`` (None: 2/(mu_g + L_g), the standard step for
      a mu_g-strongly convex, L_g-smooth g, from the problem's declared
      constants; a problem without them is skipped unless alpha is given);
    * x ignores ``init``: it is always the dataset's x0 (a random x would
      be random weights, not the uniform ones of usual training); y starts
      where the other solvers' y starts (``init``);
    * the baseline is meaningful only where x0 is the "no bilevel"
      choice, as on hyper-cleaning: a problem that does not declare
      ``x0_is_no_bilevel_baseline`` True is skipped (on the others, e.g.
      matrix completion's random x0, a fixed x shows nothing and its
      stationarity measure cannot move).
    """

    name = "Without-BO"
    # benchopt's design checks run it where it applies (see skip_problem)
    test_config = {"dataset": {"name": "hyper_cleaning"}}

    parameters = {
        "alpha": [None],
        "batch_size": [16],
    }
    batch_size_may_be_none = True       # None: full passes
    batch_size_levels = ("lower",)      # only lower batches are drawn

    defaults_from_problem = ("alpha",)

    def skip_problem(self, problem):
        if not getattr(problem, "x0_is_no_bilevel_baseline", False):
            return True, ("Without-BO fixes x at x0, which is not the "
                          "no-bilevel baseline on this problem")
        return super().skip_problem(problem)

    def check_with_problem(self, problem):
        self.alpha_ = self.alpha
        if self.alpha is None:
            self.alpha_ = check_positive("alpha", strongly_convex_step(
                problem.mu_g, problem.L_g))

    def draw_start(self):
        super().draw_start()
        self.x = self.problem.x0.clone()    # uniform weights: no bilevel

    def iterations(self):
        P, S = self.problem, self.batch(self.batch_size)
        x, y, alpha = self.x, self.y, self.alpha_
        while True:
            y = y - alpha * P.grad_g_y(x, y, batch=P.batch_lower(S))
            self.y = y
            yield
