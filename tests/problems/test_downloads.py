"""Downloads leave nothing behind when they stop halfway (network error,
Ctrl-C, bad checksum), and every message about a missing or failed download
gives the exact ``benchopt prepare`` command, the URL and the local path.
No network: the URL opener is replaced by a fake that fails mid-stream."""
import io
import os
import stat
import urllib.request

import pytest

from benchmark_utils.data import mnist, wikimath
from benchmark_utils.data.download import fetch

from conftest import component

PAYLOAD = b"0123456789" * 1000


class HalfwayResponse(io.BytesIO):
    """A response that yields the first half of the payload, then fails."""

    def __init__(self, error):
        super().__init__(PAYLOAD)
        self.error = error

    def read(self, size=-1):
        if self.tell() >= len(PAYLOAD) // 2:
            raise self.error
        return super().read(min(size if size > 0 else 1000, 1000))


def opener(make_response):
    """A fake ``urlopen`` answering every URL with a fresh response."""
    def urlopen(url, timeout=None):
        return make_response()
    return urlopen


@pytest.mark.parametrize("error", [OSError("connection reset"),
                                   KeyboardInterrupt()], ids=repr)
def test_interrupted_download_leaves_nothing(monkeypatch, tmp_path, error):
    monkeypatch.setattr(urllib.request, "urlopen",
                        opener(lambda: HalfwayResponse(error)))
    dest = tmp_path / "file.json"
    with pytest.raises(type(error)) as raised:
        fetch("https://example.org/file.json", dest)
    assert list(tmp_path.iterdir()) == []
    if isinstance(error, OSError):
        message = str(raised.value)
        assert "https://example.org/file.json" in message
        assert str(dest) in message


def test_complete_download_is_readable_as_any_user_file(monkeypatch, tmp_path):
    monkeypatch.setattr(urllib.request, "urlopen",
                        opener(lambda: io.BytesIO(PAYLOAD)))
    old = os.umask(0o022)
    try:
        dest = fetch("https://example.org/file.json", tmp_path / "file.json")
    finally:
        os.umask(old)
    assert dest.read_bytes() == PAYLOAD
    assert stat.S_IMODE(dest.stat().st_mode) == 0o644   # not mkstemp's 0600
    assert [p.name for p in tmp_path.iterdir()] == ["file.json"]


def test_checksum_mismatch_leaves_nothing(monkeypatch, tmp_path):
    monkeypatch.setattr(urllib.request, "urlopen",
                        opener(lambda: io.BytesIO(PAYLOAD)))
    with pytest.raises(ValueError, match="MD5 mismatch"):
        fetch("https://example.org/f", tmp_path / "f", md5="0" * 32)
    assert list(tmp_path.iterdir()) == []


def test_failed_wikimath_download_says_how_to_get_the_file(monkeypatch,
                                                           tmp_path):
    monkeypatch.setattr(urllib.request, "urlopen",
                        opener(lambda: HalfwayResponse(OSError("timed out"))))
    dest = tmp_path / "wikimath" / wikimath.WIKIMATH_FILENAME
    with pytest.raises(OSError) as raised:
        wikimath.download_wikimath(dest)
    message = str(raised.value)
    assert ('python -m benchopt prepare . -d "regression[source=wikimath]"'
            in message)
    assert wikimath.WIKIMATH_URL in message and str(dest) in message
    assert list(dest.parent.iterdir()) == []


def test_failed_mnist_download_says_how_to_get_the_files(monkeypatch,
                                                         tmp_path):
    monkeypatch.setattr(urllib.request, "urlopen",
                        opener(lambda: HalfwayResponse(OSError("timed out"))))
    with pytest.raises(OSError) as raised:
        mnist.download_mnist(tmp_path)
    message = str(raised.value)
    assert ('python -m benchopt prepare . -d "hyper_cleaning[source=mnist]"'
            in message)
    for mirror in mnist.MNIST_MIRRORS:     # every URL tried is named
        assert mirror + mnist.MNIST_FILES["train_images"] in message
    assert str(tmp_path) in message
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("dataset, source, path_attr, command", [
    ("regression", "wikimath", "_wikimath_path",
     'python -m benchopt prepare . -d "regression[source=wikimath]"'),
    ("hyper_cleaning", "mnist", "_mnist_dir",
     'python -m benchopt prepare . -d "hyper_cleaning[source=mnist]"'),
    ("regularization_selection", "ijcnn1", "_data_dir",
     'python -m benchopt prepare . -d '
     '"regularization_selection[source=ijcnn1]"'),
])
def test_missing_data_message_gives_the_exact_prepare_command(
        monkeypatch, tmp_path, dataset, source, path_attr, command):
    Dataset = component("dataset", dataset)
    missing = tmp_path / "absent"
    monkeypatch.setattr(Dataset, path_attr, lambda self: missing)
    with pytest.raises(FileNotFoundError) as raised:
        Dataset.get_instance(source=source).make_data()
    assert command in str(raised.value) and str(missing) in str(raised.value)
