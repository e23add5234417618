"""The general-bilevel application datasets: hyper-cleaning (papers 002,
004), matrix completion and the coreset toy (paper 003).

Every oracle against torch.func autograd of the values on mini-batches (with
repeated indices) and full passes; inner solutions stationary to 1e-10;
exact hypergradients against finite differences of F(x) = f(x, y*(x)); bad
input rejected before any work; the MNIST IDX reader on tiny fixtures of the
real format."""
import gzip
import itertools
import math
from pathlib import Path

import numpy as np
import pytest
import torch
from torch.func import grad as func_grad
from torch.func import jvp

from benchmark_utils.problems.batches import FullBatch
from benchmark_utils.problems.coreset_toy import CoresetToyBilevel
from benchmark_utils.problems.hyper_cleaning import (corrupt_labels, f1_score,
                                            make_hyper_cleaning, roc_auc)
from benchmark_utils.problems.matrix_completion import (MatrixCompletionBilevel,
                                               make_matrix_completion_data)
from benchmark_utils.data.mnist import (MNIST_FILES, MNIST_MIRRORS, download_mnist,
                                   load_mnist, read_idx, write_idx)
from conftest import component

MNIST_FIXTURE = Path(__file__).parent / "data" / "mnist_small"


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
            def val(a, b):
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
            lambda b: problem.g(x, b, batch=batch))(y)
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
        grad_norm = float(torch.linalg.vector_norm(problem.grad_g_y(x, y_star)))
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


# -- hyper-cleaning data and metrics ------------------------------------------

def test_corruption_flips_exactly_the_requested_fraction_to_other_classes():
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 10, 200)
    noisy, corrupted = corrupt_labels(labels, 0.3, 10, rng)
    assert corrupted.sum() == 60
    assert (noisy[corrupted] != labels[corrupted]).all()
    assert (noisy[~corrupted] == labels[~corrupted]).all()
    assert noisy.min() >= 0 and noisy.max() <= 9


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
    assert f1_score([True, True, False], [True, False, False]) == pytest.approx(
        2 / 3)


def test_hyper_cleaning_on_digits_dataset():
    dataset = component("dataset", "hyper_cleaning").get_instance(
        n_train=60, n_val=30, n_test=30, corruption=0.5, reduction="sum")
    problem = dataset.get_data()["problem"]
    assert (problem.n_lower, problem.n_upper, problem.dim_x) == (60, 30, 60)
    assert problem.dim_y == 10 * 65 and problem.corrupted.sum() == 30
    assert problem.X.contains(problem.x0) and problem.F_star is None
    assert float(problem.A_train[:, :-1].max()) <= 1.0   # pixels in [0, 1]


# -- MNIST --------------------------------------------------------------------

def test_idx_reader_on_mnist_format_fixture():
    images = read_idx(MNIST_FIXTURE / MNIST_FILES["train_images"])
    labels = read_idx(MNIST_FIXTURE / MNIST_FILES["train_labels"])
    assert images.shape == (30, 28, 28) and images.dtype == np.uint8
    assert labels.shape == (30,)
    # the header is MNIST's: magic 0x00000803 / 0x00000801, big-endian sizes
    raw = gzip.open(MNIST_FIXTURE / MNIST_FILES["train_images"]).read()
    assert raw[:4] == bytes([0, 0, 8, 3])
    assert int.from_bytes(raw[4:8], "big") == 30
    np.testing.assert_array_equal(
        images[1], np.frombuffer(raw[16 + 784:16 + 2 * 784], np.uint8)
        .reshape(28, 28))
    train_x, train_y, test_x, test_y = load_mnist(MNIST_FIXTURE)
    assert train_x.shape == (30, 784) and test_x.shape == (12, 784)
    np.testing.assert_allclose(train_x[1], images[1].reshape(-1) / 255.0)
    np.testing.assert_array_equal(train_y, labels)


@pytest.mark.parametrize("array", [
    np.arange(24, dtype=np.uint8).reshape(2, 3, 4),
    np.array([-1.5, 2.25], dtype=np.float64),
    np.array([[1, -2], [3, 4]], dtype=np.int32),
])
@pytest.mark.parametrize("suffix", ["", ".gz"])
def test_idx_round_trip(tmp_path, array, suffix):
    path = tmp_path / f"data.idx{suffix}"
    write_idx(path, array)
    out = read_idx(path)
    assert out.dtype == array.dtype
    np.testing.assert_array_equal(out, array)


def test_idx_reader_rejects_malformed_files(tmp_path):
    bad_magic = tmp_path / "bad"
    bad_magic.write_bytes(b"\x01\x02\x08\x01" + (3).to_bytes(4, "big") + b"abc")
    with pytest.raises(ValueError, match="magic"):
        read_idx(bad_magic)
    truncated = tmp_path / "short"
    truncated.write_bytes(b"\x00\x00\x08\x01" + (5).to_bytes(4, "big") + b"ab")
    with pytest.raises(ValueError, match="shape"):
        read_idx(truncated)


def test_mnist_download_is_atomic_and_idempotent(tmp_path):
    mirror = MNIST_FIXTURE.resolve().as_uri() + "/"
    dest = tmp_path / "mnist"
    download_mnist(dest, mirrors=("file:///nonexistent/", mirror),
                   check_md5=False)
    for name in MNIST_FILES.values():
        assert (dest / name).read_bytes() == (MNIST_FIXTURE / name).read_bytes()
    download_mnist(dest, mirrors=("file:///nonexistent/",))  # nothing missing
    # the real MD5 sums reject the fixture: nothing is left behind
    with pytest.raises(OSError, match="MD5"):
        download_mnist(tmp_path / "checked", mirrors=(mirror,))
    assert not list((tmp_path / "checked").iterdir())


def test_hyper_cleaning_on_mnist_fixture(monkeypatch):
    Dataset = component("dataset", "hyper_cleaning")
    monkeypatch.setattr(Dataset, "_mnist_dir", lambda self: MNIST_FIXTURE)
    dataset = Dataset.get_instance(source="mnist", n_train=16, n_val=10,
                                   n_test=12, corruption=0.25, c=0.05)
    problem = dataset.get_data()["problem"]
    assert (problem.n_lower, problem.n_upper, problem.dim_y) == (16, 10, 7850)
    assert not problem.dense                      # MNIST size: Newton-CG
    y_star = problem.inner_solution(problem.x0)
    assert float(torch.linalg.vector_norm(
        problem.grad_g_y(problem.x0, y_star))) <= 1e-10 * problem.mu_g
    # the fixture's classes are separable: images and labels that the reader
    # misaligned would leave the model at chance level (0.1)
    assert problem.task_metrics(problem.x0, y_star)["test_accuracy"] >= 0.75


def test_missing_mnist_files_name_url_and_path(monkeypatch, tmp_path):
    Dataset = component("dataset", "hyper_cleaning")
    monkeypatch.setattr(Dataset, "_mnist_dir", lambda self: tmp_path)
    with pytest.raises(FileNotFoundError) as error:
        Dataset.get_instance(source="mnist").get_data()
    message = str(error.value)
    assert str(tmp_path) in message
    assert MNIST_MIRRORS[0] + MNIST_FILES["train_images"] in message


# -- matrix completion --------------------------------------------------------

def test_matrix_completion_generator_and_splits():
    M, X_hat, observed, omega1, omega2 = make_matrix_completion_data(
        40, 3, 0.5, 0.8, "random", 0)
    assert np.linalg.matrix_rank(X_hat) == 3
    np.testing.assert_allclose(M - X_hat, (M - X_hat).T)   # E = n(L + L^T)
    omega = np.flatnonzero(observed)
    assert abs(omega.size / M.size - 0.8) < 0.05
    assert not set(omega1) & set(omega2)
    np.testing.assert_array_equal(np.union1d(omega1, omega2), omega)
    _, _, _, same1, same2 = make_matrix_completion_data(40, 3, 0.5, 0.8,
                                                        "same", 0)
    np.testing.assert_array_equal(same1, omega)
    np.testing.assert_array_equal(same2, omega)


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
    torch.testing.assert_close(total.f(x, y), mean.n_upper * mean.f(x, y))


def test_matrix_completion_dataset():
    dataset = component("dataset", "matrix_completion").get_instance(
        n=12, rank=2, split="random")
    problem = dataset.get_data()["problem"]
    assert problem.dim_x == problem.dim_y == 144
    assert problem.n_upper + problem.n_lower == problem.observed.shape[0]
    assert problem.X.contains(problem.x0)
    assert problem.radius == pytest.approx(float(torch.linalg.svdvals(
        problem.X_hat.reshape(12, 12)).sum()))


# -- coreset toy --------------------------------------------------------------

@pytest.mark.parametrize("mu_g, L_g", [(1.0, 2.0), (0.1, 2.0), (1.0, 1.0)])
def test_coreset_toy_construction_and_exact_F_star(mu_g, L_g):
    problem = CoresetToyBilevel(mu_g=mu_g, L_g=L_g)
    eigenvalues = torch.linalg.eigvalsh(problem.A.T @ problem.A)
    torch.testing.assert_close(eigenvalues, torch.tensor(
        [mu_g, L_g], dtype=torch.float64))
    assert problem.X.contains(problem.x0)
    torch.testing.assert_close(problem.x0, torch.full((4,), 0.25,
                                                      dtype=torch.float64))
    # F* against an independent fine enumeration of the simplex
    grid = 60
    best = min(
        float(problem.value(torch.tensor([i, j, k, grid - i - j - k],
                                         dtype=torch.float64) / grid))
        for i, j in itertools.product(range(grid + 1), repeat=2)
        if i + j <= grid for k in range(grid - i - j + 1))
    assert problem.F_star <= best + 1e-12
    assert best - problem.F_star <= 1e-2
    lam_star = torch.tensor([0.0, 0.5, 0.5, 0.0], dtype=torch.float64)
    assert float(problem.value(lam_star)) == pytest.approx(problem.F_star,
                                                           abs=1e-14)
    assert problem.F_star == pytest.approx(9 / 4)
    # first-order optimality of lam*: the FW gap vanishes there
    hypergrad = problem.hypergradient(lam_star)
    gap = hypergrad @ lam_star - hypergrad.min()
    assert abs(float(gap)) <= 1e-12
    assert problem.task_metrics(lam_star, problem.inner_solution(lam_star))[
        "theta_error"] <= 1e-15


# -- bad input ----------------------------------------------------------------

@pytest.mark.parametrize("params, match", [
    ({"corruption": 1.0}, "corruption"),
    ({"corruption": -0.1}, "corruption"),
    ({"c": 0.0}, "c must"),
    ({"c": -1.0}, "c must"),
    ({"source": "cifar10"}, "source"),
    ({"n_train": 0}, "n_train"),
    ({"n_val": -5}, "n_val"),
    ({"n_test": 0}, "n_test"),
    ({"reduction": "median"}, "reduction"),
    ({"n_train": 1500, "n_val": 400}, "n_train \\+ n_val \\+ n_test"),
    ({"source": "mnist", "n_test": 20000}, "n_test"),
])
def test_bad_hyper_cleaning_parameters(params, match, monkeypatch, tmp_path):
    Dataset = component("dataset", "hyper_cleaning")
    # checked before the (here missing) MNIST files are looked for
    monkeypatch.setattr(Dataset, "_mnist_dir", lambda self: tmp_path)
    with pytest.raises(ValueError, match=match):
        Dataset.get_instance(**params).get_data()


@pytest.mark.parametrize("params, match", [
    ({"n": 0}, "n must"),
    ({"rank": 30, "n": 20}, "rank"),
    ({"noise": 1.0}, "noise"),
    ({"p_observed": 0.0}, "p_observed"),
    ({"delta": 0.0}, "delta"),
    ({"lambda1": -0.1}, "lambda1"),
    ({"lambda2": 0.0}, "lambda2"),
    ({"split": "halves"}, "split"),
    ({"reduction": "total"}, "reduction"),
])
def test_bad_matrix_completion_parameters(params, match):
    dataset = component("dataset", "matrix_completion").get_instance(**params)
    with pytest.raises(ValueError, match=match):
        dataset.get_data()


@pytest.mark.parametrize("params, match", [
    ({"mu_g": 0.0}, "mu_g"),
    ({"mu_g": 1.0, "L_g": 0.5}, "L_g"),
])
def test_bad_coreset_parameters(params, match):
    dataset = component("dataset", "coreset_toy").get_instance(**params)
    with pytest.raises(ValueError, match=match):
        dataset.get_data()
