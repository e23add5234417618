"""What the perf scripts share: a benchmark solver set up as benchopt
does, the counting view's sample streams for the hand-written loops, the
thread-CPU-time clock of an iteration and the regression instance the
simple-family timings use."""
import sys
import time
from pathlib import Path

import numpy as np
import torch
from benchopt.benchmark import Benchmark

from benchmark_utils.counting import CountingView
from benchmark_utils.problems.least_squares import LeastSquaresBilevel
from benchmark_utils.sets import L1Ball

ROOT = Path(__file__).resolve().parents[1]


def benchmark_solver(name, problem, params, seed=0):
    """A solver set up as benchopt does, on a counting view, after its
    untimed ``pre_run_hook``; benchopt's run context gives the seed, here it
    is fixed."""
    Solver = next(s for s in Benchmark(ROOT).get_solvers() if s.name == name)
    solver = Solver.get_instance(**params)
    solver.get_seed = lambda use_repetition=True: seed
    solver.set_objective(CountingView(problem))
    solver.pre_run_hook(None)
    return solver


def solver_module(solver):
    """The module of a benchmark solver's file (``solvers/<name>.py``), for
    the rules a solver keeps next to its class (e.g. F2SA's
    ``next_multiplier``)."""
    return sys.modules[type(solver).__module__]


def streams(seed):
    """The upper and lower sample streams of a counting view seeded with
    ``seed`` (the same derivation, so a hand-written loop draws the same
    batches as the solver)."""
    upper, lower, _ = np.random.SeedSequence(seed).spawn(3)
    gens = []
    for sequence in (upper, lower):
        gen = torch.Generator()
        gen.manual_seed(int(sequence.generate_state(1, dtype=np.uint64)[0]))
        gens.append(gen)
    return gens


def advance(steps, n):
    """CPU time of this thread over ``n`` iterations of ``steps``: on a
    shared machine, the time the process waits for a core is not the
    loop's (one torch thread, so the thread's CPU time is its whole cost)."""
    start = time.thread_time()
    for _ in range(n):
        next(steps)
    return time.thread_time() - start


def regression_problem(d=500, n=1068, seed=0):
    """Least squares with Cao et al. 2023's regression shape (n = 1068
    samples split in thirds, l1 ball of radius 10), d features."""
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, d))
    b = A @ (rng.standard_normal(d) / d) + 0.05 * rng.standard_normal(n)
    train, val, _ = np.array_split(rng.permutation(n), 3)
    return LeastSquaresBilevel(A[val], b[val], A[train], b[train],
                               L1Ball(d, 10.0))
