"""Data hyper-cleaning (Kwon et al. 2023, F2SA, Sec. 5; Huang et al. 2021,
BiAdam, Sec. 5.1 and App. A.1.1).

Per-sample weights sigma(x_i) on a training set with corrupted labels, a
linear multinomial logistic model with ridge c in the lower level, the
cross-entropy on a clean validation set in the upper level, a clean test set
for ``test_accuracy``. See ``benchmark_utils/problems/hyper_cleaning.py``
for the problem, ``benchmark_utils/data/hyper_cleaning.py`` for the splits
and the label noise, and docs/problems.md for the choices.

The papers' settings (configs set them; the defaults are a small digits
instance, 300 / 150 / 300, on which a plain run's few seconds suffice for
the weights to separate):

* Kwon et al. 2023: MNIST, ``reduction="sum"``, c = 0.01, n_train = 19000,
  n_val = 1000, corruption p in {0.1, 0.3};
* Huang et al. 2021: MNIST, ``reduction="mean"``, C = 0.001,
  n_train = 5000, n_val = 5000, corruption rho in {0.2, 0.6, 0.8}.

``source="digits"`` (default, no download): scikit-learn's 8 x 8 digits;
train, validation and test are disjoint random subsets. ``source="mnist"``:
run ``python -m benchopt prepare . -d "hyper_cleaning[source=mnist]"``
first; train and validation come from the 60000 training images, the test
samples from the 10000 t10k images. ``source="mnist_shaped"`` (no
download): MNIST's shape with synthetic pixels of MNIST's published
per-pixel mean and standard deviation and a random linear teacher's labels
(benchmark_utils/data/shaped.py), the offline instance on which a transfer
to MNIST evaluates the solvers' default rules and times them.
"""
from benchopt import BaseDataset
from benchopt.config import get_data_path

from benchmark_utils.checks.dataset_failures import CheckedDataset
from benchmark_utils.checks.parameters import (
    check_choice,
    check_in_interval,
    check_int,
    check_positive,
)
from benchmark_utils.checks.run_list import SampleCounts
from benchmark_utils.data.hyper_cleaning import check_split_sizes
from benchmark_utils.data.instance import instance_of
from benchmark_utils.data.mnist import (
    MNIST_FILES,
    download_mnist,
    load_mnist,
    missing_file_message,
    missing_files,
)
from benchmark_utils.data.shaped import mnist_shaped
from benchmark_utils.data.verify import DownloadedFiles
from benchmark_utils.problems.hyper_cleaning import (
    REDUCTIONS,
    make_hyper_cleaning,
)

SOURCES = ("digits", "mnist", "mnist_shaped")
# samples available per source: (pool for train + val [+ test], test pool)
AVAILABLE = {"digits": (1797, None), "mnist": (60000, 10000),
             "mnist_shaped": (60000, 10000)}


class Dataset(CheckedDataset, DownloadedFiles, BaseDataset):
    name = "hyper_cleaning"
    requirements = ["pip::torch", "numpy", "scipy", "scikit-learn"]

    parameters = {
        "source": ["digits"],
        "n_train": [300],
        "n_val": [150],
        "n_test": [300],
        "corruption": [0.3],
        "c": [0.001],
        "reduction": ["mean"],
        "random_state": [0],
    }
    test_parameters = {"n_train": [200], "n_val": [100], "n_test": [100]}

    def prepare(self):
        if self.source == "mnist":
            download_mnist(self._mnist_dir())

    def _mnist_dir(self):
        return get_data_path("mnist")

    def data_files(self):
        # in the cache key of prepare (benchmark_utils/data/verify.py)
        if self.source != "mnist":
            return ()
        return [self._mnist_dir() / name for name in MNIST_FILES.values()]

    def make_data(self):
        if self.source == "digits":
            # scikit-learn on first use: its import adds about 0.6 s to
            # the start of every benchopt process
            from sklearn.datasets import load_digits
            digits = load_digits()
            # pixel intensities are 0..16: scale to [0, 1] like MNIST's /255
            features, labels = digits.data / 16.0, digits.target
            test_features = test_labels = None
        elif self.source == "mnist_shaped":
            features, labels, test_features, test_labels = mnist_shaped(
                self.n_train + self.n_val, self.n_test, self.random_state)
        else:
            features, labels, test_features, test_labels = load_mnist(
                self._mnist_dir())
        problem = make_hyper_cleaning(
            features, labels, self.n_train, self.n_val, self.n_test,
            self.corruption, self.c, self.reduction, seed=self.random_state,
            test_features=test_features, test_labels=test_labels,
            n_classes=10)          # digits and MNIST: the ten digits
        return dict(problem=problem, instance=instance_of(self))

    def sample_counts(self):
        """Samples per level (validation images up, training images down),
        from the parameters (run-list check)."""
        return SampleCounts("general", self.n_val, self.n_train)

    def offline_stand_in(self):
        """The parameters of the offline instance shaped like this one
        (benchmark_utils/data/shaped.py), on which a transfer evaluates the
        solvers' default rules: MNIST's shape for ``source="mnist"``; None
        where this instance is offline."""
        if self.source != "mnist":
            return None
        return {**self._parameters, "source": "mnist_shaped"}

    def check_parameters(self):
        # all checked here, before MNIST is read; the split checks the sizes
        # and the problem c and reduction again, on the data actually read
        check_choice("source", self.source, SOURCES)
        for name in ("n_train", "n_val", "n_test"):
            check_int(name, getattr(self, name), 1)
        check_in_interval("corruption", self.corruption, 0.0, 1.0,
                          closed=(True, False))
        check_positive("c", self.c)
        check_choice("reduction", self.reduction, REDUCTIONS)
        check_int("random_state", self.random_state, 0)
        check_split_sizes(self.n_train, self.n_val, self.n_test,
                          *AVAILABLE[self.source])

    def check_run_ready(self):
        # missing_files also raises CorruptDataError for a present file
        # whose size or SHA-256 is not the published one
        if self.source == "mnist" and missing_files(self._mnist_dir()):
            raise FileNotFoundError(missing_file_message(self._mnist_dir()))
