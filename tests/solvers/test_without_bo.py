"""The "Without BO" baseline of Kwon et al. 2023, §5: x stays at the
dataset's x0 (uniform weights on hyper-cleaning), y follows plain SGD on
g(x0, .). One iteration by hand, the counts, the start, the skip and the
effect on a tiny hyper-cleaning instance.

The quadratic does not declare ``x0_is_no_bilevel_baseline`` (its x0 is
no "no bilevel" choice), so the default run skips Without-BO there; the
SGD checks mark the tiny quadratic's instance as declaring it, the
exact hand-written iterations being simplest on the quadratic."""
import pytest
import torch

from conftest import component, make_problem, run_solver

TINY = dict(dim_x=5, dim_y=4, n_samples=30, constraint="none")
TINY_CLEANING = dict(n_train=200, n_val=100, n_test=100)


@pytest.fixture(autouse=True)
def quadratic_as_baseline(monkeypatch):
    monkeypatch.setattr(make_problem("quadratic", **TINY),
                        "x0_is_no_bilevel_baseline", True, raising=False)


def test_skips_problems_where_x0_is_not_the_baseline():
    solver = component("solver", "Without-BO").get_instance()
    for name in ("matrix_completion", "coreset_toy"):
        skip, reason = solver.skip_problem(make_problem(name))
        assert skip and "no-bilevel baseline" in reason, name
    cleaning = make_problem("hyper_cleaning", **TINY_CLEANING)
    assert cleaning.x0_is_no_bilevel_baseline


def test_iterations_match_sgd_on_the_lower_level():
    _, start = run_solver("Without-BO", "quadratic", TINY,
                          {"batch_size": None}, n_iter=0)
    _, after = run_solver("Without-BO", "quadratic", TINY,
                          {"batch_size": None}, n_iter=3)
    P = make_problem("quadratic", **TINY)
    H, C, d = P.H_bar, P.C_bar, P.d_bar
    y = start.y.clone()
    for _ in range(3):
        y = y - start.inner_step_ * (H @ y + C @ P.x0 + d)
    assert start.inner_step_ == pytest.approx(2 / (P.mu_g + P.L_g), rel=1e-15)
    torch.testing.assert_close(after.x, P.x0, rtol=0, atol=0)
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
    torch.testing.assert_close(solver.x, solver.problem.x0, rtol=0, atol=0)


def test_hyper_cleaning_trains_the_model_with_uniform_weights():
    records, _ = run_solver("Without-BO", "hyper_cleaning", TINY_CLEANING,
                            {"inner_step": 1.0, "batch_size": 32}, n_iter=300,
                            eval_at=[0])
    start, end = records
    assert end["diverged"] == 0
    assert end["test_accuracy"] >= start["test_accuracy"] + 0.3
    # no outer update: the weights, hence the cleaning AUC, stay at x0's
    assert end["cleaning_auc"] == start["cleaning_auc"]


def test_bad_inner_step():
    with pytest.raises(ValueError, match="inner_step must be"):
        component("solver", "Without-BO").get_instance(inner_step=-1.0)


def test_a_given_outer_step_is_refused():
    # x never moves: an outer step would be silently ignored
    with pytest.raises(ValueError, match="outer_step must be None"):
        component("solver", "Without-BO").get_instance(outer_step=0.1)
