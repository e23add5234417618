"""The quadratic general-bilevel problem: oracles against autograd, exact
quantities against independent solves, metrics against an independent
closed form, certified F*, bad input, and the dataset -> objective path."""
import json

import numpy as np
import pytest
import torch
from scipy.optimize import minimize
from torch.func import grad, hessian

from benchmark_utils.counting import CountingView
from benchmark_utils.problems.batches import FullBatch
from benchmark_utils.problems.general import GeneralBilevelProblem
from benchmark_utils.metrics import general_metrics
from benchmark_utils.problems.quadratic import (make_quadratic_bilevel,
                                       quadratic_references)
from benchmark_utils.sets import Box, L2Ball, WholeSpace
from conftest import benchmark, component

SMALL = dict(dim_x=5, dim_y=4, n_samples=30, mu=0.3, L=4.0, cross_norm=1.5,
             noise=0.6, upper_reg=0.2)


def small(constraint="none", seed=0, **params):
    return make_quadratic_bilevel(**dict(SMALL, **params),
                                  constraint=constraint, radius=0.8,
                                  random_state=seed)


def point(problem, seed):
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(problem.dim_x, generator=gen, dtype=torch.float64)
    y = torch.randn(problem.dim_y, generator=gen, dtype=torch.float64)
    return x, y


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
            auto_x, auto_y = grad(lambda a, b: value(a, b, batch=batch),
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
        joint = hessian(lambda z: problem.g(z[:dx], z[dx:], batch=batch))(
            torch.cat([x, y]))
        H_yy, H_xy = joint[dx:, dx:], joint[:dx, dx:]
        torch.testing.assert_close(problem.hvp_yy_g(x, y, v, batch=batch),
                                   H_yy @ v, rtol=1e-12, atol=1e-12)
        torch.testing.assert_close(problem.hvp_xy_g(x, y, v, batch=batch),
                                   H_xy @ v, rtol=1e-12, atol=1e-12)
        # and the base class's generic torch.func products agree
        torch.testing.assert_close(
            GeneralBilevelProblem.hvp_xy_g(problem, x, y, v, batch=batch),
            H_xy @ v, rtol=1e-12, atol=1e-12)


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
        H_j = hessian(lambda b: problem.g(x, b, batch=torch.tensor([j])))(y)
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


# -- an independent closed form, in NumPy from the per-sample definition ----

def independent(problem):
    """Explicit per-sample matrices averaged in NumPy."""
    n = problem.n_lower
    P = {k: getattr(problem, k).numpy() for k in (
        "H", "hess_diag", "C", "cross_left", "cross_right", "d", "b", "a")}
    H = np.mean([P["H"] + np.diag(P["hess_diag"][j]) for j in range(n)], 0)
    C = np.mean([P["C"] + np.outer(P["cross_left"][j], P["cross_right"][j])
                 for j in range(n)], 0)
    d = P["d"].mean(0)
    rho = problem.upper_reg

    def y_star(x):
        return np.linalg.solve(H, -(C @ x + d))

    def F(x):
        y = y_star(x)
        return np.mean([0.5 * np.sum((y - P["b"][i]) ** 2)
                        + 0.5 * rho * np.sum((x - P["a"][i]) ** 2)
                        for i in range(n)])

    J = -np.linalg.solve(H, C)

    def grad_F(x):      # chain rule: dF/dx = d_x f + J^T d_y f at y*(x)
        return rho * (x - P["a"].mean(0)) + J.T @ (y_star(x) - P["b"].mean(0))

    def grad_y_g(x, y):
        return H @ y + C @ x + d

    return dict(y_star=y_star, F=F, grad_F=grad_F, grad_y_g=grad_y_g,
                hessian_F=J.T @ J + rho * np.eye(len(P["a"][0])))


def fw_gap_by_hand(X, g, x):
    if isinstance(X, Box):
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
            fw_gap_by_hand(problem.X, g, xn), rel=1e-10)
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


# -- certified F* ----------------------------------------------------------

def ball_minimum(A, c, radius):
    """min 1/2 x^T A x - c^T x over ||x|| <= r: x = (A + lam I)^{-1} c with
    ||x|| = r (bisection on lam), or the unconstrained minimizer."""
    eye = np.eye(len(c))
    x = np.linalg.solve(A, c)
    if np.linalg.norm(x) <= radius:
        return x
    low, high = 0.0, np.linalg.norm(c) / radius
    for _ in range(200):
        lam = 0.5 * (low + high)
        if np.linalg.norm(np.linalg.solve(A + lam * eye, c)) > radius:
            low = lam
        else:
            high = lam
    return np.linalg.solve(A + high * eye, c)


@pytest.mark.parametrize("constraint", ["none", "box", "l2_ball"])
@pytest.mark.parametrize("seed", [0, 1])
def test_F_star_matches_an_independent_solve(constraint, seed, tmp_path,
                                             monkeypatch):
    monkeypatch.setenv("BILEVEL_REFERENCE_CACHE", str(tmp_path))
    problem = small(constraint, seed=seed)
    problem.set_references(quadratic_references(problem, {"seed": seed}))
    ref = independent(problem)
    A = ref["hessian_F"]
    x0 = np.zeros(problem.dim_x)
    c = -(ref["grad_F"](x0))                 # grad F(x) = A x - c
    if constraint == "none":
        x = np.linalg.solve(A, c)
    elif constraint == "l2_ball":
        x = ball_minimum(A, c, problem.X.radius)
    else:
        r = problem.X.upper[0].item()
        x = minimize(lambda z: 0.5 * z @ A @ z - c @ z, x0,
                     jac=lambda z: A @ z - c, method="L-BFGS-B",
                     bounds=[(-r, r)] * problem.dim_x,
                     options=dict(ftol=1e-15, gtol=1e-13, maxiter=10_000)).x
    F_independent = ref["F"](x)
    assert problem.F_star_accuracy < 1e-10 * max(1.0, abs(problem.F_star))
    assert abs(problem.F_star - F_independent) <= 1e-9 * max(
        1.0, abs(F_independent))
    np.testing.assert_allclose(problem.x_star.numpy(), x, atol=1e-5)
    if constraint != "none":     # the radius makes X active
        assert np.linalg.norm(np.linalg.solve(A, c) - x) > 1e-2


def test_cached_reference_is_recertified_on_load(tmp_path, monkeypatch):
    monkeypatch.setenv("BILEVEL_REFERENCE_CACHE", str(tmp_path))
    problem = small("l2_ball")
    params = {"case": "tampered"}
    honest = quadratic_references(problem, params)
    (path,) = tmp_path.glob("quadratic-*.json")
    stored = json.loads(path.read_text())
    # a wrong cached value is ignored: F* is recomputed at the stored point
    stored["references"]["F_star"] = honest["F_star"] - 1.0
    path.write_text(json.dumps(stored))
    assert quadratic_references(problem, params)["F_star"] == honest["F_star"]
    # a wrong cached point fails its certificate
    stored["references"]["x_star"] = [0.0] * problem.dim_x
    path.write_text(json.dumps(stored))
    with pytest.raises(ValueError, match="certified only"):
        quadratic_references(problem, params)


# -- dataset: bad input, get_data -> objective --------------------------------

def quadratic(**params):
    return component("dataset", "quadratic").get_instance(**params)


@pytest.mark.parametrize("params, match", [
    ({"mu": 0.0}, "mu must be a finite number > 0"),
    ({"mu": -1.0}, "mu must be a finite number > 0"),
    ({"mu": 6.0, "L": 5.0}, "mu must be <= L"),
    ({"constraint": "l1_ball"}, "constraint must be one of"),
    ({"radius": 0.0}, "radius must be a finite number > 0"),
    ({"radius": -2.0}, "radius"),
    ({"noise": 1.0}, r"noise must be in \[0.0, 1.0\)"),
    ({"noise": -0.1}, "noise"),
    ({"n_samples": 0}, "n_samples must be an integer"),
    ({"dim_x": 0}, "dim_x"),
    ({"dim_y": 2.5}, "dim_y"),
    ({"cross_norm": 0.0}, "cross_norm"),
    ({"upper_reg": 0.0}, "upper_reg"),
    ({"random_state": -1}, "random_state"),
])
def test_bad_quadratic_parameters(params, match):
    with pytest.raises(ValueError, match=match):
        quadratic(**params).get_data()


@pytest.mark.parametrize("constraint", ["none", "l2_ball", "box"])
def test_get_data_to_evaluate_result(constraint):
    problem = quadratic(constraint=constraint, dim_x=6, dim_y=5,
                        n_samples=40).get_data()["problem"]
    assert isinstance(problem.X, {"none": WholeSpace, "l2_ball": L2Ball,
                                  "box": Box}[constraint])
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
