"""Wikipedia Math Essentials (Rozemberczki et al. 2021): download and reader.

The regression data of Cao et al. 2023 (Sec. 5, App. F.1) and Giang-Tran et
al. 2025 (Sec. 4.1).

The PyTorch Geometric Temporal JSON holds daily visit counts of 1068
Wikipedia pages over 731 days: ``data["time_periods"] == 731`` and
``data[str(t)]["y"]`` is the list of the 1068 pages' visits on day t (other
keys, such as the graph's ``edges`` and ``weights``, are ignored). The data
matrix has pages as rows (samples) and days as columns (features); one
column, drawn at random, is the target, as in Cao et al. 2023, App. F.1
(which prints the full 1068 x 731 matrix as A: with one day as b, A is
1068 x 730, the d = 730 of its Sec. 5).
"""
import json
from pathlib import Path

import numpy as np

from benchmark_utils.data.download import fetch

WIKIMATH_URL = (
    "https://raw.githubusercontent.com/benedekrozemberczki/"
    "pytorch_geometric_temporal/master/dataset/wikivital_mathematics.json"
)
WIKIMATH_FILENAME = "wikivital_mathematics.json"


# the exact command that downloads the file: the regression dataset's
# default source is synthetic, so the source must be selected
PREPARE_COMMAND = (
    'python -m benchopt prepare . -d "regression[source=wikimath]"')


def download_wikimath(dest, url=WIKIMATH_URL):
    """Download the JSON to ``dest`` (atomically; a no-op if it exists).

    A failed download leaves nothing behind and raises ``OSError`` naming
    the URL, the path and how to place the file by hand.
    """
    dest = Path(dest)
    if dest.exists():
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    try:
        return fetch(url, dest)
    except OSError as error:
        raise OSError(f"{error}. Retry `{PREPARE_COMMAND}`, or download "
                      f"{url} and place it at {dest}.") from error


def missing_file_message(path):
    return (
        f"The WikiMath data file is missing: {path}. Run `{PREPARE_COMMAND}` "
        f"to download it, or download {WIKIMATH_URL} and place it at {path}."
    )


def load_wikimath_matrix(path):
    """The (pages x days) visit matrix of the JSON file at ``path``.

    Raises ``FileNotFoundError`` naming the URL and the path when the file
    is missing.
    """
    if not Path(path).exists():
        raise FileNotFoundError(missing_file_message(path))
    with open(path) as handle:
        data = json.load(handle)
    n_days = int(data["time_periods"])
    return np.array([data[str(t)]["y"] for t in range(n_days)],
                    dtype=np.float64).T


def wikimath_regression(path, rng):
    """(A, b): one random day as the target, the other days as features."""
    matrix = load_wikimath_matrix(path)
    target = rng.integers(matrix.shape[1])
    return np.delete(matrix, target, axis=1), matrix[:, target]
