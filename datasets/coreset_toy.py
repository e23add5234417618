"""The 2-D coreset toy of Abolfazli et al. 2023 (IBCG, eq. (13), Sec. 5.1,
App. G.2).

Over the simplex Delta_4: the point theta nearest the target (2, 2) whose
image under A lies in the hull of four points. The paper reports only
mu_g = lambda_min(A^T A) (1 in its Fig. 1, 0.1 in Figs. 3-4); A and the
points are our choice, documented in
``benchmark_utils/problems/coreset_toy.py``; ``L_g`` = lambda_max(A^T A).
F* = 9/4 is exact. Deterministic: no random state. mu_g, L_g > 0 and
L_g >= mu_g are checked when the dataset is built (and by the problem).
"""
from benchopt import BaseDataset

from benchmark_utils.checks.dataset_failures import CheckedDataset
from benchmark_utils.checks.parameters import check_positive
from benchmark_utils.data.instance import instance_of
from benchmark_utils.problems.coreset_toy import CoresetToyBilevel


class Dataset(CheckedDataset, BaseDataset):
    name = "coreset_toy"
    requirements = ["pip::torch", "numpy"]

    parameters = {
        "mu_g": [1.0],
        "L_g": [2.0],
    }
    test_parameters = {"mu_g": [1.0, 0.1]}

    def check_parameters(self):
        check_positive("mu_g", self.mu_g)
        check_positive("L_g", self.L_g)
        if self.L_g < self.mu_g:
            raise ValueError(f"L_g must be >= mu_g (= {self.mu_g}), got "
                             f"{self.L_g!r}")

    def make_data(self):
        return dict(problem=CoresetToyBilevel(mu_g=self.mu_g, L_g=self.L_g),
                    instance=instance_of(self))
