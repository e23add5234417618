"""Hyper-representation learning (Huang et al. 2021, Sec. 5.2): the
oracles against autograd, the certified head fits, the per-task Hessian
factorizations (Woodbury and dense) against autograd Hessians, warm-started
and chord-step fits against cold pure-Newton ones, the hypergradient
against finite differences of F(x) = f(x, y*(x)), the declared constants,
the Omniglot loader on a small fixture in the archives' format, and the
bad-parameter checks."""
import shutil

import numpy as np
import pytest
import torch

from benchmark_utils.data import omniglot
from benchmark_utils.data.few_shot_tasks import make_tasks
from benchmark_utils.problems import task_heads
from benchmark_utils.problems.hyper_representation import (
    HyperRepresentationBilevel,
)
from benchmark_utils.problems.representation_networks import (
    RepresentationNetwork,
)
from benchmark_utils.problems.task_heads import GRAD_TOL

from conftest import ROOT, component, make_problem

FIXTURE = ROOT / "tests" / "data" / "omniglot_small"


def tiny_problem(kind="mlp", seed=0):
    """3 tasks of 3-way 2-shot on random 4 x 4 images, a tiny network."""
    rng = np.random.default_rng(seed)
    images = rng.standard_normal((60, 1, 4, 4))
    labels = np.repeat(np.arange(6), 10)
    train = make_tasks(images, labels, 3, 3, 2, 2, rng)
    test = make_tasks(images, labels, 2, 3, 2, 2, rng)
    net = RepresentationNetwork(kind, (1, 4, 4), 3, 1, 4)
    x0 = net.initial_parameters(torch.Generator().manual_seed(seed))
    return HyperRepresentationBilevel(train, test, 3, 0.05, net, x0)


@pytest.fixture(scope="module", params=["mlp", "conv"])
def problem(request):
    return tiny_problem(request.param)


def point(P, seed=1):
    gen = torch.Generator().manual_seed(seed)
    x = P.x0 + 0.3 * torch.randn(P.dim_x, generator=gen, dtype=P.dtype)
    y = torch.randn(P.dim_y, generator=gen, dtype=P.dtype)
    v = torch.randn(P.dim_y, generator=gen, dtype=P.dtype)
    return x, y, v


@pytest.mark.parametrize("batch", [None, [2, 0, 2]])
def test_oracles_match_autograd(problem, batch):
    P = problem
    x, y, v = point(P)
    b = None if batch is None else torch.tensor(batch)
    gx_f, gy_f = torch.func.grad(lambda a, c: P.f(a, c, batch=b),
                                 argnums=(0, 1))(x, y)
    gx_g, gy_g = torch.func.grad(lambda a, c: P.g(a, c, batch=b),
                                 argnums=(0, 1))(x, y)
    torch.testing.assert_close(P.grad_f_y(x, y, batch=b), gy_f)
    torch.testing.assert_close(P.grad_g_y(x, y, batch=b), gy_g)
    torch.testing.assert_close(P.grad_g(x, y, batch=b)[0], gx_g)
    torch.testing.assert_close(P.grad_f(x, y, batch=b)[0], gx_f)
    hyy = torch.func.jvp(lambda c: torch.func.grad(
        lambda c_: P.g(x, c_, batch=b))(c), (y,), (v,))[1]
    torch.testing.assert_close(P.hvp_yy_g(x, y, v, batch=b), hyy)
    hxy = torch.func.jvp(lambda c: torch.func.grad(
        lambda a: P.g(a, c, batch=b))(x), (y,), (v,))[1]
    torch.testing.assert_close(P.hvp_xy_g(x, y, v, batch=b), hxy)


def test_inner_solution_is_certified(problem):
    P = problem
    x, _, _ = point(P)
    y = P.inner_solution(x)
    grad = P.grad_g_y(x, y)
    # the full gradient is the mean of the per-task ones: T ||grad|| / 2C
    bound = P.n_tasks * float(torch.linalg.vector_norm(grad)) / (2 * P.C)
    assert bound <= 1e-8
    assert P.inner_accuracy == pytest.approx(bound, rel=1e-6, abs=1e-14)
    # every task within GRAD_TOL * 2C: the bound is <= GRAD_TOL sqrt(T)
    assert P.inner_accuracy <= GRAD_TOL * np.sqrt(P.n_tasks)


@pytest.mark.parametrize("woodbury", [True, False])
def test_factorizations_solve_the_autograd_hessians(problem, woodbury):
    P = problem
    x, y, _ = point(P)
    # the full Hessian of g in y is block diagonal with blocks H_t / T
    H = torch.func.jacfwd(lambda c: P.grad_g_y(x, c))(y)
    size = P.ways * P.n_head
    blocks = [P.n_tasks * H[t * size:(t + 1) * size, t * size:(t + 1) * size]
              for t in range(P.n_tasks)]
    phi = P.features(x, P.train["support"]).detach()
    _, probs = P.heads.ce(phi, P.train["support_labels"], P._heads(y))
    gen = torch.Generator().manual_seed(5)
    R = torch.randn(P.n_tasks, *P.head_shape, generator=gen, dtype=P.dtype)
    Z = P.heads._solve(P.heads._factor(phi, probs, woodbury=woodbury), R)
    for t in range(P.n_tasks):
        expected = torch.linalg.solve(blocks[t], R[t].reshape(-1))
        torch.testing.assert_close(Z[t].reshape(-1), expected, rtol=1e-10,
                                   atol=1e-12)


def test_warm_and_chord_fits_match_cold_newton(problem, monkeypatch):
    P = problem
    x1, _, _ = point(P, seed=6)
    x2 = x1 + 0.5 * (point(P, seed=7)[0] - P.x0)
    fresh = tiny_problem(P.network.kind)
    fresh.inner_solution(x1)
    fresh.task_metrics(x1, None)
    warm_y = fresh.inner_solution(x2)          # warm-started, chord steps
    warm_test = fresh.task_metrics(x2, None)
    warm_bound = fresh.inner_accuracy
    # pure Newton (no chord step) from 0
    monkeypatch.setattr(task_heads, "CHORD_RATIO", 0.0)
    cold = tiny_problem(P.network.kind)
    cold_y = cold.inner_solution(x2)
    cold_test = cold.task_metrics(x2, None)
    # both within their certified bounds of y*(x2)
    gap = float(torch.linalg.vector_norm(warm_y - cold_y))
    assert gap <= warm_bound + cold.inner_accuracy
    assert warm_bound <= GRAD_TOL * np.sqrt(P.n_tasks)
    assert warm_test["test_accuracy"] == cold_test["test_accuracy"]
    assert warm_test["test_loss"] == pytest.approx(cold_test["test_loss"],
                                                   rel=1e-9)


def test_hypergradient_matches_finite_differences(problem):
    P = problem
    x, _, _ = point(P, seed=3)
    hypergrad = P.hypergradient(x)
    # the adjoint system is solved to rounding level
    assert P.adjoint_accuracy <= 1e-11
    gen = torch.Generator().manual_seed(4)
    for _ in range(3):
        d = torch.randn(P.dim_x, generator=gen, dtype=P.dtype)
        d /= torch.linalg.vector_norm(d)
        eps = 1e-5
        fd = (P.value(x + eps * d) - P.value(x - eps * d)) / (2 * eps)
        assert float(fd) == pytest.approx(float(hypergrad @ d), rel=1e-5,
                                          abs=1e-8)


def test_declared_constants_bound_the_hessians(problem):
    P = problem
    x, y, _ = point(P)
    batch = torch.tensor([1, 1, 0])
    H = torch.func.jacfwd(lambda c: P.grad_g_y(x, c, batch=batch))(y)
    assert float(torch.linalg.eigvalsh(H)[-1]) <= P.L_g
    H_full = torch.func.jacfwd(lambda c: P.grad_g_y(x, c))(y)
    eig = torch.linalg.eigvalsh(H_full)
    assert float(eig[0]) >= P.mu_g * (1 - 1e-9)
    assert float(eig[-1]) <= P.L_g_full
    assert P.mu_g == pytest.approx(2 * P.C / P.n_tasks)


def test_start_curvature_is_the_full_hessians_at_the_start(problem):
    """L_g_start, the closed form, is the top eigenvalue of the full
    Hessian at (x0, y0)."""
    P = problem
    H = torch.func.jacfwd(lambda c: P.grad_g_y(P.x0, c))(P.y0)
    top = float(torch.linalg.eigvalsh(H)[-1])
    assert P.L_g_start == pytest.approx(top, rel=1e-10)
    assert P.L_g_start <= P.L_g_full


def test_task_metrics_on_quick_instance():
    P = make_problem("hyper_representation")
    metrics = P.metrics(P.x0, P.y0)
    assert 0.0 <= metrics["test_accuracy"] <= 1.0
    # a random representation is informative but far from perfect
    assert 1.0 / P.ways < metrics["test_accuracy"] < 0.8
    assert metrics["inner_tolerance"] <= 1e-9
    assert np.isfinite(metrics["hypergrad_norm"])


def test_omniglot_fixture_is_read_as_characters(tmp_path):
    for name in omniglot.OMNIGLOT_FILES.values():
        shutil.copy(FIXTURE / name, tmp_path / name)
    (train_images, train_labels), (test_images, test_labels) = (
        omniglot.load_omniglot(tmp_path))
    assert train_images.shape == (24, 1, 28, 28)
    assert test_images.shape == (12, 1, 28, 28)
    np.testing.assert_array_equal(np.bincount(train_labels), [4] * 6)
    np.testing.assert_array_equal(np.bincount(test_labels), [4] * 3)
    # strokes are 1 on a 0 background: the fixture draws one dark bar
    assert train_images.min() == 0.0 and train_images.max() == 1.0
    assert 0.05 < train_images.mean() < 0.2
    # the decoded cache gives the same arrays
    assert (tmp_path / "omniglot_28.npz").exists()
    again = omniglot.load_omniglot(tmp_path)
    np.testing.assert_array_equal(again[0][0], train_images)


def test_omniglot_dataset_builds_from_the_fixture(tmp_path, monkeypatch):
    for name in omniglot.OMNIGLOT_FILES.values():
        shutil.copy(FIXTURE / name, tmp_path / name)
    cls = component("dataset", "hyper_representation")
    monkeypatch.setattr(cls, "_omniglot_dir", lambda self: tmp_path)
    dataset = cls.get_instance(source="omniglot", ways=2, shots=1, n_query=2,
                               n_train_tasks=3, n_test_tasks=2,
                               network="conv", width=2, depth=2)
    P = dataset.get_data()["problem"]
    assert P.train["support"].shape == (3, 2, 1, 28, 28)
    assert 0.0 <= P.task_metrics(P.x0, P.y0)["test_accuracy"] <= 1.0


def test_missing_omniglot_names_url_and_path(tmp_path, monkeypatch):
    cls = component("dataset", "hyper_representation")
    monkeypatch.setattr(cls, "_omniglot_dir", lambda self: tmp_path)
    dataset = cls.get_instance(source="omniglot")
    for check in (dataset.make_data, dataset.check_run_ready):
        with pytest.raises(FileNotFoundError) as raised:
            check()
        message = str(raised.value)
        assert omniglot.OMNIGLOT_URL + "images_background.zip" in message
        assert str(tmp_path) in message
        assert "benchopt prepare" in message


BAD_PARAMETERS = [
    ({"ways": 11, "source": "digits"}, "ways must be an integer in \\[2, 10"),
    ({"ways": 51}, "ways must be an integer in \\[2, 50"),
    ({"ways": 1}, "ways"),
    ({"shots": 0}, "shots must be an integer"),
    ({"n_query": 0}, "n_query"),
    ({"shots": 10, "n_query": 11}, "shots \\+ n_query must be <= 20"),
    ({"C": 0.0}, "C must be a finite number > 0"),
    ({"C": -0.01}, "C must"),
    ({"source": "mnist"}, "source must be one of"),
    ({"network": "resnet"}, "network must be one of"),
    ({"width": 0}, "width"),
    ({"depth": 0, "network": "conv"}, "depth"),
    ({"n_features": 0}, "n_features"),
    ({"n_train_tasks": 0}, "n_train_tasks"),
    ({"n_test_tasks": 0}, "n_test_tasks"),
    ({"random_state": -1}, "random_state"),
]


@pytest.mark.parametrize("params, match", BAD_PARAMETERS)
def test_bad_parameters_raise(params, match):
    cls = component("dataset", "hyper_representation")
    with pytest.raises(ValueError, match=match):
        cls.get_instance(**params).check_parameters()


def test_tied_top_predictions_share_the_hit():
    """A query whose m top probabilities tie (to rounding) counts 1/m when
    its label is among them, 0 when not; no tie: argmax."""
    from benchmark_utils.problems.hyper_representation import tie_shared_hits
    p = 0.4 * (1 + 1e-15)
    probs = torch.tensor([[0.4, p, 0.2], [0.4, 0.4, 0.2], [0.7, 0.2, 0.1],
                          [0.2, 0.3, 0.5]], dtype=torch.float64)
    labels = torch.tensor([1, 2, 0, 0])
    hits = tie_shared_hits(probs, labels)
    torch.testing.assert_close(hits, torch.tensor(
        [0.5, 0.0, 1.0, 0.0], dtype=torch.float64))
