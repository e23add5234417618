"""The gain rule of the tuning protocol (benchmark_utils/tuning/scoring.py,
search.py) on made-up scores: a point is a choice only if its median beats
its start's by more than the seeds' spread on every dataset (getting worse
is not a gain); where no point does, the solver is reported "no working
step found here" with the grid tried; and a tie never gives up a gain the
seeds' noise does not explain (the choice lies within the leader's seed
range)."""
import math

import pandas as pd

from benchmark_utils.tuning import report, scoring
from benchmark_utils.tuning.grids import Axis
from benchmark_utils.tuning.search import Lattice, search

DATASETS = ("d1", "d2")
START = {"d1": 1.0, "d2": 2.0}
SEEDS = 3


def fake_run(lattice, final, starts=True):
    """``run`` for :func:`search`: each run of ``key`` on dataset d starts
    at ``START[d]`` and ends at ``START[d] * final(key)[i]`` (seed i)."""
    def run(keys, round_):
        return [scoring.PointScores(
            lattice.point(key),
            {d: [START[d] * r for r in final(key)] for d in DATASETS},
            {d: [START[d]] * SEEDS for d in DATASETS} if starts else {})
            for key in keys]
    return run


def no_working_step(key):
    """AID-CG on the hyper-representation stand-in, made up: small x steps
    (index k) leave the method at its start or move it within the seeds'
    noise, larger ones make it worse, from k = 4 it diverges."""
    k, j = key
    if k >= 4:
        return [math.inf] * SEEDS
    if k <= -2 or j <= -3:
        return [1.0] * SEEDS                   # ends at its start
    if k >= 0:
        return [1.05, 1.1, 1.2]                # worse than its start
    return [0.97, 1.0, 1.04]                   # moves, within the noise


def lattice_2d():
    axes = [Axis("outer_step", 1000.0, 3), Axis("inner_step", 0.4, 3)]
    return Lattice(axes, [a.first() for a in axes])


def test_where_no_step_improves_the_solver_is_reported_not_working():
    lattice = lattice_2d()
    result = search(lattice, fake_run(lattice, no_working_step), widen=2)
    ranking = result.ranking
    assert not ranking.working
    assert all(ranking.no_gain[i] for i, ok in enumerate(ranking.eligible)
               if ok)
    note = report.finish_note(result)
    assert note.startswith(report.NO_WORKING_STEP)
    assert "outer_step in [" in note and "inner_step in [" in note
    table = "\n".join(report.solver_table("S", result, {}))
    assert "| no gain |" in table and "runs start at 1" in table
    # it looked beyond every candidate (the widening of a flat grid)
    assert len(result.keys) > 9 and result.n_rounds == 2


def test_getting_worse_is_not_a_gain():
    worse = scoring.PointScores({"s": 1.0}, {"d": [1.4, 1.5, 1.6]},
                                {"d": [1.31, 1.33, 1.35]})
    assert not worse.improves(["d"])
    better = scoring.PointScores({"s": 1.0}, {"d": [0.8, 0.85, 0.9]},
                                 {"d": [1.0, 1.0, 1.0]})
    assert better.improves(["d"])
    # a gain inside the seeds' spread is not one
    noisy = scoring.PointScores({"s": 1.0}, {"d": [0.5, 0.9, 1.0]},
                                {"d": [1.0, 1.0, 1.0]})
    assert not noisy.improves(["d"])
    # every dataset must gain; unknown starts are not judged
    two = scoring.PointScores({"s": 1.0}, {"a": [0.5] * 3, "b": [2.0] * 3},
                              {"a": [1.0] * 3, "b": [1.0] * 3})
    assert two.improves(["a"]) and not two.improves(["a", "b"])
    assert scoring.PointScores({"s": 1.0}, {"d": [5.0]}).improves(["d"])


def test_a_tie_never_gives_up_a_measured_gain():
    """SBCGF on the regressions, made up from its score table: the
    default's seeds reach the leader's range but its median is 5x the
    leader's; the leader is chosen."""
    def point(step, runs):
        return scoring.PointScores({"step": step}, {"d": runs},
                                   {"d": [1.0] * 3})
    scores = [point(1e-6, [0.0416, 0.134, 0.154]),
              point(1e-5, [0.0117, 0.0728, 0.089]),
              point(1e-4, [0.00838, 0.0136, 0.0148])]
    ranking = scoring.rank(scores, {"step": 1e-5})
    assert ranking.leader == 2 and ranking.chosen == 2
    assert ranking.tied == [2]
    # within the leader's range, the default still wins the tie
    scores[1] = point(1e-5, [0.0117, 0.0140, 0.089])
    assert scoring.rank(scores, {"step": 1e-5}).chosen == 1


def test_where_no_point_improves_the_search_widens_until_one_does():
    """Every point of the first grid ends at its start: the search runs
    beyond both edges until a larger step improves and wins."""
    axis = Axis("outer_step", 0.1, 3)
    lattice = Lattice([axis], [axis.first()])

    def final(key):
        return {3: [0.5] * SEEDS, 4: [0.8] * SEEDS}.get(
            key[0], [1.0] * SEEDS if key[0] < 3 else [math.inf] * SEEDS)
    result = search(lattice, fake_run(lattice, final), widen=10)
    assert result.keys[result.chosen] == (3,) and result.ranking.working
    assert result.directions[0].status == "no gain"     # below: no gain
    assert not result.unfinished and not result.open


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
    assert ranking.no_gain == [True, False]
    # the default gains nothing, so the step that improves is chosen
    assert ranking.chosen == 1 and ranking.candidates == [1]
