"""Tuned steps as multipliers of each solver's own default rule.

A tuned config's steps are numbers chosen on one instance. Each solver
declares the rule of its default for every step (``step_rules``,
benchmark_utils/solvers/steps.py: ``2/(mu_g + L_g)``, ``0.05 x the
problem's outer_step_scale``...); a tuned value divided by what that rule
gives on the tuning instance is the step's **multiplier**, which carries
to another instance (benchmark_utils/tuning/transfer.py: the value there is
the multiplier times the same rule evaluated there).

The default of a step is the solver resolved on the config's first dataset
instance (where the tuning centres its grid) with that step not given and
the entry's other parameters as set (its other tuned steps included: a
rule may read the steps declared before it, as SOBA's ``inner_step /
outer_ratio``), without any tuned table; a
step whose default is the parameter's own number (the simple family's
``step``) has that number as its rule. A quantity derived from the steps
(F2SA's ``xi = outer_step / alpha0``) is no parameter and is not stored:
it follows from the steps it is derived from.

The sidecar ``<config name>_multipliers.yml`` next to a tuned (or
transferred) config records, per solver entry in order and per tuned step
in the solver's declaration order: the value, the multiplier, the
default's value and its rule, and the instance they were computed on. The
tuning command writes it with the tuned config; for a shipped config::

    python -m benchmark_utils.tuning.multipliers configs/tuned/NAME.yml
"""
import argparse
import math
import sys
from pathlib import Path

import yaml

from benchmark_utils.tuning import config_io
from benchmark_utils.tuning.defaults import (
    dataset_instances,
    set_on_problem,
    solver_class,
)
from benchmark_utils.tuning.grids import STEP_PARAMETERS

SUFFIX = "_multipliers.yml"
# digits kept in the sidecar: the multiplier times the default gives the
# config's value back to 1e-6 (a config's values have 3 to 16 digits)
DIGITS = 7


def sidecar_path(config_path):
    """``<config name>_multipliers.yml`` next to the config."""
    path = Path(config_path)
    return path.with_name(path.stem + SUFFIX)


def instance_name(dataset):
    """The dataset instance as benchopt names it (``name[p=v,...]``)."""
    return str(dataset)


def first_instance(content, shaped=False):
    """The first dataset instance a config selects (the one a tuning
    centres its grid on); ``shaped``: the offline instance shaped like it
    where it reads data that cannot be read here (the dataset's
    ``offline_stand_in()``, benchmark_utils/data/shaped.py)."""
    instances = dataset_instances(content["dataset"])
    if not instances:
        raise ValueError(f"the config selects no installed dataset instance "
                         f"({content['dataset']!r})")
    dataset = instances[0]
    if not shaped:
        return dataset
    stand_in = getattr(dataset, "offline_stand_in", lambda: None)()
    return dataset if stand_in is None else type(dataset).get_instance(
        **stand_in)


def tuned_steps(name, params):
    """The role-named steps the entry sets, in the solver's declaration
    order (then any other, in the entry's order)."""
    declared = [rule.name for rule in solver_class(name).step_rules]
    steps = [s for s in declared if s in params and s in STEP_PARAMETERS]
    return steps + [s for s in params
                    if s in STEP_PARAMETERS and s not in steps]


def default_of(name, params, step, dataset, objective_entries=None):
    """``(value, rule)``: what the solver ``name[params]`` runs ``step``
    with on ``dataset`` when ``step`` is not given (module doc)."""
    given = {k: v for k, v in params.items() if k != step}
    solver, reason = set_on_problem(name, given, dataset, objective_entries)
    if reason is not None:
        raise ValueError(f"{config_io.format_entry(name, given)} skips "
                         f"{instance_name(dataset)} ({reason}): no default "
                         f"{step} to scale")
    rules = {rule.name: rule for rule in solver.step_rules}
    if step not in rules:
        value = getattr(solver, step)
        return float(value), f"{value:g}, the parameter's default"
    resolved = solver.resolve(solver.problem)[step]
    if resolved.kind == "given":        # a number as the class default
        return resolved.value, (f"{resolved.value:g}, the parameter's "
                                "default")
    return resolved.value, rules[step].rule


def significant(value, digits=DIGITS):
    """``value`` at the sidecar's precision."""
    return float(f"{value:.{digits - 1}e}")


def entry_multipliers(entry, dataset, objective_entries=None):
    """``{step: {value, multiplier, default, rule}}`` of one entry."""
    name, params = config_io.parse_entry(entry)
    steps = {}
    for step in tuned_steps(name, params):
        default, rule = default_of(name, params, step, dataset,
                                   objective_entries)
        value = float(params[step])
        steps[step] = {"value": value,
                       "multiplier": significant(value / default),
                       "default": significant(default), "rule": rule}
    return steps


def config_multipliers(content, dataset=None):
    """The sidecar's content for a tuned config (module doc)."""
    dataset = dataset or first_instance(content)
    return {"instance": instance_name(dataset),
            "entries": [{"entry": str(entry),
                         "steps": entry_multipliers(
                             entry, dataset, content.get("objective"))}
                        for entry in config_io.as_list(content["solver"])]}


def write_sidecar(config_path, sidecar, header_lines=()):
    """Write ``sidecar`` next to the config, with a comment header."""
    path = sidecar_path(config_path)
    lines = [f"Multipliers of {Path(config_path).name}: each step's value = "
             "multiplier x its solver's default rule on the instance below "
             "(benchmark_utils/tuning/multipliers.py)", *header_lines]
    header = "".join(f"# {line}".rstrip() + "\n" for line in lines)
    text = yaml.safe_dump(sidecar, sort_keys=False, width=10_000)
    path.write_text(header + text)
    return path


def write_for_config(config_path, header_lines=()):
    """Compute and write the sidecar of a tuned config (what the tuning
    command calls after writing it)."""
    content = config_io.read_config(config_path)
    return write_sidecar(config_path, config_multipliers(content),
                         header_lines)


def read_sidecar(config_path, content):
    """The sidecar of a tuned config, checked against it: the same
    entries, each step's value the config's (ValueError otherwise, naming
    the command that rewrites it)."""
    path = sidecar_path(config_path)
    rewrite = f"python -m benchmark_utils.tuning.multipliers {config_path}"
    if not path.is_file():
        raise ValueError(f"{config_path} has no multipliers ({path.name}): "
                         f"write them with {rewrite}")
    sidecar = yaml.safe_load(path.read_text())
    entries = [str(e) for e in config_io.as_list(content["solver"])]
    listed = [e["entry"] for e in sidecar["entries"]]
    stale = entries != listed or any(
        not math.isclose(step["value"],
                         float(config_io.parse_entry(e["entry"])[1][name]))
        for e in sidecar["entries"] for name, step in e["steps"].items())
    if stale:
        raise ValueError(f"{path.name} does not list {config_path}'s entries"
                         f" as they are: rewrite it with {rewrite}")
    return sidecar


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m benchmark_utils.tuning.multipliers",
        description="Write the sidecar <name>_multipliers.yml of tuned "
                    "configs (offline datasets only): each tuned step as a "
                    "multiplier of its solver's default rule on the "
                    "config's first dataset instance.")
    parser.add_argument("configs", nargs="+", metavar="TUNED")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    for config in args.configs:
        print(write_for_config(
            config, [f"Written by: python -m benchmark_utils.tuning."
                     f"multipliers {config}"]))


if __name__ == "__main__":
    main()
