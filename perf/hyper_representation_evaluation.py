"""Cost of one exact evaluation of the hyper-representation metrics (Huang
et al. 2021, Sec. 5.2) at the four panels of
configs/huang_hyper_representation_synthetic.yml: the former path against
the current one, side by side.

An evaluation is what ``general_metrics`` does at an iterate: y*(x) (every
task's head by a certified Newton solve, warm-started), F(x), the exact
hypergradient, ||y - y*(x)||, and the meta-test accuracy (heads fitted on
the meta-test support sets). The former path is the module as of commit
``FORMER_COMMIT``, read from git (no copy kept here): dense k D x k D
Hessians per task, a fixed task chunk, features recomputed per quantity.
The current one: Woodbury factorizations through the n x n capacitance,
per-task start (previous head or 0), chord steps, features once per x
(module doc of ``benchmark_utils/problems/hyper_representation.py``).

Sequence: the iterates of a real run, stocBiO with the config's parameters
(outer_step = 1000 moves the network far between evaluations: the hard
case for warm starts) and BiAdam (outer_step = 0.001: small moves),
evaluated at
iterations ``EVAL_AT``; the two paths evaluate the same iterates, each with
its own warm starts, alternating iterate by iterate. Cost is the thread's
CPU time (one torch thread, as in runs: ``NUM_THREADS``), so the time the
process waits for a core on a shared machine is not counted; medians over
the warm evaluations (iteration >= 1). The agreement of the two paths'
metrics is printed.

    python perf/hyper_representation_evaluation.py [panel ...]

with panels among 5x1 5x5 20x1 20x5 (ways x shots; default: all four).
"""
import subprocess
import sys
import time
import types
from pathlib import Path

import numpy as np
import torch
from benchopt.benchmark import Benchmark

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "perf"))

from timing import benchmark_solver  # noqa: E402

from benchmark_utils.metrics import general_metrics  # noqa: E402
from benchmark_utils.solvers.base import NUM_THREADS  # noqa: E402

FORMER_COMMIT = "453bbe8"
MODULE = "benchmark_utils/problems/hyper_representation.py"
# the synthetic config's dataset (ways and shots per panel)
DATASET = dict(source="synthetic", n_query=5, n_train_tasks=64,
               n_test_tasks=32, C=0.01, network="mlp", width=32, depth=1,
               n_features=16)
SOLVERS = {
    "stocBiO": dict(D=16, neumann_terms=6, inner_step=0.4, outer_step=1000.0,
                    batch_size=4),
    "BiAdam": dict(neumann_depth_bound=5, outer_step=0.001, inner_step=0.4,
                   batch_size=4),
}
EVAL_AT = (0, 1, 3, 10, 30)
# continuous metrics; test_accuracy is compared apart: where the features
# saturate (tanh = +-1 exactly, stocBiO at beta = 1000) tasks have classes
# with identical heads, and the argmax of tied logits is decided by rounding
COMPARED = ("value", "hypergrad_norm", "test_loss")


def former_class():
    """HyperRepresentationBilevel as of FORMER_COMMIT, from git."""
    source = subprocess.run(
        ["git", "show", f"{FORMER_COMMIT}:{MODULE}"], cwd=ROOT, check=True,
        capture_output=True, text=True).stdout
    module = types.ModuleType("hyper_representation_former")
    exec(compile(source, f"{FORMER_COMMIT}:{MODULE}", "exec"),
         module.__dict__)
    return module.HyperRepresentationBilevel


def make_problem(ways, shots):
    Dataset = next(d for d in Benchmark(ROOT).get_datasets()
                   if d.name == "hyper_representation")
    dataset = Dataset.get_instance(ways=ways, shots=shots, **DATASET)
    return dataset.get_data()["problem"]


def trajectory(ways, shots, solver_name):
    """(iteration, x, y) of a run at EVAL_AT."""
    solver = benchmark_solver(solver_name, make_problem(ways, shots),
                              SOLVERS[solver_name])
    steps = solver.iterations()
    points = []
    for it in range(max(EVAL_AT) + 1):
        if it in EVAL_AT:
            result = solver.get_result()
            points.append((it, result["x"], result["y"]))
        next(steps)
    return points


def timed(problem, x, y):
    start = time.thread_time()
    metrics = general_metrics(problem, x, y)
    return time.thread_time() - start, metrics


def panel(ways, shots, Former):
    rows = []
    for solver_name in SOLVERS:
        new = make_problem(ways, shots)
        old = Former(new.train, new.test, new.ways, new.C, new.network,
                     new.x0)
        for it, x, y in trajectory(ways, shots, solver_name):
            t_old, m_old = timed(old, x, y)
            t_new, m_new = timed(new, x, y)
            rows.append((solver_name, it, t_old, t_new, m_old, m_new))
    return rows


def main(panels):
    torch.set_num_threads(NUM_THREADS)
    Former = former_class()
    print(f"torch threads: {NUM_THREADS}; cost = thread CPU seconds per "
          f"evaluation; former = {MODULE} at {FORMER_COMMIT}")
    summary = []
    for name in panels:
        ways, shots = (int(v) for v in name.split("x"))
        rows = panel(ways, shots, Former)
        print(f"\n{ways}-way {shots}-shot")
        print(f"{'run':<8}{'iter':>5} {'former':>9} {'current':>9} "
              f"{'ratio':>7}  max rel. gap  test_accuracy")
        for solver_name, it, t_old, t_new, m_old, m_new in rows:
            gap = max(abs(m_old[k] - m_new[k]) / max(1e-12, abs(m_old[k]))
                      for k in COMPARED)
            print(f"{solver_name:<8}{it:>5} {t_old:>8.3f}s {t_new:>8.3f}s "
                  f"{t_old / t_new:>6.1f}x  {gap:>11.1e}  "
                  f"{m_old['test_accuracy']:.4f} / "
                  f"{m_new['test_accuracy']:.4f}")
        warm = [r for r in rows if r[1] >= 1]
        old_med = float(np.median([r[2] for r in warm]))
        new_med = float(np.median([r[3] for r in warm]))
        summary.append((name, old_med, new_med))
    print("\nmedian over warm evaluations (both runs)")
    for name, old_med, new_med in summary:
        print(f"  {name:>5}: former {old_med:.3f}s, current {new_med:.3f}s,"
              f" ratio {old_med / new_med:.1f}x")


if __name__ == "__main__":
    main(sys.argv[1:] or ["5x1", "5x5", "20x1", "20x5"])
