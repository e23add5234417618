"""The disk cache of references: computed once, keyed by the parameters,
written atomically and shareable, and failing safe: any unreadable, partial,
ill-typed or edited file is a cache miss (warning, recompute), an unwritable
folder only costs the caching, and concurrent builders compute once."""
import json
import os
import stat
import subprocess
import sys
import textwrap

import benchopt.benchmark
import pytest

from benchmark_utils.references.cache import (
    CACHE_ENV,
    InvalidReference,
    ReferenceCacheWarning,
    cached_references,
    content_digest,
    reference_cache_dir,
)

from conftest import ROOT
from reference_faults import rewrite


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    return tmp_path


class Counter:
    """A compute function that counts its calls."""

    def __init__(self, value=1.0):
        self.calls, self.value = 0, value

    def __call__(self):
        self.calls += 1
        return {"g_star": self.value, "status": "optimal", "f_star": None}


def entry(folder):
    (path,) = folder.glob("toy-*.json")
    return path


def test_references_are_computed_once_per_parameter_set(cache):
    compute = Counter(0.1 + 0.2)
    first = cached_references("toy", {"n": 3, "seed": 0}, compute)
    again = cached_references("toy", {"seed": 0, "n": 3}, compute)
    assert first == again and compute.calls == 1
    # float values survive the JSON round trip bit for bit
    assert again["g_star"] == 0.1 + 0.2
    cached_references("toy", {"n": 4, "seed": 0}, compute)
    assert compute.calls == 2
    files = sorted(p.name for p in cache.glob("*.json"))
    assert len(files) == 2 and all(name.startswith("toy-") for name in files)
    # nothing but the entries and their lock files is left behind
    assert {p.suffix for p in cache.iterdir()} == {".json", ".lock"}


def test_files_are_readable_by_the_group_and_carry_a_digest(cache):
    cached_references("toy", {"n": 3}, Counter())
    path = entry(cache)
    mode = stat.S_IMODE(path.stat().st_mode)
    assert mode & stat.S_IRGRP and mode & stat.S_IROTH, oct(mode)
    stored = json.loads(path.read_text())
    assert stored["digest"] == content_digest(stored["references"])
    assert stored["params"] == {"n": 3}


@pytest.mark.parametrize("damage", [
    pytest.param(lambda text: text[:len(text) // 2], id="truncated"),
    pytest.param(lambda text: "not json", id="garbage"),
    pytest.param(lambda text: "", id="empty"),
    pytest.param(lambda text: "[1, 2]", id="not-a-mapping"),
    pytest.param(lambda text: json.dumps({**json.loads(text),
                                          "references": {}}),
                 id="references-empty"),
    pytest.param(lambda text: json.dumps({**json.loads(text),
                                          "references": "abc"}),
                 id="references-a-string"),
    pytest.param(lambda text: json.dumps({k: v for k, v in json.loads(
        text).items() if k != "digest"}), id="no-digest"),
    pytest.param(lambda text: json.dumps({**json.loads(text),
                                          "params": {"n": 5}}),
                 id="other-parameters"),
])
def test_a_damaged_file_is_a_cache_miss(cache, damage):
    cached_references("toy", {"n": 3}, Counter(1.0))
    path = entry(cache)
    path.write_text(damage(path.read_text()))
    compute = Counter(2.0)
    with pytest.warns(ReferenceCacheWarning, match="recomputing"):
        assert cached_references("toy", {"n": 3}, compute)["g_star"] == 2.0
    assert compute.calls == 1
    # the recomputed entry replaced the damaged one
    assert cached_references("toy", {"n": 3}, compute)["g_star"] == 2.0
    assert compute.calls == 1


def test_an_edit_without_a_new_digest_is_detected(cache):
    cached_references("toy", {"n": 3}, Counter(1.0))
    rewrite(entry(cache), lambda refs: refs.update(g_star=0.5), digest=False)
    with pytest.warns(ReferenceCacheWarning, match="digest does not match"):
        assert cached_references("toy", {"n": 3},
                                 Counter(1.0))["g_star"] == 1.0


@pytest.mark.parametrize("error", [InvalidReference, TypeError, KeyError])
def test_a_file_that_fails_its_check_is_recomputed(cache, error):
    def check(references):
        if references["g_star"] != 1.0:
            raise error("g_star is wrong")

    cached_references("toy", {"n": 3}, Counter(1.0), check)
    # a well-formed edit with a matching digest: only the check can tell
    rewrite(entry(cache), lambda refs: refs.update(g_star=-1.0))
    compute = Counter(1.0)
    with pytest.warns(ReferenceCacheWarning, match="a check failed"):
        assert cached_references("toy", {"n": 3}, compute,
                                 check)["g_star"] == 1.0
    assert compute.calls == 1


@pytest.mark.parametrize("below", ["file", "file/deeper"])
def test_an_unwritable_cache_folder_warns_and_the_run_goes_on(
        tmp_path, monkeypatch, below):
    (tmp_path / "file").write_text("a regular file")
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / below / "references"))
    compute = Counter(1.0)
    with pytest.warns(ReferenceCacheWarning, match="cannot be created"):
        assert cached_references("toy", {"n": 3}, compute)["g_star"] == 1.0
    assert compute.calls == 1


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores permissions")
def test_a_read_only_cache_folder_warns_and_the_run_goes_on(cache):
    os.chmod(cache, 0o555)
    try:
        with pytest.warns(ReferenceCacheWarning, match="could not be stored"):
            assert cached_references("toy", {"n": 3},
                                     Counter(1.0))["g_star"] == 1.0
        assert not list(cache.iterdir())
    finally:
        os.chmod(cache, 0o755)


def test_a_failed_write_leaves_no_temporary_file(cache, monkeypatch):
    def refuse(src, dst):
        raise PermissionError("replace refused")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.warns(ReferenceCacheWarning, match="could not be stored"):
        assert cached_references("toy", {"n": 3},
                                 Counter(1.0))["g_star"] == 1.0
    assert not list(cache.glob("*.tmp")) and not list(cache.glob("*.json"))


BUILDER = textwrap.dedent("""
    import sys, time
    from benchmark_utils.references.cache import cached_references
    counter = sys.argv[1]
    def compute():
        with open(counter, "a") as f:
            f.write("computed\\n")
        time.sleep(1.0)          # long enough for the other builder to wait
        return {"g_star": 0.1 + 0.2}
    print(cached_references("toy", {"n": 3}, compute)["g_star"])
""")


def test_concurrent_builders_compute_an_instance_once(cache):
    counter = cache.parent / f"{cache.name}-computations.txt"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    builders = [subprocess.Popen(
        [sys.executable, "-c", BUILDER, str(counter)], cwd=ROOT, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(2)]
    outputs = [builder.communicate(timeout=60) for builder in builders]
    assert all(b.returncode == 0 for b in builders), outputs
    assert [out.strip() for out, _ in outputs] == [repr(0.1 + 0.2)] * 2
    assert counter.read_text().count("computed") == 1


def test_default_folder_is_the_repository_data_folder(monkeypatch):
    monkeypatch.delenv(CACHE_ENV, raising=False)
    monkeypatch.setattr(benchopt.benchmark, "get_running_benchmark",
                        lambda: None)
    assert reference_cache_dir() == ROOT / "data" / "references"


def test_binary_garbage_is_a_cache_miss(cache):
    cached_references("toy", {"n": 3}, Counter(1.0))
    entry(cache).write_bytes(bytes(range(256)) * 4)
    compute = Counter(2.0)
    with pytest.warns(ReferenceCacheWarning, match="not text"):
        assert cached_references("toy", {"n": 3}, compute)["g_star"] == 2.0
    assert compute.calls == 1
