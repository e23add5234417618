"""``python -m benchmark_utils.compare SOLVER``: where a newly added
solver stands, by the protocol the shipped methods went through.

For each experiment of the solver's family with committed evidence
(``--experiments``: these; ``--quick``: the two cheapest not read on a
clock), it prints the CPU time it will take, then: tunes the solver's
role-named steps exactly as the shipped methods were tuned (same grid
rule, tuning seeds and instance, criterion and budget), runs it at the
experiment's budget on the evaluation seeds, and decides it against every
method of the experiment on each of its readings (better, on par, worse,
inconclusive, not testable here: benchmark_utils/claims/standing.py). On
sample and iteration axes the shipped evidence is reused once one of its
methods reproduces here bit for bit; on a clock the shipped methods are
rerun beside it. It writes everything to ``--output`` (default
outputs/compare/SOLVER/) and ends with the page ``index.html`` there;
configs/tuned/ and results/ are not touched. Ctrl-C keeps every finished
step; the same command resumes (benchmark_utils/compare/stages.py).
"""
import argparse
import hashlib
import html
import inspect
import os
import sys
from pathlib import Path

import yaml

from benchmark_utils.claims import recheck, results
from benchmark_utils.claims.experiments import EXPERIMENTS
from benchmark_utils.claims.standing import standings
from benchmark_utils.claims.verdicts import Method
from benchmark_utils.compare import page, plan, stages
from benchmark_utils.tuning.config_io import parse_entry
from benchmark_utils.tuning.defaults import ROOT, solver_class
from benchmark_utils.tuning.input_checks import unknown_parameters
from benchmark_utils.tuning.runner import check_parallel, parallel_options


def epilog():
    lines = ["experiments (family, axis; those of the solver's family with "
             "evidence apply):"]
    for name, exp in EXPERIMENTS.items():
        note = "" if exp.source == "tuned" else (
            f" (not compared: repeats {exp.base})")
        meta = exp.folder / "meta.yml"
        kind = (plan.family(results.read_meta(exp.folder)["config"]
                            ["solver"]) if meta.is_file() else "no evidence")
        lines.append(f"  {name}: {exp.paper}, {kind}, {exp.axis} axis"
                     f"{note}")
    return "\n".join(lines)


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="python -m benchmark_utils.compare", description=__doc__,
        epilog=epilog(), formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("solver", metavar="SOLVER",
                        help="the solver's name (its class's ``name``), or "
                        "Name[knob=value,...] to fix knobs; knobs the "
                        "experiment's methods all set alike (batch_size, "
                        "init, ...) are set for it too")
    parser.add_argument("--experiments", nargs="+", default=None,
                        metavar="NAME", help="compare on these only")
    parser.add_argument("--quick", action="store_true",
                        help="the two cheapest experiments not read on a "
                        "clock (a first look, minutes)")
    parser.add_argument("--plan", action="store_true",
                        help="print the experiments and the estimated "
                        "cost, run nothing")
    parser.add_argument("--output", type=Path, default=None, metavar="DIR",
                        help="the output folder (default "
                        "outputs/compare/SOLVER/)")
    parser.add_argument("--parallel-config", default=None, metavar="FILE",
                        help="benchopt's parallel config (docs/parallel.md)")
    parser.add_argument("--n-jobs", "-j", type=int, default=None,
                        metavar="N", help="benchopt's workers")
    return parser.parse_args(argv)


def check_args(args):
    """ValueError before any run, naming the option."""
    name, params = parse_entry(args.solver)
    message = unknown_parameters("solver", name, params,
                                 solver_class(name).parameters)
    if message:
        raise ValueError(message)
    check_parallel(args.parallel_config, args.n_jobs)
    if args.quick and args.experiments:
        raise ValueError("--quick chooses the experiments: give it or "
                         "--experiments, not both")


def name_of(solver):
    return parse_entry(solver)[0]


def solver_digest(name):
    return hashlib.sha256(Path(inspect.getfile(solver_class(name)))
                          .read_bytes()).hexdigest()


def claim_folder(folder, solver):
    """The output folder, refused where an earlier comparison there ran
    another version of the solver's file (its results would mix)."""
    state = folder.root / "solver.yml"
    digest = solver_digest(name_of(solver))
    if state.is_file():
        earlier = yaml.safe_load(state.read_text())
        if earlier != {"solver": solver, "sha256": digest}:
            raise ValueError(
                f"{folder.root} holds a comparison of another solver or "
                "another version of its file: remove the folder or give "
                "another --output")
    results.make_folder(folder.root)
    state.write_text(yaml.safe_dump({"solver": solver, "sha256": digest}))


def chosen(args, folder=None):
    """The comparisons to run, their costs estimated; the estimates kept
    in ``folder`` (tied to the solver's file, claim_folder), so that a
    resumed comparison neither probes again nor chooses otherwise."""
    found = plan.comparisons(args.solver, args.experiments)
    if args.quick:
        found = [c for c in found if not c.on_time]
    path = None if folder is None else folder.root / "estimates.yml"
    kept = (yaml.safe_load(path.read_text()) or {}) if (
        path is not None and path.is_file()) else {}
    for comparison in found:
        if comparison.name in kept:
            comparison.estimate = kept[comparison.name]
        else:
            plan.estimate(comparison, args.solver, plan.shipped_tuning_cost)
            kept[comparison.name] = comparison.estimate
    if path is not None:
        path.write_text(yaml.safe_dump(kept, sort_keys=False))
    return plan.cheapest(found) if args.quick else found


def compare(args):
    """Run the comparison (module doc); the page's path (None with
    ``--plan``)."""
    label = name_of(args.solver)
    folder = stages.Folder(args.output or ROOT / "outputs" / "compare"
                           / label)
    if not args.plan:
        claim_folder(folder, args.solver)
    # references computed afresh for the comparison (and kept for its
    # resumption), never read from a shared cache an older instance
    # filled (claims.recheck.fresh_references)
    os.environ.update(recheck.fresh_references(folder.root))
    found = chosen(args, None if args.plan else folder)
    print(f"Comparing {args.solver} on {len(found)} experiment(s); "
          "estimated cost:", *plan.cost_lines(found), sep="\n", flush=True)
    if args.plan:
        return None
    parallel = parallel_options(args.parallel_config, args.n_jobs)
    parts, commands = [], [" ".join(["python -m benchmark_utils.compare",
                                     *sys.argv[1:]])]
    for comparison in found:
        part, argv = one_experiment(folder, comparison, args.solver, label,
                                    parallel)
        parts.append(part)
        commands += [f"python -m benchmark_utils.tune {' '.join(argv)}",
                     f"python -m benchopt run . --config "
                     f"{stages.shown(folder.run_config(comparison.name))}"]
    index = page.write(folder.root / "index.html", label, parts,
                       commands, INTRO)
    stages.write_verdicts(folder.root / "verdicts.csv", parts)
    return index


def _say(comparison, kept, doing):
    print(f"{comparison.name}: "
          + (f"{kept} (kept from an earlier run)" if kept else doing),
          flush=True)


def one_experiment(folder, comparison, solver, label, parallel):
    """Tune, run, check and decide on one experiment (stages.py); ``(the
    page's part, the tuning's argv)``."""
    name = comparison.name
    _say(comparison, folder.tuned(name).is_file() and "tuned", "tuning")
    argv = stages.tune(folder, comparison, solver, parallel)
    entry = stages.tuned_entry(folder, comparison)
    _say(comparison, (folder.evidence(name) / "meta.yml").is_file()
         and "evidence runs", f"evidence runs of {entry}")
    mine = stages.run(folder, comparison, entry, parallel)
    notes = [f"Tuned: <code>{html.escape(entry)}</code> (<a href="
             f'"tuned/{name}_scores.md">every point run</a>)']
    if comparison.on_time:
        notes.append("Read on a clock: every method rerun here, beside the "
                     "new one.")
    else:
        _say(comparison, False, f"checking that {comparison.reference} "
             "reproduces here")
        wrong = stages.check(folder, comparison)
        if wrong:
            raise ValueError(
                f"{name}: the committed evidence does not reproduce on this "
                f"machine ({'; '.join(wrong)}); `python -m "
                f"benchmark_utils.claims run {name}` renews it, then rerun "
                "this command")
        notes.append("Shipped evidence reused: <code>"
                     f"{html.escape(comparison.reference)}</code> rerun here "
                     "for one repetition gave every stored value the same.")
    runs = stages.compared_runs(folder, comparison, mine)
    new = Method(label, (stages.solver_name(mine, solver),))
    methods = [*comparison.exp.methods, new]
    return (comparison, runs, methods,
            standings(comparison.exp, runs, new), notes), argv


INTRO = ("Each method of each experiment is decided against the new one "
         "by the benchmark's rule (docs/results.md, \"The rule\"): better, "
         "on par (an equivalence test), worse, inconclusive, or not "
         "testable here (a method whose runs do not improve on their "
         "start); one Holm family per pair of methods, the runs paired "
         "by seed where the family allows (\"Paired by seed\"). The new "
         "method was tuned by the protocol the shipped "
         "methods were (docs/tuning.md) and run on the evaluation seeds.")


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        check_args(args)
        index = compare(args)
    except (ValueError, OSError, RuntimeError) as error:
        print(f"compare: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("compare: interrupted; every finished step is kept, the same "
              "command resumes", file=sys.stderr)
        return 130
    if index is not None:
        print(stages.shown(index))
    return 0


if __name__ == "__main__":
    sys.exit(main())
