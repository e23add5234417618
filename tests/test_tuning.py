"""The tuning command (benchmark_utils/tuning, docs/tuning.md): its grids,
its scores and selection, the tuned config it writes, and one end-to-end
run on a tiny config."""
import math
import os
import re
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import yaml
from test_configs import expand

from benchmark_utils.tuning import config_io, runner, scoring
from benchmark_utils.tuning.cli import main
from benchmark_utils.tuning.defaults import dataset_instances
from benchmark_utils.tuning.grids import (
    TUNED_PARAMETERS,
    UNTUNED_REASONS,
    log_grid,
    plain_number,
    round_significant,
)
from benchmark_utils.tuning.plan import plan_solver

from conftest import ROOT, benchmark, component

QUADRATIC = "quadratic[dim_x=10,dim_y=10,n_samples=100,constraint=none]"


# --- grids -----------------------------------------------------------------

def test_grid_is_log_spaced_around_the_centre():
    assert log_grid(0.05, 3) == [0.005, 0.05, 0.5]
    grid = log_grid(0.190476, 5)
    assert len(grid) == 5 and 0.19 in grid         # odd N: centre included
    ratios = np.diff(np.log10(grid))
    np.testing.assert_allclose(ratios, 0.5, atol=0.01)
    assert grid[0] == pytest.approx(0.0190, rel=1e-3)
    assert grid[-1] == pytest.approx(1.90, rel=1e-3)
    assert log_grid(0.05, 2) == [0.005, 0.5]


def test_grid_values_are_rounded_plain_numbers():
    assert round_significant(0.0123456) == 0.0123
    assert plain_number(1e-05) == "0.00001"
    assert plain_number(1.0) == "1"
    with pytest.raises(ValueError, match="grid centre"):
        log_grid(0.0, 3)


def test_every_shipped_solver_declares_its_tuned_parameters():
    """The table's entries are deliberate for the shipped solvers (a
    solver a user adds gets its role-named steps: the next test)."""
    solvers = {solver.name: solver for solver in benchmark().get_solvers()}
    for name, names in TUNED_PARAMETERS.items():
        assert name in solvers, f"{name} is not a solver of the benchmark"
        assert set(names) <= set(solvers[name].parameters), name
        if not names:
            assert UNTUNED_REASONS[name]


def test_a_solver_added_as_documented_gets_its_role_named_steps():
    """docs/adding.md's example copied to solvers/: not in the table, it
    tunes the role-named steps it declares (no KeyError, no edit of
    grids.py needed)."""
    from benchmark_utils.tuning.grids import tuned_parameters, untuned_reason
    example = {"outer_step": [None], "inner_step": [None],
               "linear_system_step": [None], "neumann_terms": [10]}
    assert tuned_parameters("My-Method", example) == ("outer_step",
                                                      "inner_step")
    assert tuned_parameters("My-Simple", {"outer_step": [0.1]}) == (
        "outer_step",)
    assert tuned_parameters("My-Other", {"rate": [1.0]}) == ()
    assert "declares none of the role-named steps" in untuned_reason(
        "My-Other")


def test_plan_centres_on_the_resolved_default():
    datasets = dataset_instances([QUADRATIC])
    plan = plan_solver("SOBA[batch_size=32]", datasets, 3)
    assert plan.center == pytest.approx(
        {"outer_step": 0.05, "inner_step": 2 / 10.5})
    assert plan.grid == {"outer_step": [0.005, 0.05, 0.5],
                         "inner_step": [0.019, 0.19, 1.9]}
    assert len(plan.points) == 9
    assert plan.grid_entry() == ("SOBA[batch_size=32,outer_step=[0.005,"
                                 "0.05,0.5],inner_step=[0.019,0.19,1.9]]")
    # a value set in the entry centres the grid
    given = plan_solver("SOBA[outer_step=0.002]", datasets, 3)
    assert given.grid["outer_step"] == [0.0002, 0.002, 0.02]


def test_plan_reads_a_rule_default_and_drops_invalid_values():
    # IBCG's default outer step is a rule (log(K)/K where F is convex); its
    # step must lie in (0, 1], so x10 of a step of 0.5 is left out
    datasets = dataset_instances(["quadratic[dim_x=10,dim_y=10,"
                                  "n_samples=100,constraint=box]"])
    plan = plan_solver("IBCG", datasets, 3)
    assert plan.center["outer_step"] == pytest.approx(math.log(1000) / 1000)
    large = plan_solver("IBCG[outer_step=0.5]", datasets, 3)
    assert large.grid["outer_step"] == [0.05, 0.5]
    assert any("outer_step=5.0" in note for note in large.notes)


def test_plan_keeps_untuned_and_refuses_lists():
    datasets = dataset_instances([QUADRATIC])
    assert "x0" in plan_solver("Without-BO", datasets, 3).reason
    assert "skipped on every dataset" in plan_solver(
        "IBCG", datasets, 3).reason
    with pytest.raises(ValueError, match="list for outer_step"):
        plan_solver("SOBA[outer_step=[0.1,0.2]]", datasets, 3)


def test_parameters_replace_the_tables_steps():
    # --parameters: each entry spans those of the listed steps it has
    datasets = dataset_instances([QUADRATIC])
    steps = ("outer_step", "inner_step", "linear_system_step")
    stocbio = plan_solver("stocBiO", datasets, 3, parameters=steps)
    assert list(stocbio.grid) == list(steps)
    assert len(stocbio.points) == 27
    # SOBA has no linear_system_step: its usual two
    assert list(plan_solver("SOBA", datasets, 3, parameters=steps).grid) == [
        "outer_step", "inner_step"]
    # a solver the table leaves untuned stays untuned
    assert "x0" in plan_solver("Without-BO", datasets, 3,
                               parameters=steps).reason
    only = plan_solver("stocBiO", datasets, 3, parameters=("inner_step",))
    assert list(only.grid) == ["inner_step"]


def test_neumann_depths_span_the_integer_lattice_on_request():
    datasets = dataset_instances([QUADRATIC])
    stocbio = plan_solver("stocBiO[neumann_terms=6]", datasets, 3,
                          parameters=("outer_step", "neumann_terms"))
    assert list(stocbio.grid) == ["outer_step", "neumann_terms"]
    assert sorted({p["neumann_terms"] for p in stocbio.points}) == [3, 6, 12]
    # a solver without a Neumann series keeps its steps
    assert list(plan_solver("SOBA", datasets, 3,
                            parameters=("neumann_terms",)).grid) == []


# --- scores and selection --------------------------------------------------

POINTS = [{"outer_step": s} for s in (0.01, 0.1, 1.0)]
CENTER = {"outer_step": 0.1}


def results(finals, dataset="d", certified=True, diverged=()):
    """A result table: two rows per run (iteration 0 and the last), the
    last with ``finals[(step, rep)]`` as its score."""
    rows = []
    for (step, rep), value in finals.items():
        for stop_val, score in ((0, 10.0), (9, value)):
            rows.append(dict(
                dataset_name=dataset, solver_name=f"S[outer_step={step}]",
                idx_rep=rep, stop_val=stop_val, p_solver_outer_step=step,
                objective_value=score + 1.0,
                objective_upper_gap=score if certified else np.nan,
                objective_diverged=int(stop_val == 9
                                       and (step, rep) in diverged)))
    return pd.DataFrame(rows)


def scores_of(df, n_repetitions=2):
    return scoring.score_points(df, POINTS, "general", n_repetitions)[0]


def test_median_over_seeds_and_lowest_wins():
    # seed ranges [3, 5], [6, 9], [1, 2]: apart, so the lowest median wins
    df = results({(0.01, 0): 3.0, (0.01, 1): 5.0, (0.1, 0): 6.0,
                  (0.1, 1): 9.0, (1.0, 0): 1.0, (1.0, 1): 2.0})
    scores = scores_of(df)
    assert [s.median("d") for s in scores] == [4.0, 7.5, 1.5]
    assert scores[1].spread("d") == (6.0, 9.0)
    assert scoring.select(scores, CENTER) == 2


def test_a_median_within_the_leaders_range_ties_and_goes_to_the_default():
    # the leader (1.0: median 2.3, range [1, 3.6]); the default (0.1:
    # median 2.4) lies within its range and takes the tie; 0.01 (median
    # 4) does not tie, though its range [3, 5] overlaps the leader's (the
    # earlier rule's tie, which could give up a measured gain)
    df = results({(0.01, 0): 3.0, (0.01, 1): 5.0, (0.1, 0): 2.0,
                  (0.1, 1): 2.8, (1.0, 0): 1.0, (1.0, 1): 3.6})
    ranking = scoring.rank(scores_of(df), CENTER)
    assert ranking.leader == 2 and sorted(ranking.tied) == [1, 2]
    assert ranking.chosen == 1


def test_diverged_nonfinite_and_missing_runs_lose():
    df = results({(0.01, 0): 3.0, (0.01, 1): 3.0, (0.01, 2): 3.0,
                  (0.1, 0): 0.1, (0.1, 1): 0.1, (0.1, 2): 0.1,
                  (1.0, 0): np.nan, (1.0, 1): 0.01},
                 diverged={(0.1, 0)})
    df = pd.concat([df, results({(1.0, 2): 0.01})])    # a later file
    scores = scores_of(df, n_repetitions=3)
    assert scores[1].runs["d"] == [math.inf, 0.1, 0.1]  # one diverged
    assert scores[2].runs["d"] == [math.inf, 0.01, 0.01]    # NaN score
    # (the old rule: the medians 0.1 and 0.01 won.) A point +inf on one
    # seed never wins, whatever its median
    ranking = scoring.rank(scores, CENTER)
    assert ranking.eligible == [True, False, False]
    assert ranking.chosen == 0
    missing = results({(0.01, 0): 3.0, (0.1, 0): 1.0, (1.0, 0): 2.0})
    scores = scores_of(missing, 3)
    assert [s.median("d") for s in scores] == [math.inf] * 3
    # nothing eligible: the default is kept
    assert scoring.rank(scores, CENTER).leader is None
    assert scoring.select(scores, CENTER) == 1


def test_ties_go_to_the_point_nearest_the_default():
    df = results({(s, r): 1.0 for s in (0.01, 0.1, 1.0) for r in (0, 1)})
    assert scoring.select(scores_of(df), CENTER) == 1
    # all diverged: the default is kept
    df = results({(s, r): 1.0 for s in (0.01, 0.1, 1.0) for r in (0, 1)},
                 diverged={(s, r) for s in (0.01, 0.1, 1.0) for r in (0, 1)})
    assert scoring.select(scores_of(df), CENTER) == 1


def test_uncertified_datasets_use_the_value_and_datasets_combine():
    df = results({(s, r): v for s, v in ((0.01, 3.0), (0.1, 1.0),
                                         (1.0, 2.0)) for r in (0, 1)},
                 certified=False)
    scores, criteria = scoring.score_points(df, POINTS, "general", 2)
    assert criteria["d"] == "final F(x) (objective_value)"
    assert [s.median("d") for s in scores] == [4.0, 2.0, 3.0]
    # several datasets: median over datasets of score / default's score
    other = results({(s, r): v for s, v in ((0.01, 0.5), (0.1, 1.0),
                                            (1.0, 0.1)) for r in (0, 1)},
                    dataset="e")
    third = results({(s, r): v for s, v in ((0.01, 3.0), (0.1, 1.0),
                                            (1.0, 0.5)) for r in (0, 1)},
                    dataset="f")
    scores = scores_of(pd.concat([df, other, third]))
    # geometric mean over datasets of median / the dataset's best (2, 0.1,
    # 0.5): (2 x 5 x 6)^(1/3), (1 x 10 x 2)^(1/3), (1.5 x 1 x 1)^(1/3)
    ranking = scoring.rank(scores, CENTER)
    assert ranking.best_scores == {"d": 2.0, "e": 0.1, "f": 0.5}
    assert ranking.aggregate == pytest.approx(
        [60 ** (1 / 3), 20 ** (1 / 3), 1.5 ** (1 / 3)])
    assert ranking.chosen == 2


def test_simple_family_score_keeps_the_lower_level_honest():
    final = {"objective_upper_gap": -0.5, "objective_lower_gap": 0.2,
             "objective_upper_value": 3.0}
    assert scoring.run_score(final, "simple", True) == 0.5
    assert scoring.run_score(final, "simple", False) == pytest.approx(3.2)
    assert scoring.run_score({**final, "objective_diverged": 1},
                             "simple", True) == math.inf



def test_levels_score_cannot_buy_the_upper_level_with_the_lower():
    """--score levels: the larger of f(x_k, y_k) and ||grad_y g|| relative
    to the start, so shrinking f while the lower level drifts loses."""
    start = {"objective_upper_value_current": 0.5,
             "objective_inner_grad_norm": 18.0, "objective_value": 0.04}
    shrinks_x = {"objective_upper_value_current": 0.005,
                 "objective_inner_grad_norm": 27.0, "objective_value": 1e-6}
    balanced = {"objective_upper_value_current": 0.05,
                "objective_inner_grad_norm": 1.8, "objective_value": 0.01}
    assert scoring.run_score(shrinks_x, "general", False, start) == 1.5
    assert scoring.run_score(balanced, "general", False, start) == (
        pytest.approx(0.1))
    # the upper score alone would pick the other one
    assert scoring.run_score(shrinks_x, "general", False) < (
        scoring.run_score(balanced, "general", False))
    # the simple family keeps its own two-level score
    final = {"objective_upper_gap": -0.5, "objective_lower_gap": 0.2}
    assert scoring.run_score(final, "simple", True, start) == 0.5
    rows = pd.DataFrame([
        dict(dataset_name="d", solver_name="S[outer_step=0.1]", idx_rep=0,
             stop_val=k, p_solver_outer_step=0.1, **row)
        for k, row in ((0, start), (9, shrinks_x))])
    scores, criteria = scoring.score_points(
        rows, [{"outer_step": 0.1}], "general", 1, score="levels")
    assert scores[0].runs["d"] == [1.5]
    assert "grad_y g" in criteria["d"]
    with pytest.raises(ValueError, match="score must be one of"):
        scoring.score_points(rows, [{"outer_step": 0.1}], "general", 1,
                             score="lower")

# --- the tuned config ------------------------------------------------------

def assert_builds(path):
    content = yaml.safe_load(path.read_text())
    for kind in ("dataset", "solver"):
        for entry in content[kind]:
            name, grid = expand(entry)
            for params in grid:
                component(kind, name).get_instance(**params)
    return content


def test_tuned_config_has_ten_repetitions_and_builds(tmp_path):
    content = {"n-repetitions": 1, "timeout": 5, "dataset": [QUADRATIC],
               "solver": ["SOBA[batch_size=32]", "Without-BO"]}
    tuned = config_io.tuned_content(content, [
        "SOBA[batch_size=32,outer_step=0.5,inner_step=0.019]",
        "Without-BO"], max_runs=7)
    path = tmp_path / "tuned.yml"
    config_io.write_tuned_config(path, tuned, ["Tuned by: a test", ""])
    assert path.read_text().startswith("# Tuned by: a test\n")
    written = assert_builds(path)
    assert written["n-repetitions"] == 10 and written["seed"] == 0
    # the tuning's budget: 7 evaluations, the timeout only a safety cap
    assert written["max-runs"] == 7
    assert written["timeout"] == config_io.SAFETY_TIMEOUT
    # unless the timeout is part of the budget (--keep-timeout)
    assert config_io.tuned_content(content, ["Without-BO"], max_runs=7,
                                   keep_timeout=True)["timeout"] == 5
    assert config_io.parse_entry(written["solver"][0]) == (
        "SOBA", {"batch_size": 32, "outer_step": 0.5, "inner_step": 0.019})


def header_grids(text):
    """``{entry: {parameter: [values]}}`` from a tuned config's header."""
    grids = {}
    for entry, spans in re.findall(r"^#   (\S+): (.*)$", text, re.M):
        grids[entry] = {name: [float(v) for v in values.split(", ")]
                        for name, values in re.findall(
                            r"(\w+) in \[([^\]]*)\]", spans)}
    return grids


def chosen_values_are_grid_points(path, source):
    text = path.read_text()
    content = assert_builds(path)
    assert content["n-repetitions"] == 10
    grids = header_grids(text)
    original = yaml.safe_load(source.read_text())["solver"]
    for before, after in zip(original, content["solver"], strict=True):
        _, params = config_io.parse_entry(after)
        for name, values in grids.get(before, {}).items():
            assert params[name] in values, (after, name, values)
    return grids


def shipped(kind):
    """The shipped tuned configs whose header starts with ``kind``
    ("Tuned by" or "Transferred by")."""
    return [path for path in sorted((ROOT / "configs" / "tuned").glob(
        "*.yml")) if path.read_text().startswith(f"# {kind}: ")]


def test_every_shipped_tuned_config_says_how_it_was_made():
    assert len(shipped("Tuned by")) >= 8
    # the others are the configs' multipliers (tuning/multipliers.py)
    assert len(shipped("Tuned by")) + len(shipped("Transferred by")) == len(
        [path for path in (ROOT / "configs" / "tuned").glob("*.yml")
         if not path.name.endswith("_multipliers.yml")])


@pytest.mark.parametrize("tuned", shipped("Tuned by"),
                         ids=lambda path: path.stem)
def test_every_tuned_config_chose_grid_points(tuned):
    """Each shipped tuned config: 10 repetitions, a score table, and every
    chosen value a point of the grid its header states (the source config
    is named on its ``# From:`` line)."""
    source = re.search(r"^# From: (\S+)$", tuned.read_text(), re.M)
    assert source, f"{tuned.name} names no source config"
    chosen_values_are_grid_points(tuned, ROOT / source.group(1))
    assert tuned.with_name(f"{tuned.stem}_scores.md").exists()


def test_shipped_example_chose_grid_points():
    grids = chosen_values_are_grid_points(
        ROOT / "configs" / "tuned" / "tuning_example.yml",
        ROOT / "configs" / "tuning_example.yml")
    # each of the 4 tuned parameters ran the first grid's 3 values, and
    # more where the search widened
    lengths = [len(v) for g in grids.values() for v in g.values()]
    assert len(lengths) == 4 and min(lengths) >= 3
    assert (ROOT / "configs" / "tuned" / "tuning_example_scores.md").exists()


@pytest.mark.parametrize("option, value, message", [
    ("--grid-points", "1", r"--grid-points must be an integer in \[2, 11\]"),
    ("--tuning-seeds", "0", r"--tuning-seeds must be an integer in \[1, "),
    ("--max-runs", "101", r"--max-runs must be an integer in \[1, 100\]"),
    ("--evaluate-at", "0", r"--evaluate-at must be an integer in \[1, 100"),
    ("--output", "x.yaml", "--output must be a .yml path"),
    ("--solver", "NotASolver", "--solver must name entries"),
    ("--n-jobs", "0", r"--n-jobs must be an integer in \[1, 1024\]"),
    ("--parallel-config", "nosuch.yml",
     "--parallel-config must be an existing file"),
])
def test_bad_options_fail_before_any_run(option, value, message):
    with pytest.raises(ValueError, match=message):
        main([str(ROOT / "configs" / "tuning_example.yml"), option, value])


def test_end_to_end_tiny_grid(tmp_path):
    config = tmp_path / "tiny.yml"
    config.write_text(yaml.safe_dump({
        "max-runs": 4, "dataset": [QUADRATIC],
        "solver": ["SOBA", "stocBiO[neumann_terms=6]"]}))
    output = tmp_path / "tuned" / "tiny_test_tuning.yml"
    result = subprocess.run(
        [sys.executable, "-m", "benchmark_utils.tune", str(config),
         "--grid-points", "2", "--tuning-seeds", "1", "--widen", "0",
         "--output", str(output), "--solver", "SOBA", "--evaluate-at", "6",
         "--evaluate-at-reason", "a test of the option"],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr
    last = result.stdout.strip().splitlines()[-1]
    assert (ROOT / last).resolve() == output.resolve()
    # what it will run, said before the first run
    assert result.stdout.startswith(
        "plan: 4 points x 1 seeds x 1 dataset instance(s) = 4 benchopt runs "
        "in the first grids of 1 entries, each to at most 4 evaluations "
        "(iteration 4), no widening\n")
    grids = chosen_values_are_grid_points(output, config)
    assert grids == {"SOBA": {"outer_step": [0.005, 0.5],
                              "inner_step": [0.019, 1.9]}}
    # an entry --solver leaves out is copied as it is
    assert (yaml.safe_load(output.read_text())["solver"][1]
            == "stocBiO[neumann_terms=6]")
    # tuned at 4 evaluations (iteration 4), evaluated at 6 (iteration 9)
    assert "iteration 4" in output.read_text()
    assert "6 evaluations (iteration 9" in output.read_text()
    assert "because: a test of the option" in output.read_text()
    assert yaml.safe_load(output.read_text())["max-runs"] == 6
    assert output.with_name("tiny_test_tuning_scores.md").exists()
    # the runs were on another instance of the random quadratic than the
    # tuned config's (which keeps the config's own dataset entry)
    run_config = yaml.safe_load((ROOT / "outputs" / "tuning" / output.stem
                                 / "SOBA.yml").read_text())
    assert run_config["dataset"] == [QUADRATIC[:-1] + ",random_state=1000]"]
    assert run_config["seed"] == 1000
    assert yaml.safe_load(output.read_text())["dataset"] == [QUADRATIC]
    assert "random_state + 1000" in output.read_text()
    # what the tuning cost, measured on benchopt's runs
    cost = re.search(r"Tuning cost: ([0-9.]+) CPU-minutes in benchopt's "
                     r"runs \(([0-9.]+) minutes wall-clock",
                     output.read_text())
    assert cost and 0 < float(cost.group(1)) < 10


def test_a_tuning_on_a_dask_cluster_scores_as_the_sequential_one(tmp_path):
    """--parallel-config and -j reach benchopt's runs (a dask
    LocalCluster of 2 workers, which computes them: each tuning has its own
    benchopt cache) and every point scores as sequentially."""
    config = tmp_path / "tiny.yml"
    config.write_text(yaml.safe_dump({
        "max-runs": 4, "timeout": 30, "dataset": [QUADRATIC],
        "solver": ["SOBA"]}))
    tables = []
    for name, extra in (("sequential", ["--keep-timeout"]), ("dask", [
            "--parallel-config",
            str(ROOT / "configs" / "parallel" / "dask_local.yml"),
            "-j", "2"])):
        output = tmp_path / f"tiny_{name}_tuning.yml"
        result = subprocess.run(
            [sys.executable, "-m", "benchmark_utils.tune", str(config),
             "--grid-points", "2", "--tuning-seeds", "2", "--widen", "0",
             "--output", str(output), *extra],
            cwd=ROOT, capture_output=True, text=True, timeout=300,
            env=dict(os.environ, BENCHOPT_CACHE=str(tmp_path / name)))
        assert result.returncode == 0, result.stdout[-2000:] + result.stderr
        run_config = yaml.safe_load((ROOT / "outputs" / "tuning"
                                     / output.stem / "SOBA.yml").read_text())
        assert ("n-jobs" in run_config) == (name == "dask")
        log = (ROOT / "outputs" / "tuning" / output.stem
               / "SOBA.log").read_text()
        assert "(cached)" not in log
        assert ("Distributed run with backend: dask" in log) == (
            name == "dask")
        # the tuning ran without the timeout; --keep-timeout keeps it in
        # the tuned config, said in its header
        assert run_config["no-timeout"] is True
        kept = name == "sequential"
        assert yaml.safe_load(output.read_text())["timeout"] == (
            30 if kept else config_io.SAFETY_TIMEOUT)
        assert ("the config's, kept by --keep-timeout"
                in output.read_text()) == kept
        scores = output.with_name(f"{output.stem}_scores.md").read_text()
        tables.append(scores[scores.index("\n### "):])
        assert yaml.safe_load(output.read_text())["solver"]
    assert tables[0] == tables[1]


def test_a_choice_on_the_edge_widens_the_grid(tmp_path):
    # a centre ten times below SOBA's working outer step: the first grid's
    # best point is its largest value, so widening runs the value above
    config = tmp_path / "edge.yml"
    config.write_text(yaml.safe_dump({
        "max-runs": 6, "dataset": [QUADRATIC],
        "solver": ["SOBA[inner_step=0.19,outer_step=0.0005]"]}))
    output = tmp_path / "tuned" / "edge.yml"
    result = subprocess.run(
        [sys.executable, "-m", "benchmark_utils.tune", str(config),
         "--grid-points", "3", "--tuning-seeds", "1", "--widen", "1",
         "--output", str(output)],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr
    widening = [line for line in result.stdout.splitlines()
                if line.startswith("running widening 1: ")]
    assert len(widening) == 1 and "outer_step=0.05," in widening[0]
    grids = chosen_values_are_grid_points(output, config)
    outer = grids["SOBA[inner_step=0.19,outer_step=0.0005]"]["outer_step"]
    assert max(outer) >= 0.05      # the grid grew up a decade
    table = output.with_name("edge_scores.md").read_text()
    assert table.count("| 0.05 |") == 1     # one point more, run once


def test_the_plan_states_the_last_tunings_cost(tmp_path):
    """A re-tuning is told what the tuning in its output cost (the sum of
    its pieces' header lines); a first tuning only its runs: every dataset
    instance's, of the entries it tunes (one kept for a reason runs
    nothing)."""
    plans = [SimpleNamespace(points=[{}] * 9, reason=""),
             SimpleNamespace(points=[{}], reason=""),
             SimpleNamespace(points=[{}], reason="nothing to tune")]
    output = tmp_path / "tuned.yml"
    first = runner.plan_lines(plans, 3, 2, 15, 4, output)
    assert first == ["plan: 10 points x 3 seeds x 2 dataset instance(s) = "
                     "60 benchopt runs in the first grids of 2 entries, each "
                     "to at most 15 evaluations (iteration 316), then up to "
                     "4 widening round(s) per entry where a choice ends on "
                     "an edge"]
    # a tuning in pieces: the earlier piece's cost on its own line
    output.write_text("# Earlier piece: python -m benchmark_utils.tune c.yml "
                      "--solver SOBA (2026-11-27 09:05 UTC; 1.25 "
                      "CPU-minutes in benchopt's runs (1.3 minutes "
                      "wall-clock)\n"
                      "# Tuning cost: 2.5 CPU-minutes in benchopt's runs\n")
    assert runner.plan_lines(plans, 3, 2, 15, 4, output)[1] == (
        "the tuning in tuned.yml cost 3.8 CPU-minutes in benchopt's runs "
        "(its header): expect about as much for its entries")
