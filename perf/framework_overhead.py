"""How much does the benchmark's machinery cost per iteration?

Runs the same solver code (IR-SCG, then IR-FSCG) on the regression problem
at the papers' size (d = 730) three ways, side by side, and prints time
ratios:

1. bare: the solver's iteration generator on an uncounted view (oracles and
   sets are the problem's own methods) driven by a plain loop;
2. counted: the counting view the benchmark hands to solvers, same loop;
3. benchmark: the counting view driven by benchopt's own ``_Callback``
   (through the solver base's divergence guard), never logging.

A ratio close to 1 means the accounting and the callback loop cannot decide
a comparison between methods.

    python perf/framework_overhead.py [n_iterations]
"""
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchopt.benchmark import Benchmark  # noqa: E402
from benchopt.callback import _Callback  # noqa: E402
from benchopt.stopping_criterion import SingleRunCriterion  # noqa: E402
from timing import regression_problem  # noqa: E402

from benchmark_utils.counting import CountingView  # noqa: E402
from benchmark_utils.solvers.base import NUM_THREADS  # noqa: E402


class UncountedView(CountingView):
    """The counting view's samplers, but the problem's own oracles and sets."""

    def __init__(self, problem):
        super().__init__(problem)
        for name in problem.ORACLES:
            setattr(self, name, getattr(problem, name))
        for name in problem.SETS:
            setattr(self, name, getattr(problem, name))


def solver_instance(name, view):
    Solver = next(s for s in Benchmark(ROOT).get_solvers() if s.name == name)
    solver = Solver.get_instance()
    solver.problem, solver.seed = view, 0
    solver.check_with_problem(view)
    return solver


def time_plain_loop(solver, n_iter):
    solver.pre_run_hook(None)
    steps = solver.iterations()
    start = time.perf_counter()
    for _ in range(n_iter):
        next(steps)
    return time.perf_counter() - start


def time_benchopt_callback(solver, n_iter):
    criterion = SingleRunCriterion(stop_val=n_iter).get_runner_instance(
        solver=solver)
    callback = _Callback(lambda result: [{"objective_value": 0.0}], solver,
                         {}, criterion)
    callback.next_stopval = n_iter + 1          # never log inside the loop
    solver.pre_run_hook(callback)
    callback.start()
    steps = solver.iterations()
    start = time.perf_counter()
    while callback.it < n_iter and solver._keep_going(callback):
        next(steps)
    return time.perf_counter() - start


def main(n_iter):
    torch.set_num_threads(NUM_THREADS)
    problem = regression_problem(d=730)
    for name in ("IR-SCG", "IR-FSCG"):
        bare = solver_instance(name, UncountedView(problem))
        counted = solver_instance(name, CountingView(problem))
        bench = solver_instance(name, CountingView(problem))
        time_plain_loop(bare, 200)              # warm-up
        t_bare = min(time_plain_loop(bare, n_iter) for _ in range(3))
        t_counted = min(time_plain_loop(counted, n_iter) for _ in range(3))
        t_bench = min(time_benchopt_callback(bench, n_iter) for _ in range(3))
        print(f"{name}: bare {1e6 * t_bare / n_iter:.1f} us/iter, "
              f"counted/bare = {t_counted / t_bare:.3f}, "
              f"benchmark/bare = {t_bench / t_bare:.3f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5000)
