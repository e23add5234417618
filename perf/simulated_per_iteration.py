"""Per-iteration time on benchmark_bilevel's ``simulated`` quadratic.

The problem at the anchor's sizes (n_inner = n_outer = 1024, dims 100 /
100, batch 64, benchmark_bilevel's sampling: fixed contiguous blocks, order
reshuffled every epoch), in float64 and float32, with the benchmark's F2SA
(T = 10 inner steps, as benchmark_bilevel's ``n_inner_steps``, and two
independent inner batches for the x-gradients of g, as upstream), stocBiO
(D = 10 inner steps, Q = 10 Neumann terms, as its ``n_inner_steps`` /
``n_shia_steps``) and SOBA (when ``solvers/soba.py`` exists), each in two
storage modes of the problem:

* ``cached``: the batch means of a block's matrices are computed on the
  block's first use and reused (exact; d^2 work per oracle afterwards);
* ``uncached``: every oracle averages the block's matrices (B d^2 work per
  oracle, the work benchmark_bilevel's JAX does).

Printed: the median per-iteration time of interleaved blocks of iterations
(thread CPU time, one thread, after a warm-up of more than one epoch) and,
for F2SA and stocBiO, the ratio against a minimal hand-written torch loop
doing the same math on the same batches, run side by side (checked to
agree with the benchmark's solver to 1e-12 in float64 first). No ratio to
benchmark_bilevel here: its jitted JAX is timed side by side, on the same
machine in the same run, by perf/jax_side_by_side.py.

    python perf/simulated_per_iteration.py [n_blocks] [iterations_per_block]
"""
import statistics
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from timing import advance, benchmark_solver, solver_module, streams  # noqa: E402

from benchmark_utils.problems.simulated_quadratic import (  # noqa: E402
    MIN_CACHED_BLOCK,
    _average,
    make_simulated_quadratic,
)
from benchmark_utils.solvers.base import NUM_THREADS  # noqa: E402

SEED = 0
BATCH = 64
CHECK_ITERATIONS = 40
PARAMS = {"F2SA": {"T": 10, "batch_size": BATCH, "shared_x_batch": False},
          "stocBiO": {"D": 10, "neumann_terms": 11, "batch_size": BATCH},
          "SOBA": {"batch_size": BATCH}}


# -- minimal loops ---------------------------------------------------------

def block_means(P, level, cached):
    """draw() -> dict of the next block's means (H, K, C, a, b), the block
    order reshuffled every epoch, first epoch in order."""
    data = P._data[level]
    n = data["a"].shape[0]
    gen = streams(SEED)[0 if level == "upper" else 1]
    starts = list(range(0, n, BATCH))
    state = {"order": list(range(len(starts))), "pos": 0}
    cache = {}
    keep = cached and BATCH >= MIN_CACHED_BLOCK

    def means(start):
        return {k: _average(v[start:start + BATCH]) for k, v in data.items()}

    def draw():
        if state["pos"] == len(starts):
            state["order"] = torch.randperm(len(starts),
                                            generator=gen).tolist()
            state["pos"] = 0
        start = starts[state["order"][state["pos"]]]
        state["pos"] += 1
        if not keep:
            return _Lazy(data, start)
        if start not in cache:
            cache[start] = means(start)
        return cache[start]
    return draw


class _Lazy(dict):
    """A drawn block whose means are computed on first access, as the
    problem's uncached oracles do (each draw serves one oracle call)."""

    def __init__(self, data, start):
        super().__init__()
        self.data, self.start = data, start

    def __missing__(self, k):
        mean = self[k] = _average(self.data[k][self.start:self.start + BATCH])
        return mean


def grad_y(m, x, y):
    return m["H"] @ y + x @ m["C"] + m["a"]


def grad_x(m, x, y):
    return m["K"] @ x + m["C"] @ y + m["b"]


def minimal_f2sa(P, solver, x, y, state, cached):
    """F2SA (Kwon et al. 2023, Alg. 1) with the solver's schedule."""
    low, up = block_means(P, "lower", cached), block_means(P, "upper", cached)
    z, k, lam, T, mu_g = y.clone(), 0, None, solver.T, P.mu_g
    xi = solver.steps.xi
    next_multiplier = solver_module(solver).next_multiplier
    while True:
        alpha, gamma, closed_form = solver.schedule(k)
        if lam is None or solver.multiplier == "closed_form":
            lam = closed_form
        for _ in range(T):
            z = z - gamma * grad_y(low(), x, z)
            mu_ = up()
            y = y - alpha * (grad_y(mu_, x, y) + lam * grad_y(low(), x, y))
        m_up, m_y, m_z = up(), low(), low()
        direction = grad_x(m_up, x, y) + lam * (grad_x(m_y, x, y)
                                               - grad_x(m_z, x, z))
        x = x - xi * alpha * direction
        if solver.multiplier == "recursion":
            lam = next_multiplier(lam, alpha, gamma, T=T, mu_g=mu_g,
                                  ratio=solver.y_step_ratio)
        state["x"] = x
        yield
        k += 1


def minimal_stocbio(P, solver, x, y, state, cached):
    """stocBiO (Ji et al. 2021, Alg. 2 and 3) with the solver's steps."""
    low, up = block_means(P, "lower", cached), block_means(P, "upper", cached)
    alpha, beta = solver.steps.inner_step, solver.steps.outer_step
    eta = solver.steps.linear_system_step
    D, Q = solver.D, solver.neumann_terms - 1       # Q Hessian factors
    while True:
        for _ in range(D):
            y = y - alpha * grad_y(low(), x, y)
        m = up()
        gx, gy = grad_x(m, x, y), grad_y(m, x, y)
        p = total = gy
        for _ in range(Q):
            p = p - eta * (low()["H"] @ p)
            total = total + p
        x = x - beta * (gx - low()["C"] @ (eta * total))
        state["x"] = x
        yield


MINIMAL = {"F2SA": minimal_f2sa, "stocBiO": minimal_stocbio}


# -- timing ----------------------------------------------------------------

def check_agreement(name, problem, cached):
    solver = benchmark_solver(name, problem, PARAMS[name])
    state = {}
    minimal = MINIMAL[name](problem, solver, solver.x.clone(),
                            solver.y.clone(), state, cached)
    ours = solver.iterations()
    for _ in range(CHECK_ITERATIONS):
        next(ours)
        next(minimal)
    a, b = solver.x, state["x"]
    error = float((a - b).abs().max() / max(1.0, float(a.abs().max())))
    assert error < 1e-12, f"{name}: the minimal loop differs by {error:.3g}"


def time_case(name, problem, cached, n_blocks, per_block):
    solver = benchmark_solver(name, problem, PARAMS[name])
    ours = solver.iterations()
    minimal = None
    if name in MINIMAL:
        minimal = MINIMAL[name](problem, solver, solver.x.clone(),
                                solver.y.clone(), {}, cached)
    # warm-up: more than one epoch, so every block is in the cache
    warm = 2 * problem.n_lower // BATCH
    advance(ours, warm)
    if minimal is not None:
        advance(minimal, warm)
    t_ours, t_min = [], []
    for _ in range(n_blocks):
        t_ours.append(advance(ours, per_block) / per_block)
        if minimal is not None:
            t_min.append(advance(minimal, per_block) / per_block)
    return (statistics.median(t_ours),
            statistics.median(t_min) if t_min else None)


def storage(problem, cached):
    """The problem in one storage mode (the same data; cache emptied)."""
    problem.cache_means = cached
    problem._block_means.clear()
    return problem


def solver_names():
    names = ["F2SA", "stocBiO"]
    if (ROOT / "solvers" / "soba.py").exists():
        names.append("SOBA")
    return names


def main(n_blocks=7, per_block=10):
    torch.set_num_threads(NUM_THREADS)
    names = solver_names()
    problems = {dtype: make_simulated_quadratic(dtype=dtype)
                for dtype in ("float64", "float32")}
    for name in MINIMAL:
        for cached in (True, False):
            check_agreement(name, storage(problems["float64"], cached),
                            cached)
    print(f"{'solver':8s} {'dtype':8s} {'means':9s} {'ours':>9s} "
          f"{'minimal':>9s} {'ours/minimal':>12s}")
    for name in names:
        for dtype, cached in [(d, c) for d in problems for c in (True,
                                                                 False)]:
            problem = storage(problems[dtype], cached)
            ours, minimal = time_case(name, problem, cached, n_blocks,
                                      per_block)
            extra = (f"{1e3 * minimal:7.2f}ms {ours / minimal:12.2f}"
                     if minimal else f"{'-':>9s} {'-':>12s}")
            print(f"{name:8s} {dtype:8s} "
                  f"{'cached' if cached else 'uncached':9s} "
                  f"{1e3 * ours:7.2f}ms {extra}")
    print(f"medians of {n_blocks} interleaved blocks of {per_block} "
          f"iterations (thread CPU time), {NUM_THREADS} torch thread(s), "
          f"batch {BATCH}; minimal loops checked equal to 1e-12 after "
          f"{CHECK_ITERATIONS} iterations in float64")


if __name__ == "__main__":
    main(*[int(a) for a in sys.argv[1:]])
