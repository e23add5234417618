"""MNIST (LeCun et al. 1998) in its original IDX format: download and reader.

The four gzipped IDX files (training / t10k images and labels) are fetched
once by ``benchopt prepare`` into ``get_data_path("mnist")`` and checked
against the MD5 sums torchvision publishes for them; ``load_mnist`` then
reads them with numpy only (no torchvision dependency).

IDX format (http://yann.lecun.com/exdb/mnist/): a big-endian header
``0x00 0x00 <type code> <ndim>``, then ``ndim`` big-endian uint32 sizes,
then the data in C order. MNIST uses type code 0x08 (uint8): images are
``(n, 28, 28)``, labels ``(n,)``. The reader accepts any of the IDX type
codes and any sizes, so the tests can use tiny fixtures of the same format.
"""
import gzip
from pathlib import Path

import numpy as np

from benchmark_utils.data.download import fetch

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

# IDX type code -> numpy dtype (big-endian where it matters)
_IDX_DTYPES = {
    0x08: np.dtype(np.uint8), 0x09: np.dtype(np.int8),
    0x0B: np.dtype(">i2"), 0x0C: np.dtype(">i4"),
    0x0D: np.dtype(">f4"), 0x0E: np.dtype(">f8"),
}


def read_idx(path):
    """The array stored in an IDX file (gzipped if the name ends in .gz)."""
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as handle:
        raw = handle.read()
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0:
        raise ValueError(f"{path} is not an IDX file (bad magic number)")
    code, ndim = raw[2], raw[3]
    if code not in _IDX_DTYPES:
        raise ValueError(f"{path}: unknown IDX type code {code:#04x}")
    header = 4 + 4 * ndim
    shape = tuple(int(s) for s in np.frombuffer(raw[4:header], dtype=">u4"))
    dtype = _IDX_DTYPES[code]
    expected = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if len(raw) - header != expected:
        raise ValueError(
            f"{path}: header announces shape {shape} ({expected} bytes) but "
            f"the file holds {len(raw) - header} data bytes")
    data = np.frombuffer(raw, dtype=dtype, offset=header)
    return data.reshape(shape).astype(dtype.newbyteorder("="))


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
    """The MNIST file names absent from ``folder``."""
    folder = Path(folder)
    return [name for name in MNIST_FILES.values()
            if not (folder / name).exists()]


# the exact command that downloads the files: the hyper-cleaning dataset's
# default source is scikit-learn's digits, so the source must be selected
PREPARE_COMMAND = (
    'python -m benchopt prepare . -d "hyper_cleaning[source=mnist]"')


def missing_file_message(folder):
    return (f"The MNIST files {missing_files(folder)} are missing from "
            f"{Path(folder)}. Run `{PREPARE_COMMAND}` to download them, or "
            + _by_hand(folder))


def _by_hand(folder):
    urls = ", ".join(MNIST_MIRRORS[0] + name for name in missing_files(folder))
    return (f"download {urls} (mirrors: {', '.join(MNIST_MIRRORS[1:])}) and "
            f"place them in {Path(folder)}.")


def load_mnist(folder):
    """(train_images, train_labels, test_images, test_labels) from ``folder``.

    Images are ``(n, rows * cols)`` float64 in [0, 1] (pixels / 255);
    labels are int64. Raises ``FileNotFoundError`` naming the URLs and the
    folder when a file is missing.
    """
    folder = Path(folder)
    if missing_files(folder):
        raise FileNotFoundError(missing_file_message(folder))
    arrays = {key: read_idx(folder / name)
              for key, name in MNIST_FILES.items()}
    out = []
    for split in ("train", "test"):
        images, labels = arrays[f"{split}_images"], arrays[f"{split}_labels"]
        if images.shape[0] != labels.shape[0]:
            raise ValueError(
                f"MNIST {split} images and labels disagree: "
                f"{images.shape[0]} images, {labels.shape[0]} labels")
        out += [images.reshape(images.shape[0], -1).astype(np.float64) / 255.,
                labels.astype(np.int64)]
    return tuple(out)


def download_mnist(folder, mirrors=MNIST_MIRRORS, check_md5=True):
    """Download the missing MNIST files into ``folder`` (idempotent).

    Each file is written atomically and its MD5 checked; the mirrors are
    tried in order. A failed download leaves no file behind and raises
    ``OSError`` naming every URL tried, the folder and how to place the
    files by hand.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for name in missing_files(folder):
        errors = []
        for mirror in mirrors:
            try:
                fetch(mirror + name, folder / name,
                      MNIST_MD5[name] if check_md5 else None)
                break
            except (OSError, ValueError) as error:   # each names its URL
                errors.append(str(error))
        else:
            raise OSError(
                "could not download MNIST:\n" + "\n".join(errors)
                + f"\nRetry `{PREPARE_COMMAND}`, or " + _by_hand(folder))
    return folder

