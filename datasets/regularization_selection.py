"""Regularization selection (Dagréou et al. 2022, Fig. 2 left; benchopt's
benchmark_bilevel, datasets ``ijcnn1`` and ``covtype``).

One l2 penalty strength per feature (per class on covtype, as upstream) of a
logistic model: the training loss plus the penalties is the lower level,
the validation loss the upper level, a held-out test set gives
``test_accuracy``. See ``benchmark_utils/problems/regularization_selection.py``
for the problem, ``benchmark_utils/data/regularization_selection.py`` for
the data and splits, and docs/problems.md for the choices.

``source="synthetic"`` (default, no download): ijcnn1's shape (binary, 22
features) at a small size given by ``n_train``, ``n_val``, ``n_test``,
``n_features``. ``source="ijcnn1"`` or ``"covtype"``: run
``python -m benchopt prepare . -d "regularization_selection[source=ijcnn1]"``
(or ``source=covtype``) first; the sizes are then the data's.
``reg="exp"`` (upstream's): lambda = exp(x), x unconstrained;
``reg="linear"``: lambda = x in a box with a positive floor. ``penalty``:
``"auto"`` is per feature on binary data and per class on covtype
(upstream's), or ``"feature"`` / ``"class"``.
"""
from benchopt import BaseDataset
from benchopt.config import get_data_path

from benchmark_utils.checks.dataset_failures import CheckedDataset
from benchmark_utils.checks.memory import check_fits
from benchmark_utils.checks.parameters import check_choice, check_int
from benchmark_utils.checks.run_list import SampleCounts
from benchmark_utils.data.instance import instance_of
from benchmark_utils.data.regularization_selection import (
    SOURCES,
    check_source_files,
    download,
    load_covtype,
    load_ijcnn1,
    source_files,
    split_sizes,
    synthetic_splits,
)
from benchmark_utils.data.verify import DownloadedFiles
from benchmark_utils.problems.regularization_selection import (
    PENALTIES,
    REGS,
    RegularizationSelectionBilevel,
)

N_CLASSES = {"synthetic": 2, "ijcnn1": 2, "covtype": 7}
# the parameters only the synthetic source reads
SYNTHETIC_ONLY = ("n_train", "n_val", "n_test", "n_features")


class Dataset(CheckedDataset, DownloadedFiles, BaseDataset):
    name = "regularization_selection"
    requirements = ["pip::torch", "numpy", "scikit-learn", "pandas"]

    parameters = {
        "source": ["synthetic"],
        "reg": ["exp"],
        "penalty": ["auto"],
        "n_train": [1000],
        "n_val": [1000],
        "n_test": [1000],
        "n_features": [22],
        "random_state": [2442],
    }
    test_parameters = {"n_train": [200], "n_val": [100], "n_test": [100]}

    def prepare(self):
        if self.source != "synthetic":
            download(self.source, self._data_dir())

    def _data_dir(self):
        return get_data_path(self.source)

    def data_files(self):
        # in the cache key of prepare (benchmark_utils/data/verify.py)
        if self.source == "synthetic":
            return ()
        return [self._data_dir() / name for name in source_files(self.source)]

    def make_data(self):
        if self.source == "synthetic":
            data = synthetic_splits(self.n_train, self.n_val, self.n_test,
                                    self.n_features, self.random_state)
        elif self.source == "ijcnn1":
            data = load_ijcnn1(self._data_dir(), self.random_state)
        else:
            data = load_covtype(self._data_dir(), self.random_state)
        problem = RegularizationSelectionBilevel(
            **data, n_classes=N_CLASSES[self.source], reg=self.reg,
            penalty=self._penalty())
        return dict(problem=problem, instance=instance_of(self))

    def _penalty(self):
        if self.penalty != "auto":
            return self.penalty
        return "class" if N_CLASSES[self.source] > 2 else "feature"

    def sample_counts(self):
        """Samples per level (validation up, training down), from the
        parameters or the published files' sizes (run-list check)."""
        n_train, n_val, _ = split_sizes(self.source, self.n_train,
                                        self.n_val, self.n_test)
        return SampleCounts("general", n_val, n_train)

    def check_parameters(self):
        check_choice("source", self.source, SOURCES)
        check_choice("reg", self.reg, REGS)
        check_choice("penalty", self.penalty, ("auto", *PENALTIES))
        if self.penalty == "class" and N_CLASSES[self.source] == 2:
            raise ValueError(
                f"penalty must be 'auto' or 'feature' on the binary "
                f"source {self.source!r} (one weight vector), got 'class'")
        check_int("random_state", self.random_state, 0, 2 ** 32 - 1)
        if self.source == "synthetic":
            for name in ("n_train", "n_val", "n_test"):
                check_int(name, getattr(self, name), 1)
            check_int("n_features", self.n_features, 1)
            for name in ("n_train", "n_val", "n_test"):
                check_fits(name, getattr(self, name),
                           getattr(self, name) * self.n_features)
            return
        # a real source has its own sizes: a size given for it would be
        # silently ignored, so it is refused
        for name in SYNTHETIC_ONLY:
            default = type(self).parameters[name][0]
            if getattr(self, name) != default:
                raise ValueError(
                    f"{name} is used only with source='synthetic' "
                    f"({self.source} has its own sizes); leave it at its "
                    f"default {default}, got {getattr(self, name)!r}")

    def check_run_ready(self):
        # a missing file, or covtype's differing from its published SHA-256
        if self.source != "synthetic":
            check_source_files(self.source, self._data_dir())

