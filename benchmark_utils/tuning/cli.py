"""``python -m benchmark_utils.tune``: tune the role-named steps of every
solver of an experiment config on a log-spaced grid, with benchopt's own
parameter grids and result files, and write the tuned config."""
import argparse
import os
import sys
from pathlib import Path

from benchmark_utils.checks.names import closest
from benchmark_utils.tuning import (
    config_io,
    multipliers,
    pieces,
    report,
    scoring,
    search,
    transfer,
)
from benchmark_utils.tuning.defaults import (
    ROOT,
    dataset_instances,
    tuning_dataset_entries,
)
from benchmark_utils.tuning.grids import TUNABLE_KNOBS, TUNABLE_PARAMETERS
from benchmark_utils.tuning.header import (
    TUNING_SEED,
    grid_line,
    header,
)
from benchmark_utils.tuning.input_checks import (
    check_config_budget,
    check_entries,
    check_output,
    check_spellings,
    tunable_parameter,
)
from benchmark_utils.tuning.plan import plan_solver, refuse_nothing_to_tune
from benchmark_utils.tuning.runner import (
    CostMeter,
    check_parallel,
    parallel_options,
    plan_lines,
    run_benchopt,
)

# the budget: the tuned config's own (its max-runs), no cap, so that the
# steps are chosen at the budget they are evaluated at
BENCHOPT_MAX_RUNS = 100     # benchopt's -n default, for configs without one

LIMITS = {"grid_points": (2, 11), "tuning_seeds": (1, 100),
          "max_runs": (1, BENCHOPT_MAX_RUNS),
          "evaluate_at": (1, BENCHOPT_MAX_RUNS), "widen": (0, 20),
          "n_jobs": (1, 1024)}

DESCRIPTION = """\
Tune the steps of every solver of a benchopt experiment config.

For each solver entry (e.g. SOBA[batch_size=32]) the parameters declared in
benchmark_utils/tuning/grids.py (general family: outer_step x inner_step;
simple family: outer_step, or upper_weight for IR-SCG / IR-FSCG; other knobs
stay fixed, FIXED_KNOBS) span a grid of N values per parameter on a log lattice
around the solver's resolved default on the config's first dataset (or the
value the entry sets): centre x 10^(k 2/(N-1)) (N even: half a step off), 3
significant digits, the first grid spanning two decades. benchopt runs it with
-r K repetitions, --seed 1000 (tuning seeds; the tuned config is evaluated with
seed 0), random datasets on random_state + 1000 (the tuned config is evaluated
on the config's own instances), --no-timeout and -n M: the budget is the
iteration of the M-th evaluation, M = the config's max-runs (the tuned config's
budget). A run's score (general: F - F* where F* is certified, else F = the
validation loss; simple: max(|f - f*|, g - g*), else f + (g - g*); --score
levels: general max(f(x_k, y_k), ||grad_y g(x_k, y_k)||) relative to the start)
is read at its last evaluation, or at the config's sample_budget on the curve
(--criterion final), or as the mean of log-score over its evaluations (curve);
diverged, erring or dropped runs score +inf and their point never wins; a point
whose median does not beat its start's by more than the seeds' spread on every
dataset gains nothing and is not chosen while another eligible point gains
(where none does, the table says "no working step found here"). Per dataset:
median and [min, max] over the K seeds. Aggregate: geometric mean over datasets
of median / the best eligible median there; an aggregate within the best's seed
range ties, a tie going to the default, else to the smaller steps (product of
their ratios to the centre). Widening: while the choice (or the best aggregate
a tie left unchosen, toward where it beats its neighbour beyond the seeds'
spread) lacks a run neighbour on the lattice (one value further along a tuned
parameter), run those neighbours, at most --widen rounds, keeping every point
run (no point runs twice); a choice may end on an edge only where the next
value out diverged, gains nothing or is refused, else the score table flags it
UNFINISHED. Writes the tuned config (10 repetitions, the same budget) and
<name>_scores.md with every point run, and prints the tuned config's path last.
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
    parser.add_argument("--tuning-seeds", type=int, default=3, metavar="K",
                        help="repetitions per grid point: median and [min,"
                             " max] (default 3; 1 to 100)")
    parser.add_argument("--max-runs", type=int, default=None, metavar="M",
                        help="evaluations per run, the iteration budget of "
                             "the tuning and of the tuned config (default: "
                             "the config's max-runs, no cap; required where "
                             f"the config sets none; 1 to {BENCHOPT_MAX_RUNS}"
                             ")")
    parser.add_argument("--evaluate-at", type=int, default=None,
                        metavar="E",
                        help="evaluations per run of the tuned config; "
                             "refused unless E = M or --evaluate-at-reason "
                             f"says why (1 to {BENCHOPT_MAX_RUNS})")
    parser.add_argument("--evaluate-at-reason", default=None,
                        metavar="WHY",
                        help="why the tuned config is evaluated at another "
                             "budget than tuned at (written in its header)")
    parser.add_argument("--criterion", default="final",
                        choices=scoring.CRITERIA,
                        help="final: the score at the last evaluation "
                             "(default); curve: the mean of log-score over "
                             "the evaluations, for noisy methods")
    parser.add_argument("--score", default="upper", choices=scoring.SCORES,
                        help="upper (default): the upper level (simple "
                             "family: both levels); levels: general family "
                             "max(f(x_k, y_k), ||grad_y g(x_k, y_k)||), each "
                             "relative to the run's start, for a problem "
                             "whose upper value can be bought by leaving "
                             "the lower level")
    parser.add_argument("--widen", type=int, default=4, metavar="R",
                        help="at most R widening rounds, each running the "
                             "missing lattice neighbours of the chosen "
                             "point, and of the best aggregate a tie left "
                             "unchosen toward where it beats its neighbour "
                             "beyond the seeds' spread "
                             "(default 4; 0 to 20)")
    parser.add_argument("--output", default=None, metavar="PATH",
                        help="tuned config to write (default: "
                             "configs/tuned/<config name>.yml)")
    parser.add_argument("--solver", nargs="+", default=None, metavar="NAME",
                        help="tune only these entries (a name such as SOBA "
                             "or the entry as written); the others are "
                             "copied as they are")
    parser.add_argument("--update", action="store_true",
                        help="with --solver: the other entries keep their "
                             "tuned values, header lines and score tables "
                             "from the tuned config at --output (the same "
                             "config, budget, seeds, grid rule and "
                             "criterion), so a long tuning runs in pieces "
                             "or one entry is tuned again "
                             "(benchmark_utils/tuning/pieces.py)")
    parser.add_argument("--parameters", nargs="+", default=None,
                        metavar="STEP", type=tunable_parameter,
                        help="span these role-named steps instead of the "
                             "table's (each entry those it has; e.g. "
                             "outer_step inner_step linear_system_step), "
                             "and these knobs where grids.py declares them "
                             "tunable (" + "; ".join(
                                 f"{k}: {', '.join(v)}"
                                 for k, v in TUNABLE_KNOBS.items())
                             + "); choices: " + ", ".join(TUNABLE_PARAMETERS))
    parser.add_argument("--keep-timeout", action="store_true",
                        help="the config's timeout is part of its budget (a "
                             "paper's 'K iterations or T seconds, whichever "
                             "first'): the tuned config keeps it instead of "
                             f"the {config_io.SAFETY_TIMEOUT} s safety cap "
                             "(the tuning runs without a timeout)")
    parser.add_argument("--parallel-config", default=None, metavar="FILE",
                        help="benchopt's parallel config: the runs go to "
                             "dask or SLURM (docs/parallel.md)")
    parser.add_argument("--n-jobs", "-j", type=int, default=None,
                        metavar="N", help="benchopt's workers (with "
                        "--parallel-config: the dask workers)")
    parser.add_argument("--transfer-from", default=None, metavar="TUNED",
                        help="run nothing: write CONFIG's transferred "
                             "config from the tuned config of its stand-in "
                             "(same solvers, same order): each step = its "
                             "multiplier of the solver's default rule on the"
                             " stand-in x that rule on an offline instance "
                             "shaped like CONFIG's "
                             "(benchmark_utils/tuning/transfer.py); refused "
                             "where the timeout cannot hold the budget "
                             "(--max-runs sets another); for real data that "
                             "cannot be downloaded where tuning runs")
    return parser.parse_args(argv)


def write_transfer(args, argv, content, source, output):
    """The transferred config of ``content`` from its stand-in's tuned one
    (``--transfer-from``, benchmark_utils/tuning/transfer.py): no run; its
    path is printed last."""
    transfer.write_transfer(args, argv, content, source, output,
                            BENCHOPT_MAX_RUNS)


def check_args(args, content):
    """ValueError naming the option and its valid range, before any run."""
    for name, (low, high) in LIMITS.items():
        value = getattr(args, name)
        if value is not None and not low <= value <= high:
            option = "--" + name.replace("_", "-")
            raise ValueError(f"{option} must be an integer in [{low}, "
                             f"{high}], got {value}")
    check_parallel(args.parallel_config)
    if args.output is not None and not args.output.endswith(".yml"):
        raise ValueError(f"--output must be a .yml path, got {args.output}")
    if content.get("seed") == TUNING_SEED:
        raise ValueError(f"the config's seed must differ from the tuning "
                         f"seed {TUNING_SEED}, got {content['seed']}")
    if args.update and not args.solver:
        raise ValueError("--update goes with --solver (the entries this "
                         "piece tunes)")
    if args.keep_timeout and not content.get("timeout"):
        raise ValueError("--keep-timeout needs a timeout in the config, "
                         "which sets none")
    if not args.transfer_from:
        check_budget(args, content)
    if args.solver:
        entries = [str(e) for e in config_io.as_list(content["solver"])]
        known = {config_io.parse_entry(e)[0] for e in
                 config_io.as_list(content["solver"])} | set(entries)
        unknown = [s for s in args.solver if s not in known]
        if unknown:
            hints = "".join(closest(s, known) for s in unknown)
            raise ValueError(f"--solver must name entries of the config "
                             f"({sorted(known)}), got {unknown}{hints}")


def check_budget(args, content):
    """The tuned config is evaluated at the tuning's budget, unless
    ``--evaluate-at-reason`` says why not."""
    max_runs = tuning_budget(args, content)
    if args.evaluate_at is not None and args.evaluate_at != max_runs \
            and not args.evaluate_at_reason:
        raise ValueError(
            f"--evaluate-at {args.evaluate_at} differs from the tuning "
            f"budget {max_runs} (the config's max-runs or --max-runs): the "
            "steps would be judged at another budget than chosen at; give "
            "--evaluate-at-reason WHY to do it anyway")
    if args.evaluate_at_reason and args.evaluate_at is None:
        raise ValueError("--evaluate-at-reason goes with --evaluate-at")


def tuning_budget(args, content):
    """The tuning's ``max-runs``: ``--max-runs``, else the config's own
    (the tuned config's budget), no cap."""
    max_runs = args.max_runs or content.get("max-runs")
    if max_runs is None:
        raise ValueError(
            "the config sets no max-runs (its runs stop at a timeout): give "
            "--max-runs M, the evaluations the tuned config will run")
    return max_runs if args.max_runs else check_config_budget(args.config,
                                                               max_runs)


def selected(entry, solvers):
    name = config_io.parse_entry(entry)[0]
    return solvers is None or name in solvers or str(entry) in solvers


def score_source(plan, content, args, max_runs, work, criteria):
    """``run(keys, round)`` for :func:`search.search`: benchopt runs the
    points (round 0: the first grid as one parameter grid; later: one
    entry per point), their scores read from the result file."""
    stem = f"{plan.name}".replace("/", "_")
    lattice = plan.lattice()

    def run(keys, round_):
        points = [lattice.point(key) for key in keys]
        entries = ([plan.grid_entry()] if round_ == 0 else
                   [plan.chosen_entry(point) for point in points])
        name = stem if round_ == 0 else f"{stem}_widen{round_}"
        parquet, run_config = work / f"{name}.parquet", work / f"{name}.yml"
        parquet.unlink(missing_ok=True)
        config_io.write_run_config(
            run_config, content, entries,
            n_repetitions=args.tuning_seeds, max_runs=max_runs,
            seed=TUNING_SEED, output=parquet,
            parallel=parallel_options(args.parallel_config, args.n_jobs))
        what = entries[0] if round_ == 0 else (
            f"widening {round_}: " + ", ".join(entries))
        print(f"running {what} ({len(points)} points x {args.tuning_seeds}"
              f" seeds; log: {work / (name + '.log')})", flush=True)
        run_benchopt(run_config, work / f"{name}.log")
        scores, found = scoring.read_scores(
            parquet, points, plan.family, args.tuning_seeds, args.criterion,
            config_io.config_sample_budget(content.get("objective")),
            args.score)
        criteria.update(found)
        return scores
    return lattice, run


def tune(plan, content, args, max_runs, work):
    """Grow one solver's grid (:mod:`search`); its result and the
    criterion used on each dataset."""
    criteria = {}
    lattice, run = score_source(plan, content, args, max_runs, work,
                                criteria)
    return search.search(lattice, run, args.widen), criteria


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parse_args(argv)
    content = config_io.read_config(args.config)
    check_spellings(args.config)
    check_args(args, content)
    source = Path(args.config)
    output = Path(args.output) if args.output else (
        ROOT / "configs" / "tuned" / f"{source.stem}.yml")
    check_output(output)
    check_entries(content, source)
    # a bad sample budget is refused before any run
    config_io.config_sample_budget(content.get("objective"))
    if args.transfer_from:
        return write_transfer(args, argv, content, source, output)
    max_runs = tuning_budget(args, content)
    meter = CostMeter()
    scores_path = output.with_name(f"{output.stem}_scores.md")
    work = ROOT / "outputs" / "tuning" / output.stem
    work.mkdir(parents=True, exist_ok=True)

    datasets = dataset_instances(content["dataset"])
    # the runs' datasets: random ones on another instance than evaluated
    tuning_datasets, shifted = tuning_dataset_entries(content["dataset"])
    run_content = {**content, "dataset": tuning_datasets}
    entries = config_io.as_list(content["solver"])
    plans = [plan_solver(e, datasets, args.grid_points,
                         content.get("objective"), args.parameters)
             if selected(e, args.solver) else None for e in entries]
    chosen = list(filter(None, plans))
    refuse_nothing_to_tune(chosen, args.parameters)
    for plan in chosen:
        for note in plan.notes:
            print(f"{plan.entry}: {note}")
    print("\n".join(plan_lines(chosen, args.tuning_seeds, len(datasets),
                               max_runs, args.widen, output)), flush=True)

    evaluate_at = args.evaluate_at or max_runs
    sample_budget = config_io.config_sample_budget(content.get("objective"))

    def header_lines(grid_lines, cost=None):
        return header(args, argv, source, max_runs, evaluate_at, grid_lines,
                      scores_path, tuning_datasets if shifted else [],
                      sample_budget, cost,
                      content["timeout"] if args.keep_timeout else None)

    earlier = None
    if args.update:     # refused before any run where the pieces differ
        earlier = pieces.read_earlier(output, entries)
        earlier.check_shared(header_lines([]), output)

    tuned_entries, tables, untuned, grid_lines = [], [], [], []
    for index, (entry, plan) in enumerate(zip(entries, plans, strict=True)):
        name = pieces.entry_text(entry)
        if plan is None and earlier and name in earlier.tables:
            print(f"{name}: kept from {output.name} (--update)")
            tuned_entries.append(earlier.entries[index])
            tables.append(earlier.tables[name])
            grid_lines.append(earlier.grid_lines[name])
            continue
        if plan is None or plan.reason:
            reason = plan.reason if plan else (
                earlier.reasons.get(name, pieces.NOT_SELECTED) if earlier
                else pieces.NOT_SELECTED)
            print(f"{entry}: kept as it is ({reason})")
            untuned.append((str(entry), reason))
            tuned_entries.append(entry)
            continue
        result, criteria = tune(plan, run_content, args, max_runs, work)
        grid_lines.append(grid_line(plan, result))
        if result.ranking.leader is None:
            print(f"{plan.entry}: every point diverged, erred or was "
                  "dropped somewhere; kept the default")
        tuned_entries.append(plan.chosen_entry(result.chosen_point))
        tables.append(report.solver_table(plan.entry, result, criteria))
        print(f"{plan.entry} -> {tuned_entries[-1]}", flush=True)
        note = report.finish_note(result)
        if note:
            print(f"  {note}", flush=True)

    lines = header_lines(grid_lines, meter.text())
    if earlier:         # after the Date line: the pieces before this one
        lines[2:2] = earlier.piece_lines()
    config_io.write_tuned_config(
        output, config_io.tuned_content(content, tuned_entries, evaluate_at,
                                        args.keep_timeout),
        lines)
    multipliers.write_for_config(output, [f"Written by: tuning {source}"])
    report.write_scores(
        scores_path, [f"# Tuning scores: {output.name}", "",
                      *(f"{line}" for line in lines[:-1])], tables, untuned)
    print(os.path.relpath(output) if output.resolve().is_relative_to(
        Path.cwd()) else output)
