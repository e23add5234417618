"""Regenerate the tiny ijcnn1-format fixture of this folder.

    PYTHONPATH=. python tests/data/ijcnn1_small/make_fixture.py  (from root)

The two bzip2-compressed LIBSVM files with the real names (``ijcnn1.bz2``,
``ijcnn1.t.bz2``), 22 features in [-1, 1] (about a fifth of them zero, so
omitted as in the real files) and labels +-1, but 60 training and 50 test
lines: the label is the sign of a fixed linear score of the features (so
the classes are separable), about a third of them +1.
"""
from pathlib import Path

import numpy as np

from benchmark_utils.data.libsvm import write_libsvm
from benchmark_utils.data.regularization_selection import IJCNN1_FILES

HERE = Path(__file__).parent


def make_split(n, w, rng):
    features = np.round(rng.uniform(-1, 1, (n, w.size)), 4)
    features[rng.random(features.shape) < 0.2] = 0.0
    score = features @ w
    labels = np.where(score > np.quantile(score, 2 / 3), 1, -1)
    return features, labels


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    w = rng.standard_normal(22)
    for split, n in (("train", 60), ("test", 50)):
        write_libsvm(HERE / IJCNN1_FILES[split], *make_split(n, w, rng))
