"""Benchmark objective: metrics and oracle accounting for bilevel problems.

A dataset returns ``{"problem": P}``; the objective hands solvers a counting
view of P (``benchmark_utils.counting.CountingView``) and, at every
evaluation, reports the metrics of the solver's iterate together with the
view's counters, so reports can use oracle calls as the x-axis. What the
iterate is and which metrics it gets depend on the problem's family
(``x`` for the simple family, ``x`` and ``y`` for the general one); the
problem says both (``P.metrics``, ``P.dataset_start``; see
``benchmark_utils/metrics.py``).
"""
import torch
from benchopt import BaseObjective
from benchopt.stopping_criterion import NoCriterion

from benchmark_utils.counting import CountingView


class Objective(BaseObjective):
    name = "Bilevel"
    url = "https://github.com/benchopt"
    min_benchopt_version = "1.10"
    requirements = ["pip::torch", "numpy", "scipy", "cvxpy"]

    # Runs end on a budget (--max-runs, --timeout), never because a noisy
    # stochastic curve looked flat: a plateau of a stochastic method is not
    # convergence.
    sampling_strategy = "callback"
    stopping_criterion = NoCriterion(strategy="callback")

    # one test dataset per family, so benchopt's design checks run every
    # solver on a problem it solves (each skips the other family)
    test_config = {"dataset": {"name": ["regression", "quadratic"],
                               "preset": "quick"}}

    def set_data(self, problem):
        self.problem = problem

    def get_objective(self):
        # a fresh view per solver run: counters and sample streams belong to
        # one run; evaluate_result reads this view's counters
        self.view = CountingView(self.problem)
        return dict(problem=self.view)

    def evaluate_result(self, diverged=False, **iterate):
        with torch.no_grad():
            metrics = self.problem.metrics(**iterate)
        metrics.update(self.view.counts())
        metrics["diverged"] = int(bool(diverged))
        return metrics

    def get_one_result(self):
        return dict(self.problem.dataset_start(), diverged=False)
