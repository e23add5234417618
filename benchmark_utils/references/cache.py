"""Disk cache of reference values, keyed by every parameter of an instance.

References cost seconds to minutes (CVXPY, active sets, LPs) and depend only
on the dataset parameters, so each is computed once and stored as JSON; a
benchmark run then only reads it. A stored file is trusted only after it
passes every check that is cheaper than the solve:

* it parses, has the expected fields, and was stored for these parameters;
* the sha256 digest written with the values matches them (an edited or
  damaged file, or one from a version that wrote no digest, fails);
* the caller's ``check``: types, signs and ranges, and the certificate
  re-evaluated at the stored points (see the family modules).

A file that fails any of them is a cache miss: a
:class:`ReferenceCacheWarning` says why and the references are recomputed.
A cache that cannot be written warns and the run goes on with the computed
references. Concurrent builders of one instance take an exclusive
``fcntl.flock`` on a lock file next to the entry, so it is computed once:
the others wait, then load it. Files are written atomically (temporary file
in the same folder, then ``os.replace``) with mode 0644, so users sharing a
data folder can read each other's references.
"""
import contextlib
import fcntl
import hashlib
import json
import os
import tempfile
import warnings
from pathlib import Path

CACHE_ENV = "BILEVEL_REFERENCE_CACHE"
# the repository root: benchmark_utils/references/cache.py -> parents[2]
REPOSITORY_ROOT = Path(__file__).resolve().parents[2]
# version 2 added the content digest; older files are recomputed once
FORMAT_VERSION = 2
# readable by everyone who can reach the folder, written by its owner (and
# replaced by anyone who may write the folder)
FILE_MODE = 0o644


class ReferenceCacheWarning(UserWarning):
    """A cached reference was not used, or could not be stored."""


class InvalidReference(ValueError):
    """A stored reference failed a check; the message says which."""


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
    from benchopt.config import get_data_path
    try:
        return Path(get_data_path("references"))
    except AttributeError:
        # benchopt's public get_data_path reads the running benchmark's
        # settings: there is none outside a benchmark
        return REPOSITORY_ROOT / "data" / "references"


def content_digest(value):
    """sha256 of the canonical JSON of ``value`` (sorted keys): identical for
    a dict and its JSON round trip, since floats round-trip exactly."""
    text = json.dumps(value, sort_keys=True, allow_nan=True)
    return hashlib.sha256(text.encode()).hexdigest()


def cached_references(kind, params, compute, check=None):
    """The references of one instance, computed once and cached on disk.

    Parameters
    ----------
    kind : str
        Family name, used as the file prefix (``"regression"``, ...).
    params : dict
        Every parameter that defines the instance (JSON-serialisable); the
        file name holds the sha256 of ``json.dumps(params, sort_keys=True)``
        and the file stores ``params`` itself, compared on load.
    compute : callable
        ``compute() -> dict`` of floats / None / strings / lists, called on
        a cache miss.
    check : callable, optional
        ``check(references)`` raises :class:`InvalidReference` (or any
        ValueError, TypeError, KeyError, IndexError) when stored references
        must not be used; called on every load, never on fresh values.
    """
    params = json.loads(json.dumps(params, sort_keys=True))
    folder = reference_cache_dir()
    name = f"{kind}-{content_digest(params)[:16]}"
    path = folder / f"{name}.json"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        _warn(f"the reference cache folder {folder} cannot be created "
              f"({error}); the {kind} references are computed and not "
              "stored")
        return compute()
    with _exclusive_lock(folder / f".{name}.lock"):
        references, reason = _load(path, params, check)
        if references is not None:
            return references
        if reason is not None:
            _warn(f"the cached {kind} references in {path} are not used: "
                  f"{reason}; recomputing them")
        references = compute()
        _store(path, params, references)
    return references


def _load(path, params, check):
    """(references, None) for a usable file, else (None, why not); the
    reason is None when there is no file at all."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        return None, None
    except OSError as error:
        return None, f"the file cannot be read ({error})"
    except UnicodeDecodeError:
        return None, "it is not text (binary garbage or a damaged file)"
    try:
        stored = json.loads(text)
    except ValueError:
        return None, "it is not valid JSON (truncated or damaged)"
    if not isinstance(stored, dict) or not {
            "params", "references", "digest"} <= set(stored):
        return None, ("it lacks the fields params / references / digest "
                      "(damaged, or written by an older version)")
    references = stored["references"]
    if stored["params"] != params:
        return None, "it was stored for other parameters"
    if not isinstance(references, dict):
        return None, "its references are not a mapping"
    if stored["digest"] != content_digest(references):
        return None, ("its content digest does not match its values (edited "
                      "or damaged)")
    if check is not None:
        try:
            check(references)
        except (ValueError, TypeError, KeyError, IndexError) as error:
            return None, f"a check failed ({type(error).__name__}: {error})"
    return references, None


def _store(path, params, references):
    """Atomic write of the entry; warns (and keeps nothing) on failure."""
    payload = json.dumps(
        {"format": FORMAT_VERSION, "params": params,
         "references": references, "digest": content_digest(references)},
        sort_keys=True, indent=1, allow_nan=True)
    tmp = None
    try:
        with tempfile.NamedTemporaryFile(
                "w", dir=path.parent, prefix=f".{path.stem}-",
                suffix=".tmp", delete=False) as tmp:
            tmp.write(payload)
        # NamedTemporaryFile creates 0600: others sharing the folder must
        # be able to read it
        os.chmod(tmp.name, FILE_MODE)
        os.replace(tmp.name, path)
    except OSError as error:
        _warn(f"the references could not be stored in {path} ({error}); "
              "they are used for this run only")
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp.name)


@contextlib.contextmanager
def _exclusive_lock(lock_path):
    """Hold an exclusive flock on ``lock_path`` (created if needed; flock
    needs no write access); without one (a read-only folder that has no lock
    file yet, no flock support) go on unlocked."""
    try:
        fd = os.open(lock_path, os.O_RDONLY | os.O_CREAT, 0o666)
    except OSError:
        yield
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError:
            pass
        yield
    finally:
        os.close(fd)            # releases the lock


def _warn(message):
    warnings.warn(message, ReferenceCacheWarning, stacklevel=3)
