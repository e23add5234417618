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


@pytest.mark.parametrize("system_batch", ["lower", "upper"])
def test_aid_cg_learns_with_its_system_on_the_upper_tasks(system_batch):
    """AID-CG (outer step 0.3, inner step 4): with its linear system on the
    upper batch's own tasks (Huang et al. 2021's one meta-batch for both
    levels) it learns a representation; on a lower batch drawn apart, the
    Hessian of other tasks is zero on the right-hand side's heads and it
    does not (docs/problems_hyper_representation.md, "Mini-batch
    Hessians"). Both are charged the same samples."""
    params = {"system_batch": system_batch, "outer_step": 0.3,
              "inner_step": 4.0, "T": 16, "batch_size": 4}
    records, _ = run_solver("AID-CG", "hyper_representation", QUICK,
                            params, n_iter=100)
    start, end = records
    assert end["n_samples_lower"] == 100 * (16 * 4 + 4)
    assert end["n_samples_upper"] == 100 * 4
    gained = end["test_accuracy"] - start["test_accuracy"]
    if system_batch == "upper":
        assert end["diverged"] == 0 and gained >= 0.1, gained
    else:
        assert gained < 0.1, gained
