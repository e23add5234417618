"""``python -m benchmark_utils.claims check``: every generated section of
docs/results.md is what the committed evidence in results/ gives; an
edited number in the page or an edited value in results/ is caught. And
the reading of a claim on the runs' curves: diverged and unfinished runs
count as the worst value, never as their start."""
import dataclasses
import math
import shutil

import pandas as pd
import pytest

from benchmark_utils.claims import (
    causes,
    experiments,
    readings,
    results,
    sections,
    verdicts,
    working,
)
from benchmark_utils.claims.__main__ import main

from conftest import ROOT


def test_the_committed_page_is_what_the_evidence_gives(capsys):
    # the command recomputes every section once (sections.check) and
    # prints a line for each that differs
    assert main(["check"]) == 0, capsys.readouterr().out


def test_an_edited_number_in_the_page_is_caught(tmp_path):
    page = tmp_path / "results.md"
    text = sections.RESULTS_PAGE.read_text()
    marker = "| IBCG | "
    start = text.index(marker, text.index(sections.BEGIN.format(
        "abolfazli2023_coreset_paper")))
    end = text.index("|", start + len(marker))
    edited = text[:start + len(marker)] + "0.0157 [0.0157, 0.0157] " + (
        text[end:])
    assert edited != text
    page.write_text(edited)
    name = "abolfazli2023_coreset_paper"
    assert sections.check(page, names=[name]) == [name]
    sections.write(page, names=[name])
    assert page.read_text() == text


def test_an_edited_value_in_the_evidence_is_caught(tmp_path, monkeypatch):
    copied = tmp_path / "results"
    shutil.copytree(ROOT / "results", copied)
    monkeypatch.setattr(experiments.Experiment, "folder",
                        property(lambda self: copied / self.name))
    name = "abolfazli2023_coreset_fig1_paper"
    assert sections.check(names=[name]) == []
    runs_file = copied / name / "runs.csv.gz"
    runs = pd.read_csv(runs_file)
    last = runs["iteration"] == runs["iteration"].max()
    runs.loc[last & runs["solver"].str.startswith("IBCG"),
             "upper_gap_abs"] *= 1.5
    runs.to_csv(runs_file, index=False)
    assert sections.check(names=[name]) == [name]


def run_rows(values, diverged=None, x=(0, 10, 20, 30)):
    rows = []
    for rep, curve in enumerate(values):
        for i, (xi, v) in enumerate(zip(x[:len(curve)], curve,
                                        strict=True)):
            rows.append({"dataset": "d", "solver": "S[a=1]", "rep": rep,
                         "iteration": xi, "samples": xi, "time": xi / 10,
                         "m": v, "value": v, "diverged": int(
                             diverged is not None and diverged[rep] == i)})
    return pd.DataFrame(rows)


def test_diverged_and_unfinished_runs_count_as_the_worst():
    rows = run_rows([[4.0, 2.0, 1.0, 0.5], [4.0, 2.0], [4.0, 2.0, 3.0, 3.0]],
                    diverged=[None, None, 2])
    values = verdicts.per_run(rows, "m", "samples", 15)
    # read between the evaluations at 10 and 20 (log-linear); the second
    # run stopped at 10 (not reached); the third flagged its row at 20,
    # the first evaluation past 15: it may have diverged before
    assert values[0] == pytest.approx(math.sqrt(2.0))
    assert values[1] is None
    assert math.isnan(values[2])
    # the common time ignores the diverged run's early end
    rows = run_rows([[1.0, 1.0, 1.0, 1.0], [1.0, 1.0]], diverged=[None, 1])
    assert verdicts.common_end("time", rows) == pytest.approx(3.0)
    # and the common sample count of two methods: the smaller end
    assert verdicts.common_end("samples", rows, run_rows(
        [[1.0, 1.0, 1.0]])) == pytest.approx(20)


def test_a_claim_on_a_methods_own_progress_reads_its_start():
    """A method read at a fixed iteration (its start) against itself at
    the point: the start's values, whatever the axis; on the time axis
    the common time is the compared runs' end, not the start."""
    rows = run_rows([[4.0, 2.0, 1.0, 0.5]] * 10)
    method = verdicts.Method("S", ("S[",))
    start = verdicts.Method("S at its start", ("S[",), at_iteration=0)
    worse = verdicts.Claim("S gets worse", "m", start, method)
    a, b, point = verdicts.Reader(rows).point(worse, "time", None)
    assert a == [4.0] * 10 and point == pytest.approx(3.0)
    assert b == [pytest.approx(0.5)] * 10
    (verdict,) = verdicts.decide([worse], rows, [("samples", 30)])
    assert verdict.decided == "not confirmed"       # it improved
    stalls = verdicts.Claim("S stalls", "m", start, method, relation="on_par")
    assert verdicts.decide([stalls], rows, [("samples", 30)])[0].decided == (
        "not confirmed")
    # a claim about a method's own progress is tested where it does not
    # move: parity within the margin shown
    flat = run_rows([[4.0, 4.0, 4.0, 4.0]] * 10)
    assert verdicts.decide([stalls], flat, [("samples", 30)])[0].decided == (
        verdicts.ON_PAR)


def test_a_claim_about_a_method_that_does_not_work_is_not_testable():
    """T ends where it started (within the seeds' spread): every claim
    about it reads "not testable here" with the reason, is left out of
    the family, and the claims about working methods are decided; at a
    paper's own steps (judge_progress False) it is tested."""
    moving = run_rows([[4.0, 2.0, 1.0, 0.5 + 0.01 * i] for i in range(10)])
    still = run_rows([[4.0, 4.1, 3.9, 4.0 + 0.01 * i] for i in range(10)])
    still["solver"] = "T[a=1]"
    other = moving.assign(solver="U[a=1]", m=moving["m"] * 2,
                          value=moving["value"] * 2)
    runs = pd.concat([moving, still, other], ignore_index=True)
    s, t, u = (verdicts.Method(n, (f"{n}[",)) for n in "STU")
    claims = [verdicts.Claim("S below T", "m", s, t),
              verdicts.Claim("S below U", "m", s, u)]
    readings = [("samples", 30), ("iterations", 30)]
    found = verdicts.decide(claims, runs, readings)
    assert [v.decided for v in found] == [
        verdicts.NOT_TESTABLE, verdicts.CONFIRMED] * 2
    assert "T does not improve on its start" in found[0].reason
    assert found[0].comparison is None
    # one family over both readings, the untestable claims left out
    assert {v.family for v in found} == {2}
    tested = verdicts.decide(claims, runs, readings, judge_progress=False)
    assert tested[0].decided == verdicts.CONFIRMED and tested[0].family == 4
    # a method whose runs all diverged does not work either
    still["diverged"] = (still["iteration"] == 30).astype(int)
    progress = working.progress(still)
    assert not progress.works and "10 of 10 runs diverged" in (
        progress.text())


def test_the_evidence_stays_under_its_size_limit():
    total = sum(f.stat().st_size for f in (ROOT / "results").rglob("*")
                if f.is_file())
    assert total < sections.SIZE_LIMIT_MB * 1e6


def test_a_not_confirmed_verdict_names_its_cause_from_its_siblings(
        monkeypatch):
    """The paper's steps against the tuned run, the tuned run against a
    longer one: the defaults, the budget or the method, and the data
    beside it on a stand-in."""
    method = verdicts.Method("S", ("S[",))
    claim = verdicts.Claim("S below T", "m", method,
                           verdicts.Method("T", ("T[",)))
    exp = experiments.experiment("cao2023_regression_synthetic")
    paper = dataclasses.replace(exp, name=exp.name + "_paper",
                                source="paper", stand_in="")

    def verdict(decided, label="T"):
        # one claim key, the entry (its method b) named by ``label``
        entry = dataclasses.replace(claim, b=verdicts.Method(label, ("T[",)))
        return verdicts.Verdict(entry, "samples", 1.0, None, decided,
                                (0, 0), (0, 0))

    siblings = {}
    monkeypatch.setattr(
        causes, "sibling_verdicts", lambda name, axis, early: {
            causes._key(claim): (dataclasses.replace(exp, name=name), [
                verdict(d, f"T{i}" if len(siblings[name]) > 1 else "T")
                for i, d in enumerate(siblings[name])])}
        if name in siblings else {})
    assert causes.cause(exp, verdict("confirmed")) == ""
    assert causes.cause(exp, verdict("not confirmed")) == (
        "the method: tuned, at this budget (no longer run); or the data "
        "(stand-in)")
    siblings[exp.name + "_long"] = ["not confirmed"]
    assert causes.cause(exp, verdict("not confirmed")).startswith(
        "the method: tuned, also not at samples 1,000,000 (`"
        "cao2023_regression_synthetic_long`)")
    siblings[exp.name + "_long"] = ["inconclusive"]
    assert causes.cause(exp, verdict("not confirmed")).startswith(
        "undecided: inconclusive at samples 1,000,000 (`"
        "cao2023_regression_synthetic_long`)")
    siblings[exp.name + "_long"] = ["confirmed"]
    assert causes.cause(exp, verdict("not confirmed")).startswith(
        "the budget: confirmed at samples 1,000,000 (`"
        "cao2023_regression_synthetic_long`)")
    # on the longer run itself
    long = experiments.longer(exp, 10)
    assert causes.cause(long, verdict("not confirmed")) == (
        "the method: tuned, not at this longer budget either; or the data "
        "(stand-in)")
    siblings[exp.name + "_paper"] = ["confirmed"]
    assert causes.cause(exp, verdict("not confirmed")).startswith(
        "the defaults: confirmed with the paper's steps (`"
        "cao2023_regression_synthetic_paper`), not with tuned ones")
    # the paper's steps in two entries (short and long), one confirmed:
    # that one named, whichever comes last
    for order, held in ((["not confirmed", "confirmed"], "T1"),
                        (["confirmed", "not confirmed"], "T0")):
        siblings[exp.name + "_paper"] = order
        assert causes.cause(exp, verdict("not confirmed")).startswith(
            f"the defaults: confirmed with the paper's steps for {held} "
            "only (`cao2023_regression_synthetic_paper`)")
    siblings[exp.name + "_paper"] = ["not confirmed", "not confirmed"]
    assert causes.cause(exp, verdict("not confirmed")).startswith(
        "the budget")
    siblings[exp.name + "_paper"] = ["confirmed"]
    siblings[exp.name] = ["confirmed (ahead)"]
    assert causes.cause(paper, verdict("not confirmed")) == (
        "the defaults: confirmed with tuned steps "
        "(`cao2023_regression_synthetic`)")
    siblings[exp.name] = ["inconclusive"]
    assert causes.cause(paper, verdict("not confirmed")) == (
        "undecided: inconclusive with tuned steps "
        "(`cao2023_regression_synthetic`)")
    siblings[exp.name] = ["not confirmed"]
    assert causes.cause(paper, verdict("not confirmed")).startswith(
        "the method: tuned steps also not")


def test_an_instance_without_the_papers_effect_makes_no_claim_testable():
    """The paper's winning method must make the progress the paper
    reports (matrix completion: its normalized error well below its
    start); where it does not, every claim reads "not testable here" with
    the reason and the command that would test it."""
    falls = run_rows([[1.0, 0.6, 0.4, 0.3]] * 10)
    effect = verdicts.Effect(verdicts.Method("S", ("S[",)), "m", 0.5,
                                "the paper's figure", "a bigger run")
    assert verdicts.effect_shown(effect, falls) == ""
    stays = run_rows([[1.0, 0.95, 0.92, 0.9]] * 10)
    reason = verdicts.effect_shown(effect, stays)
    assert "ends at a median 0.9 of its start" in reason
    assert reason.endswith("a bigger run")
    claim = verdicts.Claim("S below its start", "m",
                           verdicts.Method("S at 0", ("S[",), 0),
                           verdicts.Method("S", ("S[",)))
    found = verdicts.decide([claim], stays, [("samples", 30)],
                            no_effect=reason)
    assert found[0].decided == verdicts.NOT_TESTABLE
    assert found[0].reason == reason


def test_a_claim_of_speed_is_also_read_at_the_early_point():
    """A claim of speed (``early``) is decided at the reading and again at
    the early point, in the same Holm family; other claims only at the
    reading; the early point is a tenth of the paper's axis budget."""
    fast = run_rows([[4.0, 1.0, 0.9, 0.8 + 0.01 * i] for i in range(10)])
    slow = run_rows([[4.0, 3.0, 1.0, 0.8 + 0.01 * i] for i in range(10)])
    slow["solver"] = "T[a=1]"
    runs = pd.concat([fast, slow], ignore_index=True)
    s, t = (verdicts.Method(n, (f"{n}[",)) for n in "ST")
    claims = [verdicts.Claim("S faster than T", "m", s, t, early=True),
              verdicts.Claim("S below T", "m", s, t)]
    found = verdicts.decide(claims, runs, [("samples", 30)],
                            early=("samples", 10))
    assert [(v.claim.text, v.target, v.early) for v in found] == [
        ("S faster than T", 30, False), ("S below T", 30, False),
        ("S faster than T", 10, True)]
    assert [v.decided for v in found] == [verdicts.INCONCLUSIVE] * 2 + [
        verdicts.CONFIRMED]
    assert {v.family for v in found} == {3}
    exp = experiments.experiment("cao2023_regression_synthetic")
    assert readings.early_reading(exp, runs) == ("samples", 100_000)
    assert any(c.early for c in exp.claims)


def test_a_time_axis_claim_is_read_at_the_cpu_horizon():
    """A paper that plots time: its claims are read at the experiment's
    horizon on the CPU clock (every run continued to it), then at the
    samples both methods reached; evidence without the CPU clock is read
    at the wall-clock common end and marked stale."""
    exp = dataclasses.replace(
        experiments.experiment("giangtran2025_dictionary_exact_lmo"),
        horizon=2.0, horizon_reason="a test's")
    rows = run_rows([[4.0, 2.0, 1.0, 0.5]] * 3)
    assert readings.claim_axes(exp, rows) == [("time", None),
                                              ("samples", 200_000)]
    assert "**Stale:** this evidence predates the horizon" in (
        readings.time_text(exp, rows))
    rows["cpu_time"] = rows["time"]
    assert readings.claim_axes(exp, rows) == [("cpu_time", 2.0),
                                              ("samples", None)]
    assert readings.table_point(exp, rows) == ("cpu_time", 2.0)
    text = readings.time_text(exp, rows)
    assert "continued to the horizon of 2 CPU-seconds (a test's)" in text
    assert "Stale" not in text
    # read at 1.5 CPU-s: between the evaluations at 1 and 2 (log-linear)
    assert verdicts.per_run(rows, "m", "cpu_time", 1.5)[0] == (
        pytest.approx(math.sqrt(2.0)))
    # every time-axis experiment but matrix completion (iterations or
    # seconds, whichever first: read at the common end) has its horizon
    for e in experiments.EXPERIMENTS.values():
        if e.axis == "time" and not e.base.startswith("abolfazli"):
            assert e.horizon and e.horizon_reason, e.name


def test_no_committed_verdict_involves_a_method_that_does_not_work():
    """Every confirmed or not-confirmed verdict of docs/results.md (tuned
    steps: a paper's own steps are the paper's finding) compares two
    methods whose evidence runs gain on their start beyond the seeds'
    spread."""
    checked = 0
    for exp in experiments.EXPERIMENTS.values():
        if exp.source == "paper" or not (exp.folder / "meta.yml").is_file():
            continue
        runs = results.read(exp.folder)[0]
        for v in causes.experiment_verdicts(exp, runs):
            if v.comparison is None or v.decided == verdicts.INCONCLUSIVE:
                continue
            for method in (v.claim.a, v.claim.b):
                if v.claim.a.at_iteration is None and (
                        v.claim.b.at_iteration is None):
                    rows = verdicts.select(runs, method, v.claim.dataset)
                    assert working.progress(rows, exp.score).works, (
                        exp.name, v.claim.text, method.label)
                    checked += 1
    assert checked > 100
