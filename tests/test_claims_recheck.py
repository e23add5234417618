"""``claims recheck`` (benchmark_utils/claims/recheck.py): a rerun of an
experiment's first repetitions at the current code keeps its evidence
only where every stored value but the clocks is the same, and then pins
the current code so that the section is no longer stale."""
import shutil

import pandas as pd
import pytest
import yaml

from benchmark_utils.claims import experiments, provenance, recheck, results

from conftest import ROOT


def frame(values, reps=(0, 1), cpu=1.0, solver="S[a=1]"):
    rows = []
    for rep in reps:
        for i, v in enumerate(values):
            rows.append({"dataset": "d", "solver": solver, "rep": rep,
                         "iteration": i, "time": 0.1 * i * cpu,
                         "cpu_time": 0.1 * i * cpu, "value": v})
    return pd.DataFrame(rows)


def test_the_same_values_with_other_clocks_are_the_same():
    assert recheck.differences(frame([3.0, 2.0]), frame([3.0, 2.0], cpu=2),
                               2) == []


def test_a_changed_value_names_its_entry():
    fresh = frame([3.0, 2.0])
    fresh.loc[(fresh["rep"] == 0) & (fresh["iteration"] == 1), "value"] = 2.5
    assert recheck.differences(frame([3.0, 2.0]), fresh, 1) == ["d | S[a=1]"]
    # a missing entry is a difference too
    assert recheck.differences(frame([3.0, 2.0]), frame(
        [3.0, 2.0], solver="T"), 1) == ["d | S[a=1]", "d | T"]


def test_only_the_rerun_repetitions_and_the_rows_both_reached_count():
    committed = frame([3.0, 2.0, 1.0])
    fresh = frame([3.0, 2.0], reps=(0,))     # a shorter run to its horizon
    assert recheck.differences(committed, fresh, 1) == []
    fresh.loc[0, "value"] = 9.0
    assert recheck.differences(committed, fresh, 1) == ["d | S[a=1]"]


@pytest.mark.parametrize("committed_bounds, rerun_bounds, too_far", [
    # at rounding level the bound moves with BLAS's threads (9.3e-15 then
    # 4.8e-15 on a row of the regularization evidence)
    ((9.27336e-15, 6.88539e-12), (4.81742e-15, 6.88502e-12), 1e-6),
    # where the solve stops at its cap, with its warm start (2.12e-4, then
    # 2.51e-4 and 8.61e-5 on reruns, MRBO on regularization): a certified
    # accuracy on the rerun is a difference
    ((1e-12, 2.12051e-4), (1e-12, 8.61086e-5), 1e-11)])
def test_the_inner_solves_accuracy_counts_by_whether_it_is_certified(
        committed_bounds, rerun_bounds, too_far):
    """The metrics' certified y*(x) accuracy: the same where both are at
    or below the rounding floor, or both above it (every other column the
    same); one on each side is a difference."""
    committed, fresh = frame([3.0, 2.0]), frame([3.0, 2.0])
    committed[recheck.INNER_TOLERANCE] = list(committed_bounds) * 2
    fresh[recheck.INNER_TOLERANCE] = list(rerun_bounds) * 2
    assert recheck.differences(committed, fresh, 1) == []
    fresh.loc[1, recheck.INNER_TOLERANCE] = too_far
    assert recheck.differences(committed, fresh, 1) == ["d | S[a=1]"]
    # a bound the rerun did not record is a difference too
    fresh.loc[1, recheck.INNER_TOLERANCE] = float("nan")
    assert recheck.differences(committed, fresh, 1) == ["d | S[a=1]"]


def test_an_entry_whose_speed_changed_against_the_others_is_named():
    committed = pd.concat([frame([3.0, 2.0], solver=s) for s in "ABC"])
    fresh = pd.concat([frame([3.0, 2.0], solver="A", cpu=2),
                       frame([3.0, 2.0], solver="B", cpu=2),
                       frame([3.0, 2.0], solver="C", cpu=3)])
    # the machine is twice as slow: A and B keep their ratio, C does not
    assert recheck.speed_changes(committed, fresh, 1) == [
        "d | C (CPU time x1.50 against the median entry)"]


def test_a_recheck_pins_the_current_code(tmp_path, monkeypatch):
    name = "abolfazli2023_coreset_fig1"
    copied = tmp_path / name
    shutil.copytree(ROOT / "results" / name, copied)
    monkeypatch.setattr(experiments.Experiment, "folder",
                        property(lambda self: tmp_path / self.name))
    meta_file = copied / "meta.yml"
    meta = yaml.safe_load(meta_file.read_text())
    # as if the evidence had run today's code but an older objective.py
    # (whether the committed evidence is fresh is claims check's business)
    meta["digests"]["code"] = provenance.code_digests(meta["config"])
    meta["digests"]["code"]["objective.py"] = "0" * 16
    meta_file.write_text(yaml.safe_dump(meta, sort_keys=False))
    assert provenance.stale_code(meta) == ["objective.py"]
    assert recheck.recheck(name) == []
    _, _, meta = results.read(copied)
    assert provenance.stale_code(meta) == []
    assert meta["rechecked"]["repetitions"] == 1
    assert "Code rechecked at commit" in provenance.recheck_text(meta)
    # the tables are untouched: their pinned digests still hold
    assert provenance.errors(experiments.experiment(name), meta) == []


def test_the_rerun_computes_its_references_afresh(tmp_path, monkeypatch):
    """A shared cache entry certified on an older instance differs at the
    floor of its accuracy: the rerun gets a cache of its own, in its work
    folder, as a clean worktree's run does."""
    from benchmark_utils.references.cache import CACHE_ENV
    seen = {}

    def captured(run_config, log_path, env=None):
        seen.update(env or {})
        raise RuntimeError("stop here")
    monkeypatch.setattr(recheck, "run_benchopt", captured)
    meta = {"config": {"n-repetitions": 1}}
    with pytest.raises(RuntimeError, match="stop here"):
        recheck.rerun(meta, 1, tmp_path)
    assert seen[CACHE_ENV] == str(tmp_path / "references")


def test_where_a_cpu_horizon_ended_one_run_only_its_flag_is_the_clocks():
    """A run continued to a CPU horizon flags budget_reached on its last
    row; where the rerun's clock ran out at a later evaluation, the
    committed last row is flagged and the rerun's same row is not: the
    clock's doing, not a difference. Every other value of that row, and
    the flag where both runs ended at one row, still count."""
    committed = frame([3.0, 2.0, 1.0], reps=(0,))
    committed["budget_reached"] = [0, 0, 1]
    fresh = frame([3.0, 2.0, 1.0, 0.5], reps=(0,))
    fresh["budget_reached"] = [0, 0, 0, 1]
    assert recheck.differences(committed, fresh, 1) == []
    assert recheck.differences(fresh, committed, 1) == []
    fresh.loc[2, "value"] = 1.5
    assert recheck.differences(committed, fresh, 1) == ["d | S[a=1]"]
    same_end = frame([3.0, 2.0, 1.0], reps=(0,))
    same_end["budget_reached"] = [0, 0, 0]
    assert recheck.differences(committed, same_end, 1) == ["d | S[a=1]"]


def test_a_difference_is_said_with_its_first_value():
    fresh = frame([3.0, 2.0])
    fresh.loc[(fresh["rep"] == 0) & (fresh["iteration"] == 1), "value"] = 2.5
    assert recheck.differences(frame([3.0, 2.0]), fresh, 1, detail=True) == [
        "d | S[a=1] (value at iteration 1: 2 committed, 2.5 rerun)"]


def test_a_size_set_at_the_last_iteration_is_the_clocks_there():
    """A schedule's size recorded at a run's last iteration (BSA's t_k,
    TTSA's depth bound) is where a CPU horizon ended the run: taken as the
    rerun's where the two runs ended at different iterations, compared
    where they ended at the same one; every other parameter still counts."""
    def params(k, steps, given=1.0):
        return pd.DataFrame([{
            "dataset": "d", "solver": "S[a=1]", "rep": 0, "step": given,
            "step_source": "given", "inner_steps": steps,
            "inner_steps_source": f"schedule: t_k at the last iteration "
                                  f"(k = {k})"}])
    runs, later = frame([3.0, 2.0, 1.0], reps=(0,)), frame(
        [3.0, 2.0, 1.0, 0.5], reps=(0,))
    committed, fresh = params(2, 10.0), params(3, 12.0)
    kept = recheck.clock_schedules(committed, fresh, runs, later)
    assert recheck.differences(kept, fresh, 1) == []
    # ended at one iteration: the size is the code's and is compared
    same = recheck.clock_schedules(committed, fresh, runs, runs)
    assert recheck.differences(same, fresh, 1) == ["d | S[a=1]"]
    # a given step that changed is a difference wherever the runs ended
    moved = recheck.clock_schedules(committed, params(3, 12.0, given=2.0),
                                    runs, later)
    assert recheck.differences(moved, params(3, 12.0, given=2.0), 1) == [
        "d | S[a=1]"]
