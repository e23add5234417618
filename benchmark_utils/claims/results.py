"""Committed evidence: the compact results of one experiment's runs.

benchopt's result file carries 100+ columns per evaluation (every solver
parameter, the platform, per-row copies of each run's resolved steps);
``results/<experiment>/`` keeps what every number of docs/results.md is
computed from, small enough to commit:

* ``runs.csv.gz``: one row per evaluation: ``dataset``, ``solver`` (the
  names benchopt writes), ``rep``, ``iteration`` (benchopt's
  ``stop_val``), ``time``, the counters (``samples`` = upper + lower
  samples drawn, ``grad_evals``, ``value_evals``, ``hvp``, ``lmo``,
  ``projections``), ``diverged`` and every metric column, 6 significant
  digits (the tables print at most 4);
* ``params.csv``: one row per run: its resolved parameters and where each
  came from (the ``objective_resolved_*`` columns, constant along a run);
* ``meta.yml``: the config as run, the command, the commit (and whether
  the tree had uncommitted changes), the date, benchopt's version, the
  base seed, the size of the two tables, and the digests of the two
  tables, of the config file and of the code the run ran
  (benchmark_utils/claims/provenance.py).
"""
import datetime
import hashlib
import shutil
import subprocess
import zlib

import pandas as pd
import yaml

from benchmark_utils.sample_budget import SAMPLE_COLUMNS

RUN_KEYS = ["dataset", "solver", "rep"]
COUNTERS = {"objective_n_grad_evals": "grad_evals",
            "objective_n_value_evals": "value_evals",
            "objective_n_hvp": "hvp", "objective_n_lmo": "lmo",
            "objective_n_projections": "projections"}
RESOLVED = "objective_resolved_"
# columns of benchopt's rows that are bookkeeping, not evidence
DROPPED = ("objective_n_infeasible", "objective_budget_reached",
           "objective_diverged")
FLOAT_FORMAT = "%.6g"
FILES = ("runs.csv.gz", "params.csv", "meta.yml")
# the tables whose digests meta.yml pins
PINNED_FILES = FILES[:2]
# what a damaged file raises when read
UNREADABLE = (OSError, EOFError, zlib.error, UnicodeDecodeError,
              pd.errors.ParserError, pd.errors.EmptyDataError,
              yaml.YAMLError)


class EvidenceError(ValueError):
    """An experiment's evidence cannot be read or written."""


def check_writable(folder):
    """EvidenceError before any run where ``folder`` cannot be made: a
    file in its place or in place of one of its parents."""
    for path in (folder, *folder.parents):
        if path.exists():
            if not path.is_dir():
                raise EvidenceError(f"{folder} cannot be written: {path} is "
                                    "a file, not a folder")
            return


def make_folder(folder, option="--output"):
    """``folder`` created (with its parents), or an EvidenceError naming
    ``option`` and the reason where it cannot be (a file in its place or
    in place of a parent, a place no folder can be made)."""
    check_writable(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise EvidenceError(f"{option} {folder} cannot be created "
                            f"({error.strerror})") from None


def _metric_columns(df):
    return [c for c in df.columns if c.startswith("objective_")
            and not c.startswith(RESOLVED) and c not in COUNTERS
            and c not in SAMPLE_COLUMNS and c not in DROPPED
            and c != "objective_name"]


def compact(df):
    """``(runs, params)`` from a benchopt result table (module doc)."""
    runs = pd.DataFrame({
        "dataset": df["dataset_name"], "solver": df["solver_name"],
        "rep": df["idx_rep"].astype(int),
        "iteration": df["stop_val"].astype(int), "time": df["time"],
        "samples": sum(df[c] for c in SAMPLE_COLUMNS).astype(int),
        **{short: df[column].astype(int) for column, short in
           COUNTERS.items() if column in df.columns},
        "diverged": df.get("objective_diverged", 0),
        **{c.removeprefix("objective_"): df[c]
           for c in _metric_columns(df)},
    }).sort_values(RUN_KEYS + ["iteration"], kind="stable")
    resolved = [c for c in df.columns if c.startswith(RESOLVED)]
    last = (df.sort_values("stop_val", kind="stable")
            .groupby(["dataset_name", "solver_name", "idx_rep"], sort=True)
            .last().reset_index())
    params = pd.DataFrame({
        "dataset": last["dataset_name"], "solver": last["solver_name"],
        "rep": last["idx_rep"].astype(int),
        **{c.removeprefix(RESOLVED): last[c] for c in resolved}})
    return runs.reset_index(drop=True), params


def git_state(root):
    """``(commit, dirty)`` of the repository at ``root``: dirty where a
    tracked file outside results/ and docs/ (which claims runs write)
    differs from the commit."""
    def git(*args):
        return subprocess.run(["git", *args], cwd=root, capture_output=True,
                              text=True, check=True).stdout.strip()
    # what a claims run writes itself (results/, docs/) is not the code
    return git("rev-parse", "HEAD"), bool(git(
        "status", "--porcelain", "--untracked-files=no", "--", ".",
        ":!results", ":!docs"))


def file_digests(folder):
    """``{name: SHA-256}`` of the evidence tables in ``folder`` (None for
    one that is missing)."""
    return {name: hashlib.sha256((folder / name).read_bytes()).hexdigest()
            if (folder / name).is_file() else None
            for name in PINNED_FILES}


def write(folder, df, *, config, command, root, cpu_seconds=None,
          state=None, sources=None, cost=None):
    """Write ``results/<experiment>/`` (module doc) from the benchopt
    result table ``df`` of ``command`` run on ``config`` (a mapping);
    ``state``: the ``(commit, dirty)`` the run started from (default:
    the repository's now); ``sources``: the config and code digests
    (:func:`benchmark_utils.claims.provenance.sources`); ``cost``: how
    the run was made (its wall-clock seconds, benchopt's workers and the
    machine's load average at its start), for ``claims list``."""
    import benchopt

    check_writable(folder)
    # written beside, then swapped in: an interrupt leaves the old
    # evidence whole, never a new runs file beside an old meta.yml
    staging = folder.with_name(folder.name + ".writing")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    runs, params = compact(df)
    runs.to_csv(staging / "runs.csv.gz", index=False,
                float_format=FLOAT_FORMAT)
    params.to_csv(staging / "params.csv", index=False,
                  float_format=FLOAT_FORMAT)
    commit, dirty = state or git_state(root)
    meta = {
        "command": command,
        "commit": commit,
        "uncommitted_changes": dirty,
        "date": f"{datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC",
        "benchopt": benchopt.__version__,
        "base_seed": int(df["base_seed"].iloc[0]) if "base_seed" in df
        else None,
        "runs": int(len(params)), "evaluations": int(len(runs)),
        "cpu_seconds": None if cpu_seconds is None else round(cpu_seconds),
        **(cost or {}),
        "config": config,
        "digests": {"files": file_digests(staging), **(sources or {})},
    }
    (staging / "meta.yml").write_text(yaml.safe_dump(meta, sort_keys=False,
                                                     width=10_000))
    old = folder.with_name(folder.name + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if folder.exists():
        folder.rename(old)
    staging.rename(folder)
    shutil.rmtree(old, ignore_errors=True)
    return runs, params, meta


def all_runs_cpu_seconds(meta):
    """meta's CPU time for all its runs: where benchopt's cache gave
    ``cached_runs`` of them back (the same command resumed at the same
    commit after an interrupt), the measured time of the runs it computed,
    scaled by the run count (an estimate)."""
    seconds, cached = meta.get("cpu_seconds"), meta.get("cached_runs", 0)
    if seconds is None or not cached:
        return seconds
    return round(seconds * meta["runs"] / (meta["runs"] - cached))


def cost_statement(meta):
    """The CPU time a section states: measured, and for a resumed run what
    it counts."""
    cached = meta.get("cached_runs", 0)
    return f"{meta['cpu_seconds']} CPU-seconds" + (
        f" for the {meta['runs'] - cached} of its {meta['runs']} runs it "
        f"computed ({cached} from benchopt's cache of the same command "
        "interrupted at the same commit)" if cached else "")


# what the readers of the evidence index (a meta.yml without its digests
# is provenance's finding, with its own message)
META_KEYS = ("command", "commit", "runs", "cpu_seconds", "config")
RUNS_COLUMNS = ("dataset", "solver", "rep", "iteration", "time", "samples")
PARAMS_COLUMNS = ("dataset", "solver", "rep")


def read(folder):
    """``(runs, params, meta)`` of ``results/<experiment>/``;
    EvidenceError naming the file where one is missing, damaged or not
    of the form :func:`write` gives."""
    try:
        path = folder / "runs.csv.gz"
        runs = pd.read_csv(path)
        _require(path, runs.columns, RUNS_COLUMNS, "the columns")
        path = folder / "params.csv"
        params = pd.read_csv(path)
        _require(path, params.columns, PARAMS_COLUMNS, "the columns")
    except (*UNREADABLE, ValueError) as error:
        raise _damaged(path, error) from None
    return runs, params, read_meta(folder)


def read_meta(folder):
    """``results/<experiment>/meta.yml`` as a mapping; EvidenceError naming
    the file where it is missing, damaged or lacks a key readers use."""
    path = folder / "meta.yml"
    try:
        meta = yaml.safe_load(path.read_text())
        if not isinstance(meta, dict):
            raise ValueError(f"a {type(meta).__name__}, not a mapping")
        _require(path, meta, META_KEYS, "the keys")
        if not isinstance(meta["config"], dict):
            raise ValueError("its config is not a mapping")
    except (*UNREADABLE, ValueError) as error:
        raise _damaged(path, error) from None
    return meta


def _require(path, present, names, what):
    missing = [name for name in names if name not in present]
    if missing:
        raise ValueError(f"{path.name} lacks {what} {missing}")


def _damaged(path, error):
    # one line: a YAML error spans several
    reason = " ".join(str(error).split())
    return EvidenceError(
        f"{path} cannot be read ({type(error).__name__}: {reason}); "
        f"`python -m benchmark_utils.claims run {path.parent.name}` renews "
        "it")
