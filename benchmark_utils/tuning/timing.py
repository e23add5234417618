"""Whether a config's time cap holds its iterations, measured.

A transferred config runs its stand-in's iteration budget under a timeout
(benchopt's ``timeout``: wall-clock seconds from the run's start, set-up,
iterations and evaluations included). Where an iteration is slow (the
CVXPY cut: about 0.35 s) the timeout, not the budget, would end the runs,
and the curves would stop short of the iterations the steps were chosen
for. So the transfer times each entry on an offline instance of the
target's shape (benchmark_utils/data/shaped.py): the untimed set-up
(``pre_run_hook``), one evaluation of the start (once per instance: the
metrics do not depend on the solver), the first iteration and the mean of
the next ``MEASURED_ITERATIONS``, and bounds a run's seconds by

    set-up + first + (iterations - 1) x mean + (evaluations) x evaluation

(``evaluations`` = max-runs + 1, the start included). Under a sample
budget (the objective's ``sample_budget``) a run ends at its first
evaluation past the budget: the samples drawn by the first iteration (a
warm start included) and per later iteration, read on the counting view,
give that evaluation, and the bound counts the iterations up to it. An
entry whose bound exceeds the timeout is refused with the largest
max-runs that fits.
"""
import dataclasses
import math
import statistics
import time

from benchmark_utils.sample_budget import samples_drawn
from benchmark_utils.tuning import config_io
from benchmark_utils.tuning.defaults import attached
from benchmark_utils.tuning.runner import final_iteration

MEASURED_ITERATIONS = 3
MAX_RUNS_LIMIT = 100        # benchopt's -n default: the largest suggested


@dataclasses.dataclass(frozen=True)
class EntryTime:
    """Seconds measured for one entry on one instance (module doc)."""

    entry: str
    instance: str
    set_up: float
    first: float
    per_iteration: float
    evaluation: float
    first_samples: int = 0              # drawn by the first iteration
    samples_per_iteration: float = 0.0  # by each later one

    def evaluations_run(self, max_runs, sample_budget=None):
        """The evaluations after the start a run makes: ``max_runs``, or
        fewer where a sample budget ends it first (module doc)."""
        if not sample_budget or self.samples_per_iteration <= 0:
            return max_runs
        needed = 1 + max(0, math.ceil((sample_budget - self.first_samples)
                                      / self.samples_per_iteration))
        return next((m for m in range(1, max_runs + 1)
                     if final_iteration(m) >= needed), max_runs)

    def seconds(self, max_runs, sample_budget=None):
        """The bound on a run of ``max_runs`` evaluations (module doc)."""
        runs = self.evaluations_run(max_runs, sample_budget)
        iterations = final_iteration(runs)
        return (self.set_up + self.first
                + (iterations - 1) * self.per_iteration
                + (runs + 1) * self.evaluation)

    def largest_max_runs(self, timeout, sample_budget=None):
        """The largest max-runs whose bound fits ``timeout`` (0: none)."""
        fits = [m for m in range(1, MAX_RUNS_LIMIT + 1)
                if self.seconds(m, sample_budget) <= timeout]
        return max(fits, default=0)


def time_entry(entry, dataset, objective_entries=None, evaluation=None):
    """The :class:`EntryTime` of ``entry`` on ``dataset``; None where the
    solver skips the instance. ``evaluation``: the seconds of one
    evaluation already measured on this instance (the metrics do not
    depend on the solver), else measured at the start."""
    name, params = config_io.parse_entry(entry)
    objective, solver, reason = attached(name, params, dataset,
                                         objective_entries)
    if reason is not None:
        return None
    solver.warm_up()    # once, untimed, as benchopt does before its runs
    clock = time.perf_counter
    start = clock()
    solver.pre_run_hook(None)
    set_up = clock() - start
    if evaluation is None:
        start = clock()
        objective.evaluate_result(**solver.get_result())
        evaluation = clock() - start
    iterations = solver.iterations()
    seconds, samples = [], []
    for _ in range(1 + MEASURED_ITERATIONS):
        start = clock()
        next(iterations)
        seconds.append(clock() - start)
        samples.append(samples_drawn(solver.problem.counts()))
    return EntryTime(str(entry), str(dataset), set_up, seconds[0],
                     statistics.mean(seconds[1:]), evaluation, samples[0],
                     (samples[-1] - samples[0]) / MEASURED_ITERATIONS)


def _refusal(over, max_runs, timeout, sample_budget=None):
    iterations = final_iteration(max_runs)
    fits = min(t.largest_max_runs(timeout, sample_budget) for t in over)
    details = "; ".join(
        f"{t.entry}: {t.per_iteration:.3g} s an iteration, "
        f"{t.evaluation:.3g} s an evaluation on {t.instance}, about "
        f"{t.seconds(max_runs, sample_budget):.0f} s" for t in over)
    return ValueError(
        f"the timeout ({timeout} s) cannot hold {max_runs} evaluations "
        f"(iteration {iterations}) of every entry: {details}. Give "
        + (f"--max-runs {fits} or less (iteration {final_iteration(fits)})"
           if fits else "these entries more time (no max-runs fits)")
        + ", or leave these entries out of the transfer")


def check_time_cap(entries, datasets, max_runs, timeout,
                   objective_entries=None, measure=None, sample_budget=None):
    """The measured :class:`EntryTime` of every entry (the slowest of its
    instances), or ValueError naming each entry whose bound exceeds
    ``timeout`` at ``max_runs`` evaluations (fewer where ``sample_budget``
    ends a run first). The evaluation is timed once per instance; where
    the evaluations alone exceed the timeout, the instance's other entries
    are not timed."""
    measure = measure or time_entry
    slowest = {}
    for dataset in datasets:
        evaluation = None
        for entry in entries:
            measured = measure(entry, dataset, objective_entries, evaluation)
            if measured is None:
                continue
            evaluation = measured.evaluation
            key = str(entry)
            bound = measured.seconds(max_runs, sample_budget)
            if key not in slowest or bound > slowest[key].seconds(
                    max_runs, sample_budget):
                slowest[key] = measured
            runs = measured.evaluations_run(max_runs, sample_budget)
            if (runs + 1) * evaluation > timeout:
                raise _refusal([measured], max_runs, timeout, sample_budget)
    over = [t for t in slowest.values()
            if t.seconds(max_runs, sample_budget) > timeout]
    if over:
        raise _refusal(over, max_runs, timeout, sample_budget)
    return list(slowest.values())
