"""Wikipedia Math Essentials (Rozemberczki et al. 2021), as papers 000 and 001 use it.

The PyTorch Geometric Temporal JSON holds daily visit counts of 1068
Wikipedia pages over 731 days: ``data["time_periods"] == 731`` and
``data[str(t)]["y"]`` is the list of the 1068 pages' visits on day t (other
keys, such as the graph's ``edges`` and ``weights``, are ignored). The data
matrix has pages as rows (samples) and days as columns (features); one
column, drawn at random, is the target (note 000 §4.1).
"""
import json
import os
import shutil
import tempfile
import urllib.request
from pathlib import Path

import numpy as np

WIKIMATH_URL = (
    "https://raw.githubusercontent.com/benedekrozemberczki/"
    "pytorch_geometric_temporal/master/dataset/wikivital_mathematics.json"
)
WIKIMATH_FILENAME = "wikivital_mathematics.json"


def download_wikimath(dest, url=WIKIMATH_URL):
    """Download the JSON to ``dest`` (atomically; a no-op if it exists)."""
    dest = Path(dest)
    if dest.exists():
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    with urllib.request.urlopen(url, timeout=120) as response, \
            tempfile.NamedTemporaryFile(dir=dest.parent, delete=False) as tmp:
        shutil.copyfileobj(response, tmp)
    os.replace(tmp.name, dest)
    return dest


def missing_file_message(path):
    return (
        f"The WikiMath data file is missing: {path}. Run `benchopt prepare . "
        f"-d regression` to download it, or download {WIKIMATH_URL} and place "
        f"it at {path}."
    )


def load_wikimath_matrix(path):
    """The (pages x days) visit matrix of the JSON file at ``path``."""
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
