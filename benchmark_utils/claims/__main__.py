"""``python -m benchmark_utils.claims``: the evidence behind
docs/results.md.

``run EXPERIMENT`` runs the experiment's config (its tuned config, the
paper config for the paper's own steps, or for ``NAME_long`` the tuned
config at a longer sample budget) with the experiment's repetitions (10,
30 where runs are cheap) on seed 0 (never the tuning seeds), its
references computed afresh (not read from a shared cache), writes its
compact evidence to ``results/EXPERIMENT/``
(benchmark_utils/claims/results.py) with the CPU time it took, and
rewrites its section of docs/results.md; ``--parallel-config FILE`` (and
``-j N``) pass benchopt's parallel config through (dask or submitit,
docs/parallel.md), so a cluster regenerates the evidence. ``check``
recomputes every generated section of docs/results.md from ``results/``
and exits 1 naming each that differs; ``write`` rewrites them. ``recheck
EXPERIMENT`` reruns its first repetitions at the current code and, where
every stored value is the same, pins that code
(benchmark_utils/claims/recheck.py). ``list`` prints the experiments with
the CPU time of their last run. ``report [--paper NAME] [--output DIR]``
writes the claims as offline HTML pages, one per paper (``--paper``:
those whose name contains NAME) with each claim's curves, and an index
(default outputs/claims/; benchmark_utils/claims/html_report.py).
"""
import argparse
import os
import sys
import tempfile
from pathlib import Path

import yaml
from benchopt.results import read_results

from benchmark_utils.claims import (
    html_report,
    provenance,
    recheck,
    results,
    sections,
)
from benchmark_utils.claims.experiments import EXPERIMENTS, experiment
from benchmark_utils.tuning.defaults import ROOT
from benchmark_utils.tuning.runner import (
    CostMeter,
    check_parallel,
    parallel_options,
    run_benchopt,
)


def cpu_seconds(exp):
    """The CPU time of ``exp``'s last run (its meta.yml), or None."""
    meta = exp.folder / "meta.yml"
    if not meta.is_file():
        return None
    return results.all_runs_cpu_seconds(results.read_meta(exp.folder))


def cpu_text(seconds):
    return (f"{seconds / 3600:.2f} CPU-hours" if seconds >= 360
            else f"{seconds / 60:.1f} CPU-minutes")


def wall_text(meta):
    """How the last run was made and what to expect with ``-j``."""
    seconds = results.all_runs_cpu_seconds(meta)
    expect = (f"; about {cpu_text(seconds / 2).replace('CPU-', '')} of "
              "wall-clock with -j 2 on 2 idle cores, more under load")
    if "wall_seconds" not in meta:
        return " (one process, the machine's load then not recorded)" + (
            expect)
    return (f" ({cpu_text(meta['wall_seconds']).replace('CPU-', '')} "
            f"wall-clock, {meta['workers']} worker(s), load average "
            f"{meta['load_average']} at its start){expect}")


def cost_line(exp):
    """One line of ``list``: the experiment, its figure and last cost (a
    longer run not run yet: its base's scaled by the budget's factor)."""
    seconds = cpu_seconds(exp)
    cost = "not run yet"
    if seconds is not None:
        cost = f"{cpu_text(seconds)} at its last run" + wall_text(
            results.read_meta(exp.folder))
    elif exp.source == "long":
        base = EXPERIMENTS[exp.base]
        factor = exp.budget[1] / base.budget[1]
        base_seconds = cpu_seconds(base)
        if base_seconds is not None:
            cost += (f" (about {cpu_text(base_seconds * factor)}: "
                     f"{factor:g}x {base.name}'s last run)")
    return f"  {exp.name}: {exp.paper}, {exp.figure}; {cost}"


def listing():
    return "experiments:\n" + "\n".join(
        cost_line(e) for e in EXPERIMENTS.values())


def run(name, parallel_config=None, n_jobs=None):
    """Run ``name``'s tuned config and write its evidence; its folder."""
    exp = experiment(name)
    check_parallel(parallel_config, n_jobs)
    if not exp.config.is_file():
        raise ValueError(f"{exp.config} does not exist: tune the experiment "
                         "first (docs/tuning.md)")
    results.check_writable(exp.folder)
    config = provenance.evaluation_config(exp)
    with tempfile.TemporaryDirectory() as work:
        work = Path(work)
        output = work / f"{name}.parquet"
        run_config = work / "run.yml"
        run_config.write_text(yaml.safe_dump(
            {**config, "output": str(output), "plot": False,
             "display": False,
             **parallel_options(parallel_config, n_jobs)}))
        command = (f"python -m benchopt run . --config "
                   f"{exp.config.relative_to(ROOT)} -r {exp.repetitions} "
                   "--seed 0")
        if exp.source == "long" or exp.horizon is not None:
            command = (f"python -m benchmark_utils.claims run {name} (its "
                       f"config with objective {config['objective']})")
        state = results.git_state(ROOT)     # the code that runs
        sources = provenance.sources(exp, config)
        meter, load = CostMeter(), os.getloadavg()[0]
        run_benchopt(run_config, work / "run.log",
                     env=recheck.fresh_references(work))
        df = read_results(str(output))
        results.write(exp.folder, df, config=config, command=command,
                      root=ROOT, cpu_seconds=meter.cpu_seconds(),
                      state=state, sources=sources, cost={
                          "wall_seconds": round(meter.wall_seconds()),
                          "workers": n_jobs or 1,
                          "load_average": round(load, 1)})
    return exp.folder


EXPERIMENT_HELP = "one of those that `claims list` prints"


def experiment_name(name):
    """``name`` if it names an experiment, else argparse's one-line error
    (:func:`~benchmark_utils.claims.experiments.experiment`'s)."""
    try:
        return experiment(name).name
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def main(argv=None):
    try:
        epilog = listing()
    except ValueError as error:
        # damaged evidence: said by the command itself, in one line
        epilog = f"(no list of the experiments: {error})"
    parser = argparse.ArgumentParser(
        prog="python -m benchmark_utils.claims", description=__doc__,
        epilog=epilog, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    run_parser = commands.add_parser("run", help="run an experiment and "
                                     "write results/EXPERIMENT/")
    run_parser.add_argument("experiment", type=experiment_name,
                            metavar="EXPERIMENT", help=EXPERIMENT_HELP)
    run_parser.add_argument("--parallel-config", default=None,
                            metavar="FILE", help="benchopt's parallel config"
                            " (docs/parallel.md)")
    run_parser.add_argument("--n-jobs", "-j", type=int, default=None,
                            metavar="N", help="benchopt's workers (with "
                            "--parallel-config: the dask workers)")
    recheck_parser = commands.add_parser(
        "recheck", help="rerun an experiment's first repetitions at the "
        "current code; where every stored value is the same, its evidence "
        "pins that code (no longer stale)")
    recheck_parser.add_argument("experiment", type=experiment_name,
                                metavar="EXPERIMENT", help=EXPERIMENT_HELP)
    recheck_parser.add_argument("--repetitions", type=int, default=1,
                                metavar="N", help="repetitions rerun "
                                "(default 1)")
    commands.add_parser("list", help="the experiments and their CPU cost")
    commands.add_parser("check", help="recompute docs/results.md's "
                        "generated sections; exit 1 on a difference")
    commands.add_parser("write", help="rewrite them from results/")
    report_parser = commands.add_parser(
        "report", help="offline HTML pages of the claims with their "
        "curves, one per paper, and an index")
    report_parser.add_argument(
        "--paper", default=None, metavar="NAME", help="only the pages of "
        "the papers whose name contains NAME (e.g. Abolfazli)")
    report_parser.add_argument(
        "--output", type=Path, default=html_report.DEFAULT_OUTPUT,
        metavar="DIR", help="the pages' folder (default outputs/claims/)")
    args = parser.parse_args(argv)
    try:
        return command(args)
    except (ValueError, OSError) as error:
        # a user's mistake or damaged evidence: one line, no traceback
        print(f"claims {args.command}: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"claims {args.command}: interrupted; results/ and "
              "docs/results.md are as they were (evidence is written only "
              "once all its runs have ended)", file=sys.stderr)
        return 130


def command(args):
    """Run the parsed command; its exit code."""
    if args.command == "report":
        print(html_report.build(args.output, args.paper))
        return 0
    if args.command == "list":
        print(listing())
        return 0
    if args.command == "check":
        integrity = sections.integrity_errors()
        # an experiment's own fault first: the summary sections that
        # differ because of it (the evidence sizes, the profile) after
        wrong = sorted(sections.check(),
                       key=lambda name: name not in EXPERIMENTS)
        for name in wrong:
            exp = EXPERIMENTS.get(name)
            if name in integrity:
                print("\n".join(integrity[name]))
                continue
            meta = None if exp is None else exp.folder / "meta.yml"
            if meta is not None and meta.is_dir():
                print(f"results/{name}/meta.yml is a folder, not the "
                      "evidence's file: `python -m benchmark_utils.claims "
                      f"run {name}` renews it")
                continue
            if meta is not None and not meta.is_file():
                print(f"results/{name}/ has no evidence (no meta.yml) but "
                      "docs/results.md or results/ has traces of it: `python "
                      f"-m benchmark_utils.claims run {name}` renews it")
                continue
            print(f"docs/results.md: the section {name} differs from what "
                  f"results/ gives (python -m benchmark_utils.claims write)")
        return 1 if wrong else 0
    if args.command == "write":
        missing = sections.write()
        for name in missing:
            print(f"results/{name}/ has no evidence (no meta.yml): its "
                  "section of docs/results.md, if any, is left as it was; "
                  f"`python -m benchmark_utils.claims run {name}` renews it",
                  file=sys.stderr)
        return 1 if missing else 0
    if args.command == "recheck":
        wrong = recheck.recheck(args.experiment, args.repetitions)
        if wrong:
            print("claims recheck: the rerun differs, the evidence is kept "
                  "as it was (`python -m benchmark_utils.claims run "
                  f"{args.experiment}` renews it):\n  " + "\n  ".join(wrong))
            return 1
        write_family(args.experiment)
        print(f"results/{args.experiment}/meta.yml: code rechecked")
        return 0
    folder = run(args.experiment, args.parallel_config, args.n_jobs)
    write_family(args.experiment)
    print(folder.relative_to(ROOT) if folder.is_relative_to(ROOT)
          else folder)
    return 0


def write_family(name):
    """Rewrite the sections of ``name`` and its siblings (the same
    config's tuned, paper-steps and longer runs), whose causes read its
    verdicts."""
    base = experiment(name).base
    sections.write(names=[other for other, exp in EXPERIMENTS.items()
                          if exp.base == base])


if __name__ == "__main__":
    sys.exit(main())
