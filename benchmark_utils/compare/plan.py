"""What a comparison runs: the experiments of the solver's family with
committed evidence, how each experiment's shipped methods were tuned (the
new solver is tuned the same way), and the CPU time it will take.

An experiment applies where it is run at tuned steps (not a paper-steps
or longer sibling, which repeat its figure), its evidence and its tuning
source config exist, and its shipped methods are of the solver's family.
Its evidence's own config (meta.yml) is the base of every run: the new
solver runs on exactly the instances, budget, repetitions and seed the
shipped methods ran.

The cost is printed before anything runs, from the committed evidence
(its CPU time, shared between its methods by their clocks) and the
tunings' stated costs, scaled by a short probe: the new solver and the
shipped method of median cost run :data:`PROBE_ITERATIONS` iterations (at
most :data:`PROBE_SECONDS` CPU-seconds each) on the experiment's first
instance, and their CPU time per unit of the experiment's budget (sample
or iteration) gives the ratio; a run to a CPU horizon costs its horizon
whatever the solver.
"""
import dataclasses
import re
import time
from pathlib import Path

import yaml

from benchmark_utils.checks.names import closest
from benchmark_utils.claims import results
from benchmark_utils.claims.experiments import EXPERIMENTS
from benchmark_utils.sample_budget import samples_drawn
from benchmark_utils.tuning.config_io import as_list, format_entry, parse_entry
from benchmark_utils.tuning.defaults import (
    ROOT,
    attached,
    dataset_instances,
    solver_class,
)
from benchmark_utils.tuning.grids import STEP_PARAMETERS
from benchmark_utils.tuning.runner import stated_minutes

PROBE_ITERATIONS, PROBE_SECONDS = 50, 2.0
# options of a tuning command that choose its pieces or its machines, not
# its protocol; the widening limit is the largest any piece used
NOT_PROTOCOL = ("--solver", "--update", "--output", "--parallel-config",
                "--n-jobs", "-j")
WIDEN, WIDEN_DEFAULT = "--widen", 4
COMMAND = re.compile(r"python -m benchmark_utils\.tune (\S+)(.*?)"
                     r"(?: \(\d{4}-\d\d-\d\d .*)?$")


@dataclasses.dataclass
class Comparison:
    """One experiment of a comparison."""
    exp: object             # claims.experiments.Experiment
    meta: dict              # its evidence's meta.yml
    source: Path            # the config its shipped methods were tuned from
    options: list           # the tuning's protocol options (argv)
    reference: str          # the shipped entry of median cost (the probe's
    # and the reproduction check's)
    estimate: dict = dataclasses.field(default_factory=dict)  # CPU-s

    @property
    def name(self):
        return self.exp.name

    @property
    def on_time(self):
        """Read on a clock: the compared methods are rerun here."""
        return self.exp.axis == "time"


def family(entries):
    """The family of a config's solver entries ("general" or "simple")."""
    return solver_class(parse_entry(as_list(entries)[0])[0]).family


def tuning_commands(tuned_config):
    """``(source, [options of each piece])`` from a tuned config's header
    (its "Tuned by:" and "Earlier piece:" lines)."""
    found, source = [], None
    for line in tuned_config.read_text().splitlines():
        if not line.startswith(("# Tuned by: ", "# Earlier piece: ")):
            continue
        match = COMMAND.search(line.split(": ", 1)[1])
        if match:
            source = match.group(1)
            found.append(_options(match.group(2).split()))
    if source is None:
        raise ValueError(f"{tuned_config} names no tuning command in its "
                         "header: it was not tuned by this benchmark")
    return ROOT / source, found


def _options(tokens):
    """``{option: tuple of its values}`` of a command's tokens."""
    options, current = {}, None
    for token in tokens:
        if token.startswith("-") and not re.fullmatch(r"-?\d[\d.e-]*",
                                                      token):
            current = token
            options[current] = ()
        elif current is not None:
            options[current] += (token,)
    return options


def protocol_options(pieces):
    """The options every piece shares (pieces and machines aside), and
    the largest widening any used, as argv."""
    shared = {k: v for k, v in pieces[0].items() if k not in NOT_PROTOCOL
              and k != WIDEN and all(p.get(k) == v for p in pieces)}
    widen = max(int(p.get(WIDEN, (WIDEN_DEFAULT,))[0]) for p in pieces)
    argv = [WIDEN, str(widen)]
    for option, values in shared.items():
        argv += [option, *values]
    return argv


def shared_settings(entries):
    """``{knob: value}`` that the experiment's entries set alike: the same
    value in every entry that sets it, two entries at least (its batch
    size, start, horizon), tuned steps aside."""
    values = {}
    for entry in as_list(entries):
        for knob, value in parse_entry(entry)[1].items():
            if knob not in STEP_PARAMETERS:
                values.setdefault(knob, []).append(value)
    return {knob: found[0] for knob, found in values.items()
            if len(found) >= 2 and all(v == found[0] for v in found)}


def new_entry(solver, entries):
    """The new solver's entry in an experiment of ``entries``: the
    experiment's shared settings that it has as parameters, then the knobs
    ``solver`` (``Name[knob=value,...]``) gives itself."""
    name, given = parse_entry(solver)
    mine = solver_class(name).parameters
    settings = {knob: value for knob, value in shared_settings(
        entries).items() if knob in mine}
    return format_entry(name, {**settings, **given})


def method_costs(runs, meta):
    """``{solver entry: CPU-s}``: the evidence's CPU time shared between
    its entries in proportion to their runs' clocks."""
    last = runs.sort_values("iteration").groupby(
        ["dataset", "solver", "rep"])["time"].last()
    clock = last.groupby("solver").sum()
    seconds = results.all_runs_cpu_seconds(meta) or 0
    return (clock / clock.sum() * seconds).to_dict()


def comparisons(solver, names=None):
    """The :class:`Comparison` of each experiment that applies to
    ``solver`` (``names``: these only; ValueError for one that does not
    apply, saying why)."""
    wanted = set(names or ())
    unknown = wanted - set(EXPERIMENTS)
    if unknown:
        hints = ", ".join(repr(name) + closest(name, EXPERIMENTS)
                          for name in sorted(unknown))
        raise ValueError(f"--experiments must name experiments "
                         f"({', '.join(sorted(EXPERIMENTS))}), got "
                         f"{hints}")
    mine = solver_class(parse_entry(solver)[0]).family
    found = []
    for exp in EXPERIMENTS.values():
        if wanted and exp.name not in wanted:
            continue
        why = _why_not(exp, mine)
        if why is None:
            runs, _, meta = results.read(exp.folder)
            source, pieces = tuning_commands(exp.config)
            costs = method_costs(runs, meta)
            reference = sorted(costs, key=costs.get)[len(costs) // 2]
            found.append(Comparison(exp, meta, source,
                                    protocol_options(pieces), reference))
        elif exp.name in wanted:
            raise ValueError(f"--experiments: {exp.name} does not apply to "
                             f"{solver}: {why}")
    if not found:
        raise ValueError(f"no experiment applies to {solver} (a {mine}-"
                         "family solver)")
    return found


def _why_not(exp, mine):
    """Why ``exp`` does not apply to a solver of family ``mine`` (None:
    it does)."""
    if exp.source != "tuned":
        return (f"it repeats {exp.base}'s figure ({exp.source} steps or "
                "budget)")
    if not (exp.folder / "meta.yml").is_file() or not exp.config.is_file():
        return "it has no committed evidence or tuned config"
    meta = results.read_meta(exp.folder)
    theirs = family(meta["config"]["solver"])
    if theirs != mine:
        return f"its methods are of the {theirs} family"
    return None


# ---- the cost ----

def probe(entry, comparison):
    """The solver ``entry``'s CPU seconds per unit of the experiment's
    budget on its first instance (module doc); None where it skips it."""
    config = comparison.meta["config"]
    dataset = dataset_instances(as_list(config["dataset"])[:1])[0]
    name, params = parse_entry(entry)
    objective, solver, reason = attached(name, params, dataset,
                                         config.get("objective"))
    if reason is not None:
        return None
    start, count = time.process_time(), [0]

    def callback():
        count[0] += 1
        return (count[0] <= PROBE_ITERATIONS
                and time.process_time() - start < PROBE_SECONDS)

    solver.pre_run_hook(callback)
    solver.run(callback)
    units = (samples_drawn(objective.view.counts())
             if comparison.exp.budget[0] == "samples" else solver.iteration)
    return solver.cpu_time / max(units, 1)


def estimate(comparison, entry, tuning_cost):
    """Fill ``comparison.estimate`` (CPU-s of the tuning, the new
    solver's runs, and the check or the rerun of the shipped methods);
    ValueError where the solver skips the experiment's instance."""
    runs = results.read(comparison.exp.folder)[0]
    costs = method_costs(runs, comparison.meta)
    mine = probe(new_entry(entry, comparison.meta["config"]["solver"]),
                 comparison)
    if mine is None:
        raise ValueError(f"{entry} skips {comparison.name}'s first "
                         "instance (the solver's skip reason): it cannot "
                         "be compared there")
    ratio = 1.0
    if comparison.exp.horizon is None:
        theirs = probe(comparison.reference, comparison)
        ratio = mine / theirs if theirs else 1.0
    reference = costs[comparison.reference]
    repetitions = comparison.meta["config"]["n-repetitions"]
    comparison.estimate = {
        "tuning": tuning_cost(comparison) * ratio,
        "runs": reference * ratio,
        ("rerun of the shipped methods" if comparison.on_time else
         "reproduction check"): (sum(costs.values()) if comparison.on_time
                                 else reference / repetitions)}
    return comparison.estimate


def shipped_tuning_cost(comparison):
    """CPU-s per entry of the shipped tuning (its header's stated costs
    over its entries); where a piece states none, 27 runs of the median
    entry (the first grid of two steps, 3 seeds)."""
    text = comparison.exp.config.read_text()
    minutes = stated_minutes(text)
    entries = len(as_list(yaml.safe_load(text)["solver"]))
    if "cost not stated" in text or not minutes:
        runs = results.read(comparison.exp.folder)[0]
        per_run = method_costs(runs, comparison.meta)[comparison.reference]
        return 27 * per_run / comparison.meta["config"]["n-repetitions"]
    return 60 * sum(minutes) / entries


def cost_lines(found):
    """The printed plan: per experiment its estimated CPU time by part."""
    lines, total = [], 0.0
    for comparison in found:
        parts = comparison.estimate
        total += sum(parts.values())
        lines.append(f"  {comparison.name} ({comparison.exp.axis} axis): "
                     + ", ".join(f"{part} ~{_minutes(seconds)}"
                                 for part, seconds in parts.items()))
    lines.append(f"  in all ~{_minutes(total)} of CPU time (one core; "
                 "-j N spreads benchopt's runs over N)")
    return lines


def _minutes(seconds):
    return (f"{seconds / 3600:.1f} CPU-h" if seconds >= 3600
            else f"{seconds / 60:.1f} CPU-min")


def cheapest(found, count=2):
    """``--quick``: of the experiments not read on a clock (their shipped
    runs are reused, none rerun), the ``count`` whose estimates
    (:func:`estimate`, filled in) are lowest."""
    candidates = [c for c in found if not c.on_time]
    if len(candidates) < count:
        raise ValueError(f"--quick needs {count} experiments not read on "
                         f"a clock; {len(candidates)} apply")
    return sorted(candidates, key=lambda c: sum(c.estimate.values()))[
        :count]
