"""The tuning protocol's rules (docs/tuning.md) on made-up scores: the
growing grid ends without cycling or re-running a point, the selection
over seeds and datasets, the budget, the seeds and instances, and the
knobs each solver keeps fixed."""
import math

import numpy as np
import pandas as pd
import pytest
import yaml
from benchopt.utils.run_context import RunContext

from benchmark_utils.tuning import cli, config_io, report, scoring
from benchmark_utils.tuning.defaults import (
    TUNING_INSTANCE_OFFSET,
    dataset_instances,
    tuning_dataset_entries,
)
from benchmark_utils.tuning.grids import (
    FIXED_KNOBS,
    KNOB_LATTICES,
    TUNABLE_KNOBS,
    TUNED_PARAMETERS,
    UNTUNED_REASONS,
    Axis,
    log_grid,
)
from benchmark_utils.tuning.plan import plan_solver
from benchmark_utils.tuning.search import Lattice, search

from conftest import ROOT, benchmark

QUADRATIC = "quadratic[dim_x=10,dim_y=10,n_samples=100,constraint=none]"
DATASETS = ("d1", "d2", "d3")


# --- the lattice -----------------------------------------------------------

def test_lattice_points_coincide_exactly():
    axis = Axis("outer_step", 0.05, 3)
    assert [axis.value(k) for k in range(-3, 4)] == [
        0.00005, 0.0005, 0.005, 0.05, 0.5, 5.0, 50.0]
    assert [axis.value(k) for k in axis.first()] == log_grid(0.05, 3)
    # an even N: half a step off the centre, two decades per step for N=2
    even = Axis("inner_step", 0.05, 2)
    assert [even.value(k) for k in (-2, -1, 0, 1)] == [
        0.00005, 0.005, 0.5, 50.0]
    five = Axis("step", 0.190476, 5)
    assert [five.value(k) for k in five.first()] == log_grid(0.190476, 5)
    assert five.value(3) == pytest.approx(6.02, rel=1e-3)


def test_integer_lattice_of_a_knob():
    axis = Axis("T", 10, 3, "integer")
    assert [axis.value(k) for k in axis.first()] == [5, 10, 20]
    assert [axis.value(k) for k in (-3, 2, 3)] == [1, 40, 80]
    # its floor: no integer below 1
    assert axis.end_reason(-3) is None and "integers >= 1" in \
        axis.end_reason(-4)
    small = Axis("T", 1, 3, "integer")
    assert small.first() == [0, 1]


# --- the growing grid on made-up scores ------------------------------------

def one_axis(n_points=3, refusal=None):
    axis = Axis("outer_step", 0.1, n_points)
    return Lattice([axis], [axis.first()], refusal)


def fake_run(lattice, score, calls):
    """``run`` for :func:`search`: the scores ``score(key)`` ->
    {dataset: [seed values]}; fails on a point run twice."""
    def run(keys, round_):
        for key in keys:
            assert key not in {k for _, ks in calls for k in ks}, key
        calls.append((round_, list(keys)))
        return [scoring.PointScores(lattice.point(key), score(key))
                for key in keys]
    return run


# the vote the old rule took, the median over datasets of the ratio of
# two points' scores, is intransitive on these: k beats k + 1, k + 1 beats
# k + 2, k + 2 beats k; the geometric mean falls by 0.95 a step up
PATTERN = (1.0, 2.0, 4.0)


def cyclic(key):
    (k,) = key
    return {d: [PATTERN[(k + i) % 3] * 0.95 ** k]
            for i, d in enumerate(DATASETS)}


def beats(a, b):
    """Whether ``a`` wins the median-of-ratios vote against ``b``."""
    ratios = [cyclic(a)[d][0] / cyclic(b)[d][0] for d in DATASETS]
    return float(np.median(ratios)) < 1


def test_an_intransitive_vote_cannot_make_the_search_cycle():
    assert beats((0,), (1,)) and beats((1,), (2,)) and beats((2,), (0,))
    lattice = one_axis()
    calls = []
    result = search(lattice, fake_run(lattice, cyclic, calls), widen=6)
    # one new point a round, each run once, the choice moving up along
    # the falling geometric mean: never back, never twice the same point
    assert [keys for _, keys in calls] == [
        [(-1,), (0,), (1,)], *[[(k,)] for k in range(2, 8)]]
    assert result.history == [(k,) for k in range(1, 8)]
    assert result.n_rounds == 6 and len(result.keys) == 9
    # the budget is spent: the choice's next value out was not run
    assert [(d.name, d.sign) for d in result.unfinished] == [
        ("outer_step", 1)]
    table = "\n".join(report.solver_table("S", result, {}))
    assert "UNFINISHED" in table
    assert table.count("\n| ") == 1 + 9     # header + every point run


def test_the_search_ends_at_a_diverging_or_refused_edge():
    # the same adversarial scores, +inf from index 5 up: the search ends
    # before its budget, on an edge allowed by the divergence
    def bounded(key):
        return cyclic(key) if key[0] < 5 else {d: [math.inf]
                                               for d in DATASETS}
    lattice = one_axis()
    calls = []
    result = search(lattice, fake_run(lattice, bounded, calls), widen=50)
    assert result.history[-1] == (4,) and result.n_rounds == 4
    assert [d.status for d in result.directions] == ["interior",
                                                     "ineligible"]
    assert not result.unfinished
    assert "finished on an edge" in report.finish_note(result)
    # refused by the solver's checks beyond index 3: no run there
    lattice = one_axis(refusal=lambda name, k: (
        "outer_step must be in (0, 1]" if k > 3 else None))
    calls = []
    result = search(lattice, fake_run(lattice, cyclic, calls), widen=50)
    assert result.history[-1] == (3,)
    assert max(k for _, keys in calls for (k,) in keys) == 3
    assert result.directions[1].status == "refused"
    assert "(0, 1]" in report.finish_note(result)


def test_a_flat_grid_widens_beyond_both_edges():
    """Every point ties (the method does not move over the grid): the tie
    rule alone would keep the default; the search runs the values beyond
    both edges until one stops tying, and a grid flat up to refused or
    diverging values ends flat, said so."""
    lattice = one_axis()
    calls = []
    result = search(lattice, fake_run(lattice, lambda key: {
        "d1": [1.0 if key[0] < 3 else 0.5]}, calls), widen=10)
    assert [keys for _, keys in calls] == [
        [(-1,), (0,), (1,)], [(-2,), (2,)], [(-3,), (3,)], [(4,)]]
    assert result.history[-1] == (3,) and not result.flat
    assert report.finish_note(result) is None
    calls = []
    result = search(lattice, fake_run(lattice, lambda key: {
        "d1": [1.0 if abs(key[0]) < 3 else math.inf]}, calls), widen=10)
    assert result.flat and result.keys[result.chosen] == (0,)
    assert not result.open and result.n_rounds == 2
    assert report.finish_note(result).startswith("flat: every point")
    result = search(lattice, fake_run(lattice, lambda key: {
        "d1": [1.0]}, []), widen=1)
    assert result.open
    assert report.finish_note(result).startswith("UNFINISHED (flat)")


def test_the_leaders_neighbours_are_run_where_a_tie_left_it_unchosen():
    """A tie goes to the default while the leader (the lowest median, one
    step up) beats it beyond the seeds' spread, and the value beyond the
    leader is far better: the search runs it and moves there. A leader
    ahead only within the noise is not chased (a plateau)."""
    lattice = one_axis()
    values = {-1: [2.0, 2.2, 2.4], 0: [1.1, 1.15, 2.0], 1: [0.8, 1.0, 1.2],
              2: [0.1, 0.11, 0.12]}

    def score(key):
        return {"d1": values.get(key[0], [math.inf] * 3)}
    calls = []
    result = search(lattice, fake_run(lattice, score, calls), widen=10)
    # 0 and 1 tie in the first grid (median 1.15 <= 1.2), the default (0) is
    # chosen; the leader (1) lacks its upper neighbour and its median 1.0
    # is below the default's lowest, 1.1: round 1 runs it
    assert calls[1] == (1, [(2,)])
    assert result.keys[result.chosen] == (2,)
    assert report.finish_note(result).startswith("finished on an edge")
    # out of rounds before the leader's neighbour: said so
    result = search(lattice, fake_run(lattice, score, []), widen=0)
    assert result.keys[result.chosen] == (0,) and result.open
    assert report.finish_note(result).startswith(
        "UNFINISHED (best point)")
    # within the noise (the default's lowest, 0.95, below the leader's
    # median): the choice is finished, nothing more is run
    values[0] = [0.95, 1.15, 2.0]
    calls = []
    result = search(lattice, fake_run(lattice, score, calls), widen=10)
    assert len(calls) == 1 and result.keys[result.chosen] == (0,)
    assert not result.open and report.finish_note(result) is None


def surface(trial):
    """Random scores on a 2-D lattice, 3 datasets x 3 seeds: a rough bowl
    around a random target (each dataset its own noise, so their votes
    disagree), some points diverging, +inf outside a 9 x 9 box."""
    target = np.random.default_rng(trial).integers(-4, 5, size=2)

    def score(key):
        if max(abs(k) for k in key) > 4:
            return {d: [math.inf] * 3 for d in DATASETS}
        rng = np.random.default_rng([trial, key[0] + 10, key[1] + 10])
        bowl = 0.7 * np.abs(np.array(key) - target).sum()
        values = np.exp(bowl + rng.normal(size=(3, 1))
                        + 0.01 * rng.normal(size=(3, 3)))
        if rng.random() < 0.1:
            values[rng.integers(3), rng.integers(3)] = math.inf
        return {d: list(v) for d, v in zip(DATASETS, values, strict=True)}
    return score


@pytest.mark.parametrize("trial", range(40))
def test_the_search_finishes_on_random_surfaces(trial):
    axes = [Axis("outer_step", 0.05, 3), Axis("inner_step", 0.2, 3)]
    lattice = Lattice(axes, [a.first() for a in axes])
    calls = []
    result = search(lattice, fake_run(lattice, surface(trial), calls),
                    widen=500)
    # never the same point twice (fake_run), far from the budget, the
    # choice finished, and the best of every point run
    assert result.n_rounds < 100
    assert not result.unfinished
    assert result.ranking.chosen == scoring.rank(
        result.scores, lattice.center).chosen
    for (_, keys), chosen in zip(calls[1:], result.history, strict=False):
        for key in keys:        # each round: neighbours of the choice
            assert sum(abs(a - b) for a, b in zip(key, chosen,
                                                  strict=True)) == 1
    # deterministic: the same scores, the same search
    again = search(lattice, fake_run(lattice, surface(trial), []),
                   widen=500)
    assert again.keys == result.keys and again.chosen == result.chosen


# --- selection over seeds and datasets -------------------------------------

CENTER = {"outer_step": 0.1}


def points(*rows, steps=(0.01, 0.1, 1.0)):
    """PointScores of one-parameter points from rows of per-dataset
    values (one seed each; a list: several seeds)."""
    return [scoring.PointScores({"outer_step": step}, {
        f"d{i}": (v if isinstance(v, list) else [v])
        for i, v in enumerate(row, 1)}) for step, row in zip(
            steps, rows, strict=True)]


def test_a_point_diverging_on_one_dataset_never_wins():
    scores = points([0.5, 0.6, math.inf], [1.0, 1.0, 1.0], [2.0, 2.0, 2.0])
    ranking = scoring.rank(scores, CENTER)
    assert ranking.eligible == [False, True, True]
    assert ranking.chosen == 1
    # one seed of one dataset is enough
    scores = points([[0.5, math.inf], [0.5, 0.5]], [[1.0, 1.0], [1.0, 1.0]],
                    [[2.0, 2.0], [2.0, 2.0]])
    assert scoring.rank(scores, CENTER).chosen == 1


def test_one_dataset_does_not_dominate():
    # ratios to each dataset's best (1 and 1): a ratio of 100 on one of
    # two datasets weighs as its square root, 10
    scores = points([1.0, 100.0], [20.0, 1.0], [5.0, 5.0])
    ranking = scoring.rank(scores, CENTER)
    assert ranking.aggregate == pytest.approx([10.0, 20 ** 0.5, 5.0])
    assert ranking.chosen == 1
    # the order of the points does not depend on which others were run
    more = [*scores, *points([0.5, 0.5], steps=(10.0,))]
    aggregate = scoring.rank(more, CENTER).aggregate
    assert np.argsort(aggregate[:3]).tolist() == np.argsort(
        ranking.aggregate).tolist()
    assert aggregate[1] / aggregate[2] == pytest.approx(
        ranking.aggregate[1] / ranking.aggregate[2])


def test_ties_go_to_the_default_then_to_the_smaller_steps():
    center = {"outer_step": 0.1, "inner_step": 1.0}

    def point(outer, inner, seeds):
        return scoring.PointScores({"outer_step": outer,
                                    "inner_step": inner}, {"d": seeds})
    default = point(0.1, 1.0, [2.0, 3.0])
    larger = point(1.0, 0.1, [1.0, 2.5])        # step product 1
    smaller = point(0.01, 1.0, [1.5, 2.2])      # step product 0.1
    apart = point(0.01, 0.1, [5.0, 6.0])
    ranking = scoring.rank([larger, smaller, default, apart], center)
    assert ranking.leader == 0 and sorted(ranking.tied) == [0, 1, 2]
    assert ranking.chosen == 2                  # the default
    ranking = scoring.rank([larger, smaller, apart], center)
    assert ranking.chosen == 1                  # the smaller steps
    # one seed: only equal aggregates tie
    ranking = scoring.rank([point(1.0, 0.1, [1.0]), point(0.1, 1.0, [1.1])],
                           center)
    assert ranking.chosen == 0


def curve_results(curves, dataset="d"):
    """A result table whose run of step s, seed r evaluates ``curves[(s,
    r)]`` at iterations 0, 1, 2, ..."""
    rows = []
    for (step, rep), values in curves.items():
        for stop_val, value in enumerate(values):
            rows.append(dict(
                dataset_name=dataset, solver_name=f"S[outer_step={step}]",
                idx_rep=rep, stop_val=stop_val, p_solver_outer_step=step,
                objective_value=value + 1.0, objective_upper_gap=value,
                objective_diverged=0))
    return pd.DataFrame(rows)


def test_curve_criterion_is_the_mean_log_score():
    # a noisy method lucky at its last evaluation against a steady one
    df = curve_results({(0.01, 0): [1.0, 0.1, 0.1, 0.1],
                        (0.1, 0): [1.0, 1.0, 1.0, 0.01],
                        (1.0, 0): [1.0, 0.5, 0.5, 0.5]})
    grid = [{"outer_step": s} for s in (0.01, 0.1, 1.0)]
    final, criteria = scoring.score_points(df, grid, "general", 1)
    assert criteria["d"].startswith("final")
    assert scoring.select(final, CENTER) == 1
    curve, criteria = scoring.score_points(df, grid, "general", 1, "curve")
    assert criteria["d"].startswith("curve")
    assert curve[0].runs["d"] == [pytest.approx(0.1 ** 0.75)]
    assert scoring.select(curve, CENTER) == 0
    with pytest.raises(ValueError, match="criterion"):
        scoring.score_points(df, grid, "general", 1, "best")


# --- budget, seeds and instances -------------------------------------------

def args_of(*argv):
    return cli.parse_args(["config.yml", *argv])


def test_defaults_three_seeds_final_criterion():
    args = args_of()
    assert (args.tuning_seeds, args.criterion, args.widen) == (3, "final", 4)
    assert args_of("--criterion", "curve").criterion == "curve"


def test_the_budget_is_the_configs_own():
    content = {"max-runs": 40, "dataset": [QUADRATIC], "solver": ["SOBA"]}
    assert cli.tuning_budget(args_of(), content) == 40     # no cap
    assert cli.tuning_budget(args_of("--max-runs", "7"), content) == 7
    with pytest.raises(ValueError, match="sets no max-runs"):
        cli.check_args(args_of(), {"dataset": [QUADRATIC]})
    with pytest.raises(ValueError, match="evaluate-at-reason"):
        cli.check_args(args_of("--evaluate-at", "20"), content)
    cli.check_args(args_of("--evaluate-at", "40"), content)
    cli.check_args(args_of("--evaluate-at", "20", "--evaluate-at-reason",
                           "a grid at 40 would take days"), content)
    with pytest.raises(ValueError, match="goes with --evaluate-at"):
        cli.check_args(args_of("--evaluate-at-reason", "why"), content)


def test_tuning_and_evaluation_seeds_never_coincide():
    assert cli.TUNING_SEED != config_io.EVALUATION_SEED
    assert f"--seed {cli.TUNING_SEED}" in cli.DESCRIPTION
    assert f"random_state + {TUNING_INSTANCE_OFFSET}" in cli.DESCRIPTION

    def seeds(base, repetitions):
        return {RunContext(base_seed=str(base), repetition=r).get_seed(
            "Solver", use_repetition=True) for r in range(repetitions)}
    assert not seeds(cli.TUNING_SEED, 100) & seeds(
        config_io.EVALUATION_SEED, config_io.EVALUATION_REPETITIONS)
    with pytest.raises(ValueError, match="differ from the tuning seed"):
        cli.check_args(args_of(), {"seed": cli.TUNING_SEED, "max-runs": 5})


def test_random_datasets_are_tuned_on_another_instance():
    entries, shifted = tuning_dataset_entries([
        QUADRATIC, "quadratic[random_state=7]", "coreset_toy",
        {"hyper_cleaning": {"n_train": 200, "random_state": [0, 1]}}])
    assert shifted and entries == [
        QUADRATIC[:-1] + ",random_state=1000]",
        "quadratic[random_state=1007]", "coreset_toy",
        "hyper_cleaning[n_train=200,random_state=[1000,1001]]"]
    # the instances differ from the config's, and build (the second: one
    # per constraint of the class's default list)
    tuned = dataset_instances(entries[:2])
    assert [d.random_state for d in tuned] == [1000, 1007, 1007, 1007]
    assert tuning_dataset_entries(["coreset_toy"]) == (["coreset_toy"],
                                                       False)


def test_main_writes_every_point_and_the_rules(tmp_path, monkeypatch):
    """The command on made-up scores (no benchopt run): a falling score
    along outer_step, a budget of one widening."""
    config = tmp_path / "made_up.yml"
    config.write_text(yaml.safe_dump({
        "max-runs": 5, "dataset": [QUADRATIC],
        "solver": ["SOBA", "Without-BO"]}))
    seen = []

    def source(plan, content, args, max_runs, work, criteria):
        seen.append((content["dataset"], max_runs, args.tuning_seeds))
        lattice = plan.lattice()
        criteria["d"] = "made up"

        def run(keys, round_):
            return [scoring.PointScores(lattice.point(key), {
                "d": [10.0 ** -key[0] * s for s in (1.0, 1.1, 1.2)]})
                for key in keys]
        return lattice, run
    monkeypatch.setattr(cli, "score_source", source)
    output = tmp_path / "tuned" / "made_up.yml"
    cli.main([str(config), "--widen", "1", "--criterion", "curve",
              "--output", str(output)])
    assert seen == [([QUADRATIC[:-1] + ",random_state=1000]"], 5, 3)]
    text = output.read_text()
    assert "Budget: 5 evaluations per run" in text
    assert "this config runs the same budget" in text
    assert "Criterion (curve" in text and "random_state + 1000" in text
    content = yaml.safe_load(text)
    assert content["max-runs"] == 5 and content["dataset"] == [QUADRATIC]
    # inner_step does not matter: its three values tie, the smallest step
    # wins; the widening runs the choice's missing neighbours, (5, 0.019)
    # and (0.5, 0.0019), and the first wins
    assert content["solver"][0] == "SOBA[outer_step=5,inner_step=0.019]"
    table = output.with_name("made_up_scores.md").read_text()
    # the 9 points of the first grid and the 2 of the widening
    rows = [line for line in table.splitlines()
            if line.startswith("| ") and "verdict" not in line]
    assert len(rows) == 11 and "UNFINISHED" in table


# --- what is tuned, what stays fixed ---------------------------------------

def test_every_solver_declares_its_fixed_knobs():
    solvers = {s.name: s for s in benchmark().get_solvers()}
    # the shipped solvers: those the tables list (a solver a user adds is
    # in neither, and gets its role-named steps)
    assert set(TUNED_PARAMETERS) == set(FIXED_KNOBS) <= set(solvers)
    for name, knobs in FIXED_KNOBS.items():
        if not TUNED_PARAMETERS[name]:
            assert UNTUNED_REASONS[name]
        for knob, reason in knobs.items():
            assert knob in solvers[name].parameters, (name, knob)
            assert knob not in TUNED_PARAMETERS[name], (name, knob)
            assert reason.strip() and "\n" not in reason, (name, knob)
    for name, knobs in TUNABLE_KNOBS.items():
        for knob in knobs:
            assert "--parameters " + knob in FIXED_KNOBS[name][knob]
            assert knob in KNOB_LATTICES


def test_parameters_span_the_declared_knobs():
    datasets = dataset_instances([QUADRATIC])
    f2sa = plan_solver("F2SA", datasets, 3, parameters=("lambda0", "T"))
    assert f2sa.grid == {"lambda0": [1.0, 10.0, 100.0], "T": [5, 10, 20]}
    assert f2sa.chosen_entry({"lambda0": 1.0, "T": 5}) == \
        "F2SA[lambda0=1,T=5]"
    biadam = plan_solver("BiAdam", datasets, 3, parameters=("rho",))
    assert biadam.grid == {"rho": [0.1, 1.0, 10.0]}
    # a knob the solver does not declare tunable is not spanned
    assert "none of T" in plan_solver("AID-CG", datasets, 3,
                                      parameters=("T",)).reason
    assert "none of rho" in plan_solver("SOBA", datasets, 3,
                                        parameters=("rho",)).reason


def test_the_docs_state_the_rules():
    text = (ROOT / "docs" / "tuning.md").read_text()
    for rule in ("geometric mean", "--tuning-seeds K (default 3)",
                 "random_state + 1000", "--criterion", "UNFINISHED",
                 "FIXED_KNOBS", "--evaluate-at-reason"):
        assert rule in text, rule
