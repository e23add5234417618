"""The "Without BO" baseline of Kwon et al. 2023, §5: x stays at the
problem's ``single_level_x`` (x = 0, uniform weights, on hyper-cleaning), y
follows plain SGD on g(x_s, .). One iteration by hand, the counts, the
start, the skip and the effect on a tiny hyper-cleaning instance.

The quadratic declares no ``single_level_x`` (it has no single-level
counterpart), so the default run skips Without-BO there; the SGD checks
give the tiny quadratic's instance one (a point other than its x0), the
exact hand-written iterations being simplest on the quadratic."""
import pytest
import torch

from conftest import component, make_problem, run_solver

TINY = dict(dim_x=5, dim_y=4, n_samples=30, constraint="none")
TINY_CLEANING = dict(n_train=200, n_val=100, n_test=100)


def single_level_x(problem):
    """The tiny quadratic's stand-in single-level x: x0 + 0.1, so that a
    run that kept x0 instead would show."""
    return problem.x0 + 0.1


@pytest.fixture(autouse=True)
def quadratic_as_baseline(monkeypatch):
    problem = make_problem("quadratic", **TINY)
    monkeypatch.setattr(problem, "single_level_x", single_level_x(problem),
                        raising=False)


def test_skips_problems_without_a_single_level_x():
    solver = component("solver", "Without-BO").get_instance()
    for name in ("matrix_completion", "coreset_toy"):
        assert make_problem(name).single_level_x is None
        skip, reason = solver.skip_problem(make_problem(name))
        assert skip and "single-level x" in reason, name
    cleaning = make_problem("hyper_cleaning", **TINY_CLEANING)
    # x = 0: every training sample weighed sigma(0) = 1/2, plain training
    torch.testing.assert_close(cleaning.single_level_x,
                               torch.zeros_like(cleaning.x0), rtol=0, atol=0)
    assert solver.skip_problem(cleaning) == (False, None)


def test_iterations_match_sgd_on_the_lower_level():
    _, start = run_solver("Without-BO", "quadratic", TINY,
                          {"batch_size": None}, n_iter=0)
    _, after = run_solver("Without-BO", "quadratic", TINY,
                          {"batch_size": None}, n_iter=3)
    P = make_problem("quadratic", **TINY)
    H, C, d = P.H_bar, P.C_bar, P.d_bar
    x = single_level_x(P)
    y = start.y.clone()
    for _ in range(3):
        y = y - start.steps.inner_step * (H @ y + C @ x + d)
    assert start.steps.inner_step == pytest.approx(2 / (P.mu_g + P.L_g),
                                                   rel=1e-15)
    torch.testing.assert_close(after.x, x, rtol=0, atol=0)
    torch.testing.assert_close(after.y, y, rtol=1e-12, atol=1e-12)


def test_one_lower_batch_per_iteration():
    records, _ = run_solver("Without-BO", "quadratic", TINY,
                            {"batch_size": 4}, n_iter=6)
    last = records[-1]
    assert last["n_samples_upper"] == 0
    assert last["n_samples_lower"] == 6 * 4
    assert last["n_grad_evals"] == 6 * 4
    assert last["n_hvp"] == 0 and last["n_projections"] == 0


def test_x_ignores_a_random_init():
    _, solver = run_solver("Without-BO", "quadratic", TINY,
                           {"init": "random"}, n_iter=2)
    torch.testing.assert_close(solver.x, solver.problem.single_level_x,
                               rtol=0, atol=0)


def test_hyper_cleaning_trains_the_model_with_uniform_weights():
    records, _ = run_solver("Without-BO", "hyper_cleaning", TINY_CLEANING,
                            {"inner_step": 1.0, "batch_size": 32}, n_iter=300,
                            eval_at=[0])
    start, end = records
    assert end["diverged"] == 0
    assert end["test_accuracy"] >= start["test_accuracy"] + 0.3
    # no outer update: the weights, hence the cleaning AUC, stay at x_s's
    assert end["cleaning_auc"] == start["cleaning_auc"]


def test_bad_inner_step():
    with pytest.raises(ValueError, match="inner_step must be"):
        run_solver("Without-BO", "quadratic", TINY, {"inner_step": -1.0},
                   n_iter=1)


def test_no_outer_step():
    # x never moves: no x step, so no outer_step parameter, and the only
    # resolved step is alpha
    solver = component("solver", "Without-BO")
    assert "outer_step" not in solver.parameters
    _, run = run_solver("Without-BO", "quadratic", TINY, {}, n_iter=0)
    assert list(run.steps) == ["inner_step"]
