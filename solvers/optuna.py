import math

import torch

from benchmark_utils.checks.parameters import (
    check_in_interval,
    check_int,
    check_positive,
)
from benchmark_utils.solvers.general import GeneralBilevelSolver
from benchmark_utils.solvers.inner_lbfgs import lbfgs_to_tolerance
from benchmark_utils.solvers.steps import constant_rule, given_size

INF = float("inf")


class Solver(GeneralBilevelSolver):
    """Optuna: black-box search over x, an exact inner solve per trial.

    Akiba, Sano, Yanase, Ohta, Koyama, "Optuna: A Next-generation
    Hyperparameter Optimization Framework", KDD 2019, with its TPE sampler
    (benchmark_bilevel's "Optuna"). Iteration k is one trial:

    * x_k = TPE's suggestion in the box [search_low, search_high] per
      coordinate (trial 0: the start x, clipped to the box), projected onto
      a constrained X;
    * y_k: L-BFGS on g(x_k, .) with full passes from the run's y_0 until
      ||grad_y g|| <= inner_tol, at most max_inner_steps iterations
      (benchmark_utils/solvers/inner_lbfgs.py);
    * F_k = f(x_k, y_k) (a full upper pass) is told to TPE; the reported
      (x, y) is the best trial's.

    ``lbfgs_first_step``: L-BFGS's first trial step along -grad
    (``step_rules``; later steps start at 1 and backtrack); no
    x step (x is searched). TPE is seeded from the view's ``rng`` (per
    repetition). Departures from benchmark_bilevel: one trial per
    iteration instead of 5; its L-BFGS (jaxopt's) is replaced by ours,
    cold-started at y_0 as there. A non-finite F_k is told to TPE as a
    failed trial; a non-finite y_k ends the run flagged diverged.
    The default box is benchmark_bilevel's; problems with more than
    ``max_dim_x`` coordinates of x are skipped.
    """

    name = "Optuna"
    requirements = ["pip::torch", "numpy", "pip::optuna"]
    parameters = {
        "search_low": [-5.0],
        "search_high": [5.0],
        "inner_tol": [1e-6],
        "max_dim_x": [100],
    }
    size_rules = (given_size("max_inner_steps", 1000),)
    step_rules = (constant_rule("lbfgs_first_step", "t_0",
                                "L-BFGS's first trial step along -grad",
                                1.0, "L-BFGS's unit step"),)

    def check_parameters(self):
        super().check_parameters()
        check_in_interval("search_low", self.search_low, -INF, INF,
                          closed=(False, False))
        check_in_interval("search_high", self.search_high, self.search_low,
                          INF, closed=(False, False))
        check_positive("inner_tol", self.inner_tol)
        check_int("max_inner_steps", self.max_inner_steps, 1)
        check_int("max_dim_x", self.max_dim_x, 1)

    def skip_problem(self, problem):
        skip, reason = super().skip_problem(problem)
        if skip or problem.dim_x <= self.max_dim_x:
            return skip, reason
        # TPE models each coordinate on its own: a search over thousands of
        # them (one weight per training sample, a network) is not a method
        return True, (f"Optuna searches at most max_dim_x={self.max_dim_x} "
                      f"coordinates of x, this problem has {problem.dim_x}")

    def warm_up(self):
        # optuna is loaded here, once, outside every timed run: imported at
        # the module's top it would add 0.14 s to the start of every
        # benchopt process, also those that never run Optuna
        import optuna  # noqa: F401

    def iterations(self):
        import optuna  # loaded by warm_up: a lookup in sys.modules
        P = self.problem
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        seed = int(torch.randint(2 ** 31 - 1, (1,), generator=P.rng))
        study = optuna.create_study(
            sampler=optuna.samplers.TPESampler(seed=seed))
        names = [f"x_{i}" for i in range(self.x.numel())]
        box = optuna.distributions.FloatDistribution(self.search_low,
                                                     self.search_high)
        start = self.x.clamp(self.search_low, self.search_high)
        study.enqueue_trial(dict(zip(names, start.reshape(-1).tolist(),
                                     strict=True)))
        y_start, best = self.y, INF
        first_step = self.steps.lbfgs_first_step
        while True:
            trial = study.ask(dict.fromkeys(names, box))
            params = trial.params       # a deep copy at every access
            x = self.to_X(torch.tensor(
                [params[name] for name in names], dtype=self.x.dtype,
                device=self.x.device).reshape(self.x.shape))
            y = lbfgs_to_tolerance(
                P, x, y_start, tol=self.inner_tol,
                max_steps=self.sizes.max_inner_steps, first_step=first_step)
            value = math.nan
            if torch.isfinite(y).all():
                value = float(P.f(x, y, batch=P.full_upper()))
            else:
                # g overflowed at this x: the run ends, flagged diverged
                self.diverged = True
            if math.isfinite(value):
                study.tell(trial, value)
                if value < best:
                    best, self.x, self.y = value, x, y
            else:
                study.tell(trial, state=optuna.trial.TrialState.FAIL)
            yield
