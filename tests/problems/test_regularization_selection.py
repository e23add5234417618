"""Regularization selection (benchmark_bilevel's ijcnn1 / covtype problem):
oracles and per-sample rows against torch.func autograd, the dense Hessian
and the declared curvature constants, certified inner solutions and exact
hypergradients (finite differences of F) on both exact paths (Cholesky,
subsampled-preconditioned CG), the dataset on its synthetic default and on
the real-format fixtures (tests/data/ijcnn1_small, covtype_small), file
and parameter errors, and a short SOBA run. No network."""
import bz2
import shutil
import urllib.request
from pathlib import Path

import numpy as np
import pytest
import torch
from torch.func import grad as func_grad
from torch.func import hessian, jvp

from benchmark_utils.data import regularization_selection as data
from benchmark_utils.data.libsvm import read_libsvm, write_libsvm
from benchmark_utils.data.verify import CorruptDataError
from benchmark_utils.problems import regularization_selection_exact as exact
from benchmark_utils.problems.batches import FullBatch
from benchmark_utils.problems.regularization_selection import (
    REG_INIT,
    RegularizationSelectionBilevel,
)

from conftest import component, run_solver

FIXTURES = Path(__file__).resolve().parents[1] / "data"
NAME = "regularization_selection"
# (n_classes, penalty, reg)
VARIANTS = [(2, "feature", "exp"), (2, "feature", "linear"),
            (3, "feature", "exp"), (3, "class", "exp"),
            (4, "class", "linear")]


def small_problem(n_classes=2, penalty="feature", reg="exp", seed=0,
                  n_features=5):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((90, n_features))
    labels = rng.integers(0, n_classes, 90)
    return RegularizationSelectionBilevel(
        A[:40], labels[:40], A[40:70], labels[40:70], A[70:], labels[70:],
        n_classes=n_classes, reg=reg, penalty=penalty)


def point(problem, seed=1):
    gen = torch.Generator().manual_seed(seed)
    x = problem.X.project(problem.x0 + 0.4 * torch.randn(
        problem.dim_x, generator=gen, dtype=torch.float64))
    y, v = (torch.randn(problem.dim_y, generator=gen, dtype=torch.float64)
            for _ in range(2))
    return x, y, v


# the rows of the small ijcnn1 fixtures, and of the real files
FIXTURE_ROWS = {"train": 60, "test": 50}
REAL_ROWS = dict(data.IJCNN1_ROWS)


@pytest.fixture(autouse=True)
def fixture_sized_ijcnn1(monkeypatch):
    """The small fixtures stand for ijcnn1's files: their row counts are
    the expected ones (the test of the real counts sets those back)."""
    monkeypatch.setattr(data, "IJCNN1_ROWS", FIXTURE_ROWS)


def dataset(monkeypatch=None, **params):
    Dataset = component("dataset", NAME)
    source = params.get("source", "synthetic")
    if monkeypatch is not None:
        monkeypatch.setattr(Dataset, "_data_dir",
                            lambda self: FIXTURES / f"{source}_small")
    return Dataset.get_instance(**params)


@pytest.mark.parametrize("variant", VARIANTS, ids=str)
def test_oracles_and_rows_match_autograd(variant):
    problem = small_problem(*variant)
    x, y, v = point(problem)
    close = dict(rtol=1e-10, atol=1e-13)
    for batch in (torch.tensor([0, 7, 0]), None, FullBatch(40)):
        for level in ("f", "g"):
            def value(a, b, level=level, batch=batch):
                return getattr(problem, level)(a, b, batch=batch)
            gx, gy = func_grad(value, argnums=(0, 1))(x, y)
            pair = getattr(problem, f"grad_{level}")(x, y, batch=batch)
            torch.testing.assert_close(pair, (gx, gy), **close)
            torch.testing.assert_close(getattr(problem, f"grad_{level}_x")(
                x, y, batch=batch), gx, **close)
            torch.testing.assert_close(getattr(problem, f"grad_{level}_y")(
                x, y, batch=batch), gy, **close)
        for name, part in (("hvp_yy_g", "grad_g_y"),
                           ("hvp_xy_g", "grad_g_x")):
            def partial(b, part=part, batch=batch):
                return getattr(problem, part)(x, b, batch=batch)
            torch.testing.assert_close(
                getattr(problem, name)(x, y, v, batch=batch),
                jvp(partial, (y,), (v,))[1], **close)
    # per-sample rows: row k is the oracle on the one-sample batch k
    batch = torch.tensor([3, 0, 3])
    rows = {name: getattr(problem, name + "_rows")(x, y, *extra, batch=batch)
            for name, extra in (("grad_f", ()), ("grad_g_y", ()),
                                ("hvp_yy_g", (v,)), ("hvp_xy_g", (v,)))}
    for k, j in enumerate(batch.tolist()):
        one = torch.tensor([j])
        torch.testing.assert_close(
            (rows["grad_f"][0][k], rows["grad_f"][1][k]),
            problem.grad_f(x, y, batch=one), **close)
        torch.testing.assert_close(rows["grad_g_y"][k],
                                   problem.grad_g_y(x, y, batch=one), **close)
        for name in ("hvp_yy_g", "hvp_xy_g"):
            torch.testing.assert_close(rows[name][k], getattr(problem, name)(
                x, y, v, batch=one), **close)


@pytest.mark.parametrize("variant", VARIANTS, ids=str)
def test_dense_hessian_and_declared_curvature(variant):
    problem = small_problem(*variant)
    x, y, _ = point(problem)
    H = hessian(lambda b: problem.g(x, b))(y)
    torch.testing.assert_close(problem.dense_hessian(x, y), H, rtol=1e-10,
                               atol=1e-13)
    eig = torch.linalg.eigvalsh(H)
    assert problem.L_g_full >= float(eig[-1])
    one = hessian(lambda b: problem.g(x, b, batch=torch.tensor([5])))(y)
    assert problem.L_g >= float(torch.linalg.eigvalsh(one)[-1])
    if variant[2] == "linear":          # bounds valid over the whole box
        assert problem.mu_g <= float(eig[0])
    start = torch.linalg.eigvalsh(problem.dense_hessian(problem.x0,
                                                        problem.y0))
    assert problem.L_g_start == pytest.approx(float(start[-1]), rel=1e-10)
    # exp: the smallest strength at x0 (exp(-1)), a lower bound on the
    # Hessian's smallest eigenvalue there; linear: the box's floor
    assert problem.mu_g == (REG_INIT if variant[2] == "exp" else 1e-4)
    assert problem.mu_g <= float(start[0]) * (1 + 1e-12)


@pytest.mark.parametrize("dense", [True, False], ids=["cholesky", "cg"])
@pytest.mark.parametrize("variant", VARIANTS[1:4], ids=str)
def test_inner_solution_and_hypergradient_are_exact(variant, dense,
                                                    monkeypatch):
    if not dense:   # a dense formation on 10 rows only: the CG path
        dim_y = small_problem(*variant).dim_y
        monkeypatch.setattr(exact, "DENSE_MAX_WORK", 10 * dim_y ** 2)
    problem = small_problem(*variant)
    assert problem.dense is dense
    x, _, _ = point(problem)
    y_star = problem.inner_solution(x)
    grad = float(torch.linalg.vector_norm(problem.grad_g_y(x, y_star)))
    assert grad <= 1e-10 * problem.mu(x)
    assert problem.inner_accuracy <= 1e-10
    hypergrad = problem.hypergradient(x, y_star)
    gen = torch.Generator().manual_seed(3)
    for _ in range(2):
        u = torch.randn(problem.dim_x, generator=gen, dtype=torch.float64)
        h = 1e-5
        fd = (float(problem.value(x + h * u)) - float(problem.value(
            x - h * u))) / (2 * h)
        assert float(hypergrad @ u) == pytest.approx(fd, rel=1e-6, abs=1e-9)


def test_synthetic_default_instance():
    problem = dataset().get_data()["problem"]
    assert (problem.n_lower, problem.n_upper, problem.A_test.shape[0]) == (
        1000, 1000, 1000)
    assert problem.dim_x == problem.dim_y == 22 and problem.n_classes == 2
    assert problem.X.unbounded and problem.X.contains(problem.x0)
    assert problem.F_star is None and problem.dense
    linear = dataset(reg="linear").get_data()["problem"]
    assert not linear.X.unbounded and linear.X.contains(linear.x0)
    assert linear.mu_g == 1e-4
    for p in (problem, linear):     # upstream's lambda ~ U(0, 1)
        x, _ = p.random_start(torch.Generator().manual_seed(0))
        lam = p.strengths(x)
        assert p.X.contains(x) and bool(((lam > 0) & (lam <= 1)).all())


def test_ijcnn1_fixture_builds_the_binary_problem(monkeypatch):
    ds = dataset(monkeypatch, source="ijcnn1")
    ds.check_run_ready()            # both files present, no checksum
    problem = ds.get_data()["problem"]
    # 60 training lines; the 50 test lines: 40 validation, 10 test
    assert (problem.n_lower, problem.n_upper, problem.A_test.shape[0]) == (
        60, 40, 10)
    assert problem.dim_x == problem.dim_y == 22
    assert float(problem.A_train.abs().max()) <= 1.0     # as given
    y_star = problem.inner_solution(problem.x0)
    # separable fixture: misaligned features and labels give chance level
    accuracy = problem.task_metrics(problem.x0, y_star)["test_accuracy"]
    assert 0.8 <= accuracy <= 1.0


def test_covtype_fixture_builds_the_multiclass_problem(monkeypatch):
    problem = dataset(monkeypatch, source="covtype").get_data()["problem"]
    # 84 lines: 17 test, then 14 of the remaining 67 for validation
    assert (problem.n_lower, problem.n_upper, problem.A_test.shape[0]) == (
        53, 14, 17)
    assert problem.n_classes == 7 and problem.dim_y == 7 * 54
    assert problem.dim_x == 7                   # per class, as upstream
    std = problem.A_train.std(dim=0, unbiased=False)
    assert bool((((std - 1).abs() < 1e-12) | (std == 0)).all())
    torch.testing.assert_close(problem.A_train.mean(0),
                               torch.zeros(54, dtype=torch.float64))
    y_star = problem.inner_solution(problem.x0)
    accuracy = problem.task_metrics(problem.x0, y_star)["test_accuracy"]
    assert 0.8 <= accuracy <= 1.0
    per_feature = dataset(monkeypatch, source="covtype",
                          penalty="feature").get_data()["problem"]
    assert per_feature.dim_x == 54


def test_covtype_run_check_compares_the_published_checksum(monkeypatch):
    # the fixture is not the published file
    with pytest.raises(CorruptDataError, match="SHA-256") as raised:
        dataset(monkeypatch, source="covtype").check_run_ready()
    assert data.prepare_command("covtype") in str(raised.value)


@pytest.mark.parametrize("source", ["ijcnn1", "covtype"])
def test_missing_files_name_the_prepare_command(source, monkeypatch,
                                                tmp_path):
    Dataset = component("dataset", NAME)
    monkeypatch.setattr(Dataset, "_data_dir", lambda self: tmp_path)
    ds = Dataset.get_instance(source=source)
    for action in (ds.check_run_ready, ds.make_data):
        with pytest.raises(FileNotFoundError) as raised:
            action()
        message = str(raised.value)
        assert data.prepare_command(source) in message
        assert str(tmp_path) in message


def test_corrupt_files_are_named(tmp_path):
    command = data.prepare_command("ijcnn1")
    for name in data.IJCNN1_FILES.values():
        shutil.copy(FIXTURES / "ijcnn1_small" / name, tmp_path / name)
    path = tmp_path / "ijcnn1.bz2"
    path.write_bytes(path.read_bytes()[:-40])            # truncated
    with pytest.raises(CorruptDataError, match="truncated") as raised:
        data.load_ijcnn1(tmp_path, 0)
    assert str(path) in str(raised.value) and command in str(raised.value)
    path.write_bytes(bz2.compress(b"1 1:0.5\n2 3:0.1\n"))  # label 2
    with pytest.raises(CorruptDataError, match="not \\+-1"):
        data.load_ijcnn1(tmp_path, 0)
    path.write_bytes(bz2.compress(b"1 23:0.5\n"))          # feature 23 of 22
    with pytest.raises(CorruptDataError, match="LIBSVM format"):
        data.load_ijcnn1(tmp_path, 0)
    covtype = tmp_path / data.COVTYPE_FILE
    covtype.write_bytes(b"garbage")
    with pytest.raises(CorruptDataError, match="gzip"):
        data.read_covtype(covtype)


def test_libsvm_round_trip(tmp_path):
    rng = np.random.default_rng(0)
    features = np.round(rng.standard_normal((7, 4)), 3)
    features[0, 3] = 0.0                # the last feature omitted on a line
    for name in ("small.bz2", "small.gz", "small"):
        write_libsvm(tmp_path / name, features, [1, -1, 1, 1, -1, 1, -1])
        A, b = read_libsvm(tmp_path / name, n_features=4)
        np.testing.assert_array_equal(A, features)
        np.testing.assert_array_equal(b, [1, -1, 1, 1, -1, 1, -1])


def test_prepare_downloads_and_a_failed_download_says_how(monkeypatch,
                                                          tmp_path):
    fixture = FIXTURES / "ijcnn1_small"
    monkeypatch.setattr(data, "LIBSVM_BINARY", fixture.as_uri() + "/")
    data.download("ijcnn1", tmp_path / "ok")
    for name in data.IJCNN1_FILES.values():
        assert (tmp_path / "ok" / name).read_bytes() == (
            fixture / name).read_bytes()

    def fail(url, timeout=None):
        raise OSError("timed out")
    monkeypatch.setattr(urllib.request, "urlopen", fail)
    with pytest.raises(OSError) as raised:
        data.download("covtype", tmp_path / "failed")
    message = str(raised.value)
    assert data.COVTYPE_URL in message
    assert str(tmp_path / "failed" / data.COVTYPE_FILE) in message
    assert data.prepare_command("covtype") in message
    assert list((tmp_path / "failed").iterdir()) == []


@pytest.mark.parametrize("params, match", [
    ({"source": "mnist"}, "source"), ({"reg": "log"}, "reg"),
    ({"penalty": "sample"}, "penalty"), ({"penalty": "class"}, "penalty"),
    ({"n_train": 0}, "n_train"), ({"n_val": 1.5}, "n_val"),
    ({"n_features": 0}, "n_features"), ({"random_state": -1}, "random_state"),
    # a size a real source ignores is refused, not dropped
    ({"source": "ijcnn1", "n_features": 5},
     r"n_features is used only with source='synthetic' \(ijcnn1 has its "
     r"own sizes\); leave it at its default 22, got 5"),
    ({"source": "covtype", "n_train": 500}, "n_train is used only with"),
])
def test_bad_parameters_are_rejected(params, match):
    with pytest.raises(ValueError, match=match):
        component("dataset", NAME).get_instance(**params).check_parameters()


def test_sample_counts_of_the_real_data():
    counts = {source: component("dataset", NAME).get_instance(
        source=source).sample_counts() for source in ("ijcnn1", "covtype")}
    assert (counts["ijcnn1"].n_lower, counts["ijcnn1"].n_upper) == (
        49990, 73360)
    assert (counts["covtype"].n_lower, counts["covtype"].n_upper) == (
        371847, 92962)


def test_a_short_soba_run_lowers_the_upper_value():
    records, _ = run_solver("SOBA", NAME, dataset_params=dict(
        n_train=200, n_val=100, n_test=100), n_iter=150, eval_at=[0, 150])
    start, end = records[0], records[-1]
    assert end["value"] < start["value"] - 0.05
    assert end["hypergrad_norm"] < start["hypergrad_norm"]
    assert 0.0 <= end["test_accuracy"] <= 1.0 and end["test_accuracy"] > 0.7
    assert end["inner_tolerance"] <= 1e-10


def test_binary_problem_rejects_a_per_class_penalty():
    with pytest.raises(ValueError, match="penalty must be 'feature'"):
        small_problem(2, "class")


def test_a_well_formed_ijcnn1_file_of_other_rows_is_refused(tmp_path,
                                                            monkeypatch):
    """A LIBSVM file in the right format but with other rows (another
    file) is refused on load, naming the file and the published rows."""
    monkeypatch.setattr(data, "IJCNN1_ROWS", REAL_ROWS)
    for name in data.IJCNN1_FILES.values():
        shutil.copy(FIXTURES / "ijcnn1_small" / name, tmp_path / name)
    with pytest.raises(CorruptDataError) as raised:
        data.load_ijcnn1(tmp_path, 0)
    assert str(raised.value).startswith(
        f"{tmp_path / 'ijcnn1.bz2'} is corrupt: {FIXTURE_ROWS['train']} rows "
        "where the published file has 49990 (another file).")
