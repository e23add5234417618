"""The steps of a comparison on one experiment, each written to the output
folder when it ends (so an interrupted comparison resumes at the step it
was in, and a finished step never runs twice):

1. **tune**: the tuning command on the experiment's tuning source config
   with the new solver as its only entry (with the settings the
   experiment's entries share, plan.new_entry) and the shipped tuning's
   protocol options (plan.protocol_options), into ``tuned/NAME.yml`` (with
   its score table): the same grid rule, tuning seeds and instances,
   criterion and budget as the shipped methods, nothing shipped touched;
2. **run**: the evidence's own config (meta.yml: instances, budget,
   repetitions, seed) with the tuned entry, into ``results/NAME/`` (the
   evidence's format). On an experiment read on a clock, the shipped
   methods run beside it, on this machine (a time from another machine is
   never compared), from the experiment's config as ``claims run`` runs it
   now;
3. **check** (sample and iteration axes, where the shipped evidence is
   reused): the shipped entry of median cost rerun for one repetition
   here; every stored value must equal the committed evidence's
   (claims.recheck.differences), or the experiment is refused.
"""
import tempfile
from pathlib import Path

import pandas as pd
import yaml
from benchopt.results import read_results

from benchmark_utils.claims import provenance, recheck, results
from benchmark_utils.compare import plan
from benchmark_utils.tuning import cli as tuning_cli
from benchmark_utils.tuning.config_io import read_config
from benchmark_utils.tuning.defaults import ROOT
from benchmark_utils.tuning.runner import CostMeter, run_benchopt


class Folder:
    """The paths of a comparison's output folder."""

    def __init__(self, root):
        self.root = Path(root)

    def source(self, name):
        return self.root / "configs" / f"{name}.yml"

    def run_config(self, name):
        return self.root / "configs" / f"{name}_evidence.yml"

    def tuned(self, name):
        return self.root / "tuned" / f"{name}.yml"

    def evidence(self, name):
        return self.root / "results" / name

    def check(self, name):
        return self.root / "checks" / f"{name}.yml"


def tuned_entry(folder, comparison):
    """The new solver's tuned entry (its tuned config's only one)."""
    content = yaml.safe_load(folder.tuned(comparison.name).read_text())
    return content["solver"][0]


def tune(folder, comparison, solver, parallel):
    """Step 1 (module doc); the tuning's argv."""
    tuned = folder.tuned(comparison.name)
    source = folder.source(comparison.name)
    argv = [str(source.relative_to(ROOT) if source.is_relative_to(ROOT)
                else source), *comparison.options, "--output", str(tuned),
            *_parallel_argv(parallel)]
    if tuned.is_file():
        return argv
    content = read_config(comparison.source)
    content["solver"] = [plan.new_entry(solver, content["solver"])]
    source.parent.mkdir(parents=True, exist_ok=True)
    source.write_text(
        f"# {comparison.source.relative_to(ROOT)} with {solver} as its "
        "only solver (python -m benchmark_utils.compare)\n"
        + yaml.safe_dump(content, sort_keys=False))
    tuned.parent.mkdir(parents=True, exist_ok=True)
    tuning_cli.main(argv)
    return argv


def _parallel_argv(parallel):
    argv = []
    if parallel.get("parallel-config"):
        argv += ["--parallel-config", parallel["parallel-config"]]
    if parallel.get("n-jobs"):
        argv += ["--n-jobs", str(parallel["n-jobs"])]
    return argv


def run(folder, comparison, entry, parallel):
    """Step 2 (module doc): the runs, as ``runs`` of the evidence format
    (the new solver's, or on a clock every method's)."""
    name = comparison.name
    evidence = folder.evidence(name)
    if not (evidence / "meta.yml").is_file():
        # on a clock every method reruns: the experiment's config as it
        # is now, else the evidence's own (what the reused runs ran)
        config = (provenance.evaluation_config(comparison.exp)
                  if comparison.on_time else dict(comparison.meta["config"]))
        shipped = list(config["solver"]) if comparison.on_time else []
        config["solver"] = [*shipped, entry]
        path = folder.run_config(name)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(config, sort_keys=False))
        df, cpu = _benchopt(config, parallel)
        results.write(evidence, df, config=config, root=ROOT,
                      cpu_seconds=cpu, command="python -m benchopt run . "
                      f"--config {shown(path)}")
    return results.read(evidence)[0]


def shown(path):
    return path.relative_to(ROOT) if path.is_relative_to(ROOT) else path


def _benchopt(config, parallel=None):
    """benchopt run on ``config``: its result table and CPU time."""
    with tempfile.TemporaryDirectory() as work:
        work = Path(work)
        output = work / "run.parquet"
        (work / "run.yml").write_text(yaml.safe_dump(
            {**config, "output": str(output), "plot": False,
             "display": False, **(parallel or {})}))
        meter = CostMeter()
        run_benchopt(work / "run.yml", work / "run.log")
        return read_results(str(output)), meter.cpu_seconds()


def check(folder, comparison):
    """Step 3 (module doc): [] where the shipped evidence reproduces here
    (recorded), else the lines naming what differs."""
    path = folder.check(comparison.name)
    if path.is_file():
        return yaml.safe_load(path.read_text())["differs"]
    committed, params, _ = results.read(comparison.exp.folder)
    entry = comparison.reference
    config = {**comparison.meta["config"], "solver": [entry],
              "n-repetitions": 1}
    df, _ = _benchopt(config)
    fresh, fresh_params = (recheck.stored(frame)
                           for frame in results.compact(df))
    # the entry's own rows, without the columns only other entries fill
    committed, params = (frame[frame["solver"] == entry].dropna(
        axis=1, how="all") for frame in (committed, params))
    wrong = recheck.differences(committed, fresh, 1)
    wrong += [f"{e} (resolved parameters)" for e in recheck.differences(
        params, fresh_params, 1) if e not in wrong]
    if not wrong:       # a failure is checked again on the next try
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump({"rerun": entry, "repetitions": 1,
                                        "differs": []}, sort_keys=False))
    return wrong


def compared_runs(folder, comparison, mine):
    """The runs the verdicts read: on a clock this machine's rerun of
    every method, else the committed evidence with the new solver's."""
    if comparison.on_time:
        return mine
    committed = results.read(comparison.exp.folder)[0]
    return pd.concat([committed, mine], ignore_index=True)


def solver_name(runs, solver):
    """The benchopt name of ``solver``'s runs among ``runs`` (on a clock
    they hold every method's: never the first row's)."""
    names = [name for name in runs["solver"].unique()
             if name == solver or name.startswith(f"{solver}[")]
    if len(names) != 1:
        raise ValueError(f"{solver}: {len(names)} entries of it in the "
                         f"runs ({names[:3]}), one expected")
    return names[0]


def write_verdicts(path, parts):
    """Every standing as a table (one row per method, metric and
    reading), beside the page."""
    rows = [{"experiment": comparison.name, "against": s.other,
             "dataset": s.dataset, "metric": s.metric, "axis": s.axis,
             "point": s.point,
             "standing": s.word, "reason": s.reason}
            for comparison, _, _, found, _ in parts for s in found]
    pd.DataFrame(rows).to_csv(path, index=False)
