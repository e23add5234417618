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
``benchmark_utils/metrics.py``) or metrics that cannot be computed at a
diverged iterate (a linear-algebra failure of the exact y*(x) solve);
either way the row reports the last metrics within the bound with
``diverged = 1``, and the stopping criterion
``StopAtDivergence`` ends the run at that row, so no row follows it.

A run's budget is benchopt's (``max-runs``, ``timeout``) and, where a
config sets the parameter ``sample_budget`` (``Bilevel[sample_budget=S]``),
S samples drawn: the run ends at its first evaluation past S; where it
sets ``cpu_budget`` (``Bilevel[cpu_budget=T]``), T CPU seconds in the
solver's iterations, the horizon of a paper that plots time
(``benchmark_utils/sample_budget.py``; column ``budget_reached``).

A dataset whose data cannot be built is skipped with the reason (``skip``),
so the runs finished on the other datasets are written.
"""
import warnings

import torch
from benchopt import BaseObjective
from benchopt.stopping_criterion import NoCriterion

from benchmark_utils.budget import cache_key as budget_cache_key
from benchmark_utils.budget import chosen as chosen_budget
from benchmark_utils.checks.dataset_failures import failure_of
from benchmark_utils.checks.run_list import (
    CheckedParameters,
    refuse_unknown_names,
)
from benchmark_utils.counting import CountingView
from benchmark_utils.metrics import DivergenceGuard
from benchmark_utils.sample_budget import (
    budget_reached,
    check_cpu_budget,
    check_sample_budget,
)
from benchmark_utils.tuning.tuned_defaults import tuned_table


class StopAtDivergence(NoCriterion):
    """benchopt's NoCriterion (budget only) that also ends a run at its
    first row flagged ``diverged`` or ``budget_reached`` (the sample
    budget), and gives runs started without a
    budget the one this benchmark chose (benchmark_utils/budget.py).

    The run ends with benchopt's status "done", not "diverged": benchopt
    discards the curve of a run whose status is a failure, and the curve up
    to the divergence is the evidence a report must show.
    """

    def get_runner_instance(self, max_runs=1, timeout=None, **kwargs):
        max_runs, timeout = chosen_budget(max_runs, timeout)
        return super().get_runner_instance(
            max_runs=max_runs, timeout=timeout, **kwargs)

    def check_convergence(self, cost_curve):
        last = cost_curve[-1]
        return bool(last.get("objective_diverged", 0)
                    or last.get("objective_budget_reached", 0)), 0


class Objective(CheckedParameters, BaseObjective):
    name = "Bilevel"
    url = "https://github.com/benchopt"
    min_benchopt_version = "1.10"
    requirements = ["pip::torch", "numpy", "scipy", "cvxpy"]

    # Runs end on a budget (--max-runs, --timeout), never because a noisy
    # stochastic curve looked flat: a plateau of a stochastic method is not
    # convergence. A diverged run ends at its flagged row.
    sampling_strategy = "callback"
    stopping_criterion = StopAtDivergence(strategy="callback")

    # a run's budget in samples drawn and in CPU seconds, None: none
    # (module doc)
    parameters = {"sample_budget": [None], "cpu_budget": [None]}

    # one test dataset per family, so benchopt's design checks run every
    # solver on a problem it solves (each skips the other family)
    test_config = {"dataset": {"name": ["regression", "quadratic"]}}

    @classmethod
    def is_installed(cls, *args, **kwargs):
        # benchopt's public hook that ``benchopt run`` calls first, before
        # it expands the run's names (an unknown one with a traceback):
        # here an unknown name gets one message with the closest valid name
        # (checks/run_list.py); every other check runs in the first
        # dataset's get_data
        refuse_unknown_names()
        return super().is_installed(*args, **kwargs)

    def __repr__(self):
        # the name in result files, reports and figure keys: "Bilevel" for
        # the default (no budget), benchopt's parametrized form with the
        # budgets set otherwise (tests/test_sample_budget.py checks both)
        given = {name: value for name, value in (
            ("cpu_budget", self.cpu_budget),
            ("sample_budget", self.sample_budget)) if value is not None}
        if not given:
            return self.name
        return self.name + "[" + ",".join(
            f"{name}={value}" for name, value in given.items()) + "]"

    def _get_state(self):
        # the budget this benchmark chose for a run given none, in
        # benchopt's cache key (the objective's pickled state): benchopt
        # keys a plain run on its default max_runs=100, so without it a
        # later "-n 100" would be served the plain run's 15-evaluation curve
        return {**super()._get_state(), "chosen_budget": budget_cache_key()}

    def __setstate__(self, state):
        state = dict(state)
        state.pop("chosen_budget", None)
        super().__setstate__(state)

    def check_parameters(self):
        check_sample_budget(self.sample_budget)
        check_cpu_budget(self.cpu_budget)

    def skip(self, **data):
        # a dataset whose get_data failed is skipped with its reason, and
        # the run goes on (benchmark_utils/checks/dataset_failures.py)
        return failure_of(data)

    def set_data(self, problem, instance=None):
        self.check_parameters()
        self.problem = problem
        # the plain run's steps tuned on this instance, where there are
        # (benchmark_utils/tuning/tuned_defaults.py): the run layer's table,
        # handed to each solver with its problem
        self.tuned_steps = tuned_table(instance)

    def get_objective(self):
        # a fresh view per solver run: counters and sample streams belong to
        # one run; evaluate_result reads this view's counters
        self.view = CountingView(self.problem)
        self.divergence_guard = DivergenceGuard()
        return dict(problem=self.view, tuned_steps=self.tuned_steps)

    def evaluate_result(self, diverged=False, record=None, cpu_time=None,
                        **iterate):
        try:
            with torch.no_grad():
                metrics = self.problem.metrics(**iterate)
        except torch.linalg.LinAlgError as error:
            # a diverged iterate makes the exact y*(x) solve meet a matrix
            # that is not positive definite: the run is diverged, its curve
            # kept up to the last evaluation within the bound
            if self.divergence_guard.start is None:
                raise
            warnings.warn(f"metrics of a diverged iterate: {error}",
                          RuntimeWarning, stacklevel=2)
            metrics, diverged = self.divergence_guard.report_failure()
        else:
            metrics, diverged = self.divergence_guard.report(
                metrics, bool(diverged))
        # the counters stay those of the run so far: the budget spent
        counts = self.view.counts()
        metrics.update(counts)
        metrics["diverged"] = int(diverged)
        if cpu_time is not None:
            # the solver's CPU seconds in its iterations: a clock beside
            # benchopt's wall-clock time that load changes far less
            metrics["cpu_time"] = cpu_time
        if self.sample_budget is not None or self.cpu_budget is not None:
            metrics["budget_reached"] = int(budget_reached(
                counts, self.sample_budget, cpu_time, self.cpu_budget))
        # what the run ran: every resolved step and integer size with its
        # source (benchmark_utils/solvers/steps.py), columns
        # objective_resolved_*
        if record is not None:
            metrics.update(record)
        return metrics

    def get_one_result(self):
        return dict(self.problem.dataset_start(), diverged=False)
