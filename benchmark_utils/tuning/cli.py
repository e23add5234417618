"""``python -m benchmark_utils.tune``: tune the role-named steps of every
solver of an experiment config on a log-spaced grid, with benchopt's own
parameter grids and result files, and write the tuned config."""
import argparse
import datetime
import math
import os
import sys
from pathlib import Path

from benchmark_utils.tuning import config_io, report, scoring, transfer
from benchmark_utils.tuning.defaults import ROOT, dataset_instances
from benchmark_utils.tuning.grids import STEP_PARAMETERS, plain_number
from benchmark_utils.tuning.plan import plan_solver
from benchmark_utils.tuning.runner import final_iteration, run_benchopt

# benchopt's --seed of the tuning runs; the tuned config's evaluation runs
# use another (config_io.EVALUATION_SEED), so the choice is not scored on
# the runs that report it
TUNING_SEED = 1000
# default budget: the config's max-runs, capped at 15 evaluations (the
# last at iteration 316): enough to tell a step that is too small (slow)
# from one too large (noisy or diverging), short enough for a full grid
MAX_RUNS_CAP = 15
BENCHOPT_MAX_RUNS = 100     # benchopt's -n default, for configs without one

LIMITS = {"grid_points": (2, 11), "tuning_seeds": (1, 100),
          "max_runs": (1, 30), "evaluate_at": (1, 30), "widen": (0, 10)}

DESCRIPTION = """\
Tune the steps of every solver of a benchopt experiment config.

For each solver entry (e.g. SOBA[batch_size=32]) the parameters declared in
benchmark_utils/tuning/grids.py (general family: outer_step x inner_step;
simple family: step, or upper_weight for IR-SCG / IR-FSCG) span a grid of N
values per parameter, log-spaced over two decades around the solver's
resolved default on the config's first dataset (or the value the entry
sets): centre x 10^linspace(-1, 1, N), 3 significant digits. benchopt runs
the grid (SOBA[outer_step=[a,b,c],inner_step=[d,e,f]]) with -r K
repetitions, --seed 1000 (tuning seeds; the tuned config is evaluated with
seed 0), --no-timeout and -n M, so the budget is the iteration of the M-th
evaluation (15: iteration 316), not wall-clock. Each run is scored at its
last evaluation on the upper level only (general: F - F* where F* is
certified, else F = the validation loss; simple: max(|f - f*|, g - g*),
else f + (g - g*)); diverged or non-finite runs score +inf; a point scores
the median over the K seeds; the lowest wins (several datasets: the median
over datasets of score / default point's score; ties: nearest the
default). A choice on the grid's edge re-runs the same grid around it (at
most --widen times). Writes the tuned config (10 repetitions, run at the
tuning's budget, or at --evaluate-at evaluations) and
<name>_scores.md with every grid point's scores, and prints the tuned
config's path last.
"""


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="python -m benchmark_utils.tune", description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("config", metavar="CONFIG",
                        help="experiment config (YAML, benchopt's run "
                             "config: dataset, solver, ...)")
    parser.add_argument("--grid-points", type=int, default=3, metavar="N",
                        help="values per tuned parameter (default 3: x0.1,"
                             " x1, x10 around the default; 2 to 11)")
    parser.add_argument("--tuning-seeds", type=int, default=2, metavar="K",
                        help="repetitions per grid point, scored by their "
                             "median (default 2; 1 to 100)")
    parser.add_argument("--max-runs", type=int, default=None, metavar="M",
                        help="evaluations per run, the last one scored: "
                             "the iteration budget (default: the config's "
                             f"max-runs capped at {MAX_RUNS_CAP}, i.e. "
                             f"iteration {final_iteration(MAX_RUNS_CAP)}; "
                             "1 to 30)")
    parser.add_argument("--evaluate-at", type=int, default=None,
                        metavar="E",
                        help="evaluations per run of the tuned config "
                             "(default: the tuning's M; 1 to 30): a longer "
                             "evaluation than the grid can afford")
    parser.add_argument("--widen", type=int, default=2, metavar="R",
                        help="when the choice lies on the grid's edge, run "
                             "the same grid around it again, at most R "
                             "times (default 2; 0 to 10)")
    parser.add_argument("--output", default=None, metavar="PATH",
                        help="tuned config to write (default: "
                             "configs/tuned/<config name>.yml)")
    parser.add_argument("--solver", nargs="+", default=None, metavar="NAME",
                        help="tune only these entries (a name such as SOBA "
                             "or the entry as written); the others are "
                             "copied as they are")
    parser.add_argument("--parameters", nargs="+", default=None,
                        metavar="STEP", choices=STEP_PARAMETERS,
                        help="span these role-named steps instead of the "
                             "table's (each entry those it has; e.g. "
                             "outer_step inner_step linear_system_step); "
                             "choices: " + ", ".join(STEP_PARAMETERS))
    parser.add_argument("--transfer-from", default=None, metavar="TUNED",
                        help="run nothing: write CONFIG's tuned config from "
                             "the tuned config of its stand-in (same "
                             "solvers, same order), each step rescaled by "
                             "the dataset's declared step scales "
                             "(benchmark_utils/tuning/transfer.py); for real "
                             "data that cannot be downloaded where tuning "
                             "runs")
    return parser.parse_args(argv)


def write_transfer(args, argv, content, source, output):
    """The tuned config of ``content`` from its stand-in's
    (``--transfer-from``): no run; its path is printed last."""
    tuned = config_io.read_config(args.transfer_from)
    entries, notes = transfer.transferred_entries(content, tuned)
    max_runs = tuned.get("max-runs", BENCHOPT_MAX_RUNS)
    lines = [
        "Transferred by: python -m benchmark_utils.tune " + " ".join(argv),
        f"Date: {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC",
        f"From: {source}",
        f"Transferred from: {args.transfer_from}",
        "Steps: tuned with that config (a stand-in: other data, or other "
        "settings as listed below), NOT with this one; the declared scales "
        "cover the instances' sizes, not their data (e.g. pixel norms)",
        *transfer.rule_lines(content, tuned),
        *(f"  {note}" for note in notes),
        f"Budget: the stand-in's, {max_runs} evaluations (iteration "
        f"{final_iteration(max_runs)}; timeout {config_io.SAFETY_TIMEOUT} s "
        "only as a safety cap)",
        "To tune this config itself (after benchopt prepare where its "
        f"data is downloaded): python -m benchmark_utils.tune {source}",
        "",
    ]
    config_io.write_tuned_config(
        output, config_io.tuned_content(content, entries, max_runs), lines)
    print(os.path.relpath(output) if output.resolve().is_relative_to(
        Path.cwd()) else output)


def check_args(args, content):
    """ValueError naming the option and its valid range, before any run."""
    for name, (low, high) in LIMITS.items():
        value = getattr(args, name)
        if value is not None and not low <= value <= high:
            option = "--" + name.replace("_", "-")
            raise ValueError(f"{option} must be an integer in [{low}, "
                             f"{high}], got {value}")
    if args.output is not None and not args.output.endswith(".yml"):
        raise ValueError(f"--output must be a .yml path, got {args.output}")
    if content.get("seed") == TUNING_SEED:
        raise ValueError(f"the config's seed must differ from the tuning "
                         f"seed {TUNING_SEED}, got {content['seed']}")
    if args.solver:
        entries = [str(e) for e in config_io.as_list(content["solver"])]
        known = {config_io.parse_entry(e)[0] for e in
                 config_io.as_list(content["solver"])} | set(entries)
        unknown = [s for s in args.solver if s not in known]
        if unknown:
            raise ValueError(f"--solver must name entries of the config "
                             f"({sorted(known)}), got {unknown}")


def selected(entry, solvers):
    name = config_io.parse_entry(entry)[0]
    return solvers is None or name in solvers or str(entry) in solvers


def tune(plan, content, args, max_runs, work):
    """Run one solver's grid; its scores, selection and chosen index."""
    stem = f"{plan.name}".replace("/", "_")
    parquet = work / f"{stem}.parquet"
    run_config = work / f"{stem}.yml"
    parquet.unlink(missing_ok=True)
    config_io.write_run_config(
        run_config, content, plan.grid_entry(),
        n_repetitions=args.tuning_seeds, max_runs=max_runs,
        seed=TUNING_SEED, output=parquet)
    print(f"running {plan.grid_entry()} ({len(plan.points)} points x "
          f"{args.tuning_seeds} seeds; log: {work / (stem + '.log')})",
          flush=True)
    run_benchopt(run_config, work / f"{stem}.log")
    scores, criteria = scoring.read_scores(parquet, plan.points,
                                           plan.family, args.tuning_seeds)
    chosen = scoring.select(scores, plan.center)
    return scores, criteria, chosen


def recentred(plan, point, datasets, n_points, objective_entries,
              parameters):
    """The plan of the same entry with ``point``'s values as the centre."""
    entry = config_io.format_entry(plan.name, {**plan.params, **point})
    return plan_solver(entry, datasets, n_points, objective_entries,
                       parameters)


def header(args, argv, source, max_runs, evaluate_at, plans, scores_path):
    grids = [f"  {p.entry}: " + ", ".join(
        f"{k} in [{', '.join(plain_number(v) for v in values)}]"
        for k, values in p.grid.items()) for p in plans if p and p.grid]
    return [
        "Tuned by: python -m benchmark_utils.tune " + " ".join(argv),
        f"Date: {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC",
        f"From: {source}",
        f"Budget: {max_runs} evaluations per run, no timeout: the scored "
        f"one at iteration {final_iteration(max_runs)}; this config runs "
        f"{evaluate_at} evaluations (iteration "
        f"{final_iteration(evaluate_at)}; timeout "
        f"{config_io.SAFETY_TIMEOUT} s only as a safety cap)",
        f"Tuning seeds: benchopt --seed {TUNING_SEED}, {args.tuning_seeds}"
        " repetition(s) per grid point; this config's runs use the seed below",
        f"Grid: {args.grid_points} values per parameter, centre (resolved "
        "default) x 10^linspace(-1, 1, N), 3 significant digits:",
        *grids,
        "Criterion (upper level only, at the last evaluation): general "
        "family F - F* where F* is certified, else F; simple family "
        "max(|f - f*|, g - g*), else f + (g - g*); diverged or non-finite "
        "runs +inf; median over seeds; lowest wins (several datasets: "
        "median over datasets of score / default's score; ties: nearest "
        "the default)",
        f"Scores of every grid point: {scores_path.name}",
        "",
    ]


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parse_args(argv)
    content = config_io.read_config(args.config)
    check_args(args, content)
    max_runs = args.max_runs or min(
        content.get("max-runs", BENCHOPT_MAX_RUNS), MAX_RUNS_CAP)
    source = Path(args.config)
    output = Path(args.output) if args.output else (
        ROOT / "configs" / "tuned" / f"{source.stem}.yml")
    if args.transfer_from:
        return write_transfer(args, argv, content, source, output)
    scores_path = output.with_name(f"{output.stem}_scores.md")
    work = ROOT / "outputs" / "tuning" / output.stem
    work.mkdir(parents=True, exist_ok=True)

    datasets = dataset_instances(content["dataset"])
    entries = config_io.as_list(content["solver"])
    plans = [plan_solver(e, datasets, args.grid_points,
                         content.get("objective"), args.parameters)
             if selected(e, args.solver) else None for e in entries]
    for plan in filter(None, plans):
        for note in plan.notes:
            print(f"{plan.entry}: {note}")

    tuned_entries, tables, untuned = [], [], []
    for index, (entry, plan) in enumerate(zip(entries, plans, strict=True)):
        if plan is None or plan.reason:
            reason = plan.reason if plan else "not selected by --solver"
            print(f"{entry}: kept as it is ({reason})")
            untuned.append((str(entry), reason))
            tuned_entries.append(entry)
            continue
        scores, criteria, chosen = tune(plan, content, args, max_runs, work)
        for _ in range(args.widen):
            # the choice is on the grid's edge: the same grid around it
            # (benchopt's cache returns the points already run)
            if not report.edge_parameters(scores, chosen):
                break
            wider = recentred(plan, scores[chosen].point, datasets,
                              args.grid_points, content.get("objective"),
                              args.parameters)
            if wider.reason or not wider.grid:
                break
            print(f"  on the grid's edge: re-centred on {wider.entry}",
                  flush=True)
            wider.entry = plan.entry    # tables and header: the config's
            plan = wider
            scores, criteria, chosen = tune(plan, content, args, max_runs,
                                            work)
        plans[index] = plan         # the header lists the final grid
        selection = scoring.selection_scores(scores, plan.center)
        if math.isinf(selection[chosen]):
            print(f"{plan.entry}: every grid point diverged or failed; "
                  "kept the point nearest the default")
        tuned_entries.append(plan.chosen_entry(scores[chosen].point))
        tables.append(report.solver_table(plan.entry, scores, chosen,
                                          plan.center, criteria, selection))
        print(f"{plan.entry} -> {tuned_entries[-1]}", flush=True)
        note = report.edge_note(scores, chosen)
        if note:
            print(f"  {note}", flush=True)

    evaluate_at = args.evaluate_at or max_runs
    lines = header(args, argv, source, max_runs, evaluate_at, plans,
                   scores_path)
    config_io.write_tuned_config(
        output, config_io.tuned_content(content, tuned_entries, evaluate_at),
        lines)
    report.write_scores(
        scores_path, [f"# Tuning scores: {output.name}", "",
                      *(f"{line}" for line in lines[:-1])], tables, untuned)
    print(os.path.relpath(output) if output.resolve().is_relative_to(
        Path.cwd()) else output)
