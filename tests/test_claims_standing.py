"""Where a method stands against each other method of an experiment
(benchmark_utils/claims/standing.py): better, worse, on par only where
an equivalence test shows it, inconclusive where the runs cannot tell,
not testable against a method that does not work."""
import numpy as np
import pandas as pd

from benchmark_utils.claims import standing
from benchmark_utils.claims.experiments import Experiment
from benchmark_utils.claims.verdicts import NOT_TESTABLE, Method

NEW = Method("New", ("New[",))
METHODS = {"Copy": 1.0, "Slow": 3.0, "Noisy": 1.0, "Stuck": 10.0}


def runs(seed=0, n=10):
    """Each method's F from 10 to its level (times seed noise) over
    samples 0..100; Noisy's noise is too wide to tell, Stuck never
    moves."""
    rng = np.random.default_rng(seed)
    rows = []
    for name, level in {"New": 1.0, **METHODS}.items():
        for rep in range(n):
            spread = 0.5 if name == "Noisy" else 0.02
            end = level * np.exp(spread * rng.standard_normal())
            start = 10.0 if name != "Stuck" else end
            for x in (0, 50, 100):
                rows.append({"dataset": "d", "solver": f"{name}[a=1]",
                             "rep": rep, "iteration": x, "samples": x,
                             "diverged": 0,
                             "value": start + (end - start) * x / 100})
    return pd.DataFrame(rows)


def test_each_pair_gets_the_words_its_runs_support():
    exp = Experiment("toy", "A paper", "Fig. 1", "samples",
                     budget=("samples", 100),
                     methods=(NEW, *(Method(m, (f"{m}[",)) for m in METHODS)),
                     metrics=("value",))
    found = {s.other: s for s in standing.standings(exp, runs(), NEW)}
    assert found["Copy"].word == standing.PARITY
    assert found["Slow"].word == standing.BETTER
    assert found["Noisy"].word == standing.UNDECIDED
    # an inconclusive pair says what its test could have detected
    assert "would have been detected (80% power)" in found["Noisy"].reason
    assert found["Stuck"].word == NOT_TESTABLE
    assert "does not improve on its start" in found["Stuck"].reason
    assert {s.axis for s in found.values()} == {"samples"}
    # and the other way round: worse where the other is better
    slow = Method("Slow", ("Slow[",))
    back = {s.other: s.word for s in standing.standings(exp, runs(), slow)}
    assert back["New"] == standing.WORSE


def test_each_dataset_is_decided_on_its_own():
    # on a second dataset New is three times worse than Copy: decided
    # there, not blended with the first (one curve per run, per dataset)
    first = runs()
    second = runs(seed=1)
    second["dataset"] = "e"
    new = second["solver"] == "New[a=1]"
    second.loc[new, "value"] = 10.0 + (second.loc[new, "value"] - 10.0) * (
        1 - 2 / 9)
    exp = Experiment("toy", "A paper", "Fig. 1", "samples",
                     budget=("samples", 100),
                     methods=(NEW, Method("Copy", ("Copy[",))),
                     metrics=("value",))
    found = {s.dataset: s.word for s in standing.standings(
        exp, pd.concat([first, second], ignore_index=True), NEW)}
    assert found == {"d": standing.PARITY, "e": standing.WORSE}
