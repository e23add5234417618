"""Mixed-precision iterative refinement (refined_conjugate_gradient): the
result meets the requested residual in exact products whatever the cheap
operator, float32 products of a float64 system need only a few exact
ones, a cheap operator too far from the exact one falls back to exact CG,
and warm starts are used only when they help."""
import torch

from benchmark_utils.numerics.linear_systems import (
    conjugate_gradient,
    refined_conjugate_gradient,
)


def _system(dim=60, condition=1e4, seed=0):
    generator = torch.Generator().manual_seed(seed)
    Q = torch.linalg.qr(torch.randn(dim, dim, generator=generator,
                                    dtype=torch.float64))[0]
    H = Q @ torch.diag(torch.logspace(0, torch.log10(
        torch.tensor(condition)).item(), dim, dtype=torch.float64)) @ Q.T
    rhs = torch.randn(dim, generator=generator, dtype=torch.float64)
    return 0.5 * (H + H.T), rhs


class Counted:
    def __init__(self, matrix):
        self.matrix, self.calls = matrix, 0

    def __call__(self, v):
        self.calls += 1
        return (self.matrix @ v.to(self.matrix.dtype)).double()


def _residual(H, w, rhs):
    return float(torch.linalg.vector_norm(rhs - H @ w) /
                 torch.linalg.vector_norm(rhs))


def test_float32_products_reach_a_float64_residual():
    H, rhs = _system(condition=1e3)
    exact, low = Counted(H), Counted(H.float())
    w = refined_conjugate_gradient(exact, low, rhs, tol=1e-11, max_iter=500)
    assert _residual(H, w, rhs) <= 1e-11
    # float32 alone stalls near its rounding level
    w32 = conjugate_gradient(Counted(H.float()), rhs, tol=1e-11,
                             max_iter=500)
    assert _residual(H, w32, rhs) > 1e-8
    # a few refinement rounds (each gains >= ROUND_TOL), one exact
    # product each; the iterations run on float32
    assert exact.calls <= 6
    assert low.calls > 10 * exact.calls


def test_a_cheap_operator_far_from_the_exact_one_falls_back():
    H, rhs = _system(seed=1)
    wrong = Counted(3.0 * H + torch.eye(H.shape[0], dtype=torch.float64))
    exact = Counted(H)
    w = refined_conjugate_gradient(exact, wrong, rhs, tol=1e-12,
                                   max_iter=500)
    assert _residual(H, w, rhs) <= 1e-12
    # the first round did not halve the exact residual: exact CG took over
    assert exact.calls > 5


def test_warm_start_used_when_closer_and_dropped_otherwise():
    H, rhs = _system(seed=2)
    solution = torch.linalg.solve(H, rhs)
    near = solution + 1e-6 * torch.ones_like(solution)
    exact, low = Counted(H), Counted(H.float())
    w = refined_conjugate_gradient(exact, low, rhs, tol=1e-12, max_iter=500,
                                   w0=near)
    assert _residual(H, w, rhs) <= 1e-12
    warm_low = low.calls
    cold_low = Counted(H.float())
    refined_conjugate_gradient(Counted(H), cold_low, rhs, tol=1e-12,
                               max_iter=500)
    assert warm_low < cold_low.calls
    # a start farther than 0 is dropped: same result as without it
    far = 1e3 * torch.ones_like(solution)
    w_far = refined_conjugate_gradient(Counted(H), Counted(H.float()), rhs,
                                       tol=1e-12, max_iter=500, w0=far)
    assert _residual(H, w_far, rhs) <= 1e-12
    assert float(torch.linalg.vector_norm(w_far - solution)) <= 1e-6


def test_without_a_cheap_operator_it_is_conjugate_gradient():
    H, rhs = _system(seed=3)
    w = refined_conjugate_gradient(Counted(H), None, rhs, tol=1e-12,
                                   max_iter=500)
    torch.testing.assert_close(
        w, conjugate_gradient(Counted(H), rhs, tol=1e-12, max_iter=500),
        rtol=0, atol=1e-14)
