"""Our solvers against benchmark_bilevel's own solver classes (the anchor,
jitted JAX), side by side on one pinned core.

Each side runs in a fresh process (perf/anchor_worker.py) pinned by
``os.sched_setaffinity`` to the same core before JAX or torch is imported,
and the blocks are interleaved: per solver, the anchor, ours float32 and
float64 doing the anchor's work, ours float32 and float64 with the block
cache, then again, ``--rounds`` times, after one discarded warm-up block
each (JIT compilation and warm-up excluded). ms per iteration: the median
over rounds of a block's time over its iterations, wall time
(``time.perf_counter``; ``--clock cpu``: the process's CPU time), the
anchor's read after ``jax.block_until_ready``.

* Anchor: the checkout's own ``datasets/simulated.py`` (default
  parameters: n 1024 per level, dims 100), ``objective.py`` and
  ``solvers/<name>.py`` classes with their default parameters, float32
  (JAX's default), driven through their own ``run(callback)``
  (``eval_freq`` aside: module doc of perf/anchor_worker.py).
* Ours: the solver parameters and the dataset of
  configs/benchmark_bilevel_anchor_work.yml (the anchor's work per
  iteration; what our parameters cannot express is marked there).
  "same work": ``cache_means=False``, every oracle averages the block's
  matrices (B d^2, as the anchor's vmapped oracle); "cache":
  ``cache_means=True``, each fixed block's means computed once (exact, d^2
  per oracle, our default; no longer the anchor's work).
* Checks: per block, the threads busy more than 10 % of its wall time and
  the cores they ran on, CPU / wall (cores kept busy), threads allowed on
  another core (must be none), and the CPU time the idle side used while
  the other was timed.
* "entry": the anchor's ms/it with the clock read on entering the
  callback, as benchopt's ``_Callback`` reads it (its objective's
  evaluation syncs after the clock is read), against the synced time; and
  the ms/it that benchopt's own ``_Callback`` records for the anchor's
  solver run on its objective for 5 evaluations, after the first
  (``--no-benchopt-check`` skips it).

The anchor: ``--anchor PATH`` (a checkout), else the HEAD of the git
repository named by the environment variable ``BENCHMARK_BILEVEL_REPO``
(a clone of github.com/benchopt/benchmark_bilevel, extracted to a
temporary folder); without one, or without JAX, the script says how to get
it and exits 0.

    python perf/anchor_side_by_side.py [--anchor PATH] [--rounds 5]
        [--solvers SOBA,F2SA] [--quick] [--clock wall|cpu] [--core N]
"""
import argparse
import atexit
import importlib.util
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "configs" / "benchmark_bilevel_anchor_work.yml"
# a git clone of benchmark_bilevel (none by default: --anchor or this)
REPO_VARIABLE = "BENCHMARK_BILEVEL_REPO"
ANCHOR_REPO = (Path(os.environ[REPO_VARIABLE])
               if os.environ.get(REPO_VARIABLE) else None)
ANCHOR_COMMIT = "3ad65dc"
# our solver name -> the anchor's solvers/<file>.py
ANCHOR_FILES = {"SOBA": "soba", "SABA": "saba", "SRBA": "srba",
                "AmIGO": "amigo", "BSA": "bsa", "BOME": "bome",
                "F2SA": "f2sa", "stocBiO": "stocbio", "MRBO": "mrbo",
                "VRBO": "vrbo", "FSLA": "fsla", "TTSA": "ttsa",
                "SUSTAIN": "sustain"}
# solvers whose work repeats with a period: blocks are multiples of it
CYCLE_PARAMETER = {"SRBA": "period"}
TARGET = {"float32": 0.5, "float64": 1.0}    # same-work ours / anchor
CASES = ("anchor", ("float32", False), ("float64", False),
         ("float32", True), ("float64", True))
WARMUP_BLOCKS = 1
BENCHOPT_EVALUATIONS = 5     # callbacks of the run under benchopt's clock
TICK = 1 / os.sysconf("SC_CLK_TCK")      # the resolution of /proc's clocks


class WorkerError(RuntimeError):
    pass


class Worker:
    """A perf/anchor_worker.py process: one JSON line per command / reply;
    its stderr goes to ``log``."""

    def __init__(self, side, core, log, anchor=None):
        command = [sys.executable, str(ROOT / "perf" / "anchor_worker.py"),
                   "--side", side, "--core", str(core)]
        if anchor is not None:
            command += ["--anchor", str(anchor)]
        env = dict(os.environ, JAX_PLATFORMS="cpu")
        env.pop("JAX_ENABLE_X64", None)
        self.side, self.log = side, log
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=log,
                                     text=True, env=env, cwd=ROOT)
        self.hello = self.read()

    def read(self):
        line = self.proc.stdout.readline()
        if not line:
            raise WorkerError(f"the {self.side} worker ended "
                              f"(rc {self.proc.wait()}); its log: "
                              f"{self.log.name}")
        reply = json.loads(line)
        if "error" in reply:
            raise WorkerError(f"{self.side} worker:\n{reply['error']}")
        return reply

    def ask(self, **msg):
        self.proc.stdin.write(json.dumps(msg) + "\n")
        self.proc.stdin.flush()
        return self.read()

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.write(json.dumps(dict(cmd="quit")) + "\n")
            self.proc.stdin.close()
            self.proc.wait(timeout=60)


def process_cpu(pid):
    """CPU seconds (utime + stime) of process ``pid``, all its threads."""
    from pinning import _stat_fields  # perf/, this script's folder
    fields = _stat_fields(Path(f"/proc/{pid}"))
    return (int(fields[11]) + int(fields[12])) * TICK


def jax_importable():
    """Whether ``import jax`` works (in a child: JAX starts threads)."""
    if importlib.util.find_spec("jax") is None:
        return False
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    return subprocess.run([sys.executable, "-c", "import jax"], env=env,
                          capture_output=True).returncode == 0


def read_config(path):
    """({dtype: dataset parameters}, {solver: parameters}) of the config."""
    # imported here: nothing of torch's before the process is pinned
    from benchmark_utils.tuning.config_io import parse_selector
    content = yaml.safe_load(Path(path).read_text())
    datasets, solvers = {}, {}
    for entry in content["dataset"]:
        _, params = parse_selector(entry)
        datasets[params.get("dtype", "float64")] = params
    for entry in content["solver"]:
        name, params = parse_selector(entry)
        solvers[name] = params
    return datasets, solvers


def anchor_checkout(path):
    """(checkout, commit label): ``path``, or an extraction of the HEAD of
    ``ANCHOR_REPO`` (removed at exit); (None, None) when neither exists."""
    if path is not None:
        return Path(path), "given checkout"
    if ANCHOR_REPO is None or not ANCHOR_REPO.exists():
        return None, None
    target = Path(tempfile.mkdtemp(prefix="anchor_"))
    atexit.register(shutil.rmtree, target, ignore_errors=True)
    archive = subprocess.run(
        ["git", "-C", str(ANCHOR_REPO), "archive", "HEAD"], check=True,
        capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive,
                   check=True)
    commit = subprocess.run(["git", "-C", str(ANCHOR_REPO), "rev-parse",
                             "--short", "HEAD"], check=True,
                            capture_output=True, text=True).stdout.strip()
    return target, f"{REPO_VARIABLE} at {commit}"


def case_key(case):
    return case if case == "anchor" else f"{case[0]}-{case[1]}"


def time_solver(name, params, datasets, workers, args):
    """{case: [block replies]} over the timed rounds, and the setups; on a
    worker's error, every case is stopped before it is raised."""
    try:
        return _time_solver(name, params, datasets, workers, args)
    except WorkerError:
        for case in CASES:
            worker = workers["anchor" if case == "anchor" else "ours"]
            try:
                worker.ask(cmd="stop", key=case_key(case))
            except (WorkerError, OSError):
                pass                    # not set up, or the worker ended
        raise


def _time_solver(name, params, datasets, workers, args):
    cycle = int(params.get(CYCLE_PARAMETER.get(name), 1))
    common = dict(cmd="setup", block_seconds=args.block_seconds, cycle=cycle)
    setups = {"anchor": workers["anchor"].ask(
        key="anchor", solver=ANCHOR_FILES[name], **common)}
    for dtype, cache in CASES[1:]:
        setups[dtype, cache] = workers["ours"].ask(
            key=case_key((dtype, cache)), solver=name, params=params,
            dataset=dict(datasets[dtype], cache_means=cache), cache=cache,
            **common)
    blocks = {case: [] for case in CASES}
    for r in range(WARMUP_BLOCKS + args.rounds):
        for case in CASES:
            worker = workers["anchor" if case == "anchor" else "ours"]
            idle = workers["ours" if case == "anchor" else "anchor"]
            idle_cpu = process_cpu(idle.proc.pid)
            reply = worker.ask(cmd="block", key=case_key(case))
            reply["idle_cpu"] = process_cpu(idle.proc.pid) - idle_cpu
            if r >= WARMUP_BLOCKS:
                blocks[case].append(reply)
    for case in CASES:
        worker = workers["anchor" if case == "anchor" else "ours"]
        worker.ask(cmd="stop", key=case_key(case))
    if args.benchopt_check:
        try:
            setups["benchopt"] = workers["anchor"].ask(
                cmd="benchopt", evaluations=BENCHOPT_EVALUATIONS)
        except WorkerError as error:    # the timing stands without it
            print(f"{name}: benchopt's clock not checked: {error}")
    return blocks, setups


def summary(blocks, clock):
    """Medians in ms per iteration and the pinning checks of one case."""
    def median(field):
        return 1e3 * statistics.median(b[field] / b["n"] for b in blocks)
    ran = {c for b in blocks for c in b["busy_cores"]}
    return dict(ms=median(clock), entry=median("nowait"), wall=median("wall"),
                busy=max(b["busy"] for b in blocks), busy_cores=sorted(ran),
                cores=max(b["cpu"] / b["wall"] for b in blocks),
                outside=max(b["outside"] for b in blocks),
                # beyond one tick of /proc's clock (10 ms)
                idle=max(max(0.0, b["idle_cpu"] - TICK) / b["wall"]
                         for b in blocks))


def cell(ms, anchor_ms):
    return f"{ms:.3g} ({ms / anchor_ms:.3g})"


def target_verdict(stats):
    met = all(stats[dtype, False]["ms"] / stats["anchor"]["ms"]
              <= TARGET[dtype] for dtype in TARGET)
    return "met" if met else "MISSED"


def print_tables(results, args, pinned):
    print(f"\nms per iteration ({args.clock} time), median of {args.rounds} "
          f"interleaved rounds, one core ({pinned}); (ours / anchor); "
          "target: same work <= 0.5 (float32), <= 1 (float64)\n")
    print("| solver | anchor f32 | ours same work f32 | ours same work f64 "
          "| ours cache f32 | ours cache f64 | target | busy threads "
          "anchor / ours | cores kept busy anchor / ours |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, (stats, _) in results.items():
        if stats is None:
            print(f"| {name} | error | | | | | | | |")
            continue
        a = stats["anchor"]["ms"]
        ours = [stats[c] for c in CASES[1:]]
        busy = max(s["busy"] for s in ours)
        cores = max(s["cores"] for s in ours)
        print(f"| {name} | {a:.3g} | "
              + " | ".join(cell(s["ms"], a) for s in ours)
              + f" | {target_verdict(stats)} | "
              f"{stats['anchor']['busy']} / {busy} | "
              f"{stats['anchor']['cores']:.2f} / {cores:.2f} |")
    print("\nThe anchor's clock: ms per iteration read on entering the "
          "callback (benchopt's _Callback reads it there; its objective's "
          "evaluation then syncs) and after jax.block_until_ready "
          "(wall time)\n")
    print("| solver | eval_freq x callbacks | at callback entry | after "
          "block_until_ready | entry / synced | benchopt's curve |")
    print("|---|---|---|---|---|---|")
    for name, (stats, setups) in results.items():
        if stats is None:
            continue
        s, setup = stats["anchor"], setups["anchor"]
        per = f"{setup['eval_freq']} x {setup['length'] // setup['eval_freq']}"
        check = setups.get("benchopt")
        curve = ("not run" if check is None else "n/a"
                 if check["recorded_ms"] is None
                 else f"{check['recorded_ms']:.3g}")
        print(f"| {name} | {per} | {s['entry']:.3g} | {s['wall']:.3g} | "
              f"{s['entry'] / s['wall']:.3f} | {curve} |")


def pinning_report(results, workers, core):
    """Lines on the pinning checks; warnings where one failed."""
    lines, warnings = [], []
    for side in ("anchor", "ours"):
        stats = [s for st, _ in results.values() if st is not None
                 for c, s in st.items()
                 if (c == "anchor") == (side == "anchor")]
        if not stats:
            continue
        busy = max(s["busy"] for s in stats)
        ran = sorted({c for s in stats for c in s["busy_cores"]})
        cores = max(s["cores"] for s in stats)
        outside = max(s["outside"] for s in stats)
        idle = max(s["idle"] for s in stats)
        hello = workers[side].hello
        lines.append(f"{side}: pid {hello['pid']} allowed cores "
                     f"{hello['cores']}; busy threads <= {busy}, ran on "
                     f"cores {ran}; cores kept busy <= {cores:.2f}; "
                     f"threads allowed elsewhere: {outside}; the idle side "
                     f"used <= {idle:.3f} of a core meanwhile")
        if hello["cores"] != [core] or outside or set(ran) - {core}:
            warnings.append(f"{side}: not pinned to core {core}")
        if cores > 1.05:
            warnings.append(f"{side}: {cores:.2f} cores kept busy")
        if idle > 0.05:
            warnings.append(f"{side} timed while the other side used "
                            f"{idle:.2f} of a core")
    return lines, warnings


def parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--anchor", help="a benchmark_bilevel checkout")
    parser.add_argument("--rounds", type=int, default=None,
                        help="interleaved rounds (default 5; 2 with --quick)")
    parser.add_argument("--solvers", default=None,
                        help="comma-separated, default: every config solver")
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: 0.1 s blocks, 2 rounds")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    parser.add_argument("--core", type=int,
                        default=max(os.sched_getaffinity(0)))
    parser.add_argument("--block-seconds", type=float, default=None,
                        help="about this long per block (default 0.5)")
    parser.add_argument("--config", default=str(CONFIG))
    parser.add_argument("--no-benchopt-check", dest="benchopt_check",
                        action="store_false",
                        help="skip the rerun of each anchor solver under "
                             "benchopt's own _Callback")
    args = parser.parse_args(argv)
    if args.rounds is None:
        args.rounds = 2 if args.quick else 5
    if args.block_seconds is None:
        args.block_seconds = 0.1 if args.quick else 0.5
    if args.rounds < 1 or args.block_seconds <= 0:
        raise ValueError("--rounds must be >= 1, --block-seconds > 0")
    return args


def main(argv=None):
    args = parse(sys.argv[1:] if argv is None else argv)
    # a termination runs the cleanups too (workers, the extracted anchor)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if not jax_importable():
        print("jax is not importable: skipped (pip install jax to time "
              "benchmark_bilevel's own solvers; JAX is not a dependency of "
              "this benchmark)")
        return 0
    anchor, label = anchor_checkout(args.anchor)
    if anchor is None:
        print("no benchmark_bilevel checkout: skipped. Get one with\n"
              "  git clone https://github.com/benchopt/benchmark_bilevel\n"
              f"  git -C benchmark_bilevel checkout {ANCHOR_COMMIT}\n"
              "and pass --anchor benchmark_bilevel")
        return 0
    datasets, solvers = read_config(args.config)
    names = list(solvers) if args.solvers is None else [
        s.strip() for s in args.solvers.split(",")]
    unknown = [n for n in names if n not in solvers or n not in ANCHOR_FILES]
    if unknown:
        raise ValueError(f"--solvers {unknown}: not shared solvers of "
                         f"{args.config} ({', '.join(solvers)})")
    began, load = time.perf_counter(), os.getloadavg()
    log = tempfile.NamedTemporaryFile("w", prefix="anchor_workers_",
                                      suffix=".log", delete=False)
    workers, ok = {}, False
    try:
        workers["anchor"] = Worker("anchor", args.core, log, anchor)
        workers["ours"] = Worker("ours", args.core, log)
        a, o = workers["anchor"].hello, workers["ours"].hello
        print(f"anchor: {anchor} ({label}), JAX {a['jax']} {a['backend']}, "
              f"x64 {a['x64']}, XLA_FLAGS '{a['xla_flags']}'; ours: torch "
              f"{o['torch']}, {o['torch_threads']} thread(s); config "
              f"{Path(args.config).name}; blocks of about "
              f"{args.block_seconds} s", flush=True)
        results = {}
        for name in names:
            try:
                blocks, setups = time_solver(name, solvers[name], datasets,
                                             workers, args)
            except WorkerError as error:
                print(f"{name}: {error}", flush=True)
                results[name] = (None, None)
                continue
            stats = {case: summary(b, args.clock)
                     for case, b in blocks.items()}
            results[name] = (stats, setups)
            print(f"{name}: anchor {stats['anchor']['ms']:.3g} ms/it, ours "
                  f"same work f32 {stats['float32', False]['ms']:.3g}, done "
                  f"at {time.perf_counter() - began:.0f} s", flush=True)
        print_tables(results, args, f"core {args.core}")
        lines, warnings = pinning_report(results, workers, args.core)
        print("\nPinning: " + "\n         ".join(lines))
        for warning in warnings:
            print(f"  warning: {warning}")
        print(f"\nload average {load[0]:.2f} at the start, "
              f"{os.getloadavg()[0]:.2f} at the end; "
              f"{time.perf_counter() - began:.0f} s")
        ok = all(stats is not None for stats, _ in results.values())
    finally:
        for worker in workers.values():
            worker.close()
        log.close()
        if ok:
            os.unlink(log.name)
        else:
            print(f"worker logs: {log.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
