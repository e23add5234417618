"""SOBA's and SABA's curves in both benchmarks, with the same steps, on
benchmark_bilevel's default simulated quadratic.

    python tools/compare_anchor_curves.py [--anchor PATH] [--seeds 10]
        [--iterations 2048] [--every 128] [--steps default tuned]
        [--solvers SOBA SABA] [--sampler ours|upstream]

The anchor's side runs benchmark_bilevel's own solver classes (its
checkout first on sys.path, in a subprocess per seed: its package is also
called ``benchmark_utils``) from its start (x = -2, y = 0) with its
``random_state`` = 1..K, and records its outer variable every ``--every``
iterations (its ``eval_freq``). Our side runs our solvers on the same
instance (``make_simulated_quadratic``, float32 as the anchor's JAX) from
the same start (``init="dataset"``) with the counting view seeded 0..K-1.
Both are scored by the same exact F(x) - F* (our float64 instance: the
matrices agree with upstream's to float32 rounding). Step settings:

* ``default``: the anchor's defaults, SOBA step 0.1 / sqrt(t+1) on both
  levels (our ``step_rule="inverse_sqrt"``), SABA 0.1 constant with empty
  memories (``init_memory="zero"``);
* ``tuned``: our tuned steps (configs/tuned/benchmark_bilevel_simulated.yml)
  given to both (the anchor's ``step_size`` = inner_step, ``outer_ratio`` =
  inner_step / outer_step), with the same schedules as ``default`` (the
  anchor's SOBA has no constant-step option).

``--sampler upstream`` gives our side the anchor's sampler (each epoch
draws the last block of its order twice), to separate that difference
from the others. Prints, per solver and checkpoint, the median and [min,
max] over seeds on each side and whether each median lies inside the
other side's range.
Needs JAX; without it, or without a checkout, says so and exits 0.
"""
import argparse
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
STEPS = {
    "default": {"SOBA": (0.1, 0.1), "SABA": (0.1, 0.1)},
    "tuned": {"SOBA": (0.143, 0.05), "SABA": (0.143, 0.518)},
}
ANCHOR_START = -2.0         # the anchor's objective: outer_var0 = -2 * ones


def anchor_run(anchor, name, inner_step, outer_step, seed, iterations,
               every):
    """The anchor's outer iterates (rows) every ``every`` iterations, from
    a subprocess running this file with ``--worker``."""
    command = [sys.executable, __file__, "--worker", "--anchor", str(anchor),
               "--solver", name, "--seed", str(seed), "--iterations",
               str(iterations), "--every", str(every), "--inner-step",
               repr(inner_step), "--outer-step", repr(outer_step)]
    out = subprocess.run(command, check=True, capture_output=True, text=True)
    return np.array(json.loads(out.stdout.strip().splitlines()[-1]))


def worker(args):
    """The anchor's side: its classes only (run with its checkout first)."""
    sys.path.insert(0, str(ROOT / "perf"))
    from anchor_worker import load_anchor_objective, load_module
    anchor = Path(args.anchor)
    objective = load_anchor_objective(anchor)
    solver_class = load_module(anchor / "solvers" / f"{args.solver.lower()}"
                               ".py", "anchor_solver").Solver
    params = dict(step_size=args.inner_step,
                  outer_ratio=args.inner_step / args.outer_step,
                  batch_size=64, eval_freq=args.every,
                  random_state=args.seed)
    if args.solver == "SABA":
        params["mode_init_memory"] = "zero"
    solver = solver_class.get_instance(**params)
    solver._set_objective(objective)
    rows = []

    def callback():
        rows.append(np.asarray(solver.outer_var, dtype=float).tolist())
        return len(rows) <= args.iterations // args.every

    solver.run(callback)
    print(json.dumps(rows))


def upstream_sampler(n, generator):
    """The anchor's sampler (its ``minibatch_sampler.py``): fixed blocks in
    a fresh random order every epoch, but the end of an epoch is tested
    after the block is read, so every epoch draws the last block of its
    order twice (n/B + 1 draws)."""
    import torch

    from benchmark_utils.problems.batches import EpochBlockSampler

    class UpstreamSampler(EpochBlockSampler):
        def __call__(self, size):
            state = self._state(size)
            if state.position < len(state.order):
                return super().__call__(size)
            repeated = state.blocks[state.order[-1]]
            state.order = torch.randperm(len(state.blocks),
                                         generator=self.generator).tolist()
            state.position = 0
            return repeated

    return UpstreamSampler(n, generator)


def ours_run(name, inner_step, outer_step, seed, iterations, every,
             sampler="ours"):
    """Our outer iterates every ``every`` iterations (float32 instance),
    with our sampler or the anchor's (``sampler="upstream"``)."""
    import torch
    sys.path.insert(0, str(ROOT / "perf"))
    from timing import benchmark_solver

    from benchmark_utils.problems.simulated_quadratic import (
        make_simulated_quadratic,
    )
    problem = make_simulated_quadratic(dtype="float32")
    problem.x0 = torch.full_like(problem.x0, ANCHOR_START)
    if sampler == "upstream":
        problem.batch_sampler = lambda level, generator: upstream_sampler(
            problem.n_upper if level == "upper" else problem.n_lower,
            generator)
    params = dict(batch_size=64, inner_step=inner_step, init="dataset",
                  outer_step=outer_step)
    if name == "SOBA":      # the anchor's SOBA always divides by sqrt(t+1)
        params["step_rule"] = "inverse_sqrt"
    if name == "SABA":
        params["init_memory"] = "zero"
    solver = benchmark_solver(name, problem, params, seed=seed)
    rows, loop = [solver.x.double().numpy()], solver.iterations()
    for _ in range(iterations // every):
        for _ in range(every):
            next(loop)
        rows.append(solver.x.double().numpy())
    return np.array(rows)


def gaps(rows):
    """F(x) - F* of each row, on the float64 instance (exact)."""
    import torch

    from benchmark_utils.problems.simulated_quadratic import (
        make_simulated_quadratic,
    )
    from benchmark_utils.references.quadratic import simulated_references
    if not hasattr(gaps, "problem"):
        gaps.problem = make_simulated_quadratic()
        gaps.F_star = simulated_references(gaps.problem)["F_star"]
    P = gaps.problem
    return np.array([float(P.value(torch.as_tensor(r))) - gaps.F_star
                     for r in rows])


def inside(value, low, high):
    return "yes" if low <= value <= high else "no"


def compare(anchor, args):
    for step in args.steps:
        for name in args.solvers:
            inner, outer = STEPS[step][name]
            theirs = np.array([gaps(anchor_run(
                anchor, name, inner, outer, seed + 1, args.iterations,
                args.every)) for seed in range(args.seeds)])
            ours = np.array([gaps(ours_run(
                name, inner, outer, seed, args.iterations, args.every,
                args.sampler)) for seed in range(args.seeds)])
            print(f"\n{name}, {step} steps (inner {inner}, outer {outer}), "
                  f"{args.seeds} seeds, our side with {args.sampler} "
                  "sampler: F(x) - F*\n")
            print("| iteration | anchor median [min, max] | ours median "
                  "[min, max] | ours in anchor's | anchor's in ours |")
            print("|---|---|---|---|---|")
            for k in range(theirs.shape[1]):
                a, o = theirs[:, k], ours[:, k]
                print(f"| {k * args.every} | {np.median(a):.4g} "
                      f"[{a.min():.4g}, {a.max():.4g}] | {np.median(o):.4g} "
                      f"[{o.min():.4g}, {o.max():.4g}] | "
                      f"{inside(np.median(o), a.min(), a.max())} | "
                      f"{inside(np.median(a), o.min(), o.max())} |")


def parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--anchor", type=Path, default=None)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--iterations", type=int, default=2048)
    parser.add_argument("--every", type=int, default=128)
    parser.add_argument("--steps", nargs="+", choices=tuple(STEPS),
                        default=list(STEPS))
    parser.add_argument("--solvers", nargs="+", choices=("SOBA", "SABA"),
                        default=["SOBA", "SABA"])
    parser.add_argument("--sampler", choices=("ours", "upstream"),
                        default="ours",
                        help="our side's block sampler: ours (every block "
                        "once per epoch) or the anchor's (the last block of "
                        "each epoch drawn twice)")
    # the anchor's side (internal)
    parser.add_argument("--worker", action="store_true",
                        help=argparse.SUPPRESS)
    parser.add_argument("--solver", help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--inner-step", type=float, help=argparse.SUPPRESS)
    parser.add_argument("--outer-step", type=float, help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv=None):
    args = parse(argv)
    if args.worker:
        return worker(args)
    try:
        import jax  # noqa: F401
    except ImportError:
        print("JAX is not installed (pip install jax): nothing to compare.")
        return 0
    sys.path.insert(0, str(ROOT / "perf"))
    sys.path.insert(0, str(ROOT))
    from anchor_side_by_side import anchor_checkout
    anchor, label = anchor_checkout(args.anchor)
    if anchor is None:
        print("No benchmark_bilevel checkout: give --anchor PATH or set "
              "BENCHMARK_BILEVEL_REPO to a clone (git clone "
              "https://github.com/benchopt/benchmark_bilevel).")
        return 0
    print(f"benchmark_bilevel: {label}")
    compare(anchor, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
