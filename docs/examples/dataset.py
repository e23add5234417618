"""A minimal general-bilevel dataset, to copy when adding one.

Per-feature ridge tuning: the upper variable ``x`` holds one ridge weight
per feature, the lower variable ``y`` a linear model fitted on the training
half, and the upper level is the model's error on the validation half::

    f(x, y) = mean_{j in val}   1/2 (a_j^T y - b_j)^2
    g(x, y) = mean_{i in train} 1/2 (a_i^T y - b_i)^2 + 1/2 sum_k x_k y_k^2

over ``x in X = [0.1, 10]^d`` (a box, so g(x, .) is 0.1-strongly convex for
every x). A dataset is two pieces: a problem class (oracles, constants,
exact quantities for the metrics; in the benchmark it lives in
``benchmark_utils/problems/``, its data generator in
``benchmark_utils/data/``) and a benchopt ``Dataset`` (parameters, their
checks, ``get_data``; in ``datasets/``).

Run it without copying it into ``datasets/``:

    python -m benchopt run . -d docs/examples/dataset.py \
        -s docs/examples/general_solver.py -n 20 -r 1
"""
from __future__ import annotations

import numpy as np
import torch
from benchopt import BaseDataset

from benchmark_utils.checks.dataset_failures import CheckedDataset
from benchmark_utils.checks.parameters import (
    check_int,
    check_nonnegative,
)
from benchmark_utils.problems.general import GeneralBilevelProblem
from benchmark_utils.sets import Box

# the box of the ridge weights: its lower end is mu_g
WEIGHT_BOUNDS = (0.1, 10.0)


class RidgeTuningBilevel(GeneralBilevelProblem):
    """Per-feature ridge tuning (module doc) on (A_train, b_train) and
    (A_val, b_val).

    One sample of a level is one row of its half; a batch value is the mean
    over the batch, the ridge in every lower term (so a batch keeps it
    once). The partial gradients and the second-order products come from
    ``f`` and ``g`` by automatic differentiation (the base class);
    ``inner_solution`` is the closed form.
    """

    def __init__(self, A_train, b_train, A_val, b_val):
        self.A_train, self.b_train = (self.as_tensor(A_train),
                                      self.as_tensor(b_train))
        self.A_val, self.b_val = self.as_tensor(A_val), self.as_tensor(b_val)
        self.n_lower, self.dim_y = self.A_train.shape
        self.n_upper = self.A_val.shape[0]
        self.dim_x = self.dim_y
        lower, upper = WEIGHT_BOUNDS
        self.X = Box(lower, upper, dim=self.dim_x)
        # what the solvers' default steps read: mu_g bounds the strong
        # convexity of g(x, .) below for every x in X, L_g the smoothness
        # of every per-sample g_i above, L_g_full that of the full mean
        self.mu_g = lower
        self.L_g = float((self.A_train ** 2).sum(dim=1).max()) + upper
        gram = self.A_train.T @ self.A_train / self.n_lower
        self.L_g_full = float(torch.linalg.eigvalsh(gram)[-1]) + upper
        self.x0 = torch.ones(self.dim_x, dtype=self.dtype)
        self.y0 = torch.zeros(self.dim_y, dtype=self.dtype)

    def f(self, x: torch.Tensor, y: torch.Tensor, *,
          batch=None) -> torch.Tensor:
        A, b = self.rows(self.A_val, batch), self.rows(self.b_val, batch)
        return 0.5 * ((A @ y - b) ** 2).mean()

    def g(self, x: torch.Tensor, y: torch.Tensor, *,
          batch=None) -> torch.Tensor:
        A, b = self.rows(self.A_train, batch), self.rows(self.b_train, batch)
        return 0.5 * ((A @ y - b) ** 2).mean() + 0.5 * (x * y * y).sum()

    def inner_solution(self, x: torch.Tensor) -> torch.Tensor:
        """y*(x) = (A^T A / n + diag(x))^-1 A^T b / n, exact."""
        A, n = self.A_train, self.n_lower
        return torch.linalg.solve(A.T @ A / n + torch.diag(x),
                                  A.T @ self.b_train / n)

    def __repr__(self) -> str:
        return (f"RidgeTuningBilevel(n_train={self.n_lower}, "
                f"n_val={self.n_upper}, dim={self.dim_y})")


def make_ridge_data(n_samples: int, n_features: int, noise: float,
                    random_state: int) -> dict[str, np.ndarray]:
    """Gaussian features, a linear ground truth with a few large and many
    small coefficients (so per-feature weights help), Gaussian label noise;
    the first half of the rows for training, the second for validation."""
    rng = np.random.default_rng(random_state)
    A = rng.standard_normal((n_samples, n_features))
    truth = rng.standard_normal(n_features)
    truth[n_features // 4:] *= 0.1
    b = A @ truth + noise * rng.standard_normal(n_samples)
    half = n_samples // 2
    return dict(A_train=A[:half], b_train=b[:half], A_val=A[half:],
                b_val=b[half:])


class Dataset(CheckedDataset, BaseDataset):
    name = "example_ridge_tuning"
    requirements = ["pip::torch", "numpy"]

    # benchopt runs every combination of these values
    parameters = {
        "n_samples": [100],
        "n_features": [10],
        "noise": [0.5],
        "random_state": [0],
    }

    def check_parameters(self):
        # called when benchopt builds the dataset, before any run: a bad
        # value fails at once with a message naming the parameter
        check_int("n_samples", self.n_samples, 4)
        check_int("n_features", self.n_features, 1)
        check_nonnegative("noise", self.noise)
        check_int("random_state", self.random_state, 0)

    def make_data(self):
        # what the objective receives: {"problem": a problem object}
        data = make_ridge_data(self.n_samples, self.n_features, self.noise,
                               self.random_state)
        return dict(problem=RidgeTuningBilevel(**data))
