"""The general-bilevel problems (hyper-cleaning, matrix completion, the
coreset toy): every oracle against torch.func autograd of the values on
mini-batches (with repeated indices) and full passes; declared curvature
bounds; inner solutions stationary to 1e-10; exact hypergradients against
finite differences of F(x) = f(x, y*(x)); then each problem's own
closed forms, solvers and task metrics."""
import math

import numpy as np
import pytest
import torch
from torch.func import grad as func_grad
from torch.func import jvp

from benchmark_utils.data.matrix_completion import make_matrix_completion_data
from benchmark_utils.problems.batches import FullBatch
from benchmark_utils.problems.cleaning_metrics import f1_score, roc_auc
from benchmark_utils.problems.coreset_toy import CoresetToyBilevel
from benchmark_utils.problems.hyper_cleaning import make_hyper_cleaning
from benchmark_utils.problems.matrix_completion import MatrixCompletionBilevel


def hyper_cleaning_problem(reduction="mean", hessian_solver="auto", seed=0):
    rng = np.random.default_rng(seed)
    features = rng.random((40, 6))
    labels = rng.integers(0, 3, 40)
    return make_hyper_cleaning(features, labels, 20, 12, 8, 0.25,
                               0.05, reduction, seed=seed, n_classes=3,
                               hessian_solver=hessian_solver)


def matrix_completion_problem(split="same", reduction="mean", seed=0):
    M, X_hat, observed, omega1, omega2 = make_matrix_completion_data(
        7, 2, 0.5, 0.8, split, seed)
    return MatrixCompletionBilevel(M, X_hat, omega1, omega2, observed=observed,
                                   reduction=reduction)


PROBLEMS = {
    "hyper_cleaning_mean": lambda: hyper_cleaning_problem("mean"),
    "hyper_cleaning_sum": lambda: hyper_cleaning_problem("sum"),
    "hyper_cleaning_cg": lambda: hyper_cleaning_problem("sum", "cg"),
    "matrix_completion_same": lambda: matrix_completion_problem("same"),
    "matrix_completion_random_sum": lambda: matrix_completion_problem(
        "random", "sum"),
    "coreset_toy_1": lambda: CoresetToyBilevel(mu_g=1.0),
    "coreset_toy_0.1": lambda: CoresetToyBilevel(mu_g=0.1, L_g=3.0),
}


def random_point(problem, seed):
    gen = torch.Generator().manual_seed(seed)
    x = problem.x0 + 0.5 * torch.randn(problem.dim_x, generator=gen,
                                       dtype=torch.float64)
    y = problem.y0 + torch.randn(problem.dim_y, generator=gen,
                                 dtype=torch.float64)
    return x, y, gen


def batches(n):
    # a repeated index on purpose: sampling is with replacement
    return [torch.tensor([0, n - 1, 0]), None, FullBatch(n)]


@pytest.mark.parametrize("name", PROBLEMS)
def test_oracles_match_autograd(name):
    problem = PROBLEMS[name]()
    x, y, gen = random_point(problem, 1)
    v = torch.randn(problem.dim_y, generator=gen, dtype=torch.float64)
    close = dict(rtol=1e-10, atol=1e-12)
    for level, n in (("f", problem.n_upper), ("g", problem.n_lower)):
        value = getattr(problem, level)
        for batch in batches(n):
            def val(a, b, value=value, batch=batch):
                return value(a, b, batch=batch)
            gx, gy = func_grad(val, argnums=(0, 1))(x, y)
            pair = getattr(problem, f"grad_{level}")(x, y, batch=batch)
            torch.testing.assert_close(pair[0], gx, **close)
            torch.testing.assert_close(pair[1], gy, **close)
            torch.testing.assert_close(
                getattr(problem, f"grad_{level}_x")(x, y, batch=batch), gx,
                **close)
            torch.testing.assert_close(
                getattr(problem, f"grad_{level}_y")(x, y, batch=batch), gy,
                **close)
            if level == "g":
                def grad_y(b):
                    return func_grad(val, argnums=1)(x, b)

                def grad_x(b):
                    return func_grad(val, argnums=0)(x, b)
                torch.testing.assert_close(
                    problem.hvp_yy_g(x, y, v, batch=batch),
                    jvp(grad_y, (y,), (v,))[1], **close)
                torch.testing.assert_close(
                    problem.hvp_xy_g(x, y, v, batch=batch),
                    jvp(grad_x, (y,), (v,))[1], **close)
        # a batch value is the mean of its samples' values, the full value
        # the mean over all samples
        singles = [value(x, y, batch=torch.tensor([i])) for i in range(n)]
        torch.testing.assert_close(value(x, y), torch.stack(singles).mean())
        torch.testing.assert_close(
            value(x, y, batch=torch.tensor([0, n - 1, 0])),
            (2 * singles[0] + singles[n - 1]) / 3)


@pytest.mark.parametrize("name", PROBLEMS)
def test_declared_curvature_bounds_hold(name):
    # mu_g <= eig(grad^2_yy g) on every batch; L_g bounds one sample's (so
    # every batch's) Hessian, L_g_full the full sum's
    problem = PROBLEMS[name]()
    x, y, _ = random_point(problem, 11)
    for batch, bound in ((None, problem.L_g_full),
                         (torch.tensor([0]), problem.L_g),
                         (torch.tensor([problem.n_lower - 1]), problem.L_g)):
        hessian = torch.func.hessian(
            lambda b, batch=batch: problem.g(x, b, batch=batch))(y)
        eig = torch.linalg.eigvalsh(hessian)
        assert float(eig[0]) >= problem.mu_g * (1 - 1e-12)
        assert float(eig[-1]) <= bound * (1 + 1e-12)
    assert problem.L_g_full <= problem.L_g


@pytest.mark.parametrize("name", PROBLEMS)
def test_inner_solution_is_stationary(name):
    problem = PROBLEMS[name]()
    for seed in (4, 5):
        x, _, _ = random_point(problem, seed)
        y_star = problem.inner_solution(x)
        grad_norm = float(torch.linalg.vector_norm(
            problem.grad_g_y(x, y_star)))
        # mu_g-strong convexity: ||y - y*|| <= ||grad|| / mu_g <= 1e-10
        assert grad_norm <= 1e-10 * problem.mu_g, grad_norm


@pytest.mark.parametrize("name", PROBLEMS)
def test_hypergradient_matches_finite_differences(name):
    problem = PROBLEMS[name]()
    x, _, gen = random_point(problem, 6)
    direction = torch.randn(problem.dim_x, generator=gen, dtype=torch.float64)
    direction /= torch.linalg.vector_norm(direction)
    eps = 1e-5
    finite_diff = (problem.value(x + eps * direction)
                   - problem.value(x - eps * direction)) / (2 * eps)
    exact = problem.hypergradient(x) @ direction
    scale = float(torch.linalg.vector_norm(problem.hypergradient(x)))
    assert abs(float(finite_diff - exact)) <= 1e-6 * max(scale, 1e-3), (
        float(finite_diff), float(exact))


# -- hyper-cleaning ---------------------------------------------------------


def test_hyper_cleaning_lower_batch_touches_only_its_coordinates():
    problem = hyper_cleaning_problem()
    x, y, _ = random_point(problem, 2)
    batch = torch.tensor([3, 5, 3])
    grad_x = problem.grad_g_x(x, y, batch=batch)
    untouched = torch.ones(problem.dim_x, dtype=torch.bool)
    untouched[batch] = False
    assert (grad_x[untouched] == 0).all() and (grad_x[batch] != 0).all()
    # the repeated index counts twice: 2/3 of sample 3's own gradient
    single = problem.grad_g_x(x, y, batch=torch.tensor([3]))
    torch.testing.assert_close(grad_x[3], 2 / 3 * single[3])


def test_hyper_cleaning_reductions_scale_the_losses():
    mean, total = hyper_cleaning_problem("mean"), hyper_cleaning_problem("sum")
    x, y, _ = random_point(mean, 3)
    ridge = mean.c * (y @ y)
    torch.testing.assert_close(total.f(x, y), mean.n_upper * mean.f(x, y))
    torch.testing.assert_close(total.g(x, y) - ridge,
                               mean.n_lower * (mean.g(x, y) - ridge))
    assert mean.mu_g == total.mu_g == 2 * mean.c


def test_hyper_cleaning_dense_and_cg_solvers_agree():
    dense = hyper_cleaning_problem("sum", "dense")
    cg = hyper_cleaning_problem("sum", "cg")
    x, _, _ = random_point(dense, 7)
    torch.testing.assert_close(cg.inner_solution(x), dense.inner_solution(x),
                               rtol=0, atol=1e-10)
    torch.testing.assert_close(cg.hypergradient(x), dense.hypergradient(x),
                               rtol=1e-8, atol=1e-12)


def test_hyper_cleaning_inner_solution_is_warm_started_consistently():
    problem = hyper_cleaning_problem()
    x1, _, _ = random_point(problem, 8)
    x2, _, _ = random_point(problem, 9)
    y2_cold = problem.inner_solution(x2)
    problem.inner_solution(x1)                    # moves the warm start
    torch.testing.assert_close(problem.inner_solution(x2), y2_cold,
                               rtol=0, atol=1e-10)


def test_hyper_cleaning_task_metrics():
    problem = hyper_cleaning_problem()
    clean = torch.as_tensor(~problem.corrupted)
    separating = torch.where(clean, 2.0, -2.0).double()
    y = problem.inner_solution(problem.x0)
    metrics = problem.task_metrics(separating, y)
    assert metrics["cleaning_auc"] == 1.0 and metrics["cleaning_f1"] == 1.0
    at_start = problem.task_metrics(problem.x0, y)
    assert at_start["cleaning_auc"] == 0.5 and at_start["cleaning_f1"] == 0.0
    logits = problem.A_test @ y.reshape(problem.n_classes, -1).T
    expected = (logits.argmax(1) == problem.labels_test).double().mean()
    assert at_start["test_accuracy"] == pytest.approx(float(expected))
    assert math.isnan(roc_auc([0.1, 0.2], [True, True]))
    assert math.isnan(f1_score([True, False], [False, False]))
    assert f1_score([True, True, False],
                    [True, False, False]) == pytest.approx(2 / 3)


@pytest.mark.parametrize("seed", range(4))
def test_cleaning_scores_equal_scikit_learn(seed):
    from sklearn.metrics import f1_score as sklearn_f1
    from sklearn.metrics import roc_auc_score
    rng = np.random.default_rng(seed)
    clean = rng.random(200) < 0.7
    # rounded scores: many ties, which both count 1/2
    scores = np.round(rng.random(200) + 0.3 * clean, 1)
    assert roc_auc(scores, clean) == pytest.approx(
        roc_auc_score(clean, scores), abs=1e-14)
    flagged = scores < 0.5
    for predicted in (flagged, np.zeros(200, dtype=bool)):
        assert f1_score(predicted, ~clean) == pytest.approx(
            sklearn_f1(~clean, predicted, zero_division=0.0), abs=1e-14)


# -- matrix completion --------------------------------------------------------


def test_matrix_completion_normalized_error_and_radius():
    problem = matrix_completion_problem()
    y = problem.y0
    assert problem.task_metrics(problem.X_hat, y)["normalized_error"] == 0.0
    assert problem.task_metrics(torch.zeros_like(y), y)[
        "normalized_error"] == pytest.approx(1.0)
    nuclear = torch.linalg.svdvals(problem.X_hat.reshape(7, 7)).sum()
    assert problem.radius == pytest.approx(float(nuclear))
    # the lower Hessian is diagonal, 2 lambda2 <= H: mu_g = 2 lambda2
    x, y, _ = random_point(problem, 10)
    diag = problem.hessian_diagonal(y)
    unit = torch.zeros(problem.dim_y, dtype=torch.float64)
    unit[3] = 1.0
    torch.testing.assert_close(problem.hvp_yy_g(x, y, unit), diag * unit)
    assert float(diag.min()) >= problem.mu_g == 2 * problem.lambda2


def test_matrix_completion_reduction_decides_whether_F_completes_M():
    # the documented effect of the paper's 1/|O| factors: with them the data
    # terms are negligible next to lambda2 and minimizing F barely moves the
    # normalized error; with sums the same exact Frank-Wolfe run completes M
    errors = {}
    for reduction in ("mean", "sum"):
        M, X_hat, observed, omega1, omega2 = make_matrix_completion_data(
            20, 2, 0.5, 0.8, "same", 0)
        problem = MatrixCompletionBilevel(M, X_hat, omega1, omega2,
                                          observed=observed,
                                          reduction=reduction)
        x = problem.x0
        for k in range(100):
            s = problem.X.lmo(problem.hypergradient(x))
            x = x + 2 / (k + 2) * (s - x)
        errors[reduction] = problem.task_metrics(x, x)["normalized_error"]
    assert errors["sum"] < 0.3 < 0.6 < errors["mean"], errors
    mean, total = matrix_completion_problem("same", "mean"), \
        matrix_completion_problem("same", "sum")
    x, y, _ = random_point(mean, 12)
    torch.testing.assert_close(total.f(x, y),
                               len(mean.omega1) * mean.f(x, y))
