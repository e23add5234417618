"""Carry the steps tuned on a stand-in to the experiment it stands for.

Real data sets that cannot be downloaded where the tuning runs (MNIST,
Omniglot, WikiMath) are tuned on their stand-in (the digits, the synthetic
tasks or regression); ``python -m benchmark_utils.tune CONFIG
--transfer-from TUNED`` writes CONFIG's tuned config from the stand-in's
without running anything. Rule, entry by entry (the two configs list the
same solvers in the same order):

* every role-named step of the stand-in's tuned entry is taken, times the
  ratio of the two instances' scales for that step when the dataset
  declares them (``step_scales()``, read from the parameters only: e.g.
  hyper-cleaning's x step grows with n_train); a step the solver normalizes
  (``scale_free_steps()``, e.g. Adam on the hypergradient) and a dataset
  without the declaration: the value is copied;
* the other parameters are the target entry's own (e.g. VRBO's full batch
  is the real training set's size); the header lists where they differ.
"""
from benchmark_utils.tuning import config_io
from benchmark_utils.tuning.defaults import dataset_instances, solver_class
from benchmark_utils.tuning.grids import (
    STEP_PARAMETERS,
    plain_number,
    round_significant,
)


def instance_scales(dataset_entries, label):
    """The step scales shared by every instance a config's dataset entries
    select (``{}`` where the dataset declares none)."""
    scales = [dataset.step_scales() if hasattr(dataset, "step_scales")
              else {} for dataset in dataset_instances(dataset_entries)]
    if any(s != scales[0] for s in scales[1:]):
        raise ValueError(f"the {label} datasets' instances have different "
                         f"step scales ({scales}): transfer one at a time")
    return scales[0] if scales else {}


def transferred_entries(target, tuned):
    """``(entries, notes)``: the target config's solver entries with the
    stand-in's tuned steps (module doc), and one note per departure."""
    targets = config_io.as_list(target["solver"])
    sources = config_io.as_list(tuned["solver"])
    if len(targets) != len(sources):
        raise ValueError(f"--transfer-from must list the config's "
                         f"{len(targets)} solver entries in order, got "
                         f"{len(sources)}")
    to_scales = instance_scales(target["dataset"], "config's")
    from_scales = instance_scales(tuned["dataset"], "stand-in's")
    entries, notes = [], []
    for target_entry, source_entry in zip(targets, sources, strict=True):
        name, params = config_io.parse_entry(target_entry)
        source_name, source_params = config_io.parse_entry(source_entry)
        if name != source_name:
            raise ValueError(f"--transfer-from lists {source_name} where the"
                             f" config lists {name}: the same solvers, in "
                             "the same order")
        steps = {k: v for k, v in source_params.items()
                 if k in STEP_PARAMETERS}
        others = {k: v for k, v in params.items() if k not in STEP_PARAMETERS}
        scale_free = solver_class(name).get_instance(
            **others, **steps).scale_free_steps()
        moved = {}
        for step, value in steps.items():
            ratio = 1.0
            if step in to_scales and step in from_scales and \
                    step not in scale_free:
                ratio = to_scales[step] / from_scales[step]
            moved[step] = round_significant(value * ratio)
        entries.append(config_io.format_entry(name, {**others, **moved}))
        source_others = {k: v for k, v in source_params.items()
                         if k not in STEP_PARAMETERS}
        differ = sorted(k for k in others.keys() | source_others.keys()
                        if others.get(k) != source_others.get(k))
        if differ:
            there = ", ".join(f"{k}={source_others.get(k)}" for k in differ)
            notes.append(f"{entries[-1]}: the stand-in ran {there}")
        copied = [s for s in steps if s in scale_free]
        if copied:
            notes.append(f"{entries[-1]}: {', '.join(copied)} copied "
                         "(normalized by the solver)")
    return entries, notes


def rule_lines(target, tuned):
    """The header's statement of the scaling applied, step by step."""
    to_scales = instance_scales(target["dataset"], "config's")
    from_scales = instance_scales(tuned["dataset"], "stand-in's")
    ratios = {s: plain_number(round_significant(to_scales[s] / scale))
              for s, scale in from_scales.items() if s in to_scales}
    if not ratios:
        return ["Rule: the dataset declares no step scales: every step is "
                "the stand-in's value, copied"]
    return ["Rule: each step = the stand-in's value x the ratio of the two "
            "instances' declared scales (the dataset's step_scales()): "
            + ", ".join(f"{s} x {ratio}" for s, ratio in ratios.items())
            + "; steps a solver normalizes are copied"]
