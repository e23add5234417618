"""The tuned config's header (and its score table's): how it was made,
its budget, seeds, instances, every value run and the criterion."""
import datetime

from benchmark_utils.tuning import config_io
from benchmark_utils.tuning.defaults import TUNING_INSTANCE_OFFSET
from benchmark_utils.tuning.grids import plain_number
from benchmark_utils.tuning.runner import final_iteration

# benchopt's --seed of the tuning runs; the tuned config's evaluation runs
# use another (config_io.EVALUATION_SEED), so the choice is not scored on
# the runs that report it
TUNING_SEED = 1000
# the selection rule (benchmark_utils/tuning/scoring.py, rank), its own
# header line: a tuning in pieces records the rule of each piece's tables
SELECTION = ("Selection: a point whose runs' median gain on their start "
             "does not exceed the seeds' spread on every dataset is not a "
             "choice (none improving: no working step found here); an "
             "aggregate within "
             "the best's seed range ties, ties to the default, else to the "
             "smaller steps")


def grid_line(plan, result):
    """The header's line of one tuned entry: every value run per
    parameter, and how many points."""
    values = {name: sorted({s.point[name] for s in result.scores})
              for name in result.lattice.names}
    return (f"  {plan.entry}: " + ", ".join(
        f"{name} in [{', '.join(plain_number(v) for v in run)}]"
        for name, run in values.items())
        + f"; {len(result.keys)} points run ({result.rounds.count(0)} in "
        f"the first grid, {result.n_rounds} widening round(s))")


def budget_line(max_runs, sample_budget, evaluation, kept_timeout=None):
    """The header's budget: evaluations, or samples capped by them; the
    tuned config's timeout, a safety cap or the config's kept one."""
    safety = (f"(timeout {config_io.SAFETY_TIMEOUT} s only as a safety cap)"
              if kept_timeout is None else
              f"(timeout {kept_timeout} s, the config's, kept by "
              "--keep-timeout: part of its budget, whichever comes first)")
    if sample_budget is None:
        return (f"Budget: {max_runs} evaluations per run, no timeout: the "
                f"last at iteration {final_iteration(max_runs)}; "
                f"{evaluation} {safety}")
    return (f"Budget: {sample_budget} samples drawn per run (the "
            "objective's sample_budget: a run ends at its first evaluation "
            f"past it; at most {max_runs} evaluations, iteration "
            f"{final_iteration(max_runs)}), no timeout, the score read on "
            f"the curve at {sample_budget} samples; {evaluation} {safety}")


def header(args, argv, source, max_runs, evaluate_at, grid_lines,
           scores_path, tuning_datasets, sample_budget=None, cost=None,
           kept_timeout=None):
    if evaluate_at == max_runs:
        evaluation = ("this config runs the same budget (tuned at the "
                      "experiment's budget)")
    else:
        evaluation = (f"this config runs {evaluate_at} evaluations "
                      f"(iteration {final_iteration(evaluate_at)}), by "
                      f"--evaluate-at because: {args.evaluate_at_reason}")
    instances = (f"random datasets on random_state + "
                 f"{TUNING_INSTANCE_OFFSET} ({', '.join(tuning_datasets)}); "
                 "this config is evaluated on its own instances"
                 if tuning_datasets else "the config's datasets (none "
                 "random)")
    return [
        "Tuned by: python -m benchmark_utils.tune " + " ".join(argv),
        f"Date: {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC",
        f"From: {source}",
        budget_line(max_runs, sample_budget, evaluation, kept_timeout),
        f"Tuning seeds: benchopt --seed {TUNING_SEED}, {args.tuning_seeds}"
        " repetition(s) per point; this config's runs use the seed below",
        f"Tuning instances: {instances}",
        f"Grid: {args.grid_points} values per parameter on the lattice "
        "centre (resolved default) x 10^(k step), step 2/(N-1) decades "
        "(N even: half a step off the centre), integer knobs centre x 2^k "
        "rounded, 3 significant digits; widened at most "
        f"{args.widen} round(s); values run:",
        *grid_lines,
        (f"Criterion ({args.criterion}; upper level only): general family "
         "F - F* where F* is certified, else F; simple family max(|f - f*|,"
         " g - g*), else f + (g - g*); " if args.score == "upper" else
         f"Criterion ({args.criterion}; both levels, --score levels): "
         "general family max(f(x_k, y_k) / f(x_0, y_0), ||grad_y g(x_k, "
         "y_k)|| / ||grad_y g(x_0, y_0)||); simple family max(|f - f*|, "
         "g - g*), else f + (g - g*); ")
        + (("at the last evaluation" if sample_budget is None else
            f"on the curve at {sample_budget} samples")
           if args.criterion == "final" else
           "mean of log-score over the evaluations")
        + "; diverged, erring or dropped runs +inf (the point never wins); "
        "median over seeds; geometric mean over datasets of median / best "
        "eligible median",
        SELECTION,
        *([cost] if cost else []),
        f"Scores of every point run: {scores_path.name}",
        "",
    ]
