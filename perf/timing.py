"""What the perf scripts share: the thread-CPU-time clock of a solver's
iterations and the regression instance the simple-family timings use."""
import time

import numpy as np

from benchmark_utils.problems.least_squares import LeastSquaresBilevel
from benchmark_utils.sets import L1Ball


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
