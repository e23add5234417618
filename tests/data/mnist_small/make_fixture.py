"""Regenerate the tiny MNIST-format fixture of this folder.

    PYTHONPATH=. python tests/data/mnist_small/make_fixture.py   (from the root)

Four gzipped IDX files with the real MNIST names, dtypes and 28 x 28 image
shape, but 30 training and 12 t10k images: each image is black with a 5 x 5
bright square whose position depends on its label (so the classes are
separable), labels cycle through 0..9.
"""
from pathlib import Path

import numpy as np

from benchmark_utils.data.mnist import MNIST_FILES, write_idx

HERE = Path(__file__).parent


def make_split(n, rng):
    labels = (np.arange(n) % 10).astype(np.uint8)
    images = np.zeros((n, 28, 28), dtype=np.uint8)
    for i, label in enumerate(labels):
        row, col = 2 + 6 * (label // 4), 2 + 6 * (label % 4)
        images[i, row:row + 5, col:col + 5] = rng.integers(128, 256, (5, 5))
    return images, labels


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    for split, n in (("train", 30), ("test", 12)):
        images, labels = make_split(n, rng)
        write_idx(HERE / MNIST_FILES[f"{split}_images"], images)
        write_idx(HERE / MNIST_FILES[f"{split}_labels"], labels)
