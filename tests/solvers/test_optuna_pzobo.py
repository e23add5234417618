"""Optuna (Akiba et al. 2019, TPE search over x with an exact inner solve
per trial) and PZOBO (Sow, Ji, Liang 2022, Alg. 1, a zeroth-order
hypergradient), benchmark_bilevel's black-box and Hessian-free baselines:
one PZOBO iteration against Algorithm 1 written out in matrix form, the
zeroth-order estimate against the exact hypergradient, Optuna's L-BFGS
inner solve (secant equation, tolerance reached), seeded progress within a
stated iteration budget on a tiny quadratic and on a small
benchmark_bilevel simulated quadratic, oracle accounting (full passes
charged), the divergence flag, bad parameters, and a few iterations on the
regularization-selection dataset."""
import math
import sys

import pytest
import torch

from benchmark_utils.counting import CountingView
from benchmark_utils.solvers.inner_lbfgs import (
    lbfgs_to_tolerance,
    two_loop_direction,
)
from benchmark_utils.solvers.zeroth_order import (
    gaussian_directions,
    jacobian_transpose_estimate,
    perturbed_inner_steps,
)

from conftest import component, make_problem, python_script, run_solver

TINY = dict(dim_x=5, dim_y=4, n_samples=30, constraint="none")
# a 2-D search space: TPE gets close to x* within a few hundred trials
TINY_2D = dict(dim_x=2, dim_y=2, n_samples=20, constraint="none")
# benchmark_bilevel's simulated quadratic, small; random_state 0 gives a
# strongly convex F (mu_F = 1.1) with a certified F* and x* in [-5, 5]^2
SIMULATED = dict(generator="benchmark_bilevel", dim_x=2, dim_y=4,
                 n_samples=32, constraint="none", random_state=0)
PROBLEMS = {"controlled": TINY_2D, "benchmark_bilevel": SIMULATED}


def close(a, b):
    torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-12)


# -- Optuna ------------------------------------------------------------------

def test_optuna_first_trial_is_the_start_solved_to_tolerance():
    P = make_problem("quadratic", **TINY)
    tol = 1e-8
    records, solver = run_solver("Optuna", "quadratic", TINY,
                                 {"init": "dataset", "inner_tol": tol},
                                 n_iter=1, eval_at=[0, 1])
    # trial 0 is the dataset's x0 (inside the box), y from y0 by full-pass
    # gradient descent until ||grad_y g|| <= inner_tol
    close(solver.x, P.x0)
    assert float(torch.linalg.vector_norm(P.grad_g_y(solver.x, solver.y))
                 ) <= tol
    assert records[-1]["value"] == pytest.approx(float(P.value(P.x0)),
                                                 rel=1e-10)
    # one full upper pass (the trial's value f), one full lower pass per
    # gradient (the line search's rejected points and the stopping one
    # included); no Hessian product
    end = records[-1]
    assert end["n_samples_upper"] == end["n_value_evals"] == P.n_upper
    passes = end["n_samples_lower"] // P.n_lower
    assert end["n_samples_lower"] == passes * P.n_lower and passes > 1
    assert end["n_grad_evals"] == end["n_samples_lower"]
    assert end["n_hvp"] == 0 and end["n_projections"] == 0


def test_optuna_steps_are_the_lbfgs_first_step_only():
    # x is searched and y solved by L-BFGS, so Optuna declares neither an
    # x nor a y step; lbfgs_first_step is L-BFGS's first trial step along
    # -grad, 1 unless given
    parameters = component("solver", "Optuna").parameters
    assert not {"outer_step", "inner_step"} & set(parameters)
    _, default = run_solver("Optuna", "quadratic", TINY, {}, n_iter=0)
    assert dict(default.steps.values()) == {"lbfgs_first_step": 1.0}
    assert default.steps["lbfgs_first_step"].kind == "default"
    _, given = run_solver("Optuna", "quadratic", TINY,
                          {"lbfgs_first_step": 0.5}, n_iter=0)
    assert given.steps.lbfgs_first_step == 0.5


def test_lbfgs_direction_meets_the_secant_equation():
    """H r = s for the newest pair (the secant equation of BFGS updates),
    here on pairs of a quadratic (r = A s)."""
    generator = torch.Generator().manual_seed(0)
    M = torch.randn(4, 4, generator=generator, dtype=torch.float64)
    A = M @ M.T + torch.eye(4, dtype=torch.float64)
    pairs = []
    for _ in range(3):
        s = torch.randn(4, generator=generator, dtype=torch.float64)
        pairs.append((s, A @ s, 1 / float(s @ A @ s)))
    s, r, _ = pairs[-1]
    close(two_loop_direction(r, pairs), -s)
    close(two_loop_direction(r, []), -r)


@pytest.mark.parametrize("first_step", [1.0, 1e6])
def test_lbfgs_reaches_the_tolerance_on_full_passes(first_step):
    P = make_problem("quadratic", **TINY)
    view = CountingView(P)
    y = lbfgs_to_tolerance(view, P.x0, P.y0, tol=1e-10, max_steps=30,
                           first_step=first_step)
    assert float(torch.linalg.vector_norm(P.grad_g_y(P.x0, y))) <= 1e-10
    # gradients only, each a full lower pass (halvings included)
    assert view.n_samples_lower == view.n_grad_evals
    assert view.n_grad_evals % P.n_lower == 0
    assert view.n_value_evals == view.n_hvp == 0


@pytest.mark.parametrize("generator", PROBLEMS)
def test_optuna_best_value_decreases_to_F_star(generator):
    params, budget = PROBLEMS[generator], 200
    P = make_problem("quadratic", **params)
    records, _ = run_solver("Optuna", "quadratic", params, {},
                            n_iter=budget, eval_at=[1, 10, 50, 100])
    gaps = [record["value"] - P.F_star for record in records]
    # the best trial so far, its F known to the inner solve's accuracy
    assert all(b <= a + 1e-6 for a, b in zip(gaps, gaps[1:], strict=False))
    assert gaps[-1] <= 5e-3 < gaps[0], gaps
    assert all(record["diverged"] == 0 for record in records)


def test_optuna_is_seeded_per_repetition():
    def values(repetition):
        records, _ = run_solver("Optuna", "quadratic", TINY_2D, {},
                                n_iter=30, eval_at=[5, 15],
                                repetition=repetition)
        return [record["value"] for record in records]
    assert values(0) == values(0)
    assert values(0) != values(1)


def test_optuna_projects_trials_onto_a_constrained_X():
    params = dict(TINY, constraint="l2_ball")
    P = make_problem("quadratic", **params)
    records, solver = run_solver("Optuna", "quadratic", params, {},
                                 n_iter=10)
    assert float(torch.linalg.vector_norm(solver.x)) <= P.X.radius + 1e-12
    assert records[-1]["n_projections"] == 10


def test_optuna_non_finite_inner_solve_ends_the_run_flagged_diverged(
        monkeypatch):
    module = sys.modules[component("solver", "Optuna").__module__]
    solves = []

    def overflowing(P, x, y, **options):
        # the third trial's inner solve overflows
        solves.append(x)
        return y if len(solves) < 3 else torch.full_like(y, math.inf)

    monkeypatch.setattr(module, "lbfgs_to_tolerance", overflowing)
    records, solver = run_solver("Optuna", "quadratic", TINY, {}, n_iter=6,
                                 eval_at=range(7))
    assert [r["diverged"] for r in records] == [0, 0, 0, 1]
    assert len(solves) == 3
    # the reported iterate is the last finite one, the best trial's
    assert torch.isfinite(solver.get_result()["y"]).all()


# -- PZOBO -------------------------------------------------------------------

def test_pzobo_iteration_matches_algorithm_1():
    T, Q, mu = 3, 4, 0.3
    params = {"T": T, "n_directions": Q, "smoothing": mu}
    _, start = run_solver("PZOBO", "quadratic", TINY, params, n_iter=0)
    # the directions: the next draws of the view's solver stream
    generator = torch.Generator()
    generator.set_state(start.problem.rng.get_state())
    directions = torch.randn((Q, 5), generator=generator,
                             dtype=torch.float64)
    _, after = run_solver("PZOBO", "quadratic", TINY, params, n_iter=1)
    P = make_problem("quadratic", **TINY)
    H, C, d = P.H_bar, P.C_bar, P.d_bar
    alpha, beta = after.steps.inner_step, after.steps.outer_step
    x0, y0 = start.x, start.y

    def inner(x):
        y = y0.clone()
        for _ in range(T):
            y = y - alpha * (H @ y + C @ x + d)
        return y

    y_N = inner(x0)
    estimate = P.upper_reg * (x0 - P.a_bar)
    for u in directions:
        delta = (inner(x0 + mu * u) - y_N) / mu
        estimate = estimate + torch.dot(delta, y_N - P.b_bar) * u / Q
    close(after.y, y_N)
    close(after.x, x0 - beta * estimate)


def test_zeroth_order_estimate_correlates_with_the_hypergradient():
    P = make_problem("quadratic", **TINY)
    view = CountingView(P)
    view.seed(3)
    x = gaussian_directions(1, P.x0, view.rng)[0]
    directions = gaussian_directions(400, x, view.rng)
    # y_N ~ y*(x) after 60 steps (contraction 0.83 per step)
    y_N, deltas = perturbed_inner_steps(
        view, x, P.y0, directions, smoothing=0.1, step=2 / (P.mu_g + P.L_g),
        n_steps=60, batch_size=None)
    grad_x_f, grad_y_f = P.grad_f(x, y_N)
    estimate = grad_x_f + jacobian_transpose_estimate(directions, deltas,
                                                      grad_y_f)
    exact = P.hypergradient(x)
    cosine = torch.dot(estimate, exact) / (
        torch.linalg.vector_norm(estimate) * torch.linalg.vector_norm(exact))
    assert float(cosine) > 0.95
    # the perturbed trajectories evaluate the drawn full pass at Q + 1
    # points: charged n once per step, Q + 1 gradient passes
    assert view.n_samples_lower == 60 * P.n_lower
    assert view.n_grad_evals == 401 * 60 * P.n_lower


def test_zeroth_order_trajectories_share_their_batches():
    """With common batches the map x -> y_N(x) of a quadratic is affine,
    so the finite differences do not depend on the smoothing; with
    independent batches they would grow as the noise over mu."""
    P = make_problem("quadratic", **TINY)

    def deltas(smoothing):
        view = CountingView(P)
        view.seed(5)
        directions = gaussian_directions(3, P.x0, view.rng)
        _, result = perturbed_inner_steps(
            view, P.x0, P.y0, directions, smoothing=smoothing, step=0.2,
            n_steps=10, batch_size=4)
        return result, view

    coarse, view = deltas(1.0)
    fine, _ = deltas(1e-4)
    torch.testing.assert_close(coarse, fine, rtol=1e-7, atol=1e-9)
    assert view.n_samples_lower == 10 * 4
    assert view.n_grad_evals == 4 * 10 * 4


@pytest.mark.parametrize("generator", PROBLEMS)
def test_pzobo_decreases_the_hypergradient_norm(generator):
    # at the default constant steps the zeroth-order estimate keeps a noise
    # floor (Q = 10 directions; grad_y f does not vanish at the solution):
    # on the benchmark_bilevel instance the norm goes 2.5 -> 0.03 at 50
    # iterations, then wanders up to about 0.25 by 200, so its tenfold
    # decrease is asserted at 50, where the descent phase ends; the
    # controlled instance descends more slowly and is checked at 200
    params = PROBLEMS[generator]
    n_iter = {"controlled": 200, "benchmark_bilevel": 50}[generator]
    records, _ = run_solver("PZOBO", "quadratic", params, {}, n_iter=n_iter)
    start, end = records[0], records[-1]
    assert end["hypergrad_norm"] <= start["hypergrad_norm"] / 10, records
    assert end["value"] < start["value"]
    assert end["diverged"] == 0


@pytest.mark.parametrize("batch_size", [None, 8])
def test_pzobo_accounting(batch_size):
    T, Q, K = 3, 5, 4
    records, _ = run_solver(
        "PZOBO", "quadratic", TINY,
        {"T": T, "n_directions": Q, "batch_size": batch_size}, n_iter=K)
    end = records[-1]
    S = 30 if batch_size is None else batch_size
    # T lower batches (full passes for None) shared by the Q + 1
    # trajectories, one upper batch for grad f (both partials, one call)
    assert end["n_samples_lower"] == K * T * S
    assert end["n_samples_upper"] == K * S
    assert end["n_grad_evals"] == K * ((Q + 1) * T * S + S)
    assert end["n_hvp"] == 0


def test_optuna_skips_problems_with_more_coordinates_than_max_dim_x():
    # TINY has dim_x = 5: searched at max_dim_x = 5, skipped at 4
    run_solver("Optuna", "quadratic", TINY, {"max_dim_x": 5}, n_iter=1)
    with pytest.raises(pytest.skip.Exception, match="max_dim_x=4 .* has 5"):
        run_solver("Optuna", "quadratic", TINY, {"max_dim_x": 4}, n_iter=1)


# -- bad parameters -----------------------------------------------------------

BAD = [
    ("Optuna", {"search_low": 1.0, "search_high": 1.0}, "search_high must"),
    ("Optuna", {"search_low": -math.inf}, "search_low must"),
    ("Optuna", {"search_high": math.nan}, "search_high must"),
    ("Optuna", {"inner_tol": 0.0}, "inner_tol must"),
    ("Optuna", {"max_inner_steps": 0}, "max_inner_steps must"),
    ("Optuna", {"lbfgs_first_step": -1.0}, "lbfgs_first_step must"),
    ("Optuna", {"max_dim_x": 0}, "max_dim_x must"),
    ("PZOBO", {"T": 0}, "T must"),
    ("PZOBO", {"n_directions": 0}, "n_directions must"),
    ("PZOBO", {"smoothing": 0.0}, "smoothing must"),
    ("PZOBO", {"outer_step": -0.1}, "outer_step must"),
    ("PZOBO", {"batch_size": 0}, "batch_size must"),
]


@pytest.mark.parametrize("solver, params, match", BAD)
def test_bad_parameters_fail_the_parameter_check(solver, params, match):
    with pytest.raises(ValueError, match=match):
        component("solver", solver).get_instance(**params).check_parameters()


def test_pzobo_batch_size_is_bounded_by_the_problem():
    with pytest.raises(ValueError, match=r"batch_size must .*\[1, 30\]"):
        run_solver("PZOBO", "quadratic", TINY, {"batch_size": 31}, n_iter=0)


# -- the regularization-selection dataset -------------------------------------

@pytest.mark.parametrize("solver", ["Optuna", "PZOBO"])
def test_solvers_run_on_regularization_selection(solver):
    records, _ = run_solver(solver, "regularization_selection", {}, {},
                            n_iter=3)
    end = records[-1]
    assert math.isfinite(end["value"]) and end["diverged"] == 0



def test_optuna_is_loaded_by_warm_up_outside_the_timed_run():
    """The solver module does not import optuna (tests/test_layers.py);
    its warm_up, which benchopt calls once before the timed runs, does,
    so the first timed iteration pays no import."""
    script = (
        "import importlib.util, sys\n"
        "spec = importlib.util.spec_from_file_location(\n"
        "    'solvers.optuna', 'solvers/optuna.py')\n"
        "module = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(module)\n"
        "solver = module.Solver()\n"
        "before = 'optuna' in sys.modules\n"
        "solver.warm_up()\n"
        "print(before, 'optuna' in sys.modules)\n")
    result = python_script(script)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == ["False", "True"]
