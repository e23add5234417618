"""LIBSVM-format files (Chang and Lin's LIBSVM data sets): reader and writer.

Each line is ``<label> <index>:<value> ...`` with 1-based feature indices in
increasing order, zero features omitted. The files of the LIBSVM site are
plain or bzip2-compressed (``.bz2``, ijcnn1); a name ending in ``.bz2`` or
``.gz`` is decompressed on the fly. Parsing is scikit-learn's
``load_svmlight_file``; this module turns its failures into a
:class:`~benchmark_utils.data.verify.CorruptDataError` naming the file and
the command that fetches it, and returns dense arrays (the data sets read
here have at most a few dozen features).
"""
import bz2
import gzip
import zlib
from pathlib import Path

import numpy as np

from benchmark_utils.data.verify import CorruptDataError

# (*) scikit-learn is imported where it is used: importing it adds about
# 0.6 s to the start of every benchopt process, most of which read no
# LIBSVM file


def read_libsvm(path, n_features=None, command=None):
    """(features (n, n_features) float64, labels (n,) float64) of the
    LIBSVM file at ``path``; ``n_features`` None: the largest index.

    A damaged compressed stream, a line not in the format, or a feature
    index above ``n_features`` raises ``CorruptDataError`` naming the file
    and ``command``; a missing file ``FileNotFoundError``."""
    from sklearn.datasets import load_svmlight_file  # on first use (*)
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no LIBSVM file at {path}")
    try:
        features, labels = load_svmlight_file(
            str(path), n_features=n_features, dtype=np.float64)
    except EOFError:
        raise CorruptDataError(path, "truncated (the compressed stream ends "
                               "before its end marker)", command) from None
    except (OSError, zlib.error) as error:  # bz2 / gzip: not a valid stream
        raise CorruptDataError(path, f"not an intact compressed file "
                               f"({error})", command) from None
    except ValueError as error:
        raise CorruptDataError(path, f"not in LIBSVM format ({error})",
                               command) from None
    if features.shape[0] == 0:
        raise CorruptDataError(path, "no sample in the file", command)
    return features.toarray(), labels


def write_libsvm(path, features, labels):
    """Write a LIBSVM file, bzip2- or gzip-compressed by its name's suffix
    (``.bz2``, ``.gz``; gzip with mtime 0, bzip2 has no time stamp, so the
    bytes depend on the data only). The inverse of :func:`read_libsvm`;
    builds the tests' fixtures."""
    from sklearn.datasets import dump_svmlight_file  # on first use (*)
    path = Path(path)
    opener = {".bz2": bz2.open, ".gz": lambda p, mode: gzip.GzipFile(
        p, mode, mtime=0)}.get(path.suffix, open)
    with opener(path, "wb") as handle:
        dump_svmlight_file(np.asarray(features, dtype=np.float64),
                           np.asarray(labels), handle, zero_based=False)
