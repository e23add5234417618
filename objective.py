"""Benchmark objective: metrics and oracle accounting for bilevel problems.

A dataset returns ``{"problem": P}``; the objective hands solvers a counting
view of P (``benchmark_utils.counting.CountingView``) and, at every
evaluation, reports the metrics of the solver's iterate together with the
view's counters, so reports can use oracle calls as the x-axis. What the
iterate is and which metrics it gets depend on the problem's family
(``x`` for the simple family, ``x`` and ``y`` for the general one); the
problem says both (``P.metrics``, ``P.dataset_start``; see
``benchmark_utils/metrics.py``).

Divergence: the solver flags a non-finite iterate, the objective's
``DivergenceGuard`` flags non-finite or absurd metrics (bound in
``benchmark_utils/metrics.py``); either way the row reports the last
metrics within the bound with ``diverged = 1``, and the stopping criterion
``StopAtDivergence`` ends the run at that row, so no row follows it.

A dataset whose data cannot be built is skipped with the reason (``skip``),
so the runs finished on the other datasets are written.
"""
import torch
from benchopt import BaseObjective
from benchopt.config import get_setting
from benchopt.stopping_criterion import NoCriterion

from benchmark_utils.checks.dataset_failures import failure_of
from benchmark_utils.counting import CountingView
from benchmark_utils.metrics import DivergenceGuard

# Per-run budget of a plain ``benchopt run .``, in iterations so that what it
# shows does not depend on the machine's load: 15 evaluations after the start,
# the last at iteration 316 (benchopt's callback evaluates at 0, 1, 2, 3, 4,
# 6, 9, ..., 211, 316), the budget the default instances' steps were tuned
# at (configs/tuned/default_*.yml); and a wall-clock cap of 30 s per run as
# a safety net. benchopt's default of 100 evaluations and 100 s would make
# the default grid take hours. benchopt does not tell a benchmark whether
# ``--max-runs`` or ``--timeout`` was given, so a value equal to benchopt's
# own default (100 evaluations; ``default_timeout`` in benchopt's config,
# 100 s unless changed) is read as "none given" and replaced; any other
# value, a config file's, or ``--no-timeout`` is used as given.
BENCHOPT_DEFAULT_MAX_RUNS = 100
FIRST_CONTACT_MAX_RUNS = 15
FIRST_CONTACT_TIMEOUT = 30


def run_max_runs(max_runs):
    """The number of evaluations a run gets: ``max_runs``, or the
    first-contact budget when it is benchopt's default."""
    if max_runs == BENCHOPT_DEFAULT_MAX_RUNS:
        return FIRST_CONTACT_MAX_RUNS
    return max_runs


def run_timeout(timeout):
    """The timeout a run gets: ``timeout``, or the first-contact cap when
    ``timeout`` is benchopt's default (see ``FIRST_CONTACT_TIMEOUT``)."""
    if timeout is not None and timeout == get_setting("default_timeout"):
        return min(timeout, FIRST_CONTACT_TIMEOUT)
    return timeout


class StopAtDivergence(NoCriterion):
    """benchopt's NoCriterion (budget only) that also ends a run at its
    first row flagged ``diverged``, and gives runs started without a
    ``--max-runs`` or ``--timeout`` the first-contact budget
    (:func:`run_max_runs`, :func:`run_timeout`).

    The run ends with benchopt's status "done", not "diverged": benchopt
    discards the curve of a run whose status is a failure, and the curve up
    to the divergence is the evidence a report must show.
    """

    def get_runner_instance(self, max_runs=1, timeout=None, **kwargs):
        return super().get_runner_instance(
            max_runs=run_max_runs(max_runs), timeout=run_timeout(timeout),
            **kwargs)

    def check_convergence(self, cost_curve):
        return bool(cost_curve[-1].get("objective_diverged", 0)), 0


class Objective(BaseObjective):
    name = "Bilevel"
    url = "https://github.com/benchopt"
    min_benchopt_version = "1.10"
    requirements = ["pip::torch", "numpy", "scipy", "cvxpy"]

    # Runs end on a budget (--max-runs, --timeout), never because a noisy
    # stochastic curve looked flat: a plateau of a stochastic method is not
    # convergence. A diverged run ends at its flagged row.
    sampling_strategy = "callback"
    stopping_criterion = StopAtDivergence(strategy="callback")

    # one test dataset per family, so benchopt's design checks run every
    # solver on a problem it solves (each skips the other family)
    test_config = {"dataset": {"name": ["regression", "quadratic"]}}

    def skip(self, **data):
        # a dataset whose get_data failed is skipped with its reason, and
        # the run goes on (benchmark_utils/checks/dataset_failures.py)
        return failure_of(data)

    def set_data(self, problem):
        self.problem = problem

    def get_objective(self):
        # a fresh view per solver run: counters and sample streams belong to
        # one run; evaluate_result reads this view's counters
        self.view = CountingView(self.problem)
        self.divergence_guard = DivergenceGuard()
        return dict(problem=self.view)

    def evaluate_result(self, diverged=False, **iterate):
        with torch.no_grad():
            metrics = self.problem.metrics(**iterate)
        # the counters stay those of the run so far: the budget spent
        metrics, diverged = self.divergence_guard.report(
            metrics, bool(diverged))
        metrics.update(self.view.counts())
        metrics["diverged"] = int(diverged)
        return metrics

    def get_one_result(self):
        return dict(self.problem.dataset_start(), diverged=False)
