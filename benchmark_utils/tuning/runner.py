"""Run one solver's grid with benchopt itself (its CLI, in a subprocess,
as a user would) and the iteration budget of ``max-runs`` evaluations;
say what a tuning will run before it starts (:func:`plan_lines`) and
measure what it cost (:class:`CostMeter`)."""
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

from benchmark_utils.tuning.defaults import ROOT

# benchopt's callback strategy evaluates at iteration 0, then at
# max(s + 1, int(1.5 s)) after an evaluation at iteration s
# (benchopt.stopping_criterion, RHO = 1.5): the k-th evaluation falls at a
# fixed iteration, so the number of evaluations fixes the budget
RHO = 1.5


def final_iteration(max_runs):
    """The iteration of the last evaluation of a run of ``max_runs``
    evaluations after the start (benchopt's ``-n``): 316 for 15."""
    stop = 0
    for _ in range(max_runs):
        stop = max(stop + 1, int(RHO * stop))
    return stop


def check_parallel(parallel_config=None, n_jobs=None):
    """ValueError, before any run, unless ``n_jobs`` is None or an integer
    >= 1 and ``parallel_config`` is None or a YAML file of benchopt's
    parallel config (a mapping, docs/parallel.md)."""
    import yaml
    if n_jobs is not None and n_jobs < 1:
        raise ValueError(f"--n-jobs must be an integer >= 1, got {n_jobs}")
    if parallel_config is None:
        return
    path = Path(parallel_config)
    if not path.is_file():
        raise ValueError(f"--parallel-config must be an existing file "
                         f"(configs/parallel/), got {parallel_config}")
    try:
        content = yaml.safe_load(path.read_text())
    except (yaml.YAMLError, UnicodeDecodeError) as error:
        raise ValueError(f"--parallel-config {parallel_config} is not "
                         f"YAML: {str(error).splitlines()[0]}") from None
    if not isinstance(content, dict):
        raise ValueError(f"--parallel-config {parallel_config} must hold "
                         "benchopt's parallel config, a mapping such as "
                         "'backend: dask' (docs/parallel.md)")


def parallel_options(parallel_config=None, n_jobs=None):
    """The run-config keys that send benchopt's runs to a parallel backend
    (``--parallel-config``, docs/parallel.md) with ``n_jobs`` workers;
    none for a sequential run."""
    return {**({"parallel-config": str(parallel_config)}
               if parallel_config else {}),
            **({"n-jobs": n_jobs} if n_jobs else {})}


def run_benchopt(run_config, log_path, env=None):
    """``benchopt run ROOT --config run_config``, its output in
    ``log_path`` (``env``: variables set for it); RuntimeError with the
    log's tail if it fails."""
    # pytest's benchmark plugin, when installed, would parse benchopt's
    # options in a test's subprocess
    env = dict(os.environ, PYTEST_ADDOPTS="-p no:benchmark", **(env or {}))
    with open(log_path, "w") as log:
        result = subprocess.run(
            [sys.executable, "-m", "benchopt", "run", str(ROOT),
             "--config", str(run_config)],
            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    if result.returncode != 0:
        tail = log_path.read_text()[-3000:]
        raise RuntimeError(f"benchopt run failed (log: {log_path}):\n{tail}")


class CostMeter:
    """What a tuning cost: the CPU time of the benchopt processes it ran
    (user + system, from the children's resource usage: the runs, not the
    tuning command's own bookkeeping) and the wall-clock time, from its
    creation; :meth:`text` for the tuned config's header."""

    def __init__(self):
        self._cpu = self._children_cpu()
        self._wall = time.monotonic()

    @staticmethod
    def _children_cpu():
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        return usage.ru_utime + usage.ru_stime

    def cpu_seconds(self):
        return self._children_cpu() - self._cpu

    def wall_seconds(self):
        return time.monotonic() - self._wall

    def text(self):
        cores = len(os.sched_getaffinity(0))
        return (f"Tuning cost: {self.cpu_seconds() / 60:.2f} CPU-minutes in "
                f"benchopt's runs ({self.wall_seconds() / 60:.2f} minutes "
                f"wall-clock, {cores} core(s) available, each run on one)")


def stated_minutes(text):
    """The CPU-minutes a tuned config's header ``text`` states, one per
    piece of its tuning: its ``Tuning cost`` line (:meth:`CostMeter.text`)
    and each ``Earlier piece`` line of a tuning in pieces."""
    return [float(m) for m in re.findall(
        r"(\d+(?:\.\d+)?) CPU-minutes in benchopt's runs", text)]


def plan_lines(plans, seeds, instances, max_runs, widen, output):
    """What the tuning will run, printed before any run: the first grids'
    points x seeds x dataset instances (each run to at most ``max_runs``
    evaluations) of the entries it tunes (not those kept for a reason),
    the widening rounds that may follow, and what the tuning last written
    to ``output`` cost where its header states it (a re-tuning's
    estimate)."""
    tuned = [plan for plan in plans if not plan.reason]
    points = sum(len(plan.points) for plan in tuned)
    runs = points * seeds * instances
    lines = [f"plan: {points} points x {seeds} seeds x {instances} dataset "
             f"instance(s) = {runs} benchopt runs in the first grids of "
             f"{len(tuned)} entries, each to at most {max_runs} evaluations "
             f"(iteration {final_iteration(max_runs)})"
             + (f", then up to {widen} widening round(s) per entry where a "
                "choice ends on an edge" if widen else ", no widening")]
    minutes = stated_minutes(output.read_text() if output.is_file() else "")
    if minutes:
        lines.append(f"the tuning in {output.name} cost "
                     f"{sum(minutes):.1f} CPU-minutes in benchopt's runs "
                     "(its header): expect about as much for its entries")
    return lines
