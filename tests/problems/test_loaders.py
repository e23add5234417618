"""The data loaders: the MNIST IDX reader and the WikiMath JSON reader on
tiny fixtures of the real formats (tests/data), atomic and idempotent
downloads (from file:// mirrors), and missing files reported with the URL
and the path."""
import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from benchmark_utils.data.mnist import (
    MNIST_FILES,
    MNIST_MIRRORS,
    download_mnist,
    load_mnist,
    read_idx,
    write_idx,
)
from benchmark_utils.data.wikimath import (
    WIKIMATH_URL,
    download_wikimath,
    load_wikimath_matrix,
)

from conftest import component

FIXTURES = Path(__file__).resolve().parents[1] / "data"
MNIST_FIXTURE = FIXTURES / "mnist_small"
WIKIMATH_FIXTURE = FIXTURES / "wikimath_small.json"


def test_idx_reader_on_mnist_format_fixture():
    images = read_idx(MNIST_FIXTURE / MNIST_FILES["train_images"])
    labels = read_idx(MNIST_FIXTURE / MNIST_FILES["train_labels"])
    assert images.shape == (30, 28, 28) and images.dtype == np.uint8
    assert labels.shape == (30,)
    # the header is MNIST's: magic 0x00000803 / 0x00000801, big-endian sizes
    raw = gzip.open(MNIST_FIXTURE / MNIST_FILES["train_images"]).read()
    assert raw[:4] == bytes([0, 0, 8, 3])
    assert int.from_bytes(raw[4:8], "big") == 30
    np.testing.assert_array_equal(
        images[1], np.frombuffer(raw[16 + 784:16 + 2 * 784], np.uint8)
        .reshape(28, 28))
    train_x, train_y, test_x, test_y = load_mnist(MNIST_FIXTURE)
    assert train_x.shape == (30, 784) and test_x.shape == (12, 784)
    np.testing.assert_allclose(train_x[1], images[1].reshape(-1) / 255.0)
    np.testing.assert_array_equal(train_y, labels)


@pytest.mark.parametrize("array", [
    np.arange(24, dtype=np.uint8).reshape(2, 3, 4),
    np.array([-1.5, 2.25], dtype=np.float64),
    np.array([[1, -2], [3, 4]], dtype=np.int32),
])
@pytest.mark.parametrize("suffix", ["", ".gz"])
def test_idx_round_trip(tmp_path, array, suffix):
    path = tmp_path / f"data.idx{suffix}"
    write_idx(path, array)
    out = read_idx(path)
    assert out.dtype == array.dtype
    np.testing.assert_array_equal(out, array)


def test_idx_reader_rejects_malformed_files(tmp_path):
    bad_magic = tmp_path / "bad"
    bad_magic.write_bytes(
        b"\x01\x02\x08\x01" + (3).to_bytes(4, "big") + b"abc")
    with pytest.raises(ValueError, match="magic"):
        read_idx(bad_magic)
    truncated = tmp_path / "short"
    truncated.write_bytes(b"\x00\x00\x08\x01" + (5).to_bytes(4, "big") + b"ab")
    with pytest.raises(ValueError, match="shape"):
        read_idx(truncated)


def test_mnist_download_is_atomic_and_idempotent(tmp_path):
    mirror = MNIST_FIXTURE.resolve().as_uri() + "/"
    dest = tmp_path / "mnist"
    download_mnist(dest, mirrors=("file:///nonexistent/", mirror),
                   check_md5=False)
    for name in MNIST_FILES.values():
        assert ((dest / name).read_bytes()
                == (MNIST_FIXTURE / name).read_bytes())
    # nothing missing (the fixture is not the published file: unchecked)
    download_mnist(dest, mirrors=("file:///nonexistent/",), check_md5=False)
    # the real MD5 sums reject the fixture: nothing is left behind
    with pytest.raises(OSError, match="MD5"):
        download_mnist(tmp_path / "checked", mirrors=(mirror,))
    assert not list((tmp_path / "checked").iterdir())


def test_missing_mnist_files_name_url_and_path(monkeypatch, tmp_path):
    Dataset = component("dataset", "hyper_cleaning")
    monkeypatch.setattr(Dataset, "_mnist_dir", lambda self: tmp_path)
    with pytest.raises(FileNotFoundError) as error:
        Dataset.get_instance(source="mnist").make_data()
    message = str(error.value)
    assert str(tmp_path) in message
    assert MNIST_MIRRORS[0] + MNIST_FILES["train_images"] in message


def test_wikimath_loader_reads_pages_by_days():
    matrix = load_wikimath_matrix(WIKIMATH_FIXTURE)
    data = json.loads(WIKIMATH_FIXTURE.read_text())
    assert matrix.shape == (45, data["time_periods"])
    np.testing.assert_array_equal(matrix[:, 3], data["3"]["y"])


def test_wikimath_download_is_atomic_and_idempotent(tmp_path):
    dest = tmp_path / "wiki" / "wikivital_mathematics.json"
    # the fixture is not the published file: unchecked
    download_wikimath(dest, url=WIKIMATH_FIXTURE.resolve().as_uri(),
                      verify_published=False)
    assert dest.read_bytes() == WIKIMATH_FIXTURE.read_bytes()
    download_wikimath(dest, url="file:///nonexistent",   # exists: no fetch
                      verify_published=False)


def test_missing_wikimath_file_names_url_and_path(monkeypatch, tmp_path):
    missing = tmp_path / "wikivital_mathematics.json"
    with pytest.raises(FileNotFoundError) as error:
        load_wikimath_matrix(missing)
    message = str(error.value)
    assert WIKIMATH_URL in message and str(missing) in message
    Dataset = component("dataset", "regression")
    monkeypatch.setattr(Dataset, "_wikimath_path", lambda self: missing)
    with pytest.raises(FileNotFoundError, match=WIKIMATH_URL):
        Dataset.get_instance(source="wikimath").make_data()
