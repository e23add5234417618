"""Continual dictionary learning (Cao et al. 2023, Problem (5), Sec. 5 and
App. F.2; Giang-Tran et al. 2025, eq. (7), Sec. 4.2).

The generator of Cao et al. 2023 (25 x 50 true dictionary, 40 old atoms,
250 old + 250 new samples, 5 nonzeros, noise 0.01, delta = 3), the
two-phase Frank-Wolfe fit of the old dictionary and codes, and the bilevel
start D~_0 = [D_hat, 0]. The upper level is nonconvex, so there is no f*: the
metrics are ``upper_value``, ``lower_gap`` (g* by CVXPY, certified) and
``recovery_rate``. See ``benchmark_utils/problems/dictionary_learning.py``
for every choice made where the papers are silent, and
``benchmark_utils/references/dictionary.py`` for how g* is certified.
"""
import numpy as np
from benchopt import BaseDataset

from benchmark_utils.checks.dataset_failures import CheckedDataset
from benchmark_utils.checks.memory import check_fits
from benchmark_utils.checks.parameters import (
    check_int,
    check_nonnegative,
    check_positive,
)
from benchmark_utils.data.dictionary_learning import (
    fit_old_dictionary,
    make_continual_dictionary_data,
)
from benchmark_utils.data.instance import instance_of
from benchmark_utils.problems.dictionary_learning import (
    DictionaryLearningBilevel,
)
from benchmark_utils.references.cache_key import ReferenceIdentity
from benchmark_utils.references.dictionary import cached_dictionary_references


class Dataset(CheckedDataset, ReferenceIdentity, BaseDataset):
    name = "dictionary_learning"
    requirements = ["pip::torch", "numpy", "cvxpy"]

    parameters = {
        "n_features": [25],
        "n_atoms": [50],
        "n_old_atoms": [40],
        "n_new_atoms": [20],
        "n_samples": [250],
        "n_nonzeros": [5],
        "noise": [0.01],
        "delta": [3.0],
        "n_init_iter": [10_000],
        "random_state": [0],
    }
    test_parameters = {"n_samples": [40], "n_init_iter": [300]}

    def make_data(self):
        D_true, A_old, A_new = make_continual_dictionary_data(
            n_features=self.n_features, n_atoms=self.n_atoms,
            n_old_atoms=self.n_old_atoms, n_new_atoms=self.n_new_atoms,
            n_old_samples=self.n_samples, n_new_samples=self.n_samples,
            n_nonzeros=self.n_nonzeros, noise=self.noise,
            seed=self.random_state)
        D_hat, X_hat = fit_old_dictionary(
            A_old, self.n_old_atoms, self.delta, n_iter_joint=self.n_init_iter,
            n_iter_dictionary=self.n_init_iter, seed=self.random_state)
        rng = np.random.default_rng(self.random_state)
        X_start = rng.standard_normal((self.n_atoms, self.n_samples))
        problem = DictionaryLearningBilevel(
            A_old, A_new, D_hat, X_hat, D_true, self.n_atoms, self.delta,
            X_start)
        key = {name: getattr(self, name) for name in self.parameters}
        self.attach_references(problem,
                               cached_dictionary_references(problem, key))
        return dict(problem=problem, instance=instance_of(self))

    def check_parameters(self):
        check_int("n_features", self.n_features, 1)
        check_int("n_atoms", self.n_atoms, 2)
        check_int("n_old_atoms", self.n_old_atoms, 1, self.n_atoms - 1)
        check_int("n_new_atoms", self.n_new_atoms, 1, self.n_atoms)
        check_int("n_samples", self.n_samples, 1)
        check_int("n_nonzeros", self.n_nonzeros, 1,
                  min(self.n_old_atoms, self.n_new_atoms))
        check_nonnegative("noise", self.noise)
        check_positive("delta", self.delta)
        check_int("n_init_iter", self.n_init_iter, 1)
        check_int("random_state", self.random_state, 0)
        # the old and new samples (n_features each) and the codes and the
        # start (n_atoms each)
        check_fits("n_samples", self.n_samples, self.n_samples * (
            2 * self.n_features + 3 * self.n_atoms))
