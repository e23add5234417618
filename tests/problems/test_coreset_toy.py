"""The coreset toy: A has the declared spectrum, the start is the paper's,
and the exact F* agrees with an independent enumeration of the simplex and
with first-order optimality at lam*."""
import itertools

import pytest
import torch

from benchmark_utils.problems.coreset_toy import CoresetToyBilevel


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
