"""The disk cache of references: computed once, keyed by the parameters,
written atomically, and stored under the repository's data folder when no
benchmark is running."""
import json

import benchopt.benchmark

from benchmark_utils.references.cache import (CACHE_ENV, cached_references,
                                              reference_cache_dir)
from conftest import ROOT


def test_references_are_computed_once_per_parameter_set(tmp_path,
                                                        monkeypatch):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    calls = []

    def compute():
        calls.append(1)
        return {"g_star": 0.1 + 0.2, "status": "optimal", "f_star": None}

    first = cached_references("toy", {"n": 3, "seed": 0}, compute)
    again = cached_references("toy", {"seed": 0, "n": 3}, compute)
    assert first == again == compute() and len(calls) == 2
    # float values survive the JSON round trip bit for bit
    assert again["g_star"] == 0.1 + 0.2
    cached_references("toy", {"n": 4, "seed": 0}, compute)
    assert len(calls) == 3
    files = sorted(p.name for p in tmp_path.iterdir())
    assert len(files) == 2 and all(
        name.startswith("toy-") and name.endswith(".json") for name in files)


def test_a_file_with_other_parameters_is_not_used(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    cached_references("toy", {"n": 3}, lambda: {"value": 1.0})
    (path,) = tmp_path.glob("toy-*.json")
    stored = json.loads(path.read_text())
    stored["params"] = {"n": 5}                 # a hash collision, say
    path.write_text(json.dumps(stored))
    assert cached_references("toy", {"n": 3},
                             lambda: {"value": 2.0}) == {"value": 2.0}
    path.write_text("not json")                 # an interrupted writer
    assert cached_references("toy", {"n": 3},
                             lambda: {"value": 3.0}) == {"value": 3.0}


def test_default_folder_is_the_repository_data_folder(monkeypatch):
    monkeypatch.delenv(CACHE_ENV, raising=False)
    monkeypatch.setattr(benchopt.benchmark, "get_running_benchmark",
                        lambda: None)
    assert reference_cache_dir() == ROOT / "data" / "references"
