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

Checks (see :mod:`benchmark_utils.data.verify`): the published checksum is
the git blob id of the file in the repository served by the URL
(:data:`WIKIMATH_PUBLISHED`; its size is not published). ``prepare``
downloads a present file again when it differs, :func:`check_wikimath_file`
(the dataset's run-list check) rejects it, and the reader rejects a file
that is not JSON or whose days are not lists of numbers of one length; each
with a ``CorruptDataError`` naming the file and the prepare command.
"""
import json
from pathlib import Path

import numpy as np

from benchmark_utils.data.download import refresh
from benchmark_utils.data.verify import (
    CorruptDataError,
    Published,
    verify,
)

WIKIMATH_URL = (
    "https://raw.githubusercontent.com/benedekrozemberczki/"
    "pytorch_geometric_temporal/master/dataset/wikivital_mathematics.json"
)
WIKIMATH_FILENAME = "wikivital_mathematics.json"
# git blob id of dataset/wikivital_mathematics.json at the URL's repository
# (unchanged since its commit of 2021-03-22)
WIKIMATH_PUBLISHED = Published(
    git_sha1="28aefd607de34627e194f40a80fb50cf549904f4")


# the exact command that downloads the file: the regression dataset's
# default source is synthetic, so the source must be selected
PREPARE_COMMAND = (
    'python -m benchopt prepare . -d "regression[source=wikimath]"')


def download_wikimath(dest, url=WIKIMATH_URL, verify_published=True):
    """Download the JSON to ``dest`` (atomically; a no-op if it exists and
    matches :data:`WIKIMATH_PUBLISHED`, else it is downloaded again;
    ``verify_published=False``: no check, of the download or of a present
    file).

    A failed download leaves no new file behind and raises ``OSError``
    naming the URL, the path, how to place the file by hand and a present
    file found corrupt.
    """
    return refresh(dest, [url], what="WikiMath",
                   published=WIKIMATH_PUBLISHED if verify_published else None,
                   recovery=f"Delete any corrupt file and retry "
                   f"`{PREPARE_COMMAND}`, or download {url} and place it at "
                   f"{dest}.")


def check_wikimath_file(path):
    """The dataset's run-list check: ``FileNotFoundError`` when the file is
    missing, ``CorruptDataError`` when its checksum is not the published
    one (both name the file and the prepare command)."""
    if not Path(path).exists():
        raise FileNotFoundError(missing_file_message(path))
    verify(path, WIKIMATH_PUBLISHED, PREPARE_COMMAND)


def missing_file_message(path):
    return (
        f"The WikiMath data file is missing: {path}. Run `{PREPARE_COMMAND}` "
        f"to download it, or download {WIKIMATH_URL} and place it at {path}."
    )


def load_wikimath_matrix(path):
    """The (pages x days) visit matrix of the JSON file at ``path``.

    Raises ``FileNotFoundError`` naming the URL and the path when the file
    is missing, and ``CorruptDataError`` (a ValueError) naming the path and
    the prepare command when it is not JSON (truncated, garbage) or not in
    the format of the module doc. The shape (1068 x 731) and checksum are
    not checked here (the tests' fixture is smaller):
    :func:`check_wikimath_file` does, before any run.
    """
    if not Path(path).exists():
        raise FileNotFoundError(missing_file_message(path))
    try:
        data = json.loads(Path(path).read_bytes())
    except UnicodeDecodeError as error:
        raise CorruptDataError(path, f"not JSON text ({error})",
                               PREPARE_COMMAND) from None
    except json.JSONDecodeError as error:
        cut = " (truncated)" if error.pos >= len(error.doc.rstrip()) else ""
        raise CorruptDataError(
            path, f"not valid JSON{cut}: {error.msg} at line {error.lineno} "
            f"column {error.colno}", PREPARE_COMMAND) from None
    return _visit_matrix(path, data)


def _visit_matrix(path, data):
    def bad(problem):
        return CorruptDataError(path, f"not the WikiMath format: {problem}",
                                PREPARE_COMMAND)
    try:
        n_days = int(data["time_periods"])
        days = [data[str(t)]["y"] for t in range(n_days)]
    except (KeyError, TypeError, ValueError) as error:
        what = f"no {error} entry" if isinstance(error, KeyError) else error
        raise bad(f"{what} (it needs \"time_periods\" and, for each day "
                  "t, data[str(t)][\"y\"], the pages' visits)") from None
    pages = {len(day) if isinstance(day, list) else -1 for day in days}
    if len(pages) != 1 or min(pages) < 1:
        raise bad(f"the days' \"y\" are not lists of one length "
                  f"(lengths {sorted(pages)[:5]}, -1: not a list)")
    try:
        return np.array(days, dtype=np.float64).T
    except (TypeError, ValueError) as error:
        raise bad(f"visits that are not numbers ({error})") from None


def wikimath_regression(path, rng):
    """(A, b): one random day as the target, the other days as features."""
    matrix = load_wikimath_matrix(path)
    target = rng.integers(matrix.shape[1])
    return np.delete(matrix, target, axis=1), matrix[:, target]
