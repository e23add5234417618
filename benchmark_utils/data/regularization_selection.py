"""The data of regularization selection: ijcnn1, covtype, a synthetic
stand-in; downloads, readers and the train / validation / test splits.

The splits follow benchopt's benchmark_bilevel (its ``datasets/ijcnn1.py``
and ``datasets/covtype.py``), plus the test split its ijcnn1 lacks:

* ijcnn1 (LIBSVM, Prokhorov 2001; 22 features, labels +-1):
  train = ``ijcnn1.bz2`` (49990 samples), validation = ``ijcnn1.t.bz2``
  (91701) less a random TEST_SHARE held out as the test set; features as
  given (upstream does not standardize them);
* covtype (UCI forest cover types, 54 features, 7 classes): the CSV
  ``covtype.data.gz`` that scikit-learn's ``fetch_covtype`` downloads,
  checked against the SHA-256 it publishes; test = TEST_SHARE of all
  samples, validation = TEST_SHARE of the rest, both with scikit-learn's
  ``train_test_split`` on one ``RandomState(random_state)`` (upstream's
  calls: the same split for the same seed), features standardized by the
  training set's mean and deviation (upstream's ``StandardScaler``);
* synthetic (no download, the default): ijcnn1's shape at a small size,
  Gaussian features, labels drawn from a logistic model on half of them.

Labels are returned as class indices 0..K-1 (ijcnn1: -1 -> 0, +1 -> 1).
LIBSVM publishes no checksum: ijcnn1 is checked by its format (an intact
bzip2 stream, LIBSVM lines, 22 features, labels +-1) when read.
"""
import math
import zlib
from pathlib import Path

import numpy as np
import pandas as pd

from benchmark_utils.data.download import refresh
from benchmark_utils.data.libsvm import read_libsvm
from benchmark_utils.data.verify import (
    CorruptDataError,
    Published,
    absent_files,
    checked_missing_files,
)

# (*) scikit-learn is imported where the real data is split: importing it
# adds about 0.6 s to the start of every benchopt process

SOURCES = ("synthetic", "ijcnn1", "covtype")
TEST_SHARE = 0.2                 # upstream covtype's test_size
LIBSVM_BINARY = ("https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/"
                 "binary/")
IJCNN1_FILES = {"train": "ijcnn1.bz2", "test": "ijcnn1.t.bz2"}
IJCNN1_FEATURES = 22
# the rows of the LIBSVM files (train, test: the published sizes, AVAILABLE):
# a well-formed file with other rows is another file
IJCNN1_ROWS = {"train": 49990, "test": 91701}
COVTYPE_FILE = "covtype.data.gz"
# scikit-learn's fetch_covtype: its URL and published SHA-256
COVTYPE_URL = "https://ndownloader.figshare.com/files/5976039"
COVTYPE_PUBLISHED = Published(sha256="614360d0257557dd1792834a85a1cdebfad"
                                     "c3c4f30b011d56afee7ffb5b15771")
COVTYPE_FEATURES, COVTYPE_CLASSES = 54, 7
# samples in the published files, for the sample counts known before a read
AVAILABLE = {"ijcnn1": (49990, 91701), "covtype": (581012, None)}


def prepare_command(source):
    """The command that downloads a source's files."""
    return ('python -m benchopt prepare . -d '
            f'"regularization_selection[source={source}]"')


def source_files(source):
    """{file name: (URL, Published or None)} of a source (none: synthetic)."""
    if source == "ijcnn1":
        return {name: (LIBSVM_BINARY + name, None)
                for name in IJCNN1_FILES.values()}
    if source == "covtype":
        return {COVTYPE_FILE: (COVTYPE_URL, COVTYPE_PUBLISHED)}
    return {}


def download(source, folder):
    """Download the source's missing files into ``folder`` (a present file
    that differs from its published checksum is downloaded again). A failed
    download leaves no file and raises ``OSError`` naming the URL, the
    folder and how to place the file by hand."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for name, (url, published) in source_files(source).items():
        path = folder / name
        refresh(path, [url], published=published, what=source,
                recovery=f"Retry `{prepare_command(source)}`, or download "
                f"{url} and place it at {path}.")
    return folder


def missing_file_message(source, folder):
    files = source_files(source)
    absent = absent_files(folder, files)
    urls = ", ".join(files[name][0] for name in absent)
    return (f"The {source} files {absent} are missing from {Path(folder)}. "
            f"Run `{prepare_command(source)}` to download them, or download "
            f"{urls} and place them in {Path(folder)}.")


def check_source_files(source, folder):
    """The dataset's run-list check: ``FileNotFoundError`` when a file is
    missing, ``CorruptDataError`` when one differs from its published
    checksum (both name the file and the prepare command)."""
    published = {name: p for name, (_, p) in source_files(source).items()
                 if p is not None}
    checked_missing_files(folder, published, prepare_command(source))
    if absent_files(folder, source_files(source)):
        raise FileNotFoundError(missing_file_message(source, folder))


def held_out_sizes(n):
    """(kept, held out) by ``train_test_split(test_size=TEST_SHARE)``."""
    held = math.ceil(TEST_SHARE * n)
    return n - held, held


def split_sizes(source, n_train=None, n_val=None, n_test=None):
    """(n_train, n_val, n_test) of a source; synthetic: as given."""
    if source == "ijcnn1":
        n_train, n_test_file = AVAILABLE["ijcnn1"]
        return (n_train, *held_out_sizes(n_test_file))
    if source == "covtype":
        rest, n_test = held_out_sizes(AVAILABLE["covtype"][0])
        return (*held_out_sizes(rest), n_test)
    return n_train, n_val, n_test


def _splits(train, val, test):
    """The keyword arguments of the problem that hold data."""
    return dict(A_train=train[0], labels_train=train[1], A_val=val[0],
                labels_val=val[1], A_test=test[0], labels_test=test[1])


def load_ijcnn1(folder, random_state):
    """The ijcnn1 splits (module doc) from ``folder``."""
    folder = Path(folder)
    if absent_files(folder, IJCNN1_FILES.values()):
        raise FileNotFoundError(missing_file_message("ijcnn1", folder))
    parts = {}
    for split, name in IJCNN1_FILES.items():
        features, labels = read_libsvm(folder / name, IJCNN1_FEATURES,
                                       prepare_command("ijcnn1"))
        if not np.isin(labels, (-1.0, 1.0)).all():
            odd = sorted(set(labels) - {-1.0, 1.0})[:5]
            raise CorruptDataError(folder / name, f"labels {odd} are not +-1",
                                   prepare_command("ijcnn1"))
        if features.shape[0] != IJCNN1_ROWS[split]:
            raise CorruptDataError(
                folder / name, f"{features.shape[0]} rows where the "
                f"published file has {IJCNN1_ROWS[split]} (another file)",
                prepare_command("ijcnn1"))
        parts[split] = (features, (labels > 0).astype(np.int64))
    from sklearn.model_selection import train_test_split  # (*)
    A_val, A_test, b_val, b_test = train_test_split(
        *parts["test"], test_size=TEST_SHARE,
        random_state=np.random.RandomState(random_state))
    return _splits(parts["train"], (A_val, b_val), (A_test, b_test))


def read_covtype(path):
    """(features (n, 54), labels 0..6) of the covtype CSV at ``path``: 55
    comma-separated integers per line, the class 1..7 last."""
    command = prepare_command("covtype")
    if not Path(path).exists():
        raise FileNotFoundError(missing_file_message("covtype",
                                                     Path(path).parent))
    try:
        table = pd.read_csv(path, header=None, compression="gzip",
                            dtype=np.float64).to_numpy()
    except EOFError:
        raise CorruptDataError(path, "truncated (the gzip stream ends before "
                               "its end marker)", command) from None
    except (OSError, zlib.error) as error:   # BadGzipFile included
        raise CorruptDataError(path, f"not an intact gzip file ({error})",
                               command) from None
    except (ValueError, pd.errors.ParserError) as error:
        raise CorruptDataError(path, f"not the covtype CSV ({error})",
                               command) from None
    if table.ndim != 2 or table.shape[1] != COVTYPE_FEATURES + 1:
        raise CorruptDataError(path, f"{table.shape[1]} columns where covtype"
                               f" has {COVTYPE_FEATURES + 1}", command)
    labels = table[:, -1]
    if not np.isin(labels, np.arange(1, COVTYPE_CLASSES + 1)).all():
        raise CorruptDataError(path, "classes outside 1..7", command)
    return table[:, :-1], labels.astype(np.int64) - 1


def load_covtype(folder, random_state):
    """The covtype splits (module doc) from ``folder``."""
    from sklearn.model_selection import train_test_split  # (*)
    from sklearn.preprocessing import StandardScaler
    features, labels = read_covtype(Path(folder) / COVTYPE_FILE)
    rng = np.random.RandomState(random_state)
    A_rest, A_test, b_rest, b_test = train_test_split(
        features, labels, test_size=TEST_SHARE, random_state=rng)
    A_train, A_val, b_train, b_val = train_test_split(
        A_rest, b_rest, test_size=TEST_SHARE, random_state=rng)
    scaler = StandardScaler().fit(A_train)
    return _splits((scaler.transform(A_train), b_train),
                   (scaler.transform(A_val), b_val),
                   (scaler.transform(A_test), b_test))


def synthetic_splits(n_train, n_val, n_test, n_features, random_state):
    """Standard Gaussian features; labels 1 with probability sigmoid(a^T
    w), w supported on half the features (so that their strengths should
    differ) with ||w|| = 4 (a Bayes accuracy near 0.85)."""
    rng = np.random.default_rng(random_state)
    n = n_train + n_val + n_test
    features = rng.standard_normal((n, n_features))
    w = np.zeros(n_features)
    support = rng.choice(n_features, max(1, n_features // 2), replace=False)
    w[support] = rng.standard_normal(support.size)
    w *= 4.0 / np.linalg.norm(w)
    labels = (rng.random(n) < 1 / (1 + np.exp(-features @ w))).astype(
        np.int64)
    cut = np.cumsum([n_train, n_val])
    return _splits(*[(features[part], labels[part]) for part in np.split(
        np.arange(n), cut)])
