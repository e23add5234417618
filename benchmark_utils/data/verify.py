"""Checks that a downloaded data file is intact, and the error that says
which file is not and how to fetch it again.

Three levels, from the cheapest (see docs/problems.md, "Downloaded data"):

* the published size and checksum of each file (:class:`Published`,
  :func:`mismatch`): ``benchopt prepare`` checks the files already present
  and downloads again any that differ, and each dataset's
  ``check_run_ready`` checks them before any run (the run-list check). A
  SHA-256 of MNIST's 11.6 MB or Omniglot's 15.9 MB takes about 10-20 ms,
  and a file that passed is not hashed again in the same process while
  its size, times and inode are unchanged, so the full checksum is
  affordable on every run;
* the format, while a loader reads a file (gzip stream read to its end,
  IDX header, zip archive and its CRCs, JSON and its shape): what the
  tests' small fixtures, which have no published checksum, go through;
* :class:`DownloadedFiles`: the files' size and mtime in the dataset's
  identity, so that benchopt's cached ``prepare`` runs (and checks) again
  when a file changed or vanished.

Every problem is a :class:`CorruptDataError` (a ``ValueError``) naming the
file, what is wrong, and the ``benchopt prepare`` command that fetches it.
"""
import dataclasses
import hashlib
from pathlib import Path

# (path, size, mtime_ns, ctime_ns, inode, Published) of files that matched
_verified = set()


class CorruptDataError(ValueError):
    """A data file present but not the expected one: the message names the
    file, the problem and, where known, the command that fetches it."""

    def __init__(self, path, problem, command=None):
        self.path, self.problem, self.command = Path(path), problem, command
        remove = (f"Remove the directory (`rm -r {self.path}`)"
                  if self.path.is_dir() else "Delete it")
        fix = (f" {remove} and run `{command}` to download it again."
               if command else "")
        super().__init__(f"{self.path} is corrupt: {problem}.{fix}")

    def with_command(self, command):
        """The same error, with the fetching command."""
        return CorruptDataError(self.path, self.problem, command)


@dataclasses.dataclass(frozen=True)
class Published:
    """What a downloaded file must be; None where the value is unknown.

    ``git_sha1`` is git's blob id (SHA-1 of ``b"blob <size>\\0"`` and the
    content), the checksum a repository's tree records for a file served
    from it."""

    size: int | None = None
    sha256: str | None = None
    git_sha1: str | None = None


def mismatch(path, published):
    """What is wrong with the file at ``path`` against ``published``, in
    words, or None when it matches (the size first, then the checksums)."""
    path = Path(path)
    if path.is_dir():
        return "a directory where the data file should be"
    stat = path.stat()
    size = stat.st_size
    if published.size is not None and size != published.size:
        kind = "truncated" if size < published.size else "too long"
        return (f"{kind}, {size} bytes where the published file has "
                f"{published.size}")
    key = (str(path.resolve()), size, stat.st_mtime_ns, stat.st_ctime_ns,
           stat.st_ino, published)
    if key in _verified:
        return None
    sha256, git_sha1 = hashlib.sha256(), hashlib.sha1(b"blob %d\0" % size)
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            sha256.update(block)
            git_sha1.update(block)
    for name, digest, expected in (
            ("SHA-256", sha256, published.sha256),
            ("git blob SHA-1", git_sha1, published.git_sha1)):
        if expected is not None and digest.hexdigest() != expected:
            return (f"{size} bytes whose {name} {digest.hexdigest()} is not "
                    f"the published {expected} (damaged, or another file)")
    _verified.add(key)
    return None


def verify(path, published, command):
    """Raise :class:`CorruptDataError` when the file at ``path`` does not
    match ``published`` (a missing file is not checked here)."""
    problem = mismatch(path, published)
    if problem is not None:
        raise CorruptDataError(path, problem, command)


def absent_files(folder, names):
    """The ``names`` with no file in ``folder``."""
    return [name for name in names if not (Path(folder) / name).exists()]


def checked_missing_files(folder, published, command):
    """The names of ``published`` ({name: expected}) absent from
    ``folder``, after checking those present: one whose size or SHA-256 is
    not the published one raises :class:`CorruptDataError` naming it and
    ``command`` (what a dataset's run-list check relies on)."""
    absent = absent_files(folder, published)
    for name in published:
        if name not in absent:
            verify(Path(folder) / name, published[name], command)
    return absent


def fingerprint(paths):
    """(name, size, mtime_ns) of each path, (name, None) if absent."""
    out = []
    for path in map(Path, paths):
        try:
            stat = path.stat()
        except OSError:
            out.append((str(path), None))
            continue
        out.append((str(path), stat.st_size, stat.st_mtime_ns))
    return tuple(out)


class DownloadedFiles:
    """Mixin of a benchopt ``Dataset`` whose ``prepare`` downloads files:
    list it before ``BaseDataset`` and return the files an instance reads
    from :meth:`data_files`.

    benchopt (1.10) caches ``prepare`` under the dataset's hash (its class
    file, parameters and ``_get_state()``): once it succeeded, ``benchopt
    prepare`` answers "done (cached)" without calling it, whatever became of
    the files. With their fingerprint in the state, a file changed, deleted
    or never downloaded is a cache miss, so ``prepare`` runs and checks them
    again; results computed on other files are not served either."""

    def data_files(self):
        """The paths this instance reads (default: none)."""
        return ()

    def _get_state(self):
        state = super()._get_state()
        files = self.data_files()
        return {**state, "data_files": fingerprint(files)} if files else state

    def __setstate__(self, state):
        state = dict(state)
        state.pop("data_files", None)
        super().__setstate__(state)
