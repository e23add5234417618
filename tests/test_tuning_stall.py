"""The stall rule of the tuning protocol (benchmark_utils/tuning/scoring.py,
search.py) on made-up scores: a point whose every run ends where it
started switches the method off and is not a choice, so a tie rule that
prefers smaller steps cannot walk down a plateau of steps too small to
move the method; where no point moves, the flat rule still widens."""
import math

import pandas as pd

from benchmark_utils.tuning import report, scoring
from benchmark_utils.tuning.grids import Axis
from benchmark_utils.tuning.search import Lattice, search

DATASETS = ("d1", "d2")
START = {"d1": 1.0, "d2": 2.0}
SEEDS = 3


def fake_run(lattice, final, calls, starts=True):
    """``run`` for :func:`search`: each run of ``key`` on dataset d starts
    at ``START[d]`` and ends at ``START[d] * final(key)[i]`` (seed i)."""
    def run(keys, round_):
        calls.append(keys)
        found = []
        for key in keys:
            ratios = final(key)
            found.append(scoring.PointScores(
                lattice.point(key),
                {d: [START[d] * r for r in ratios] for d in DATASETS},
                {d: [START[d]] * SEEDS for d in DATASETS} if starts else {}))
        return found
    return run


def plateau(key):
    """AID-CG on the hyper-representation stand-in, made up: the x step
    (index k) moves the method only from k = -3 up; there it ties with
    its start within the seeds' spread; from the default (k = 0) up it is
    worse, from k = 4 it diverges. The inner step (index j) changes
    nothing above j = -3 and stalls the method below (y does not move)."""
    k, j = key
    if k >= 4:
        return [math.inf] * SEEDS
    if k <= -4 or j <= -3:
        return [1.0] * SEEDS                   # stalled: ends at its start
    if k >= 0:
        return [1.5, 1.6, 1.7]
    return [0.97, 1.0, 1.04]                   # moves, within the noise


def lattice_2d():
    axes = [Axis("outer_step", 1000.0, 3), Axis("inner_step", 0.4, 3)]
    return Lattice(axes, [a.first() for a in axes])


def test_a_plateau_of_steps_too_small_to_move_ends_on_a_stalled_edge():
    lattice = lattice_2d()
    calls = []
    result = search(lattice, fake_run(lattice, plateau, calls), widen=30)
    chosen = result.keys[result.chosen]
    # the smallest steps that still move the method, on an allowed edge
    assert chosen == (-3, -2)
    assert not result.unfinished and not result.open
    assert {(d.name, d.sign, d.status) for d in result.directions} >= {
        ("outer_step", -1, "stalled"), ("inner_step", -1, "stalled")}
    note = report.finish_note(result)
    assert note.startswith("finished on an edge") and "does not move" in note
    table = "\n".join(report.solver_table("S", result, {}))
    assert "| stalled |" in table and "runs start at 1" in table
    # stalled points are run and shown, never chosen
    ranking = result.ranking
    stalled = [i for i, s in enumerate(ranking.stalled) if s]
    assert stalled and not set(stalled) & set(ranking.candidates)


def test_without_the_starts_the_tie_rule_walks_down_the_plateau():
    """The same scores with no start known (the rule cannot apply): the
    smaller-step tie keeps moving the choice down and the budget ends it
    UNFINISHED, the failure the stall rule removes."""
    lattice = lattice_2d()
    result = search(lattice, fake_run(lattice, plateau, [], starts=False),
                    widen=30)
    assert result.unfinished or result.open
    assert "UNFINISHED" in report.finish_note(result)


def test_where_no_point_moves_the_flat_rule_widens_until_one_does():
    """Every point of the first grid stalls: they stay the candidates,
    the grid is flat, and the search runs beyond both edges until a
    larger step moves the method and wins."""
    axis = Axis("outer_step", 0.1, 3)
    lattice = Lattice([axis], [axis.first()])

    def final(key):
        return {3: [0.5] * SEEDS, 4: [0.8] * SEEDS}.get(
            key[0], [1.0] * SEEDS if key[0] < 3 else [math.inf] * SEEDS)
    calls = []
    result = search(lattice, fake_run(lattice, final, calls), widen=10)
    assert result.keys[result.chosen] == (3,)
    assert result.directions[0].status == "stalled"     # 2 stalls, below
    assert not result.unfinished and not result.open


def test_a_run_that_moves_on_one_seed_is_not_stalled():
    point = scoring.PointScores({"outer_step": 1.0},
                                {"d": [1.0, 1.005, 0.9]},
                                {"d": [1.0, 1.0, 1.0]})
    assert not point.stalled(["d"])
    point.runs["d"][2] = 0.995
    assert point.stalled(["d"])
    # a dropped run (start unknown) is not stalled
    assert not scoring.PointScores({"outer_step": 1.0}, {"d": [1.0]},
                                   {"d": [math.nan]}).stalled(["d"])


def test_the_start_is_read_from_each_runs_first_evaluation():
    rows = []
    for step, rep, values in [(0.01, 0, [1.0, 1.0, 0.999]),
                              (0.01, 1, [2.0, 2.0, 2.01]),
                              (0.1, 0, [1.0, 0.5, 0.2]),
                              (0.1, 1, [2.0, 0.5, 0.3])]:
        for stop_val, value in enumerate(values):
            rows.append(dict(
                dataset_name="d", solver_name=f"S[outer_step={step}]",
                idx_rep=rep, stop_val=stop_val, p_solver_outer_step=step,
                objective_value=value, objective_upper_gap=math.nan,
                objective_diverged=0))
    grid = [{"outer_step": s} for s in (0.01, 0.1)]
    scores, _ = scoring.score_points(pd.DataFrame(rows), grid, "general", 2)
    assert scores[0].starts["d"] == [1.0, 2.0]
    ranking = scoring.rank(scores, {"outer_step": 0.01})
    assert ranking.stalled == [True, False]
    # the default stalls, so the step that moves is chosen
    assert ranking.chosen == 1 and ranking.candidates == [1]
