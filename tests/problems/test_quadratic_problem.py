"""The quadratic general-bilevel problem: oracles against autograd, exact
quantities against independent solves, metrics against an independent
closed form, bad input, and the dataset -> objective path. Its certified F*
is tested in tests/references/test_quadratic_references.py."""
import numpy as np
import pytest
import torch
from torch.func import grad, hessian

from benchmark_utils.counting import CountingView
from benchmark_utils.metrics import general_metrics
from benchmark_utils.problems.batches import FullBatch
from benchmark_utils.problems.general import GeneralBilevelProblem
from benchmark_utils.references.quadratic import quadratic_references
from benchmark_utils.sets import Box, L2Ball, WholeSpace

from conftest import benchmark, component
from quadratic_helpers import independent, point, small

# a batch with a repeated index (sampling is with replacement), full passes
BATCHES = [torch.tensor([0, 3, 3, 29]), None, FullBatch(30)]


def per_sample_mean(fn, x, y, batch):
    return torch.stack([fn(x, y, batch=batch[i:i + 1])
                        for i in range(batch.shape[0])]).mean()


@pytest.mark.parametrize("seed", [0, 1])
def test_first_order_oracles_match_autograd(seed):
    problem = small(seed=seed)
    x, y = point(problem, seed)
    for batch in BATCHES:
        P = problem
        for value, pair, gx, gy in (
                (P.f, P.grad_f, P.grad_f_x, P.grad_f_y),
                (P.g, P.grad_g, P.grad_g_x, P.grad_g_y)):
            auto_x, auto_y = grad(
                lambda a, b, value=value, batch=batch: value(a, b,
                                                             batch=batch),
                argnums=(0, 1))(x, y)
            closed_x, closed_y = pair(x, y, batch=batch)
            for closed, auto in ((closed_x, auto_x), (closed_y, auto_y),
                                 (gx(x, y, batch=batch), auto_x),
                                 (gy(x, y, batch=batch), auto_y)):
                torch.testing.assert_close(closed, auto, rtol=1e-12,
                                           atol=1e-12)
    # a batch value is the mean of its per-sample values, the full sum the
    # mean over all samples
    for value in (problem.f, problem.g):
        torch.testing.assert_close(value(x, y, batch=BATCHES[0]),
                                   per_sample_mean(value, x, y, BATCHES[0]))
        torch.testing.assert_close(value(x, y),
                                   per_sample_mean(value, x, y,
                                                   torch.arange(30)))


@pytest.mark.parametrize("seed", [0, 1])
def test_second_order_products_match_autograd_hessian(seed):
    problem = small(seed=seed)
    x, y = point(problem, seed)
    v = torch.randn(problem.dim_y, generator=torch.Generator().manual_seed(9),
                    dtype=torch.float64)
    dx = problem.dim_x
    for batch in BATCHES:
        # the joint Hessian of g in z = (x, y), by autograd
        joint = hessian(lambda z, batch=batch: problem.g(
            z[:dx], z[dx:], batch=batch))(torch.cat([x, y]))
        H_yy, H_xy = joint[dx:, dx:], joint[:dx, dx:]
        torch.testing.assert_close(problem.hvp_yy_g(x, y, v, batch=batch),
                                   H_yy @ v, rtol=1e-12, atol=1e-12)
        torch.testing.assert_close(problem.hvp_xy_g(x, y, v, batch=batch),
                                   H_xy @ v, rtol=1e-12, atol=1e-12)
        # and the base class's generic torch.func products agree
        torch.testing.assert_close(
            GeneralBilevelProblem.hvp_xy_g(problem, x, y, v, batch=batch),
            H_xy @ v, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("seed", [0, 1])
def test_rows_oracles_are_the_per_sample_terms(seed):
    """Row k of ``<oracle>_rows`` is the oracle on the single sample
    batch[k] (so the rows' mean is the batch oracle), on a batch with a
    repeated index and on full passes; the counting view charges a rows
    call as it charges the mean oracle."""
    P = small(seed=seed)
    x, y = point(P, seed)
    v = torch.randn(P.dim_y, dtype=P.dtype,
                    generator=torch.Generator().manual_seed(seed))
    cases = {"grad_f": (x, y), "grad_g_y": (x, y),
             "hvp_yy_g": (x, y, v), "hvp_xy_g": (x, y, v)}
    for batch in BATCHES:
        indices = (batch if torch.is_tensor(batch)
                   else torch.arange(P.n_lower))
        for name, args in cases.items():
            rows = getattr(P, name + "_rows")(*args, batch=batch)
            for k, j in enumerate(indices.tolist()):
                single = getattr(P, name)(*args, batch=torch.tensor([j]))
                pairs = (zip(rows, single, strict=True)
                         if isinstance(rows, tuple) else [(rows, single)])
                for r, s in pairs:
                    torch.testing.assert_close(r[k], s, rtol=1e-12,
                                               atol=1e-12)
    view = CountingView(P)
    view.hvp_xy_g_rows(x, y, v, batch=BATCHES[0])
    assert view.counts()["n_hvp"] == 4


def test_spectra_are_the_requested_ones():
    problem = small(noise=0.6)
    x, y = point(problem, 0)
    H_bar = hessian(lambda b: problem.g(x, b))(y)
    eig = torch.linalg.eigvalsh(H_bar)
    assert eig[0].item() == pytest.approx(0.3, rel=1e-10)
    assert eig[-1].item() == pytest.approx(4.0, rel=1e-10)
    C_bar = torch.func.jacrev(lambda a: problem.grad_g_y(a, y))(x)
    assert torch.linalg.matrix_norm(C_bar, 2).item() == pytest.approx(
        1.5, rel=1e-10)
    # every sample Hessian in [(1 - noise) mu, L_g], L_g = L + noise mu
    for j in range(problem.n_lower):
        H_j = hessian(lambda b, j=j: problem.g(
            x, b, batch=torch.tensor([j])))(y)
        eig_j = torch.linalg.eigvalsh(H_j)
        assert eig_j[0] >= 0.4 * 0.3 - 1e-12
        assert eig_j[-1] <= problem.L_g + 1e-12
    assert problem.L_g == pytest.approx(4.0 + 0.6 * 0.3)


def test_zero_noise_makes_every_sample_the_mean():
    problem = small(noise=0.0)
    x, y = point(problem, 3)
    for j in (0, 7, 29):
        b = torch.tensor([j])
        torch.testing.assert_close(problem.grad_g_y(x, y, batch=b),
                                   problem.grad_g_y(x, y), rtol=1e-12,
                                   atol=1e-12)
        torch.testing.assert_close(problem.grad_f_y(x, y, batch=b),
                                   problem.grad_f_y(x, y))


@pytest.mark.parametrize("seed", [0, 1])
def test_inner_solution_solves_the_optimality_condition(seed):
    problem = small(seed=seed)
    x, y = point(problem, seed)
    y_star = problem.inner_solution(x)
    residual = problem.grad_g_y(x, y_star)
    assert torch.linalg.vector_norm(residual) <= 1e-12 * max(
        1.0, float(torch.linalg.vector_norm(y_star)))
    # the same from one Newton step from an arbitrary y, Hessian by autograd
    H = hessian(lambda b: problem.g(x, b))(y)
    newton = y - torch.linalg.solve(H, problem.grad_g_y(x, y))
    torch.testing.assert_close(y_star, newton, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("seed", [0, 1])
def test_hypergradient_is_the_gradient_of_F(seed):
    problem = small(seed=seed)
    x, _ = point(problem, seed)
    exact = problem.hypergradient(x)
    # autograd through the inner solution (a Cholesky solve) ...
    auto = grad(lambda a: problem.value(a))(x)
    torch.testing.assert_close(exact, auto, rtol=1e-10, atol=1e-10)
    # ... central differences (F is quadratic: exact up to rounding) ...
    h = 1e-3
    fd = torch.stack([(problem.value(x + h * e) - problem.value(x - h * e))
                      / (2 * h) for e in torch.eye(problem.dim_x,
                                                   dtype=torch.float64)])
    torch.testing.assert_close(exact, fd, rtol=1e-8, atol=1e-8)
    # ... and the base class's conjugate-gradient hypergradient
    torch.testing.assert_close(
        GeneralBilevelProblem.hypergradient(problem, x), exact,
        rtol=1e-10, atol=1e-10)


def fw_gap_by_hand(constraint, X, g, x):
    """max_{s in X} <g, x - s> for the box / l2 ball, written out."""
    if constraint == "box":
        return g @ x + X.upper[0].item() * np.abs(g).sum()
    return g @ x + X.radius * np.linalg.norm(g)


@pytest.mark.parametrize("constraint", ["none", "box", "l2_ball"])
@pytest.mark.parametrize("seed", [0, 2])
def test_metrics_match_an_independent_closed_form(constraint, seed):
    problem = small(constraint, seed=seed)
    ref = independent(problem)
    x, y = point(problem, 10 + seed)
    x = problem.X.project(x)
    metrics = general_metrics(problem, x, y)
    xn, yn = x.numpy(), y.numpy()
    assert metrics["value"] == pytest.approx(ref["F"](xn), rel=1e-12)
    assert metrics["inner_distance"] == pytest.approx(
        np.linalg.norm(yn - ref["y_star"](xn)), rel=1e-10)
    assert metrics["inner_grad_norm"] == pytest.approx(
        np.linalg.norm(ref["grad_y_g"](xn, yn)), rel=1e-10)
    g = ref["grad_F"](xn)
    if constraint == "none":
        assert metrics["hypergrad_norm"] == pytest.approx(np.linalg.norm(g),
                                                          rel=1e-10)
        assert "fw_gap" not in metrics
    else:
        assert metrics["fw_gap"] == pytest.approx(
            fw_gap_by_hand(constraint, problem.X, g, xn), rel=1e-10)
        assert "hypergrad_norm" not in metrics
    assert metrics["upper_value_current"] == pytest.approx(
        float(problem.f(x, y)), rel=1e-14)


def test_metrics_at_the_solution(tmp_path, monkeypatch):
    monkeypatch.setenv("BILEVEL_REFERENCE_CACHE", str(tmp_path))
    problem = small("box")
    problem.set_references(quadratic_references(problem, {"test": "box"}))
    x = problem.x_star
    metrics = general_metrics(problem, x, problem.inner_solution(x))
    assert metrics["inner_distance"] == 0.0
    assert metrics["upper_gap_abs"] == problem.F_star_accuracy   # the floor
    assert abs(metrics["upper_gap"]) <= problem.F_star_accuracy
    assert metrics["fw_gap"] <= 1e-10
    assert metrics["inner_grad_norm"] <= 1e-12


# -- dataset: get_data -> objective (bad input: test_dataset_parameters.py) --

def quadratic(**params):
    return component("dataset", "quadratic").get_instance(**params)


@pytest.mark.parametrize("constraint", ["none", "l2_ball", "box"])
def test_get_data_to_evaluate_result(constraint):
    problem = quadratic(constraint=constraint, dim_x=6, dim_y=5,
                        n_samples=40).get_data()["problem"]
    expected_set = {"none": WholeSpace(6), "l2_ball": L2Ball(6, 1.0),
                    "box": Box(-1.0, 1.0, dim=6)}[constraint]
    assert problem.X.cache_key == expected_set.cache_key
    objective = benchmark().get_benchmark_objective().get_instance()
    objective.set_data(problem=problem)
    view = objective.get_objective()["problem"]
    assert isinstance(view, CountingView)
    metrics = objective.evaluate_result(**objective.get_one_result())
    expected = {"value", "upper_gap", "upper_gap_abs", "inner_distance",
                "inner_grad_norm", "upper_value_current", "diverged",
                "n_samples_upper", "n_hvp",
                "hypergrad_norm" if constraint == "none" else "fw_gap"}
    assert expected <= set(metrics)
    assert all(np.isfinite(v) for v in metrics.values())
    assert metrics["upper_gap"] > 0            # x0 = 0 is not optimal
    # the view counts the quadratic's oracles: a batch of 3 is 3 HVPs
    batch = view.sample_lower(3)
    view.hvp_yy_g(problem.x0, problem.y0, problem.y0, batch=batch)
    metrics = objective.evaluate_result(x=problem.x_star,
                                        y=problem.inner_solution(
                                            problem.x_star))
    assert metrics["n_samples_lower"] == 3 and metrics["n_hvp"] == 3
    assert metrics["upper_gap_abs"] == problem.F_star_accuracy
