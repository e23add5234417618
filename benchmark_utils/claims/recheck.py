"""``claims recheck NAME``: keep evidence whose code changed without
changing what it computes.

A section goes **Stale** when a file of the code its evidence ran changes
(:mod:`~benchmark_utils.claims.provenance`), even for a change that leaves
every number as it was (a rename, a docstring, a moved helper). A recheck
reruns the evidence's own config (never the config file's current one: a
changed config needs a new run) at the current code for its first
``repetitions`` repetitions (seeds are per repetition, so repetition 0 of the
rerun is repetition 0 of the evidence) and compares, entry by entry, every
stored column but the clocks (``time``, ``cpu_time``) and every resolved
parameter, as stored (6 significant digits; the metrics' certified inner
accuracy by whether it is certified, ``INNER_TOLERANCE_FLOOR``). A run
continued to a CPU horizon ends where the clock says, so there the rows both
runs reached are compared, the ``budget_reached`` flag aside on the row where
only one of the two ended. The rerun computes its references afresh, as the
evidence's run did in its clean worktree (:func:`fresh_references`). Where all
are the same, meta.yml pins the current code's digests and records the recheck
(commit, date, repetitions, rows compared), and the section says so; otherwise
nothing changes and each differing entry is named. On an experiment read on
time, the recheck also compares each entry's CPU time per iteration with the
others' (the machine's speed cancels): an entry more than ``SPEED_TOLERANCE``
apart from the median entry changed speed, which a time-axis verdict reads, and
fails the recheck."""
import datetime
import io
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import yaml
from benchopt.results import read_results

from benchmark_utils.claims import provenance, results
from benchmark_utils.claims.experiments import experiment
from benchmark_utils.references.cache import CACHE_ENV
from benchmark_utils.solvers.steps import SCHEDULE_SOURCE
from benchmark_utils.tuning.defaults import ROOT
from benchmark_utils.tuning.runner import run_benchopt

CLOCKS = ("time", "cpu_time")
SPEED_TOLERANCE = 0.25      # relative, against the median entry's ratio
# the certified accuracy of the metrics' iterative y*(x) solve
# (benchmark_utils/metrics.py), a bound from a residual norm: at or below
# the floor its digits are rounding (measured: 9.3e-15 then 4.8e-15 on one
# row, with BLAS's threads), and above it the solve stopped at its cap
# (a badly conditioned x), where the residual it reaches depends on its
# warm start, the previous solve of the process, so on the runs before it:
# a 1-repetition rerun gave 2.51e-4, then 8.61e-5, for a committed 2.12e-4
# on regularization MRBO, every other column the same. What a rerun
# reproduces is whether the accuracy is certified: two values compare as
# equal where both are at or below the floor, or both above it
INNER_TOLERANCE = "inner_tolerance"
INNER_TOLERANCE_FLOOR = 1e-10
# 1 on the row where a run's budget ended it: where a CPU horizon ends one
# run of the pair at a row the other went past, the clock's, not compared
BUDGET_REACHED = "budget_reached"


def stored(frame):
    """``frame`` as the evidence stores it (results.FLOAT_FORMAT)."""
    buffer = io.StringIO()
    frame.to_csv(buffer, index=False, float_format=results.FLOAT_FORMAT)
    buffer.seek(0)
    return pd.read_csv(buffer)


def differences(committed, fresh, repetitions, detail=False):
    """The entries (``dataset | solver``) of the first ``repetitions``
    repetitions whose stored rows differ between ``committed`` and
    ``fresh`` (both as stored), clocks aside, over the rows both have;
    ``detail``: each with its first differing value (first_difference)."""
    committed = committed[committed["rep"] < repetitions]
    fresh = fresh[fresh["rep"] < repetitions]
    columns = [c for c in committed.columns if c not in CLOCKS]
    wrong = []
    keys = results.RUN_KEYS[:2]
    entries = set(map(tuple, committed[keys].drop_duplicates().values))
    entries |= set(map(tuple, fresh[keys].drop_duplicates().values))
    for entry in sorted(entries):
        a, b = (_entry_rows(frame, entry) for frame in (committed, fresh))
        dataset, solver = entry
        if set(columns) - set(fresh.columns) or a.empty or b.empty:
            wrong.append(f"{dataset} | {solver}")
            continue
        ends = {}
        if "iteration" in a:     # the rows both reached
            common = np.intersect1d(a["iteration"], b["iteration"])
            ends = _clock_ends(a, b)
            a, b = (f[f["iteration"].isin(common)] for f in (a, b))
        a, b = (_numbers(f, columns) for f in (a, b))
        if len(a) == len(b):
            _tolerate(a, b, ends)
        if not a.equals(b):
            wrong.append(f"{dataset} | {solver}" + (
                f" ({first_difference(a, b)})" if detail else ""))
    return wrong


def clock_schedules(params, fresh_params, runs, fresh_runs):
    """``params`` with the sizes a schedule set at a run's last iteration
    (a source ``schedule: ... at the last iteration``) taken from
    ``fresh_params`` where the run and its rerun ended at different
    iterations: a CPU horizon ends a run where the clock says, so there the
    size is the clock's, not the code's (as the budget flag in
    :func:`differences`)."""
    keys = list(results.RUN_KEYS)
    ends, fresh_ends = (frame.groupby(keys)["iteration"].max()
                        for frame in (runs, fresh_runs))
    moved = {key for key in ends.index
             if key in fresh_ends.index and ends[key] != fresh_ends[key]}
    sources = [c for c in params.columns if c.endswith("_source")
               and params[c].astype(str).str.startswith(SCHEDULE_SOURCE).any()]
    if not moved or not sources:
        return params
    params = params.copy()
    merged = params[keys].merge(fresh_params, on=keys, how="left")
    rows = [i for i, key in enumerate(map(tuple, params[keys].values))
            if key in moved]
    for source in sources:
        for column in (source, source[:-len("_source")]):
            if column in merged:
                params.iloc[rows, params.columns.get_loc(column)] = (
                    merged[column].iloc[rows].to_numpy())
    return params


def first_difference(a, b):
    """Where two entries' rows first differ, said in words: the row count,
    or the column, row and both values (committed, then rerun)."""
    if len(a) != len(b) or list(a.columns) != list(b.columns):
        return f"{len(a)} rows committed, {len(b)} rerun"
    for column in a.columns:
        same = (a[column] == b[column]) | (a[column].isna()
                                           & b[column].isna())
        if not same.all():
            row = int(np.argmin(same.to_numpy()))
            where = (f"iteration {a['iteration'].iloc[row]:g}"
                     if "iteration" in a else f"row {row}")
            values = (a[column].iloc[row], b[column].iloc[row])
            if all(isinstance(v, float | np.floating) for v in values):
                values = [f"{v:.6g}" for v in values]
            return (f"{column} at {where}: {values[0]} committed, "
                    f"{values[1]} rerun")
    return "the same values, another layout"


def _tolerate(a, b, ends):
    """Copy into ``a`` the cells of ``b`` that differ only by what the
    machine moves, not the code: the budget flag on a row where a CPU
    horizon (``ends``) ended one run of the pair only, and an inner
    accuracy on the same side of its floor (INNER_TOLERANCE_FLOOR)."""
    if BUDGET_REACHED in a:
        ended = _rows_at(a, ends)
        a.loc[ended, BUDGET_REACHED] = b.loc[ended, BUDGET_REACHED]
    if INNER_TOLERANCE in a:
        close = _same_bound(a[INNER_TOLERANCE], b[INNER_TOLERANCE])
        a.loc[close, INNER_TOLERANCE] = b.loc[close, INNER_TOLERANCE]


def _clock_ends(a, b):
    """``{rep: iteration}``: where one run of the pair ended and the other
    went on (a CPU horizon, reached at another evaluation on each run)."""
    a_end, b_end = (f.groupby("rep")["iteration"].max() for f in (a, b))
    return {rep: min(a_end[rep], b_end[rep]) for rep in a_end.index
            if rep in b_end.index and a_end[rep] != b_end[rep]}


def _rows_at(frame, ends):
    """The labels of ``frame``'s rows at ``ends`` (rep -> iteration)."""
    return [label for label, rep, iteration in zip(
        frame.index, frame["rep"], frame["iteration"], strict=True)
        if ends.get(rep) == iteration]


def _numbers(frame, columns):
    """``frame``'s ``columns``, numbers as floats: a column read from
    fewer rows may be integer where the committed one is float (2 and
    2.0 are one value)."""
    frame = frame[columns].reset_index(drop=True)
    return frame.apply(lambda column: column.astype(float) if
                       pd.api.types.is_numeric_dtype(column) else column)


def _same_bound(a, b):
    """Where two inner_tolerance columns certify the same accuracy: both
    at or below the floor, or both above it (see INNER_TOLERANCE_FLOOR); a
    missing value (NaN) is neither, so it matches only a missing one, in
    the exact comparison."""
    floor = INNER_TOLERANCE_FLOOR
    return ((a <= floor) & (b <= floor)) | ((a > floor) & (b > floor))


def _entry_rows(frame, entry):
    """The rows of one ``(dataset, solver)`` entry, in run order."""
    chosen = frame[(frame["dataset"] == entry[0])
                   & (frame["solver"] == entry[1])]
    return chosen.sort_values(results.RUN_KEYS[2:] + (
        ["iteration"] if "iteration" in frame else []))


def speed_changes(committed, fresh, repetitions):
    """The entries whose CPU time at their last common row, rerun over
    committed, is more than SPEED_TOLERANCE from the median entry's."""
    if "cpu_time" not in committed or "cpu_time" not in fresh:
        return []
    ratios = {}
    for (dataset, solver), a in committed[committed["rep"] < repetitions]\
            .groupby(["dataset", "solver"]):
        b = fresh[(fresh["dataset"] == dataset) & (fresh["solver"] == solver)
                  & (fresh["rep"] < repetitions)]
        merged = a.merge(b, on=["rep", "iteration"], suffixes=("_a", "_b"))
        merged = merged[merged["cpu_time_a"] > 0]
        if len(merged):
            last = merged.sort_values("iteration").groupby("rep").last()
            ratios[f"{dataset} | {solver}"] = float(np.median(
                last["cpu_time_b"] / last["cpu_time_a"]))
    if not ratios:
        return []
    middle = float(np.median(list(ratios.values())))
    return [f"{entry} (CPU time x{ratio / middle:.2f} against the median "
            "entry)" for entry, ratio in ratios.items()
            if abs(ratio / middle - 1) > SPEED_TOLERANCE]


def rerun(meta, repetitions, work):
    """The evidence's config rerun for ``repetitions`` repetitions at the
    current code: ``(runs, params)`` as stored."""
    output = work / "recheck.parquet"
    config = {**meta["config"], "n-repetitions": repetitions,
              "output": str(output), "plot": False, "display": False}
    (work / "run.yml").write_text(yaml.safe_dump(config))
    run_benchopt(work / "run.yml", work / "run.log", env=fresh_references(
        work))
    runs, params = results.compact(read_results(str(output)))
    return stored(runs), stored(params)


def fresh_references(work):
    """The environment of a run whose references are computed afresh in
    ``work`` (as in a fresh clone) rather than read from the shared cache,
    where an entry certified on an older instance differs at the floor of
    its accuracy (benchmark_utils/references/cache.py)."""
    return {CACHE_ENV: str(work / "references")}


def recheck(name, repetitions=1):
    """Recheck ``name``'s evidence (module doc); the lines naming what
    differs ([] where it was kept and meta.yml updated)."""
    exp = experiment(name)
    committed, params, meta = results.read(exp.folder)
    errors = provenance.errors(exp, meta)
    if errors:
        raise ValueError("; ".join(errors))
    if provenance.config_changed(exp, meta):
        raise ValueError(f"{exp.config} gives another config than the "
                         f"evidence ran: `python -m benchmark_utils.claims "
                         f"run {name}` renews it")
    if not 1 <= repetitions <= meta["config"]["n-repetitions"]:
        raise ValueError(f"repetitions must be in [1, "
                         f"{meta['config']['n-repetitions']}], got "
                         f"{repetitions}")
    with tempfile.TemporaryDirectory() as work:
        fresh, fresh_params = rerun(meta, repetitions, Path(work))
    wrong = differences(committed, fresh, repetitions, detail=True)
    named = {line.split(" (")[0] for line in wrong}
    params = clock_schedules(params, fresh_params, committed, fresh)
    wrong += [f"{line} (resolved parameters)" for line in differences(
        params, fresh_params, repetitions, detail=True)
        if line.split(" (")[0] not in named]
    if exp.axis == "time":
        wrong += speed_changes(committed, fresh, repetitions)
    if wrong:
        return wrong
    state = results.git_state(ROOT)
    meta["digests"]["code"] = provenance.code_digests(meta["config"])
    meta["rechecked"] = {
        "commit": state[0], "uncommitted_changes": state[1],
        "date": f"{datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC",
        "repetitions": repetitions,
        "rows": int((fresh["rep"] < repetitions).sum())}
    (exp.folder / "meta.yml").write_text(yaml.safe_dump(
        meta, sort_keys=False, width=10_000))
    return []
