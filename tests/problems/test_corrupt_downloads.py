"""Corrupt downloads (issue 23, fault 3): a truncated file, random bytes or
garbage in place of a downloaded file gives a ``CorruptDataError`` (a
ValueError) naming the file, the problem and the prepare command, when it
is loaded and, from the published size and checksum, in the dataset's
run-list check; ``prepare`` checks present files and downloads a corrupt
one again; the files' fingerprint is in prepare's cache key. Fixtures of
the real formats (tests/data) copied to tmp dirs; nothing is downloaded
(the URL opener fails, or mirrors are file:// URLs of the fixtures)."""
import gzip
import hashlib
import io
import shutil
import urllib.request
import zipfile
from pathlib import Path

import joblib
import numpy as np
import pytest

from benchmark_utils.data import mnist, omniglot, wikimath
from benchmark_utils.data.verify import CorruptDataError, Published

from conftest import component

FIXTURES = Path(__file__).resolve().parents[1] / "data"
COMMANDS = {
    "mnist": 'python -m benchopt prepare . -d "hyper_cleaning[source=mnist]"',
    "omniglot": 'python -m benchopt prepare . -d '
                '"hyper_representation[source=omniglot]"',
    "wikimath": 'python -m benchopt prepare . -d '
                '"regression[source=wikimath]"',
}
# per source: (dataset, its data-path method, the file corrupted below)
DATASETS = {
    "mnist": ("hyper_cleaning", "_mnist_dir", "train-images-idx3-ubyte.gz"),
    "omniglot": ("hyper_representation", "_omniglot_dir",
                 "images_background.zip"),
    "wikimath": ("regression", "_wikimath_path",
                 wikimath.WIKIMATH_FILENAME),
}
HTML = b"<!DOCTYPE html><html><body><h1>404: Not Found</h1></body></html>\n"


def copy_fixture(source, tmp_path):
    """(data path the dataset reads, the file corrupted by the tests)."""
    folder = tmp_path / source
    folder.mkdir()
    if source == "wikimath":
        path = folder / wikimath.WIKIMATH_FILENAME
        shutil.copy(FIXTURES / "wikimath_small.json", path)
        return path, path
    fixture = FIXTURES / {"mnist": "mnist_small",
                          "omniglot": "omniglot_small"}[source]
    for name in {"mnist": mnist.MNIST_FILES,
                 "omniglot": omniglot.OMNIGLOT_FILES}[source].values():
        shutil.copy(fixture / name, folder / name)
    return folder, folder / DATASETS[source][2]


def load(source, data_path):
    return {"mnist": mnist.load_mnist, "omniglot": omniglot.load_omniglot,
            "wikimath": wikimath.load_wikimath_matrix}[source](data_path)


def dataset_on(monkeypatch, source, data_path):
    """The dataset instance of ``source`` reading its files from
    ``data_path``."""
    name, attribute, _ = DATASETS[source]
    Dataset = component("dataset", name)
    monkeypatch.setattr(Dataset, attribute, lambda self: data_path)
    return Dataset.get_instance(source=source)


def published_of(path):
    """The fixture's own size and checksums, as if it were published."""
    data = Path(path).read_bytes()
    return Published(len(data), hashlib.sha256(data).hexdigest(),
                     hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest())


def publish_fixture(monkeypatch, source, data_path):
    """Make the copied fixture the 'published' files of ``source``."""
    if source == "wikimath":
        monkeypatch.setattr(wikimath, "WIKIMATH_PUBLISHED",
                            published_of(data_path))
        return
    module, attribute = {"mnist": (mnist, "MNIST_PUBLISHED"),
                         "omniglot": (omniglot, "OMNIGLOT_PUBLISHED")}[source]
    monkeypatch.setattr(module, attribute, {
        name: published_of(data_path / name) for name in getattr(
            module, attribute)})
    if source == "mnist":
        monkeypatch.setattr(mnist, "MNIST_MD5", {
            name: hashlib.md5((data_path / name).read_bytes()).hexdigest()
            for name in mnist.MNIST_MD5})


def truncate(path):
    data = path.read_bytes()
    path.write_bytes(data[:len(data) // 2])


def random_bytes(path):
    path.write_bytes(np.random.default_rng(0).bytes(path.stat().st_size))


def garbage(path):       # what a failed download often leaves: a web page
    path.write_bytes(HTML)


def bad_mnist_header(path):      # intact gzip, but 27 x 27 images
    mnist.write_idx(path, np.zeros((30, 27, 27), dtype=np.uint8))


def damaged_gzip(path):          # a flipped byte in the deflate stream
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


def wrong_zip(path):             # a zip, not Omniglot's folder layout
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("other/a/b/0001_01.png", b"not a png")


def damaged_zip_member(path):    # a flipped byte in a stored member
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("images_background/A/character01/01.png",
                         b"0123456789" * 10)
    data = bytearray(path.read_bytes())
    data[data.index(b"0123456789") + 5] ^= 0xFF
    path.write_bytes(bytes(data))


def bad_png(path):               # a member that is not a PNG
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("images_background/A/character01/01.png", b"x")


def wikimath_without_days(path):
    path.write_text('{"time_periods": 3, "0": {"y": [1, 2]}}')


def wikimath_ragged(path):
    path.write_text('{"time_periods": 2, "0": {"y": [1, 2]}, '
                    '"1": {"y": [1]}}')


CORRUPTIONS = [
    ("mnist", truncate, "truncated"),
    ("mnist", random_bytes, "not an intact gzip file"),
    ("mnist", garbage, "not an intact gzip file"),
    ("mnist", bad_mnist_header, "bad header"),
    ("mnist", damaged_gzip, "not an intact gzip file (CRC check failed"),
    ("omniglot", truncate, "not a zip archive (truncated"),
    ("omniglot", random_bytes, "not a zip archive"),
    ("omniglot", garbage, "not a zip archive"),
    ("omniglot", damaged_zip_member, "not an intact zip archive (Bad CRC"),
    ("omniglot", wrong_zip, "outside the images_background/ folder"),
    ("omniglot", bad_png, "not a readable PNG"),
    ("wikimath", truncate, "not valid JSON (truncated)"),
    ("wikimath", random_bytes, "not JSON text"),
    ("wikimath", garbage, "not valid JSON"),
    ("wikimath", wikimath_without_days, "not the WikiMath format: no '1'"),
    ("wikimath", wikimath_ragged, "not lists of one length"),
]


def assert_names_file_and_command(error, path, source):
    message = str(error)
    assert isinstance(error, CorruptDataError), repr(error)
    assert str(path) in message and COMMANDS[source] in message, message
    assert "Delete it and run" in message


@pytest.mark.parametrize("source, corrupt, problem", CORRUPTIONS,
                         ids=lambda v: getattr(v, "__name__", v))
def test_loading_a_corrupt_file_names_it_and_the_prepare_command(
        tmp_path, source, corrupt, problem):
    data_path, target = copy_fixture(source, tmp_path)
    corrupt(target)
    with pytest.raises(ValueError) as raised:
        load(source, data_path)
    assert_names_file_and_command(raised.value, target, source)
    assert problem in str(raised.value)


@pytest.mark.parametrize("source", sorted(DATASETS))
def test_intact_fixture_loads_and_passes_the_run_list_check(
        tmp_path, monkeypatch, source):
    data_path, _ = copy_fixture(source, tmp_path)
    assert len(load(source, data_path)[0]) > 0
    publish_fixture(monkeypatch, source, data_path)
    dataset_on(monkeypatch, source, data_path).check_run_ready()


@pytest.mark.parametrize("source", sorted(DATASETS))
@pytest.mark.parametrize("corrupt", [truncate, random_bytes],
                         ids=lambda f: f.__name__)
def test_run_list_check_rejects_a_file_that_is_not_the_published_one(
        tmp_path, monkeypatch, source, corrupt):
    # the size (a truncated file) or the checksum (same size, other bytes)
    data_path, target = copy_fixture(source, tmp_path)
    publish_fixture(monkeypatch, source, data_path)
    corrupt(target)
    dataset = dataset_on(monkeypatch, source, data_path)
    with pytest.raises(ValueError) as raised:
        dataset.check_run_ready()
    assert_names_file_and_command(raised.value, target, source)
    expected = ("truncated" if corrupt is truncate
                else "is not the published")
    assert expected in str(raised.value)


def test_real_published_values_reject_the_fixtures(tmp_path):
    # the fixtures are not MNIST: their sizes differ from the published ones
    folder, target = copy_fixture("mnist", tmp_path)
    with pytest.raises(CorruptDataError, match="truncated, 1106 bytes where "
                       "the published file has 9912422"):
        mnist.missing_files(folder)
    assert mnist.missing_files(tmp_path / "absent") == list(
        mnist.MNIST_FILES.values())


def offline(monkeypatch):
    """No network: only file:// URLs open."""
    real = urllib.request.urlopen

    def urlopen(url, timeout=None):
        if url.startswith("file:"):
            return real(url, timeout=timeout)
        raise OSError("network unreachable (test)")
    monkeypatch.setattr(urllib.request, "urlopen", urlopen)


@pytest.mark.parametrize("source", sorted(DATASETS))
def test_prepare_checks_present_files(tmp_path, monkeypatch, capsys, source):
    # a present truncated file is not 'ready': prepare fetches it again, and
    # offline its error names the corrupt file and the prepare command
    data_path, target = copy_fixture(source, tmp_path)
    publish_fixture(monkeypatch, source, data_path)
    original = target.read_bytes()
    truncate(target)
    offline(monkeypatch)
    dataset = dataset_on(monkeypatch, source, data_path)
    with pytest.raises(OSError) as raised:
        dataset.prepare()
    message = str(raised.value)
    assert f"{target} is corrupt: truncated" in message
    assert COMMANDS[source] in message
    assert "Downloading it again" in capsys.readouterr().out
    # from a mirror holding the published file, prepare replaces it
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / target.name).write_bytes(original)
    url = mirror.as_uri() + "/"
    if source == "mnist":
        mnist.download_mnist(data_path, mirrors=(url,))
    elif source == "omniglot":
        monkeypatch.setattr(omniglot, "OMNIGLOT_URL", url)
        omniglot.download_omniglot(data_path)
    else:
        wikimath.download_wikimath(data_path, url=url + target.name)
    assert target.read_bytes() == original
    assert len(load(source, data_path)[0]) > 0


def test_prepare_keeps_intact_files_and_rejects_a_bad_download(
        tmp_path, monkeypatch):
    folder, target = copy_fixture("mnist", tmp_path)
    publish_fixture(monkeypatch, "mnist", folder)
    offline(monkeypatch)          # nothing to fetch: no URL opened
    mnist.download_mnist(folder)
    truncate(target)
    mirror = tmp_path / "mirror"  # serves a truncated file too
    mirror.mkdir()
    shutil.copy(target, mirror / target.name)
    with pytest.raises(OSError, match="MD5 mismatch"):
        mnist.download_mnist(folder, mirrors=(mirror.as_uri() + "/",))
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        mnist.MNIST_FILES.values())             # no partial file left


@pytest.mark.parametrize("name, source, folder_method", [
    ("hyper_cleaning", "mnist", "_mnist_dir"),
    ("hyper_representation", "omniglot", "_omniglot_dir"),
])
def test_prepare_cache_key_follows_the_files(tmp_path, monkeypatch, name,
                                             source, folder_method):
    # benchopt caches prepare under the dataset's hash: a changed or deleted
    # file must change it, so that prepare runs (and checks) again
    folder, target = copy_fixture(source, tmp_path)
    Dataset = component("dataset", name)
    monkeypatch.setattr(Dataset, folder_method, lambda self: folder)
    dataset = Dataset.get_instance(source=source)
    before = joblib.hash(dataset)
    assert joblib.hash(Dataset.get_instance(source=source)) == before
    truncate(target)
    truncated = joblib.hash(dataset)
    target.unlink()
    assert len({before, truncated, joblib.hash(dataset)}) == 3
    # the default sources read no file: their key is unchanged
    assert Dataset.get_instance()._get_state() == {}


def test_a_dataset_without_files_keeps_its_key():
    regression = component("dataset", "regression").get_instance()
    assert regression._get_state() == {"reference_identity": None}


def test_damaged_omniglot_cache_is_rebuilt(tmp_path):
    folder, _ = copy_fixture("omniglot", tmp_path)
    first = omniglot.load_omniglot(folder)
    (folder / "omniglot_28.npz").write_bytes(b"garbage")
    again = omniglot.load_omniglot(folder)
    np.testing.assert_array_equal(again[0][0], first[0][0])


def test_gzip_stream_cut_inside_the_idx_data(tmp_path):
    # a gzip stream of an IDX file cut short: the error says truncated,
    # not the EOFError that benchopt's CLI prints as 'Aborted!'
    path = tmp_path / "x-idx1-ubyte.gz"
    payload = bytes([0, 0, 8, 1]) + (1000).to_bytes(4, "big") + bytes(1000)
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0) as handle:
        handle.write(np.random.default_rng(1).bytes(2000) + payload)
    path.write_bytes(buffer.getvalue()[:-20])
    with pytest.raises(CorruptDataError, match="truncated") as raised:
        mnist.read_idx(path)
    assert str(path) in str(raised.value)
