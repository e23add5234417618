"""stocBiO (Ji et al. 2021, Alg. 2), BiAdam (Huang et al. 2021, Alg. 1)
and BOME (Ye et al. 2022, Alg. 1; its default steps read the problem's
L_g_start, the full Hessian's curvature at the start) with their defaults
on the quick hyper-representation instance (synthetic
5-way 1-shot tasks, 64 meta-training and 32 meta-test tasks, an MLP
representation): within an iteration budget of about a few seconds of a
plain run, the meta-test accuracy (heads fitted on the held-out tasks'
support sets with the learned representation) rises clearly above both
chance (1 / ways) and its value at the start, seeded."""
import pytest

from conftest import run_solver

QUICK = {}                  # the dataset's defaults are the quick instance
# iterations within a few seconds of a plain run on 2 shared cores
BUDGET = {"stocBiO": 80, "BiAdam": 300, "BOME": 60}


@pytest.mark.parametrize("solver", sorted(BUDGET))
def test_defaults_learn_a_representation(solver):
    records, _ = run_solver(solver, "hyper_representation", QUICK, {},
                            n_iter=BUDGET[solver])
    start, end = records
    assert end["diverged"] == 0
    chance = 1.0 / 5
    assert end["test_accuracy"] >= chance + 0.25, end["test_accuracy"]
    assert end["test_accuracy"] >= start["test_accuracy"] + 0.1, (
        start["test_accuracy"], end["test_accuracy"])
