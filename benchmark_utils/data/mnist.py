"""MNIST (LeCun et al. 1998) in its original IDX format: download and reader.

The four gzipped IDX files (training / t10k images and labels) are fetched
once by ``benchopt prepare`` into ``get_data_path("mnist")`` and checked
against the MD5 sums torchvision publishes for them and their published
sizes and SHA-256 (:data:`MNIST_PUBLISHED`); ``load_mnist`` then reads them
with numpy only (no torchvision dependency). ``prepare`` checks the files
already present too and downloads again any that differ;
:func:`missing_files` (the dataset's run-list check) rejects them with a
:class:`~benchmark_utils.data.verify.CorruptDataError`, and the reader
rejects a damaged gzip stream or IDX header the same way.

IDX format (http://yann.lecun.com/exdb/mnist/): a big-endian header
``0x00 0x00 <type code> <ndim>``, then ``ndim`` big-endian uint32 sizes,
then the data in C order. MNIST uses type code 0x08 (uint8): images are
``(n, 28, 28)``, labels ``(n,)``. The reader accepts any of the IDX type
codes and any sizes, so the tests can use tiny fixtures of the same format.
"""
import gzip
import zlib
from pathlib import Path

import numpy as np

from benchmark_utils.data.download import refresh
from benchmark_utils.data.verify import (
    CorruptDataError,
    Published,
    absent_files,
    checked_missing_files,
)

# Mirrors tried in order; yann.lecun.com is often unavailable, the first one is
# the mirror torchvision uses.
MNIST_MIRRORS = (
    "https://ossci-datasets.s3.amazonaws.com/mnist/",
    "https://storage.googleapis.com/cvdf-datasets/mnist/",
    "http://yann.lecun.com/exdb/mnist/",
)
MNIST_FILES = {
    "train_images": "train-images-idx3-ubyte.gz",
    "train_labels": "train-labels-idx1-ubyte.gz",
    "test_images": "t10k-images-idx3-ubyte.gz",
    "test_labels": "t10k-labels-idx1-ubyte.gz",
}
MNIST_MD5 = {
    "train-images-idx3-ubyte.gz": "f68b3c2dcbeaaa9fbdd348bbdeb94873",
    "train-labels-idx1-ubyte.gz": "d53e105ee54ea40749a09fcbcd1e9432",
    "t10k-images-idx3-ubyte.gz": "9fb629c4189551a2d022fa330f9573f3",
    "t10k-labels-idx1-ubyte.gz": "ec29112dd5afa0611ce80d1b7f02629c",
}
# sizes (yann.lecun.com's page) and SHA-256 (tensorflow-datasets, torchvision)
MNIST_PUBLISHED = {
    "train-images-idx3-ubyte.gz": Published(9912422, "440fcabf73cc546fa214"
                                            "75e81ea370265605f56be210a4024d2"
                                            "ca8f203523609"),
    "train-labels-idx1-ubyte.gz": Published(28881, "3552534a0a558bbed6aed3"
                                            "2b30c495cca23d567ec52cac8be1a07"
                                            "30e8010255c"),
    "t10k-images-idx3-ubyte.gz": Published(1648877, "8d422c7b0a1c1c79245a5"
                                           "bcf07fe86e33eeafee792b84584aec27"
                                           "6f5a2dbc4e6"),
    "t10k-labels-idx1-ubyte.gz": Published(4542, "f7ae60f92e00ec6debd23a60"
                                           "88c31dbd2371eca3ffa0defaefb25992"
                                           "4204aec6"),
}

# IDX type code -> numpy dtype (big-endian where it matters)
_IDX_DTYPES = {
    0x08: np.dtype(np.uint8), 0x09: np.dtype(np.int8),
    0x0B: np.dtype(">i2"), 0x0C: np.dtype(">i4"),
    0x0D: np.dtype(">f4"), 0x0E: np.dtype(">f8"),
}


def read_idx(path):
    """The array stored in an IDX file (gzipped if the name ends in .gz).

    A damaged file raises :class:`~benchmark_utils.data.verify.
    CorruptDataError` (a ValueError) naming it and the problem: a gzip
    stream cut short or damaged, no IDX header, or a header whose shape
    does not match the data."""
    path = Path(path)
    raw = _read_maybe_gzip(path)
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0:
        magic = raw[:4].hex() if raw else "none: the file is empty"
        raise CorruptDataError(
            path, f"not an IDX file (bad magic number {magic})")
    code, ndim = raw[2], raw[3]
    if code not in _IDX_DTYPES:
        raise CorruptDataError(path, f"unknown IDX type code {code:#04x}")
    header = 4 + 4 * ndim
    if len(raw) < header:
        raise CorruptDataError(path, "IDX header cut short")
    shape = tuple(int(s) for s in np.frombuffer(raw[4:header], dtype=">u4"))
    dtype = _IDX_DTYPES[code]
    expected = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if len(raw) - header != expected:
        raise CorruptDataError(
            path, f"bad header: it announces shape {shape} ({expected} "
            f"bytes) but the file holds {len(raw) - header} data bytes")
    data = np.frombuffer(raw, dtype=dtype, offset=header)
    return data.reshape(shape).astype(dtype.newbyteorder("="))


def _read_maybe_gzip(path):
    if path.suffix != ".gz":
        return path.read_bytes()
    try:
        with gzip.open(path, "rb") as handle:
            return handle.read()
    except EOFError:
        problem = "truncated (the gzip stream ends before its end marker)"
    except gzip.BadGzipFile as error:  # not gzip, or a failed CRC or size
        problem = f"not an intact gzip file ({error})"
    except zlib.error as error:
        problem = f"damaged gzip data ({error})"
    raise CorruptDataError(path, problem)


def write_idx(path, array):
    """Write ``array`` as an IDX file (gzipped if the name ends in .gz).

    The inverse of :func:`read_idx`; used to build the test fixtures.
    """
    array = np.asarray(array)
    codes = {v.newbyteorder("="): k for k, v in _IDX_DTYPES.items()}
    code = codes[array.dtype.newbyteorder("=")]
    dtype = _IDX_DTYPES[code]
    header = bytes([0, 0, code, array.ndim]) + np.asarray(
        array.shape, dtype=">u4").tobytes()
    payload = header + np.ascontiguousarray(array, dtype=dtype).tobytes()
    path = Path(path)
    if path.suffix == ".gz":
        # mtime=0: byte-identical fixtures from run to run
        with open(path, "wb") as raw, gzip.GzipFile(
                fileobj=raw, mode="wb", mtime=0) as handle:
            handle.write(payload)
    else:
        path.write_bytes(payload)


def missing_files(folder):
    """The MNIST file names absent from ``folder``, after checking those
    present (:func:`~benchmark_utils.data.verify.checked_missing_files`)."""
    return checked_missing_files(folder, MNIST_PUBLISHED, PREPARE_COMMAND)


def _absent(folder):
    return absent_files(folder, MNIST_FILES.values())


# the exact command that downloads the files: the hyper-cleaning dataset's
# default source is scikit-learn's digits, so the source must be selected
PREPARE_COMMAND = (
    'python -m benchopt prepare . -d "hyper_cleaning[source=mnist]"')


def missing_file_message(folder):
    return (f"The MNIST files {_absent(folder)} are missing from "
            f"{Path(folder)}. Run `{PREPARE_COMMAND}` to download them, or "
            + _by_hand(folder))


def _by_hand(folder, names=None):
    names = _absent(folder) if names is None else names
    urls = ", ".join(MNIST_MIRRORS[0] + name for name in names)
    return (f"download {urls} (mirrors: {', '.join(MNIST_MIRRORS[1:])}) and "
            f"place them in {Path(folder)}.")


def load_mnist(folder):
    """(train_images, train_labels, test_images, test_labels) from ``folder``.

    Images are ``(n, rows * cols)`` float64 in [0, 1] (pixels / 255);
    labels are int64. Raises ``FileNotFoundError`` naming the URLs and the
    folder when a file is missing, and a ``CorruptDataError`` (ValueError)
    naming the file and the prepare command when one is not in MNIST's
    format (damaged gzip, bad header, images not 28 x 28 bytes, labels not
    digits, as many labels as images). The item counts and checksums are
    not checked here (the tests' fixtures are small): :func:`missing_files`
    does, before any run.
    """
    folder = Path(folder)
    if _absent(folder):
        raise FileNotFoundError(missing_file_message(folder))
    arrays = {key: _read_mnist_file(folder / name, key)
              for key, name in MNIST_FILES.items()}
    out = []
    for split in ("train", "test"):
        images, labels = arrays[f"{split}_images"], arrays[f"{split}_labels"]
        if images.shape[0] != labels.shape[0]:
            raise CorruptDataError(
                folder / MNIST_FILES[f"{split}_labels"],
                f"{labels.shape[0]} labels for the {images.shape[0]} images "
                f"of {MNIST_FILES[f'{split}_images']}", PREPARE_COMMAND)
        out += [images.reshape(images.shape[0], -1).astype(np.float64) / 255.,
                labels.astype(np.int64)]
    return tuple(out)


def _read_mnist_file(path, key):
    """``read_idx`` and MNIST's format: uint8 images of 28 x 28, uint8
    labels 0..9; a CorruptDataError naming the prepare command if not."""
    try:
        array = read_idx(path)
    except CorruptDataError as error:
        raise error.with_command(PREPARE_COMMAND) from None
    images = key.endswith("images")
    shape_ok = (array.shape[1:] == (28, 28) if images else array.ndim == 1)
    if array.dtype != np.uint8 or not shape_ok:
        wanted = "images uint8 (n, 28, 28)" if images else "labels uint8 (n,)"
        raise CorruptDataError(
            path, f"bad header: {array.dtype} of shape {array.shape}, MNIST "
            f"has {wanted}", PREPARE_COMMAND)
    if not images and array.size and array.max() > 9:
        raise CorruptDataError(path, f"label {array.max()} is not a digit",
                               PREPARE_COMMAND)
    return array


def download_mnist(folder, mirrors=MNIST_MIRRORS, check_md5=True):
    """Download the missing MNIST files into ``folder`` (idempotent), and
    again any present file whose size or SHA-256 is not the published one.

    Each file is written atomically and its MD5, size and SHA-256 checked
    (``check_md5=False``: no checksum, of downloads or of present files);
    the mirrors are tried in order. A failed download leaves no new file
    behind and raises ``OSError`` naming every URL tried, the folder, how
    to place the files by hand, and a present file found corrupt.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for name in MNIST_FILES.values():
        refresh(folder / name, [mirror + name for mirror in mirrors],
                published=MNIST_PUBLISHED[name] if check_md5 else None,
                md5=MNIST_MD5[name] if check_md5 else None, what="MNIST",
                recovery=f"Delete any corrupt file and retry "
                f"`{PREPARE_COMMAND}`, or " + _by_hand(folder, [name]))
    return folder

