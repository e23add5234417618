"""Over-parameterized regression (Cao et al. 2023, Problem (3), Sec. 5 and
App. F.1; Giang-Tran et al. 2025, eq. (6), Sec. 4.1).

Upper level: validation loss; lower level: training loss; Z = l1 ball of
radius 10 (Cao et al. 2023, App. F.1; Giang-Tran et al. 2025 state no
radius but reuse Cao et al.'s data, so 10 is the best-supported value);
random thirds for train / validation / test (Cao et al. 2023, Sec. 5). With
fewer training rows than features the training loss has many minimizers in
Z, and the validation loss picks among them.

``source="synthetic"`` (default, no download): Gaussian features, a sparse
ground truth with l1 norm radius/2 and label noise, shape as parameters.
The default, 1068 samples x 500 features, keeps WikiMath's sample count with
n_train < d < n_train + n_validation: the training loss has many minimizers
(it interpolates), while the validation loss cannot also be interpolated on
them, so f* > 0 (with d >= n_train + n_validation, as WikiMath's 730 > 712,
a generic instance can fit both thirds and f* may be 0).
``source="wikimath"``: Wikipedia Math Essentials, 1068 pages x 731 days, one
random day as target, raw visit counts (the papers state no preprocessing);
run ``python -m benchopt prepare . -d "regression[source=wikimath]"`` first.

Every instance is checked to be genuinely bilevel: f must vary over the
lower-level solution set by much more than the reference accuracy (see
:mod:`benchmark_utils.references.least_squares` for how g*, f* and that
spread are certified).
"""
import numpy as np
from benchopt import BaseDataset
from benchopt.config import get_data_path

from benchmark_utils.checks.dataset_failures import CheckedDataset
from benchmark_utils.checks.parameters import (
    check_choice,
    check_int,
    check_nonnegative,
    check_positive,
)
from benchmark_utils.checks.run_list import SampleCounts
from benchmark_utils.data.instance import instance_of
from benchmark_utils.data.verify import DownloadedFiles
from benchmark_utils.data.wikimath import (
    WIKIMATH_FILENAME,
    check_wikimath_file,
    download_wikimath,
    wikimath_regression,
)
from benchmark_utils.problems.least_squares import (
    LOSS_SCALINGS,
    LeastSquaresBilevel,
)
from benchmark_utils.references.cache_key import ReferenceIdentity
from benchmark_utils.references.least_squares import (
    cached_least_squares_references,
)
from benchmark_utils.sets import L1Ball

SOURCES = ("synthetic", "wikimath")


class Dataset(CheckedDataset, DownloadedFiles, ReferenceIdentity,
              BaseDataset):
    name = "regression"
    requirements = ["pip::torch", "numpy", "cvxpy", "scipy"]

    parameters = {
        "source": ["synthetic"],
        "n_samples": [1068],
        "n_features": [500],
        "radius": [10.0],
        "loss": ["mse"],
        "noise": [0.05],
        "random_state": [0],
    }
    test_parameters = {"n_samples": [90], "n_features": [45]}

    def prepare(self):
        if self.source == "wikimath":
            download_wikimath(self._wikimath_path())

    def _wikimath_path(self):
        return get_data_path("wikimath") / WIKIMATH_FILENAME

    def data_files(self):
        # in the cache key of prepare (benchmark_utils/data/verify.py)
        return [self._wikimath_path()] if self.source == "wikimath" else ()

    def make_data(self):
        rng = np.random.default_rng(self.random_state)
        if self.source == "synthetic":
            A, b = self._synthetic(rng)
        else:
            A, b = wikimath_regression(self._wikimath_path(), rng)
        train, val, test = np.array_split(rng.permutation(A.shape[0]), 3)
        problem = LeastSquaresBilevel(
            A[val], b[val], A[train], b[train],
            L1Ball(A.shape[1], self.radius),
            loss=self.loss, A_test=A[test], b_test=b[test],
        )
        references = cached_least_squares_references(
            problem, "regression", self._reference_key())
        _check_genuinely_bilevel(references)
        self.attach_references(problem, references)
        return dict(problem=problem, instance=instance_of(self))

    def sample_counts(self):
        """Samples per level (the validation third up, the training third
        down, as ``make_data``'s split), from the parameters of the
        synthetic source (run-list check); WikiMath's come with its
        file."""
        if self.source != "synthetic":
            raise ValueError("the sizes of WikiMath come with its file")
        train, val, _ = (len(part) for part in np.array_split(
            np.arange(self.n_samples), 3))
        return SampleCounts("simple", val, train,
                            f_convex=LeastSquaresBilevel.f_convex)

    def check_parameters(self):
        check_choice("source", self.source, SOURCES)
        check_positive("radius", self.radius)
        check_choice("loss", self.loss, LOSS_SCALINGS)
        check_int("random_state", self.random_state, 0)
        if self.source == "synthetic":
            check_int("n_samples", self.n_samples, 6)
            check_int("n_features", self.n_features, 2)
            check_nonnegative("noise", self.noise)
            # a necessary condition of _check_genuinely_bilevel, known
            # before the reference solve: with at least as many training
            # rows (the first third) as features, Gaussian features give a
            # strictly convex training loss, with one minimizer
            n_train = -(-self.n_samples // 3)
            if n_train >= self.n_features:
                raise ValueError(
                    "This regression instance is not genuinely bilevel: "
                    f"n_features must be > n_train = ceil(n_samples / 3) = "
                    f"{n_train}, so that the training loss has many "
                    f"minimizers, got n_features={self.n_features}")

    def check_run_ready(self):
        if self.source == "wikimath":      # missing, or not the published
            check_wikimath_file(self._wikimath_path())

    def _synthetic(self, rng):
        A = rng.standard_normal((self.n_samples, self.n_features))
        beta = np.zeros(self.n_features)
        support = rng.choice(self.n_features, max(1, self.n_features // 20),
                             replace=False)
        beta[support] = rng.standard_normal(support.size)
        beta *= 0.5 * self.radius / np.abs(beta).sum()
        # A beta summed by numpy, not BLAS: a BLAS product rounds by its
        # thread count and CPU kernel, and the instance must be the same
        # bit for bit everywhere (tests/test_instance_digests.py)
        b = ((A[:, support] * beta[support]).sum(axis=1)
             + self.noise * rng.standard_normal(self.n_samples))
        return A, b

    def _reference_key(self):
        key = {name: getattr(self, name) for name in self.parameters}
        if self.source == "wikimath":   # the synthetic shape does not apply
            key.pop("n_samples"), key.pop("n_features"), key.pop("noise")
        return key


def _check_genuinely_bilevel(references):
    spread, accuracy = references["f_spread"], references["f_star_accuracy"]
    if not spread > 1e3 * accuracy:
        raise ValueError(
            "This regression instance is not genuinely bilevel: the "
            f"validation loss varies by only {spread:.3g} over the training "
            f"loss's solution set (reference accuracy {accuracy:.3g}). Use "
            "fewer samples than features and a radius large enough for the "
            "l1 ball to contain interpolating solutions."
        )
