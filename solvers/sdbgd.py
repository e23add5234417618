import torch

from benchmark_utils.checks.parameters import (
    check_nonnegative,
)
from benchmark_utils.solvers.simple import SimpleBilevelSolver
from benchmark_utils.solvers.steps import given_size, given_step


class Solver(SimpleBilevelSolver):
    """SDBGD / DBGD-sto: stochastic projected Dynamic Barrier Gradient Descent.

    Gong, Liu, Liu, "Bi-objective trade-off with dynamic barrier gradient
    descent", NeurIPS 2021 (deterministic DBGD); its stochastic, projected
    version is the baseline of Cao et al. 2023 (App. F, "DBGD-sto": the
    gradients replaced by stochastic ones, a projection onto Z after each
    step) and Giang-Tran et al. 2025 (App. D, "SDBGD"). Per iteration k,
    one upper batch theta_k and one lower batch xi_k (gradients at x_k):

        phi_k    = min(alpha (g(x_k; xi_k) - g_hat), beta ||grad g||^2)
        lambda_k = max((phi_k - <grad f, grad g>) / ||grad g||^2, 0)
        x_{k+1}  = Pi_Z(x_k - gamma (grad f + lambda_k grad g))

    ``outer_step`` = gamma, ``barrier_gap_scale`` = alpha and
    ``barrier_gradient_scale`` = beta (the two scales of the barrier phi),
    ``g_hat`` = g_hat (a lower bound of g*). The defaults are Cao et al.
    2023's regression values (the "short step"); configs/ carry the other
    experiments'.
    Departures: g(x_k) in phi is the stochastic value on the gradient's
    lower batch (2 samples per iteration with batch 1, Giang-Tran et al.
    2025's counts); lambda_k = 0 when the sampled ||grad g|| is 0 (the
    public Python port's guard).
    """

    name = "SDBGD"
    parameters = {}
    size_rules = (given_size("batch_size", 1),)
    test_config = {"outer_step": 1e-3}

    step_rules = (
        given_step("outer_step", "gamma", "x step (constant)", 1e-6),
        # the barrier phi_k's constants
        given_step("barrier_gap_scale", "alpha", "scale of g's gap in phi_k",
                   1.0, positive=False),
        given_step("barrier_gradient_scale", "beta",
                   "scale of ||grad g||^2 in phi_k", 1.0, positive=False),
        given_step("g_hat", "g_hat", "lower bound of g* in phi_k", 0.0,
                   positive=False),
    )

    def check_parameters(self):
        super().check_parameters()
        check_nonnegative("barrier_gap_scale", self.barrier_gap_scale)
        check_nonnegative("barrier_gradient_scale",
                          self.barrier_gradient_scale)

    def iterations(self):
        P, S = self.problem, self.sizes.batch_size
        gap_scale, g_hat = self.steps.barrier_gap_scale, self.steps.g_hat
        gradient_scale = self.steps.barrier_gradient_scale
        x = self.x
        while True:
            grad_f = P.grad_f(x, batch=P.sample_upper(S))
            g_value, grad_g = P.g_and_grad_g(x, batch=P.sample_lower(S))
            grad_g_sq = grad_g @ grad_g
            phi = torch.minimum(
                gap_scale * (g_value - g_hat), gradient_scale * grad_g_sq)
            # tensor ops, no host sync: the 0/0 branch is discarded by where
            weight = torch.where(
                grad_g_sq > 0,
                torch.clamp((phi - grad_f @ grad_g) / grad_g_sq, min=0.0), 0.0)
            x = P.Z.project(
                x - self.steps.outer_step * (grad_f + weight * grad_g))
            self.x = x
            yield
