"""Carry the steps tuned on a stand-in to the experiment it stands for, by
rule.

Real data sets that cannot be downloaded where the tuning runs (MNIST,
Omniglot) are tuned on their stand-in (the digits, the synthetic tasks);
``python -m benchmark_utils.tune CONFIG --transfer-from TUNED`` writes
CONFIG's *transferred* config (never called tuned: nothing ran on its
data) from the stand-in's tuned config, without running the tuning. Rule,
entry by entry (the two configs list the same solvers in the same order):

* each tuned step is stored as a multiplier of its solver's own default
  rule on the stand-in's instance (the stand-in's sidecar
  ``<name>_multipliers.yml``, benchmark_utils/tuning/multipliers.py); its
  value here is that multiplier times the same solver's default rule
  evaluated on an offline instance of this config's shape (the dataset's
  ``offline_stand_in()``, benchmark_utils/data/shaped.py: MNIST's sizes and
  published pixel statistics, Omniglot's image shape and network), with
  this entry's other parameters and the steps transferred before it. So a
  y step ``2/(mu_g + L_g)`` follows the curvature of the target's data, an
  x step ``c x outer_step_scale`` its sizes, and a derived quantity (F2SA's
  xi) the steps it is derived from;
* a step the solver normalizes (BiAdam's x step with A_t from the
  hypergradient) keeps its multiplier too: the normalization is per
  coordinate of a sparse mini-batch estimate, so the move per coordinate
  still shrinks with the rate at which a coordinate is sampled
  (batch / n_train), as a plain step's does (docs/tuning.md);
* the other parameters are the target entry's own (e.g. VRBO's full batch
  is the real training set's size); the header lists where they differ;
* the time cap: every entry is timed on the shaped instances
  (benchmark_utils/tuning/timing.py) and the command refuses a budget the
  timeout cannot hold.
"""
import datetime
import os
from pathlib import Path

from benchmark_utils.tuning import config_io, multipliers, timing
from benchmark_utils.tuning.defaults import dataset_instances
from benchmark_utils.tuning.grids import (
    STEP_PARAMETERS,
    plain_number,
    round_significant,
)
from benchmark_utils.tuning.runner import final_iteration

# Entries whose upper-level value F ends above its start after 50
# iterations on the shaped instance (none diverges), by (transferred
# config, entry index), with the cause: measured by
# tests/test_tuning_transfer.py (which fails if one stops rising or another
# starts), written into the transferred config's header where a user looks.
# On the MNIST-shaped instances many of these methods raise F in their
# first 50 iterations at their own default steps too; on the digits
# stand-in, at the same multipliers, every one of them lowers it.
AT_DEFAULTS_TOO = "at the solver's default steps too"
TRANSFERRED_ONLY = ("with the transferred steps only (not at the defaults "
                    "nor with the x step / 10): the stand-in's choice does "
                    "not carry here at this horizon")
KNOWN_RISES = {
    ("huang2021_hyper_cleaning", 0): AT_DEFAULTS_TOO,       # BiAdam
    ("huang2021_hyper_cleaning", 1): AT_DEFAULTS_TOO,       # BiAdam, h
    ("huang2021_hyper_cleaning", 2): AT_DEFAULTS_TOO,       # VR-BiAdam
    ("huang2021_hyper_cleaning", 3): AT_DEFAULTS_TOO,       # VR-BiAdam, h
    ("huang2021_hyper_cleaning", 4): TRANSFERRED_ONLY,      # stocBiO
    ("huang2021_hyper_cleaning", 7): AT_DEFAULTS_TOO,       # SUSTAIN
    ("huang2021_hyper_cleaning", 9): AT_DEFAULTS_TOO,       # AID-CG
    ("huang2021_hyper_cleaning", 10): AT_DEFAULTS_TOO,      # AID-FP
    ("huang2021_hyper_cleaning", 12): AT_DEFAULTS_TOO,      # F2SA
    ("kwon2023_hyper_cleaning", 0): AT_DEFAULTS_TOO,        # F2SA, 50
    ("kwon2023_hyper_cleaning", 1): AT_DEFAULTS_TOO,        # F2SA, 500
    ("kwon2023_hyper_cleaning", 2): TRANSFERRED_ONLY,       # stocBiO, 50
}
# the iterations every transferred entry runs on its shaped instance
# (tests/test_tuning_transfer.py), after which its F is compared with its
# start
CHECK_ITERATIONS = 50
RISES_HEADER = (f"F rises in {CHECK_ITERATIONS} iterations on the shaped "
                "instance for:")


def rise_lines(name, entries):
    """The header lines naming the entries of the transferred config
    ``name`` that raise F on its shaped instance (:data:`KNOWN_RISES`)."""
    found = [(i, cause) for (config, i), cause in sorted(KNOWN_RISES.items())
             if config == name]
    if not found:
        return []
    return [RISES_HEADER, *(f"  {entries[i]}: {cause}" for i, cause in found)]


def shaped_instances(content):
    """Every dataset instance the config selects, each replaced by its
    offline stand-in where it reads data that cannot be read here."""
    out = []
    for dataset in dataset_instances(content["dataset"]):
        stand_in = getattr(dataset, "offline_stand_in", lambda: None)()
        out.append(dataset if stand_in is None
                   else type(dataset).get_instance(**stand_in))
    return out


def transferred_entries(target, tuned, sidecar, shaped=None):
    """``(entries, details, notes)``: the target config's solver entries
    with the stand-in's steps carried by rule (module doc) onto ``shaped``
    (default: the target's first instance, shaped); ``details`` per entry
    ``{entry, steps: {step: {value, multiplier, default, rule}}}`` (the
    transferred config's sidecar), one note per departure."""
    targets = config_io.as_list(target["solver"])
    sources = config_io.as_list(tuned["solver"])
    if len(targets) != len(sources):
        raise ValueError(f"--transfer-from must list the config's "
                         f"{len(targets)} solver entries in order, got "
                         f"{len(sources)}")
    shaped = shaped or multipliers.first_instance(target, shaped=True)
    objective = target.get("objective")
    entries, details, notes = [], [], []
    for target_entry, source_entry, source in zip(
            targets, sources, sidecar["entries"], strict=True):
        name, params = config_io.parse_entry(target_entry)
        source_name, source_params = config_io.parse_entry(source_entry)
        if name != source_name:
            raise ValueError(f"--transfer-from lists {source_name} where the"
                             f" config lists {name}: the same solvers, in "
                             "the same order")
        others = {k: v for k, v in params.items() if k not in STEP_PARAMETERS}
        moved, steps = {}, {}
        for step, stored in source["steps"].items():
            default, rule = multipliers.default_of(
                name, {**others, **moved}, step, shaped, objective)
            value = round_significant(stored["multiplier"] * default)
            moved[step] = value
            steps[step] = {"value": value,
                           "multiplier": stored["multiplier"],
                           "default": multipliers.significant(default),
                           "rule": rule, "stand_in_default": stored["default"]}
        # the stand-in's order of the steps (computed in the rules' order)
        ordered = {s: moved[s] for s in source_params if s in moved}
        entries.append(config_io.format_entry(
            name, {**others, **ordered, **moved}))
        details.append({"entry": entries[-1], "steps": steps})
        source_others = {k: v for k, v in source_params.items()
                         if k not in STEP_PARAMETERS}
        differ = sorted(k for k in others.keys() | source_others.keys()
                        if others.get(k) != source_others.get(k))
        if differ:
            there = ", ".join(f"{k}={source_others.get(k)}" for k in differ)
            notes.append(f"{entries[-1]}: the stand-in ran {there}")
    return entries, details, notes


def _number(value):
    return plain_number(round_significant(value, 4))


def step_lines(details):
    """The header's multipliers, entry by entry."""
    lines = []
    for detail in details:
        if not detail["steps"]:
            lines.append(f"  {detail['entry']}: no tuned step")
            continue
        parts = [f"{step} = {_number(s['multiplier'])} x "
                 f"{_number(s['default'])} ({s['rule']}; stand-in "
                 f"{_number(s['stand_in_default'])})"
                 for step, s in detail["steps"].items()]
        lines.append(f"  {config_io.parse_entry(detail['entry'])[0]}: "
                     + "; ".join(parts))
    return lines


def write_transfer(args, argv, content, source, output, default_max_runs):
    """Write CONFIG's transferred config and its multipliers from the
    stand-in's (``--transfer-from``), after the time check; no tuning
    run. Its path is printed last."""
    tuned = config_io.read_config(args.transfer_from, "--transfer-from")
    if not config_io.is_tuned_config(args.transfer_from):
        raise ValueError(
            f"--transfer-from must be a tuned config (written by the tuning "
            f"command, its header starting with '# Tuned by:'), got "
            f"{args.transfer_from}: tune it first, or pass its tuned config "
            "under configs/tuned/")
    sidecar = multipliers.read_sidecar(args.transfer_from, tuned)
    shaped = shaped_instances(content)
    entries, details, notes = transferred_entries(content, tuned, sidecar,
                                                  shaped[0])
    stand_in_runs = tuned.get("max-runs", default_max_runs)
    max_runs = args.max_runs or stand_in_runs
    timeout = config_io.SAFETY_TIMEOUT
    sample_budget = config_io.config_sample_budget(content.get("objective"))
    times = timing.check_time_cap(entries, shaped, max_runs, timeout,
                                  content.get("objective"),
                                  sample_budget=sample_budget)
    slowest = max(times, key=lambda t: t.seconds(max_runs, sample_budget),
                  default=None)
    budget = (f"the stand-in's, {max_runs} evaluations (iteration "
              f"{final_iteration(max_runs)})" if max_runs == stand_in_runs
              else f"{max_runs} evaluations (iteration "
              f"{final_iteration(max_runs)}, --max-runs), where the stand-in"
              f" chose its steps at {stand_in_runs} (iteration "
              f"{final_iteration(stand_in_runs)}): a shorter budget favours "
              "larger steps") + (
        f"; each run ends at its first evaluation past {sample_budget} "
        "samples drawn (the objective's sample_budget)"
        if sample_budget else "")
    first = multipliers.first_instance(content)
    where = ("this config's first instance, offline" if str(first) == str(
        shaped[0]) else f"offline, shaped like this config's first instance "
        f"{first}: benchmark_utils/data/shaped.py")
    lines = [
        "Transferred by: python -m benchmark_utils.tune " + " ".join(argv),
        f"Date: {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC",
        f"From: {source}",
        f"Transferred from: {args.transfer_from} (multipliers: "
        f"{multipliers.sidecar_path(args.transfer_from).name}, on "
        f"{sidecar['instance']})",
        "A transferred config, NOT a tuned one: no run on this config's data "
        "chose these steps",
        "Rule: each step = its multiplier (the stand-in's tuned value / its "
        "solver's default rule on the stand-in's instance) x the same "
        f"solver's default rule on {shaped[0]} ({where}), "
        "with this entry's other parameters; derived quantities (F2SA's xi)"
        " follow from the steps; every other parameter is this config's "
        "entry's. Multiplier x default (rule; the default on the stand-in):",
        *step_lines(details),
        *(f"  {note}" for note in notes),
        f"Budget: {budget}; timeout {timeout} s",
        *rise_lines(output.stem, entries),
        *([f"Time: each entry timed on the shaped instances "
           f"({timing.MEASURED_ITERATIONS} iterations after the first, one "
           f"evaluation); the slowest, {slowest.entry}, "
           f"{slowest.per_iteration:.3g} s an iteration on "
           f"{slowest.instance}: about "
           f"{slowest.seconds(max_runs, sample_budget):.0f} s a run, within "
           "the timeout"] if slowest else []),
        "To tune this config itself (after benchopt prepare where its "
        f"data is downloaded): python -m benchmark_utils.tune {source}",
        "",
    ]
    config_io.write_tuned_config(
        output, config_io.tuned_content(content, entries, max_runs), lines)
    multipliers.write_sidecar(
        output, {"instance": str(shaped[0]),
                 "transferred_from": str(args.transfer_from),
                 "entries": details},
        ["A transferred config's: each multiplier is the stand-in's, each "
         "default the rule on the instance below (offline, shaped like "
         "this config's)"])
    print(os.path.relpath(output) if output.resolve().is_relative_to(
        Path.cwd()) else output)
