"""Regenerate the tiny covtype-format fixture of this folder.

    PYTHONPATH=. python tests/data/covtype_small/make_fixture.py  (from root)

``covtype.data.gz`` as scikit-learn's ``fetch_covtype`` downloads it: a
gzipped CSV of 55 integers per line, 10 quantitative features, 4
wilderness and 40 soil one-hot columns, the class 1..7 last; but 84 lines
(12 per class). The first 7 quantitative columns are 50 for the sample's
own class and 0 otherwise, plus noise in 0..9 (so the classes are
separable by a linear model without intercept).
"""
import gzip
from pathlib import Path

import numpy as np

from benchmark_utils.data.regularization_selection import COVTYPE_FILE

HERE = Path(__file__).parent

if __name__ == "__main__":
    rng = np.random.default_rng(0)
    labels = rng.permutation(np.repeat(np.arange(1, 8), 12))
    n = labels.size
    table = np.zeros((n, 55), dtype=np.int64)
    table[:, :10] = rng.integers(0, 10, (n, 10))
    table[np.arange(n), labels - 1] += 50
    table[np.arange(n), 10 + rng.integers(0, 4, n)] = 1
    table[np.arange(n), 14 + rng.integers(0, 40, n)] = 1
    table[:, -1] = labels
    with open(HERE / COVTYPE_FILE, "wb") as raw, gzip.GzipFile(
            fileobj=raw, mode="wb", mtime=0) as handle:
        np.savetxt(handle, table, fmt="%d", delimiter=",")
