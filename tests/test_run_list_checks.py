"""Every instance of a run is checked before its first run, and a solver
error shows in ``benchopt run``'s exit code only with benchopt's
``raise_on_error`` setting (``BENCHOPT_RAISE_ON_ERROR=1``).

In process: the run-list check on selections as benchopt's public
``check_*_patterns`` return them. End to end: three short ``benchopt run``
subprocesses on small
instances (the 2-D coreset toy, a 60 x 30 regression whose references take
a fraction of a second), started together so that they take the time of one."""
import os
import re
import subprocess
import sys

import pandas as pd
import pytest

from benchmark_utils.checks import run_list as run_validation
from benchmark_utils.checks.run_list import (
    RunListError,
    SampleCounts,
    check_run_list,
    expand_grid,
)
from benchmark_utils.solvers.steps import resolve_sizes

from conftest import ROOT, benchmark, component

QUICK_REGRESSION = {"n_samples": [150], "n_features": [80]}


def selection(kind, name, **grid):
    return (component(kind, name), grid)


def test_the_first_instance_built_checks_the_whole_run_list():
    datasets = [selection("dataset", "regression", **QUICK_REGRESSION),
                selection("dataset", "hyper_cleaning", corruption=["abc"]),
                selection("dataset", "quadratic", mu=[0.5, -1.0],
                          constraint=["none"])]
    solvers = [selection("solver", "SDBGD", outer_step=[1e-3, -1.0]),
               selection("solver", "F2SA")]
    with pytest.raises(RunListError) as raised:
        check_run_list(datasets, solvers)
    message = str(raised.value)
    assert message.startswith("3 instance(s) of this run cannot run")
    assert "dataset hyper_cleaning[" in message
    assert "corruption must be a number in [0.0, 1.0), got 'abc'" in message
    assert "mu=-1.0" in message and "mu must be a finite number > 0" in message
    assert "solver SDBGD[" in message and "outer_step=-1.0" in message
    assert "Error when initializing" not in message   # not benchopt's prefix


def test_every_bad_parameter_of_an_instance_is_named_at_once():
    """Two bad steps in one instance: both named in its one line (not the
    first only, found again after the user fixed it); a parameter valid on
    its own is not blamed."""
    solvers = [selection("solver", "SOBA", outer_step=[-1.0],
                         inner_step=[float("nan")], batch_size=[4])]
    with pytest.raises(RunListError) as raised:
        check_run_list([], solvers)
    message = str(raised.value)
    assert message.startswith("1 instance(s) of this run cannot run")
    assert "outer_step must be a finite number > 0, got -1.0" in message
    assert "inner_step must be a finite number > 0, got nan" in message
    assert "batch_size must" not in message


def test_a_parameter_valid_with_the_others_given_is_not_blamed():
    # each parameter checked alone against the class defaults would meet
    # the default exponents, not the given ones: a valid a blamed
    solvers = [selection("solver", "F2SA", noise_regime=["none"],
                         outer_step_exponent=[0.5], outer_step=[-1.0])]
    with pytest.raises(RunListError) as raised:
        check_run_list([], solvers)
    reasons = str(raised.value).splitlines()[1].split("]: ", 1)[1]
    assert reasons == "outer_step must be a finite number > 0, got -1.0"


def test_a_schedule_the_dataset_decides_is_checked_before_any_run():
    """IR-SCG's auto schedule is the convex one on the regression (its f is
    convex, declared with its sample counts): the exponent that schedule
    never reads is refused with the run list, not when that run starts;
    on the same run with schedule=nonconvex it is valid."""
    datasets = [selection("dataset", "regression", **QUICK_REGRESSION)]
    solvers = [selection("solver", "IR-SCG", outer_step_exponent=[0.5])]
    with pytest.raises(RunListError, match="outer_step_exponent is the "
                       "nonconvex schedule's"):
        check_run_list(datasets, solvers)
    check_run_list(datasets, [selection(
        "solver", "IR-SCG", outer_step_exponent=[0.5],
        schedule=["nonconvex"])])


@pytest.mark.parametrize("name, setting, grid, unread", [
    ("TTSA", {"step_rule": ["constant"]}, {"step_offset": [5]},
     "step_offset is not read with step_rule='constant'"),
    # every parameter only the cut reads, named in one line
    ("SBCGI", {"cut": [False]}, {"K0": [0.1], "lmo_backend": ["cvxpy"]},
     "lmo_backend and K0 are not read with cut=False"),
    ("SBCGF", {"warm_start_method": ["none"]}, {"warm_start_step": [2.0]},
     "warm_start_step is not read with warm_start_method='none'"),
    ("BiAdam", {"adaptive": ["identity"]},
     {"decay_x": [0.5], "adaptive_input": ["hypergradient"]},
     "decay_x and adaptive_input are not read with adaptive='identity'"),
    ("VR-BiAdam", {"adaptive": ["adagrad_norm"]}, {"decay_x": [0.5]},
     "decay_x is not read with adaptive='adagrad_norm'"),
])
def test_a_parameter_a_setting_makes_unread_is_refused(name, setting, grid,
                                                       unread):
    """Given with a value other than its default where the setting never
    reads it: refused with the run list, not ignored; at its default (the
    value it holds when not given) it passes, given or not."""
    with pytest.raises(RunListError) as raised:
        check_run_list([], [selection("solver", name, **setting, **grid)])
    assert unread in str(raised.value)
    klass = component("solver", name)
    at_default = {key: [klass.parameters[key][0]] for key in grid}
    check_run_list([], [selection("solver", name, **setting)])
    check_run_list([], [selection("solver", name, **setting, **at_default)])


def test_a_batch_larger_than_the_instance_is_found_before_any_run():
    """F3SA's and FSLA's default batch (64) on 30 samples, AmIGO's outer
    batch on 16 rows: known from the parameters, so reported up front with
    the other bad instances; a solver of the other family is not paired."""
    datasets = [selection("dataset", "quadratic", n_samples=[30],
                          constraint=["none"]),
                selection("dataset", "matrix_completion", n=[16]),
                selection("dataset", "hyper_cleaning", n_train=[300],
                          n_val=[40])]
    solvers = [selection("solver", "F3SA"), selection("solver", "FSLA"),
               selection("solver", "AmIGO", batch_size=[8],
                         outer_batch_size=[20]),
               selection("solver", "SDBGD", batch_size=[1000])]
    with pytest.raises(RunListError) as raised:
        check_run_list(datasets, solvers)
    message = str(raised.value)
    lines = message.splitlines()[1:]
    assert message.startswith("7 instance(s) of this run cannot run")
    for solver in ("F3SA", "FSLA"):
        for dataset in ("quadratic", "matrix_completion", "hyper_cleaning"):
            assert any(line.startswith(f"- solver {solver}[")
                       and f"on dataset {dataset}[" in line
                       and "batch_size must be an integer in [1, " in line
                       for line in lines), (solver, dataset)
    assert any("AmIGO[" in line and "matrix_completion[" in line
               and "outer_batch_size must be an integer in [1, 16]" in line
               for line in lines)
    assert "SDBGD" not in message


def test_each_batch_size_is_bounded_by_the_level_it_samples():
    # stocBiO's outer batch samples the upper level only: 200 of 500 upper
    # samples passes with 100 lower samples; its cross batch samples the
    # lower level: 200 is refused there
    counts = SampleCounts("general", 500, 100)
    stocbio = component("solver", "stocBiO")
    stocbio.get_instance(batch_size=8, outer_batch_size=200,
                         cross_batch_size=8,
                         hessian_batch_size=8).check_sample_counts(counts)
    with pytest.raises(ValueError, match=r"cross_batch_size .*\[1, 100\]"):
        stocbio.get_instance(batch_size=8, cross_batch_size=200
                             ).check_sample_counts(counts)


def test_a_default_size_is_checked_before_any_run():
    # IR-FSCG's default period floor(sqrt(n)) must be >= 2: a 3-sample
    # instance gives 1, refused from the sample counts alone (check_sizes)
    ir_fscg = component("solver", "IR-FSCG")
    ir_fscg.get_instance().check_sample_counts(SampleCounts("simple", 9, 9))
    with pytest.raises(ValueError, match=re.escape(
            "got 1 (the default: floor(sqrt(max(n_upper, n_lower))); pass "
            "period explicitly)")):
        ir_fscg.get_instance().check_sample_counts(
            SampleCounts("simple", 3, 3))
    # a default read from another parameter says so: AmIGO's outer batch is
    # its batch_size, which the lower level alone bounds
    amigo = component("solver", "AmIGO").get_instance(batch_size=16)
    with pytest.raises(ValueError, match=re.escape(
            "got 16 (the default: batch_size; pass outer_batch_size "
            "explicitly)")):
        amigo.check_sample_counts(SampleCounts("general", 10, 100))
    # a given size is refused without it
    with pytest.raises(ValueError, match=r"got 12$"):
        component("solver", "AmIGO").get_instance(
            batch_size=16, outer_batch_size=12).check_sample_counts(
            SampleCounts("general", 10, 100))


@pytest.mark.parametrize("solver", [
    s for s in benchmark().get_solvers() if s.size_rules],
    ids=lambda s: s.name)
def test_every_size_rule_runs_on_sample_counts(solver):
    # the run-list check resolves each size on a dataset's sample counts
    # (n_upper, n_lower, family only): a rule reading anything else would
    # end `benchopt run` in a traceback instead of a refusal line
    counts = SampleCounts(solver.family, 100, 100)
    solver.get_instance().check_sample_counts(counts)
    sizes = resolve_sizes(solver.size_rules, solver.get_instance(), counts)
    assert list(sizes) == [rule.name for rule in solver.size_rules]


def test_a_refused_dataset_adds_no_batch_lines():
    """A dataset refused for its own parameter (a NaN or string sample
    count, or zero samples) is reported once, with no batch-size line
    computed from its nonsense counts."""
    datasets = [selection("dataset", "regularization_selection",
                          n_train=[float("nan")]),
                selection("dataset", "hyper_cleaning", n_train=[0]),
                selection("dataset", "quadratic", n_samples=["abc"],
                          constraint=["none"])]
    with pytest.raises(RunListError) as raised:
        check_run_list(datasets, [selection("solver", "SOBA")])
    lines = str(raised.value).splitlines()[1:]
    assert len(lines) == 3 and all(line.startswith("- dataset ")
                                   for line in lines), lines
    assert "n_train must be an integer in [1, inf], got nan" in lines[0]


def test_a_valid_run_list_passes_and_expands_like_benchopt():
    datasets = [selection("dataset", "coreset_toy", mu_g=[1.0, 0.1])]
    solvers = [selection("solver", "IBCG", batch_size=[None])]
    check_run_list(datasets, solvers)
    grids = list(expand_grid(*datasets[0]))
    assert [grid["mu_g"] for grid in grids] == [1.0, 0.1]
    assert all(grid["L_g"] == 2.0 for grid in grids)   # the class default
    with pytest.raises(ValueError, match=r"unknown parameters \['nope'\]"):
        list(expand_grid(component("solver", "SOBA"), {"nope": [1]}))


def test_outside_a_run_nothing_is_checked_at_construction():
    run_validation.before_first_instance()   # no click run: a no-op
    dataset = component("dataset", "quadratic").get_instance(mu=-1.0)
    with pytest.raises(ValueError, match="mu must be"):
        dataset.check_parameters()
    # get_data checks first: the dataset is skipped with the reason
    assert "mu must be" in dataset.get_data()["dataset_failure"]


def test_the_check_uses_no_benchopt_internals():
    source = (ROOT / "benchmark_utils" / "checks" / "run_list.py").read_text()
    for private in ("_getframe", "_get_used_parameters", "_get_all_runs",
                    "save_parameters", "_get_data"):
        assert private not in source, private


# -- end to end ---------------------------------------------------------------

GOOD_SOLVER = "SDBGD"
# a bad value that needs the problem to be seen: IR-SCG's schedule is the
# convex one on a convex upper level (schedule="auto" decides it with the
# problem), whose weight exponent must lie in (0, 1/2); 0.7 is refused in
# set_objective, not when the run list is checked
PROBLEM_ERROR_SOLVER = "IR-SCG[upper_weight_exponent=0.7]"
SMALL_REGRESSION = "regression[n_samples=60,n_features=30]"
PROBLEM_ERROR = "upper_weight_exponent must be in (0, 0.5), got 0.7"
RUNS = {
    # a valid dataset first, then an invalid one; a valid solver first,
    # then an invalid one
    "invalid": (["coreset_toy", "hyper_cleaning[corruption=abc]"],
                [GOOD_SOLVER, "SDBGD[outer_step=-1]"], {}),
    "solver_error": ([SMALL_REGRESSION], [GOOD_SOLVER, PROBLEM_ERROR_SOLVER],
                     {}),
    "unknown_name": ([SMALL_REGRESSION], ["SOBA[outre_step=0.1]"], {}),
    "raise_on_error": ([SMALL_REGRESSION],
                       [GOOD_SOLVER, PROBLEM_ERROR_SOLVER],
                       {"BENCHOPT_RAISE_ON_ERROR": "1"}),
    # benchopt's own options, the later value of an option winning: every
    # bad one named, before any run (benchopt would save an empty result,
    # hang, or lose the runs at the save)
    "bad_options": ([SMALL_REGRESSION], [GOOD_SOLVER], {}, [
        "-n", "0", "-j", "0", "--timeout", "-5", "--output", "/proc/x"]),
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """name -> (exit code, output, parquet path) of each run of RUNS."""
    folder = tmp_path_factory.mktemp("run_validation")
    started = {}
    for name, (datasets, solvers, env, *extra) in RUNS.items():
        output = folder / f"{name}.parquet"
        args = [sys.executable, "-m", "benchopt", "run", ".", "--no-plot",
                "--no-cache", "-n", "1", "-r", "1", "--timeout", "10",
                "--output", str(output)]
        args += [a for d in datasets for a in ("-d", d)]
        args += [a for s in solvers for a in ("-s", s)]
        args += extra[0] if extra else []
        started[name] = (subprocess.Popen(
            args, cwd=ROOT, env=dict(os.environ, **env), text=True,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT), output)
    results = {}
    for name, (process, output) in started.items():
        text, _ = process.communicate(timeout=300)
        results[name] = (process.returncode, text, output)
    return results


def test_invalid_instances_fail_the_run_before_any_solver_runs(runs):
    code, text, output = runs["invalid"]
    assert code == 1
    assert "Traceback" not in text      # the list alone
    assert "2 instance(s) of this run cannot run" in text
    assert "corruption must be a number in [0.0, 1.0), got 'abc'" in text
    assert "step must be a finite number > 0, got -1" in text
    # nothing ran: benchopt shows the first dataset and objective it
    # builds (the check runs in its get_data), and no solver line
    assert "  |--Bilevel" in text
    assert not re.search(r" {4}\|--", text)    # a solver's line
    assert not output.exists()


def test_an_unknown_parameter_name_gets_the_closest_and_no_traceback(runs):
    code, text, output = runs["unknown_name"]
    assert code == 1
    assert "Traceback" not in text
    assert ("Unknown parameter 'outre_step' for solver SOBA (did you mean "
            "'outer_step'?).") in text
    assert "- outer_step" in text
    assert not output.exists()


@pytest.mark.parametrize("kind, pattern, closest", [
    ("solver", "SOAB", "SOBA"), ("dataset", "quadratc", "quadratic")])
def test_an_unknown_class_name_gets_the_closest(kind, pattern, closest):
    """benchopt answers an unknown class name with its usage (exit 2) and
    no hint; the selection's check in the objective's hook answers it
    first, through the same exit as an unknown parameter name (tested end
    to end below)."""
    class Context:
        params = {"benchmark": str(ROOT), "solver": (), "dataset": (),
                  "objective": (), kind: (pattern,)}
    with pytest.raises(RunListError) as raised:
        run_validation.selected_instances(Context())
    first = str(raised.value).splitlines()[0]
    assert first == (f"Patterns [{pattern!r}] did not match any {kind} "
                     f"(did you mean {closest!r}?).")


def test_every_unknown_name_of_the_selection_is_named_at_once():
    # benchopt stops at the first: one more attempt per mistake
    class Context:
        params = {"benchmark": str(ROOT), "solver": ("SOAB",),
                  "dataset": ("quadratic[bogus=1]",),
                  "objective": ("Bilevel[nosuch=1]",)}
    with pytest.raises(RunListError) as raised:
        run_validation.selected_instances(Context())
    assert str(raised.value).splitlines() == [
        "3 unknown name(s) in this run's selection:",
        "- Unknown parameter 'bogus' for dataset quadratic.",
        "- Patterns ['SOAB'] did not match any solver (did you mean "
        "'SOBA'?).",
        "- Unknown parameter 'nosuch' for objective Bilevel."]


def test_an_unknown_name_comes_with_the_known_instances_mistakes():
    # the known names' instances are checked in the same message; a kind
    # whose only name is unknown selects nothing (no default instance)
    class Context:
        params = {"benchmark": str(ROOT), "solver": ("SOBA[outer_step=-1]",),
                  "dataset": ("quadratic[bogus=1]",), "objective": ()}
    with pytest.raises(RunListError) as raised:
        run_validation.selected_instances(Context())
    lines = str(raised.value).splitlines()
    assert lines[:3] == [
        "1 unknown name(s) in this run's selection:",
        "- Unknown parameter 'bogus' for dataset quadratic.",
        "1 instance(s) of this run cannot run, so nothing was run; fix or "
        "remove them:"]
    assert lines[3].startswith("- solver SOBA[") and lines[3].endswith(
        "outer_step must be a finite number > 0, got -1")
    assert len(lines) == 4


def test_bad_benchopt_options_are_refused_before_any_run(runs):
    code, text, _ = runs["bad_options"]
    assert code == 1
    assert "Traceback" not in text
    for line in ("--max-runs (-n) must be an integer in [1, 1000000], got 0",
                 "--n-jobs (-j) must be a nonzero integer",
                 "--timeout must be a duration of at least 1 s",
                 "--output /proc/x: no file can be created in /proc"):
        assert line in text, line
    assert "  |--Bilevel" not in text       # no dataset was built


def test_a_solver_error_is_shown_the_parquet_kept_and_the_exit_code_0(runs):
    code, text, output = runs["solver_error"]
    assert code == 0
    assert PROBLEM_ERROR in text
    assert "error" in text
    solvers = set(pd.read_parquet(output)["solver_name"])
    assert {name.split("[")[0] for name in solvers} == {"SDBGD"}


def test_raise_on_error_makes_a_solver_error_fail_the_run(runs):
    code, text, output = runs["raise_on_error"]
    assert code != 0
    assert PROBLEM_ERROR in text
    # the run stops at the error: what ran before it is not saved
    assert not output.exists()


def test_every_batch_size_is_checked_before_any_run():
    """VRBO's large batch and a simple solver's batch on the regression
    (whose split is known from its parameters) are refused up front."""
    datasets = [selection("dataset", "quadratic", dim_x=[5], dim_y=[4],
                          n_samples=[30], constraint=["none"]),
                selection("dataset", "regression", n_samples=[90],
                          n_features=[45])]
    solvers = [selection("solver", "VRBO", large_batch_size=[1000]),
               selection("solver", "SBCGI", batch_size=[100000])]
    with pytest.raises(RunListError) as raised:
        check_run_list(datasets, solvers)
    message = str(raised.value)
    assert "large_batch_size must be an integer in [1, 30], got 1000" in (
        message)
    assert "batch_size must be an integer in [1, 30], got 100000" in message
