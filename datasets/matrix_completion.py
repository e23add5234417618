"""Matrix completion with denoising (Abolfazli et al. 2023, IBCG, eq. (2),
Sec. 5.2).

The paper's synthetic generator: ``M = W W^T + noise (L + L^T)`` with rank
10, noise 0.5, entries observed with probability 0.8, pseudo-Huber
delta = 0.9, lambda1 = lambda2 = 0.05, over the nuclear-norm ball of radius
``||W W^T||_*``. ``split`` chooses the observed sets O1 (upper) and O2
(lower), which the paper never defines: ``"same"`` (O1 = O2 = O, default)
or ``"random"`` (disjoint random halves of O).

Two defaults differ from the paper's values, which stay available as
parameters (``configs/abolfazli2023_matrix_completion.yml`` uses them):
``reduction="sum"`` drops the 1/|O| factors of (2), with which no method
can lower the normalized error (``"mean"`` keeps them), and ``n = 64``
(the paper: 250) keeps a default run to a few seconds while a 16-row batch
covers a quarter of the matrix. Starts: ``x0`` a random point of the ball
(from ``random_state``) and ``y0 = 0``. Why each choice:
docs/problems.md, "Matrix completion with denoising"; the problem and its
closed forms: ``benchmark_utils/problems/matrix_completion.py``; the
generator: ``benchmark_utils/data/matrix_completion.py``.

Every parameter is checked when the dataset is built, before any data is
generated.
"""
import numpy as np
import torch
from benchopt import BaseDataset

from benchmark_utils.checks.dataset_failures import CheckedDataset
from benchmark_utils.checks.parameters import (
    check_choice,
    check_in_interval,
    check_int,
    check_nonnegative,
    check_positive,
)
from benchmark_utils.checks.run_list import SampleCounts
from benchmark_utils.data.instance import instance_of
from benchmark_utils.data.matrix_completion import (
    SPLITS,
    make_matrix_completion_data,
)
from benchmark_utils.problems.matrix_completion import (
    REDUCTIONS,
    MatrixCompletionBilevel,
)
from benchmark_utils.sets import NuclearNormBall


class Dataset(CheckedDataset, BaseDataset):
    name = "matrix_completion"
    requirements = ["pip::torch", "numpy"]

    parameters = {
        "n": [64],
        "rank": [10],
        "noise": [0.5],
        "p_observed": [0.8],
        "delta": [0.9],
        "lambda1": [0.05],
        "lambda2": [0.05],
        "split": ["same"],
        "reduction": ["sum"],
        "random_state": [0],
    }
    test_parameters = {"n": [20], "rank": [3]}

    def check_parameters(self):
        # the generator's parameters
        check_int("n", self.n, 2)
        check_int("rank", self.rank, 1, self.n)
        check_in_interval("noise", self.noise, 0.0, 1.0, closed=(True, False))
        check_in_interval("p_observed", self.p_observed, 0.0, 1.0,
                          closed=(False, True))
        check_choice("split", self.split, SPLITS)
        check_int("random_state", self.random_state, 0)
        # the problem's
        check_positive("delta", self.delta)
        check_nonnegative("lambda1", self.lambda1)
        check_positive("lambda2", self.lambda2)
        check_choice("reduction", self.reduction, REDUCTIONS)

    def sample_counts(self):
        """Samples per level (the matrix's rows), from the parameters
        (run-list check)."""
        return SampleCounts("general", self.n, self.n)

    def make_data(self):
        M, X_hat, observed, omega1, omega2 = make_matrix_completion_data(
            self.n, self.rank, self.noise, self.p_observed, self.split,
            self.random_state)
        # a random feasible x0 (the paper: "generated randomly"), y0 = 0
        radius = float(np.trace(X_hat))    # ||W W^T||_* (X_hat is PSD)
        generator = torch.Generator().manual_seed(self.random_state)
        x0 = NuclearNormBall(self.n, self.n, radius).random_point(generator)
        y0 = torch.zeros(self.n * self.n, dtype=torch.float64)
        problem = MatrixCompletionBilevel(
            M, X_hat, omega1, omega2, lambda1=self.lambda1,
            lambda2=self.lambda2, delta=self.delta, radius=radius,
            observed=observed, x0=x0, y0=y0, reduction=self.reduction)
        return dict(problem=problem, instance=instance_of(self))
