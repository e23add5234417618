"""Per-iteration time against the problem's size.

IR-SCG on least-squares regression (Cao et al. 2023's shape: 1068
samples in thirds, l1 ball of radius 10) at d = 100, 1000, 10000
features, with the paper's batch of one sample ("IR-SCG") and with a
batch of 64 ("IR-SCG64"), and F2SA on the benchmark's quadratic
(dim_x = dim_y = d, 1000 samples, batch 16) at d = 100, 1000, 3000: the
quadratic stores dense d x d matrices (H, C and the generator's rotation)
and its generator is O(d^3), so d = 10000 (800 MB per matrix) is left out.

For each size the script prints the benchmark solver's time per
iteration, the time of the minimal hand-written loop doing the same
oracle calls (``perf/minimal_loops.py``) and their ratio, and the
multiply-adds per iteration of the oracle arithmetic (IR-SCG: four
length-d dot products and four d-vector scalings for the two STORM
gradients, O(d) for the rest; F2SA: two d x d products per lower-level
gradient, 2T + 2 of them per iteration). With a batch of one, IR-SCG's
arithmetic (8 d multiply-adds) stays below the fixed cost of its ~40
torch calls per iteration even at d = 10000; with a batch of 64 it
overtakes it. At small d a fixed cost per
call dominates and the time barely moves with d; once the arithmetic
dominates, the time grows with it and the ratio to the minimal loop
goes to 1. Medians of interleaved blocks of thread CPU time, one
thread.

    python perf/cost_vs_size.py [n_blocks]
"""
import statistics
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

import minimal_loops as ml  # noqa: E402

IR_SCG_SIZES = (100, 1000, 10000)
F2SA_SIZES = (100, 1000, 3000)


def ir_scg_case(d, S=1):
    P = ml.regression_problem(d=d)
    solver = ml.benchmark_solver("IR-SCG", P, {"batch_size": S})
    return solver, ml.minimal_ir_scg(P, solver.x.clone(), {}, S=S), 8 * S * d


def ir_scg_batch_case(d):
    return ir_scg_case(d, S=64)


def f2sa_case(d):
    P = ml.quadratic_problem(dim=d)
    solver = ml.benchmark_solver("F2SA", P, ml.f2sa_params(P))
    minimal = ml.minimal_f2sa(P, solver.x.clone(), solver.y.clone(), {})
    T = ml.F2SA_PARAMS["T"]
    return solver, minimal, (2 * T + 2) * 2 * d * d


def measure(make, d, n_blocks):
    solver, minimal, work = make(d)
    ours = solver.iterations()
    # blocks of about 20 ms at the smallest size
    per_block = max(2, int(2e4 / (1.0 + work ** 0.5)))
    ml.advance(ours, per_block)
    ml.advance(minimal, per_block)
    t_ours, t_min = [], []
    for block in range(n_blocks):
        pair = [(ours, t_ours), (minimal, t_min)]
        for steps, times in (pair if block % 2 == 0 else pair[::-1]):
            times.append(ml.advance(steps, per_block) / per_block)
    return statistics.median(t_ours), statistics.median(t_min), work


def main(n_blocks=9):
    torch.set_num_threads(ml.NUM_THREADS)
    print(f"{'solver':8s} {'d':>6s} {'mult-adds':>10s} {'benchmark':>12s} "
          f"{'x d=100':>8s} {'minimal':>12s} {'ratio':>6s}")
    for name, make, sizes in (("IR-SCG", ir_scg_case, IR_SCG_SIZES),
                              ("IR-SCG64", ir_scg_batch_case, IR_SCG_SIZES),
                              ("F2SA", f2sa_case, F2SA_SIZES)):
        first = None
        for d in sizes:
            ours, minimal, work = measure(make, d, n_blocks)
            first = first or ours
            print(f"{name:8s} {d:6d} {work:10.2e} {1e6 * ours:9.1f} us "
                  f"{ours / first:8.2f} {1e6 * minimal:9.1f} us "
                  f"{ours / minimal:6.2f}")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:]))
