import math

import torch

from benchmark_utils.checks.parameters import (check_in_interval,
                                              check_nonnegative,
                                              check_positive)
from benchmark_utils.solvers.simple import SimpleBilevelSolver


class Solver(SimpleBilevelSolver):
    """SDBGD / DBGD-sto: stochastic Dynamic Barrier Gradient Descent, projected.

    Gong, Liu, Liu, "Bi-objective trade-off with dynamic barrier gradient
    descent", NeurIPS 2021 (deterministic DBGD); its stochastic, projected
    version is the baseline of Cao et al. 2023 (App. F, "DBGD-sto": the
    gradients replaced by stochastic ones, a projection onto Z after each
    step) and Giang-Tran et al. 2025 (App. D, "SDBGD").

    Per iteration k, with one upper batch theta_k and one lower batch xi_k:

        phi_k     = min(alpha (g(x_k; xi_k) - g_hat), beta ||grad g(x_k; xi_k)||^2)
        lambda_k  = max((phi_k - <grad f(x_k; theta_k), grad g(x_k; xi_k)>)
                        / ||grad g(x_k; xi_k)||^2, 0)
        x_{k+1}   = Pi_Z(x_k - gamma (grad f(x_k; theta_k) + lambda_k grad g(x_k; xi_k)))

    Defaults: alpha = beta = 1, gamma = 1e-6 (Cao et al. 2023, regression,
    the "short step"); g_hat = 0 (both papers). Cao et al. 2023's dictionary
    values are alpha = beta = 100, gamma = 5e-3, batch 8; Giang-Tran et al.
    2025's "long step" is gamma = 1e-2 (configs/ carry each).

    Choices where the papers are silent:
    * g(x_k) inside phi is the stochastic value on the same lower batch as
      the gradient (one draw per level per iteration: 2 samples per
      iteration, the per-iteration counts of Giang-Tran et al. 2025's
      tables);
    * when the sampled ||grad g|| is 0 the barrier weight lambda_k is 0
      (the public Python port's guard);
    * the start: a random point of Z per repetition (``init``).
    """

    name = "SDBGD"
    parameters = {
        "gamma": [1e-6],
        "alpha": [1.0],
        "beta": [1.0],
        "g_hat": [0.0],
        "batch_size": [1],
    }
    test_config = {"gamma": 1e-3}

    def check_parameters(self):
        super().check_parameters()
        check_positive("gamma", self.gamma)
        check_nonnegative("alpha", self.alpha)
        check_nonnegative("beta", self.beta)
        # an estimate of g*: any finite number
        check_in_interval("g_hat", self.g_hat, -math.inf, math.inf,
                          closed=(False, False))

    def iterations(self):
        P, S = self.problem, self.batch_size
        x = self.x
        while True:
            grad_f = P.grad_f(x, batch=P.sample_upper(S))
            g_value, grad_g = P.g_and_grad_g(x, batch=P.sample_lower(S))
            grad_g_sq = grad_g @ grad_g
            phi = torch.minimum(self.alpha * (g_value - self.g_hat),
                                self.beta * grad_g_sq)
            # tensor ops, no host sync: the 0/0 branch is discarded by where
            weight = torch.where(
                grad_g_sq > 0,
                torch.clamp((phi - grad_f @ grad_g) / grad_g_sq, min=0.0), 0.0)
            x = P.Z.project(x - self.gamma * (grad_f + weight * grad_g))
            self.x = x
            yield
