"""Certified F* of the quadratic general-bilevel problem against an
independent solve, and its re-certification when loaded from the cache."""
import numpy as np
import pytest
from scipy.optimize import minimize

from benchmark_utils.references import quadratic
from benchmark_utils.references.cache import ReferenceCacheWarning
from benchmark_utils.references.quadratic import quadratic_references

from quadratic_helpers import independent, small
from reference_faults import rewrite


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
    # a wrong point whose digest matches fails its certificate on load: the
    # references are recomputed, with a warning
    rewrite(path, lambda refs: refs.update(x_star=[0.0] * problem.dim_x))
    with pytest.warns(ReferenceCacheWarning, match="certified only"):
        again = quadratic_references(problem, params)
    assert again["F_star"] == honest["F_star"]
    assert again["x_star"] == honest["x_star"]


def test_an_uncertifiable_fresh_reference_is_an_error(tmp_path, monkeypatch):
    monkeypatch.setenv("BILEVEL_REFERENCE_CACHE", str(tmp_path))
    problem = small("box")

    def failed_solve(problem, polish_iter=3000):
        return dict(F_star=0.0, F_star_accuracy=1.0,
                    x_star=[0.0] * problem.dim_x)

    monkeypatch.setattr(quadratic, "compute_quadratic_references",
                        failed_solve)
    with pytest.raises(ValueError, match="certified only"):
        quadratic_references(problem, {"case": "failed"})
