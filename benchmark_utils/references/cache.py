"""Disk cache of reference values, keyed by every parameter of an instance.

References cost seconds to minutes (CVXPY, active sets, LPs) and depend only
on the dataset parameters, so each is computed once and stored as JSON; a
benchmark run then only reads it. A dataset that needs to trust a stored
value more than its key re-certifies it on load (the quadratic does).
"""
import hashlib
import json
import os
import tempfile
from pathlib import Path

CACHE_ENV = "BILEVEL_REFERENCE_CACHE"
# the repository root: benchmark_utils/references/cache.py -> parents[2]
REPOSITORY_ROOT = Path(__file__).resolve().parents[2]


def reference_cache_dir():
    """Folder of the cached references.

    ``$BILEVEL_REFERENCE_CACHE`` if set; else benchopt's data path
    ``references`` of the running benchmark (``benchopt run``, or any code
    that created a ``benchopt.benchmark.Benchmark``); else
    ``<repository>/data/references`` (scripts, pytest without a benchmark).
    """
    override = os.environ.get(CACHE_ENV)
    if override:
        return Path(override).expanduser()
    from benchopt.benchmark import get_running_benchmark
    if get_running_benchmark() is not None:
        from benchopt.config import get_data_path
        return Path(get_data_path("references"))
    return REPOSITORY_ROOT / "data" / "references"


def _params_digest(params):
    text = json.dumps(params, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def cached_references(kind, params, compute):
    """The references of one instance, computed once and cached on disk.

    Parameters
    ----------
    kind : str
        Family name, used as the file prefix (``"regression"``, ...).
    params : dict
        Every parameter that defines the instance (JSON-serialisable); the
        cache key is the sha256 of ``json.dumps(params, sort_keys=True)``.
    compute : callable
        ``compute() -> dict`` of floats / None / strings / small lists,
        called on a cache miss.

    A cached file is used only if its stored ``params`` equal ``params``
    (after a JSON round trip); it is written atomically (temporary file in
    the same folder, then ``os.replace``).
    """
    params = json.loads(json.dumps(params, sort_keys=True))
    folder = reference_cache_dir()
    path = folder / f"{kind}-{_params_digest(params)}.json"
    if path.exists():
        try:
            stored = json.loads(path.read_text())
        except (OSError, ValueError):
            stored = None
        if isinstance(stored, dict) and stored.get("params") == params:
            return stored["references"]
    references = compute()
    folder.mkdir(parents=True, exist_ok=True)
    payload = json.dumps({"params": params, "references": references},
                         sort_keys=True, indent=1, allow_nan=True)
    with tempfile.NamedTemporaryFile("w", dir=folder, prefix=f".{kind}-",
                                     suffix=".tmp", delete=False) as tmp:
        tmp.write(payload)
    os.replace(tmp.name, path)
    return references
