"""The 2-D coreset toy of Abolfazli et al. 2023 (IBCG, eq. (13), Sec. 5.1,
App. G.2).

Over the simplex Delta_4: the point theta nearest the target (2, 2) whose
image under A lies in the hull of four points. The paper reports only
mu_g = lambda_min(A^T A) (1 in its Fig. 1, 0.1 in Figs. 3-4); A and the
points are our choice, documented in
``benchmark_utils/problems/coreset_toy.py``; ``L_g`` = lambda_max(A^T A).
F* = 9/4 is exact. Deterministic: no random state. The problem checks its
parameters (mu_g, L_g > 0 and L_g >= mu_g).
"""
from benchopt import BaseDataset

from benchmark_utils.problems.coreset_toy import CoresetToyBilevel


class Dataset(BaseDataset):
    name = "coreset_toy"
    requirements = ["pip::torch", "numpy"]

    parameters = {
        "mu_g": [1.0],
        "L_g": [2.0],
    }
    test_parameters = {"mu_g": [1.0, 0.1]}

    def get_data(self):
        return dict(problem=CoresetToyBilevel(mu_g=self.mu_g, L_g=self.L_g))
