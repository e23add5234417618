"""One side of perf/anchor_side_by_side.py, in its own process pinned to one
core before JAX or torch is imported.

    python perf/anchor_worker.py --side anchor --anchor PATH --core C
    python perf/anchor_worker.py --side ours --core C

Protocol: one JSON command per line on stdin, one JSON reply per line on
the process's original stdout (everything else printed goes to stderr).
``setup`` builds a case and warms it up (replies its block length),
``block`` times one block of iterations, ``stop`` ends the case,
``benchopt`` (anchor) reruns the last solver under benchopt's own
``_Callback``, ``quit`` ends the process. A block reply holds its wall
time (``time.perf_counter``), process CPU time, iterations, the threads
that were busy and the cores they last ran on (:mod:`pinning`), and the
threads allowed on other cores.

The anchor side (benchmark_bilevel's checkout first on sys.path: its
package is also called ``benchmark_utils``, ours is never imported here)
loads its ``datasets/simulated.py`` Dataset (default parameters), its
``objective.py`` Objective and a ``solvers/<name>.py`` Solver class, calls
``_set_objective`` (benchopt's: ``set_objective`` with the objective's
``get_objective()``, which compiles and runs ``run_once(2)``) and drives
its own ``run(callback)``. The callback serves the protocol: a block is
one or more callbacks; at each, ``jax.block_until_ready`` on the solver's
outer_var and inner_var before the clock is read. Both readings are kept:
``nowait`` (the clock read on entering the callback, where benchopt's
``_Callback`` reads it before the objective's evaluation syncs) and the
synced one. ``eval_freq`` (iterations per callback, one jitted scan) is the
anchor's 128 where 128 iterations take at most about 4 blocks, else the
iterations of about a block (a probe instance with eval_freq 1 measures
it; the work per iteration is the same, one dispatch per block).

Our side builds the problem with ``make_simulated_quadratic`` from the
config's dataset parameters (``cache_means`` set per case) and our solver
with ``perf/timing.py``'s ``benchmark_solver``, and times blocks of
``solver.iterations()``.
"""
import argparse
import importlib.util
import json
import math
import os
import sys
import time
import traceback
from pathlib import Path

from pinning import busy_threads, pin_to_core, thread_clocks, threads_outside

ROOT = Path(__file__).resolve().parents[1]
ANCHOR_EVAL_FREQ = 128      # the anchor's StochasticJaxSolver default
PROBE_SECONDS = 0.2         # at least this long to estimate ms/it
LONGEST = 4                 # the anchor's eval_freq unless > 4 blocks long


class Block:
    """Clocks of one timed block: wall, process CPU, thread snapshots."""

    def __init__(self):
        self.threads = thread_clocks()
        self.wall = self.cpu = self.nowait = 0.0
        self.n = 0
        self.mark()

    def mark(self):
        self.t, self.c = time.perf_counter(), time.process_time()

    def add(self, entry, synced, n):
        """One stretch since the last mark: ``entry`` is when the work was
        handed back (clock before any wait), ``synced`` after it."""
        self.nowait += entry - self.t
        self.wall += synced - self.t
        self.cpu += time.process_time() - self.c
        self.n += n

    def reply(self, cores):
        count, busy_cores = busy_threads(self.threads, thread_clocks(),
                                         self.wall)
        return dict(wall=self.wall, cpu=self.cpu, nowait=self.nowait,
                    n=self.n, busy=count, busy_cores=busy_cores,
                    outside=len(threads_outside(cores)))


def block_length(seconds_per_iteration, seconds, cycle=1, cap=None):
    """Iterations of about ``seconds``, a multiple of ``cycle``, <= cap."""
    n = max(1, math.ceil(seconds / seconds_per_iteration))
    n = cycle * math.ceil(n / cycle)
    return n if cap is None else max(min(n, cap), min(cycle, cap))


# -- our side ---------------------------------------------------------------

class Ours:
    def __init__(self, cores):
        import torch  # after pinning
        sys.path[:0] = [str(ROOT), str(ROOT / "perf")]
        from timing import benchmark_solver
        self.torch, self.benchmark_solver = torch, benchmark_solver
        self.cores, self.problems, self.cases = cores, {}, {}

    def hello(self):
        return dict(torch=self.torch.__version__,
                    torch_threads=self.torch.get_num_threads())

    def problem(self, dataset):
        """The problem of a config dataset entry (its parameters as a
        dict), built once per entry; ``cache_means`` is set per case."""
        dataset = {k: v for k, v in dataset.items() if k != "cache_means"}
        key = json.dumps(dataset, sort_keys=True)
        if key not in self.problems:
            from benchopt.benchmark import Benchmark

            from benchmark_utils.problems.simulated_quadratic import (
                make_simulated_quadratic,
            )
            cls = next(d for d in Benchmark(ROOT).get_datasets()
                       if d.name == "quadratic")
            params = cls.get_instance(**dataset)._simulated_parameters()
            self.problems[key] = make_simulated_quadratic(**params)
        return self.problems[key]

    def setup(self, msg):
        P = self.problem(msg["dataset"])
        cache = msg["cache"]
        P.cache_means = cache
        solver = self.benchmark_solver(msg["solver"], P, msg["params"])
        steps = solver.iterations()

        def advance(n):
            P.cache_means = cache           # the problem is shared by cases
            for _ in range(n):
                next(steps)

        # two epochs of blocks fill the block cache
        size = msg["params"].get("batch_size") or P.n_lower
        advance(2 * math.ceil(P.n_lower / size) if cache else 2)
        start, n = time.perf_counter(), 0
        while n < 1 or time.perf_counter() - start < PROBE_SECONDS:
            advance(1)
            n += 1
        per_it = (time.perf_counter() - start) / n
        length = block_length(per_it, msg["block_seconds"], msg["cycle"])
        self.cases[msg["key"]] = (advance, length)
        return dict(length=length, probe_ms=1e3 * per_it)

    def block(self, msg):
        advance, length = self.cases[msg["key"]]
        block = Block()
        advance(length)
        end = time.perf_counter()
        block.add(end, end, length)
        return block.reply(self.cores)

    def stop(self, msg):
        self.cases.pop(msg["key"], None)
        return dict(stopped=msg["key"])


# -- the anchor's side ------------------------------------------------------

def load_module(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_anchor_objective(path):
    """The anchor's Objective on its default simulated Dataset, with its
    checkout first on sys.path (its package is also called
    ``benchmark_utils``: checked to be the anchor's, ours is never
    imported in this process)."""
    path = Path(path)
    sys.path.insert(0, str(path))
    import benchmark_utils
    where = Path(benchmark_utils.__file__).resolve()
    if path.resolve() not in where.parents:
        raise RuntimeError(f"benchmark_utils is {where}, not the anchor's "
                           f"({path})")
    dataset = load_module(path / "datasets" / "simulated.py",
                          "anchor_dataset").Dataset.get_instance()
    objective = load_module(path / "objective.py",
                            "anchor_objective").Objective.get_instance()
    objective.set_data(**dataset.get_data())
    return objective


class Anchor:
    def __init__(self, cores, path, channel):
        self.path, self.cores, self.channel = Path(path), cores, channel
        import jax  # after pinning
        jax.config.update("jax_enable_x64", False)    # the anchor's float32
        self.jax = jax
        self.objective, self.solvers = load_anchor_objective(path), {}

    def hello(self):
        return dict(jax=self.jax.__version__,
                    backend=self.jax.default_backend(),
                    x64=bool(self.jax.config.jax_enable_x64),
                    xla_flags=os.environ.get("XLA_FLAGS", ""))

    def solver_class(self, name):
        if name not in self.solvers:
            self.solvers[name] = load_module(
                self.path / "solvers" / f"{name}.py",
                f"anchor_solver_{name}").Solver
        return self.solvers[name]

    def instance(self, cls, eval_freq):
        """An anchor solver with the objective set (compiled, warmed up)."""
        params = {"eval_freq": eval_freq} if "eval_freq" in cls.parameters \
            else {}
        solver = cls.get_instance(**params)
        skip, reason = solver._set_objective(self.objective)
        if skip:
            raise RuntimeError(f"the anchor skips {cls.name}: {reason}")
        return solver

    def sync(self, solver):
        self.jax.block_until_ready((solver.inner_var, solver.outer_var))

    def probe(self, solver, per_callback):
        """Seconds per iteration of ``solver.run`` (after 2 callbacks)."""
        state = dict(calls=0, start=None, n=0)

        def callback():
            if state["calls"] > 0:
                self.sync(solver)
            state["calls"] += 1
            if state["calls"] == 3:
                state["start"] = time.perf_counter()
            elif state["calls"] > 3:
                state["n"] += per_callback
                spent = time.perf_counter() - state["start"]
                return spent < PROBE_SECONDS or state["n"] < 2
            return True

        solver.run(callback)
        return (time.perf_counter() - state["start"]) / state["n"]

    def setup(self, msg):
        """Build, probe, then serve blocks from inside ``run``'s callback
        until ``stop`` (the reply to setup is sent from the callback)."""
        cls = self.solver_class(msg["solver"])
        jax_loop = "eval_freq" in cls.parameters
        solver = self.instance(cls, 1)
        per_it = self.probe(solver, 1)
        eval_freq = 1                   # BOME: one iteration per callback
        if jax_loop:
            # the anchor's 128 unless a block of it would be long
            long = ANCHOR_EVAL_FREQ * per_it > LONGEST * msg["block_seconds"]
            eval_freq = block_length(per_it, msg["block_seconds"],
                                     msg["cycle"], cap=ANCHOR_EVAL_FREQ) \
                if long else ANCHOR_EVAL_FREQ
            if eval_freq != 1:
                solver = self.instance(cls, eval_freq)
        # more callbacks where eval_freq iterations are shorter than a block
        callbacks = block_length(per_it * eval_freq, msg["block_seconds"])
        ready = dict(length=eval_freq * callbacks, eval_freq=eval_freq,
                     probe_ms=1e3 * per_it)
        self.current = solver, eval_freq
        solver.run(self.server(solver, eval_freq, callbacks, ready))
        return None

    def benchopt(self, msg):
        """The last set-up solver run again under benchopt's own
        ``_Callback`` on the anchor's objective for ``evaluations``
        callbacks: the ms per iteration of the curve benchopt records,
        after the first callback's epoch (BOME compiles in ``run``)."""
        from benchopt.callback import _Callback
        solver, eval_freq = self.current
        criterion = solver.stopping_criterion.get_runner_instance(
            max_runs=msg["evaluations"], solver=solver)
        callback = _Callback(self.objective, solver, meta={},
                             stopping_criterion=criterion)
        solver.pre_run_hook(callback)
        callback.start()
        solver.run(callback)
        curve = callback.get_results()[0]
        first = next(p for p in curve if p["stop_val"] >= 1)
        last = curve[-1]
        n = (last["stop_val"] - first["stop_val"]) * eval_freq
        if n <= 0:                      # stopped early (e.g. diverged)
            return dict(recorded_ms=None, iterations=0)
        return dict(recorded_ms=1e3 * (last["time"] - first["time"]) / n,
                    iterations=n)

    def server(self, solver, eval_freq, callbacks, ready):
        state = dict(block=None, calls=0)

        def callback():
            entry = time.perf_counter()
            block = state["block"]
            if block is None:
                self.channel.send(ready)
            else:
                self.sync(solver)
                block.add(entry, time.perf_counter(), eval_freq)
                state["calls"] += 1
                if state["calls"] < callbacks:
                    block.mark()
                    return True
                self.channel.send(block.reply(self.cores))
            msg = self.channel.receive()
            if msg["cmd"] == "stop":
                self.channel.send(dict(stopped=msg.get("key")))
                return False
            if msg["cmd"] != "block":
                raise RuntimeError(f"expected block or stop, got {msg}")
            state["block"], state["calls"] = Block(), 0
            return True
        return callback


# -- protocol ---------------------------------------------------------------

class Channel:
    """JSON lines: commands on stdin, replies on the original stdout (fd 1
    then points to stderr, so that prints cannot break the protocol)."""

    def __init__(self):
        self.out = os.fdopen(os.dup(1), "w", buffering=1)
        os.dup2(2, 1)

    def send(self, obj):
        self.out.write(json.dumps(obj) + "\n")

    def receive(self):
        line = sys.stdin.readline()
        return json.loads(line) if line else dict(cmd="quit")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--side", choices=("anchor", "ours"), required=True)
    parser.add_argument("--core", type=int, required=True)
    parser.add_argument("--anchor")
    args = parser.parse_args()
    cores = pin_to_core(args.core)      # before JAX / torch start threads
    channel = Channel()
    try:
        side = (Anchor(cores, args.anchor, channel) if args.side == "anchor"
                else Ours(cores))
        channel.send(dict(pid=os.getpid(), cores=cores, **side.hello()))
    except Exception:
        channel.send(dict(error=traceback.format_exc()))
        return 1
    while True:
        msg = channel.receive()
        if msg["cmd"] == "quit":
            return 0
        try:
            reply = getattr(side, msg["cmd"])(msg)
        except Exception:
            reply = dict(error=traceback.format_exc())
        if reply is not None:
            channel.send(reply)


if __name__ == "__main__":
    sys.exit(main())
