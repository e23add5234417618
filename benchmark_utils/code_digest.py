"""A digest of the benchmark's shared code and the plain run's tuned steps,
for benchopt's result cache.

benchopt (1.10) keys a cached run by a hash of its objective, dataset and
solver, and a solver enters it through its ``__reduce__``: its class
file's md5, its parameters and ``_get_state()`` (benchopt's documented
extension point: "override ``_get_state`` (and the matching
``__setstate__``)"). The machinery a solver composes lives in
``benchmark_utils``, which that md5 does not see: after an edit there,
benchopt would serve curves computed with the old code. A solver whose
state carries :func:`shared_code_digest` is a cache miss whenever any
module of ``benchmark_utils`` changes, or any default instance's tuned
table (``configs/tuned/default_*.yml``, which a plain run's steps come
from) (tests/test_result_cache.py).
"""
import functools
import hashlib
from pathlib import Path

SHARED_CODE = Path(__file__).resolve().parent
ROOT = SHARED_CODE.parent
# what else decides a run's numbers without being a solver's own file
TUNED_TABLES = "configs/tuned/default_*.yml"


@functools.lru_cache(maxsize=None)
def shared_code_digest(root=ROOT):
    """sha256 (paths and contents) of every Python file of ``root``'s
    ``benchmark_utils`` and of its default instances' tuned tables."""
    digest = hashlib.sha256()
    files = [*(root / "benchmark_utils").rglob("*.py"),
             *root.glob(TUNED_TABLES)]
    for path in sorted(files):
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()
