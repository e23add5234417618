"""Hyper-representation learning (Huang et al. 2021, BiAdam, Sec. 5.2 and
App. A.1.2): a representation network shared by few-shot N-way K-shot
tasks in the upper level, one linear head per task in the lower level
(support cross-entropy + C ||w||^2), the query cross-entropy as upper
objective, ``test_accuracy`` on held-out tasks as the task metric. See
``benchmark_utils/problems/hyper_representation.py`` for the formulation
(a finite pool of ``n_train_tasks`` tasks; one sample of either level is a
task, so the meta-batch size is the solvers' ``batch_size``) and
``benchmark_utils/data/few_shot_tasks.py`` for the sources and how each
splits meta-training from meta-test classes.

Parameters: ``ways`` (N), ``shots`` (K), ``n_query`` (query images per
class), ``n_train_tasks``, ``n_test_tasks``, ``C`` (the ridge, 0.01 in the
paper), the representation (``network`` "conv" or "mlp", ``width``,
``depth``, ``n_features``; the paper does not describe its network),
``source`` and ``random_state`` (tasks, network start and synthetic data).

Sources: ``"synthetic"`` (default, no download; 100 / 50 classes, so every
panel of the paper, 20-way included, runs offline), ``"digits"``
(scikit-learn's 8 x 8 digits, no download; ways <= 10), ``"omniglot"``
(the paper's data: run ``python -m benchopt prepare . -d
"hyper_representation[source=omniglot]"`` first; 28 x 28 images),
``"omniglot_shaped"`` (no download: synthetic images at Omniglot's shape,
28 x 28, 964 / 659 classes of 20; the offline instance on which a transfer
to Omniglot evaluates the solvers' default rules and times them,
benchmark_utils/data/shaped.py).
"""
import numpy as np
import torch
from benchopt import BaseDataset
from benchopt.config import get_data_path

from benchmark_utils.checks.dataset_failures import CheckedDataset
from benchmark_utils.checks.parameters import (
    check_choice,
    check_int,
    check_positive,
)
from benchmark_utils.checks.run_list import SampleCounts
from benchmark_utils.data.few_shot_tasks import (
    SOURCE_SIZES,
    digits_pools,
    make_tasks,
    synthetic_pools,
)
from benchmark_utils.data.instance import instance_of
from benchmark_utils.data.omniglot import (
    OMNIGLOT_FILES,
    download_omniglot,
    load_omniglot,
    missing_file_message,
    missing_files,
)
from benchmark_utils.data.shaped import omniglot_shaped_pools
from benchmark_utils.data.verify import DownloadedFiles
from benchmark_utils.problems.hyper_representation import (
    HyperRepresentationBilevel,
)
from benchmark_utils.problems.representation_networks import (
    NETWORKS,
    RepresentationNetwork,
)

SOURCES = tuple(SOURCE_SIZES)


class Dataset(CheckedDataset, DownloadedFiles, BaseDataset):
    name = "hyper_representation"
    requirements = ["pip::torch", "numpy", "scikit-learn", "pillow"]

    parameters = {
        "source": ["synthetic"],
        "ways": [5],
        "shots": [1],
        "n_query": [5],
        "n_train_tasks": [64],
        "n_test_tasks": [32],
        "C": [0.01],
        "network": ["mlp"],
        "width": [32],
        "depth": [1],
        "n_features": [16],
        "random_state": [0],
    }
    # 64 tasks: the largest default batch_size of the general solvers
    # (F3SA, FSLA) must fit in the pool
    test_parameters = {"n_test_tasks": [16]}

    def prepare(self):
        if self.source == "omniglot":
            download_omniglot(self._omniglot_dir())

    def _omniglot_dir(self):
        return get_data_path("omniglot")

    def sample_counts(self):
        """Samples per level (the pool's training tasks), from the
        parameters (run-list check)."""
        return SampleCounts("general", self.n_train_tasks, self.n_train_tasks)

    def data_files(self):
        # in the cache key of prepare (benchmark_utils/data/verify.py)
        if self.source != "omniglot":
            return ()
        return [self._omniglot_dir() / name
                for name in OMNIGLOT_FILES.values()]

    def check_parameters(self):
        check_choice("source", self.source, SOURCES)
        sizes = SOURCE_SIZES[self.source]
        max_ways = min(sizes["classes"])
        check_int("ways", self.ways, 2, max_ways)
        check_int("shots", self.shots, 1)
        check_int("n_query", self.n_query, 1)
        if self.shots + self.n_query > sizes["per_class"]:
            raise ValueError(
                f"shots + n_query must be <= {sizes['per_class']} (images "
                f"per class of source {self.source!r}), got "
                f"{self.shots} + {self.n_query}")
        check_int("n_train_tasks", self.n_train_tasks, 1)
        check_int("n_test_tasks", self.n_test_tasks, 1)
        check_positive("C", self.C)
        check_choice("network", self.network, NETWORKS)
        check_int("width", self.width, 1)
        check_int("depth", self.depth, 0 if self.network == "mlp" else 1)
        check_int("n_features", self.n_features, 1)
        check_int("random_state", self.random_state, 0)

    def check_run_ready(self):
        if self.source == "omniglot" and missing_files(self._omniglot_dir()):
            raise FileNotFoundError(
                missing_file_message(self._omniglot_dir()))

    def pools(self):
        """((train images, labels), (test images, labels)) of the source."""
        if self.source == "synthetic":
            return synthetic_pools(self.random_state)
        if self.source == "digits":
            return digits_pools(self.random_state)
        if self.source == "omniglot_shaped":
            return omniglot_shaped_pools(self.random_state)
        return load_omniglot(self._omniglot_dir())

    def offline_stand_in(self):
        """The parameters of the offline instance shaped like this one
        (benchmark_utils/data/shaped.py): Omniglot's shape for
        ``source="omniglot"``; None where this instance is offline."""
        if self.source != "omniglot":
            return None
        return {**self._parameters, "source": "omniglot_shaped"}

    def make_data(self):
        (train_images, train_labels), (test_images, test_labels) = (
            self.pools())
        rng = np.random.default_rng([self.random_state, 1])
        shape = dict(ways=self.ways, shots=self.shots, n_query=self.n_query,
                     rng=rng)
        train = make_tasks(train_images, train_labels, self.n_train_tasks,
                           **shape)
        test = make_tasks(test_images, test_labels, self.n_test_tasks,
                          **shape)
        network = RepresentationNetwork(self.network, train_images.shape[1:],
                                        self.width, self.depth,
                                        self.n_features)
        x0 = network.initial_parameters(
            torch.Generator().manual_seed(self.random_state))
        problem = HyperRepresentationBilevel(train, test, self.ways, self.C,
                                             network, x0)
        return dict(problem=problem, instance=instance_of(self))
