"""One way to download a data file: atomically, optionally checked by MD5
and against its published size and checksums.

The file is streamed into a temporary file next to ``dest`` and renamed over
``dest`` only once complete (and its checksum verified). Whatever stops the
download halfway (a network error, a bad checksum, Ctrl-C) removes the
temporary file, so no partial file is left for a later run to take for the
real one, and no orphan accumulates in the data folder. The file gets the
permissions of any file the user creates (umask), not the temporary file's
owner-only 0600, so users sharing a data folder can read it.
"""
import hashlib
import os
import shutil
import tempfile
import urllib.request
from pathlib import Path

from benchmark_utils.data.verify import mismatch


def fetch(url, dest, md5=None, timeout=120, published=None):
    """Download ``url`` to ``dest`` atomically.

    Raises ``OSError`` naming the URL and ``dest`` when the download fails,
    ``ValueError`` when ``md5`` is given and the content does not match, or
    when it does not match ``published`` (a :class:`~benchmark_utils.data.
    verify.Published`); either way, and on ``KeyboardInterrupt``, nothing
    is left behind.
    """
    dest = Path(dest)
    handle, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.",
                                   suffix=".part")
    try:
        with os.fdopen(handle, "wb") as out:
            try:
                with urllib.request.urlopen(url, timeout=timeout) as response:
                    shutil.copyfileobj(response, out)
            except OSError as error:     # URLError and timeouts included
                raise OSError(
                    f"could not download {url} to {dest}: {error}") from error
        if md5 is not None:
            digest = hashlib.md5(Path(tmp).read_bytes()).hexdigest()
            if digest != md5:
                raise ValueError(f"MD5 mismatch for {url} ({digest} != {md5})")
        problem = None if published is None else mismatch(tmp, published)
        if problem is not None:
            raise ValueError(f"the download of {url} is {problem}")
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, dest)
    except BaseException:
        # BaseException: a Ctrl-C mid-download must not leave the file either
        Path(tmp).unlink(missing_ok=True)
        raise
    return dest


def _umask():
    # os.umask can only be read by setting it: set and restore at once
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def refresh(path, urls, *, published=None, md5=None, what, recovery):
    """Make ``path`` the published file: nothing when it is present and
    matches ``published`` (or ``published`` is None), else download it from
    the first of ``urls`` that works (a present file found corrupt is
    announced and downloaded again). When none works, ``OSError``: "could
    not download ``what``", the corrupt file's problem, each URL's error,
    then ``recovery`` (how to retry or place the file by hand)."""
    path = Path(path)
    corrupt = ""
    if path.exists():
        problem = None if published is None else mismatch(path, published)
        if problem is None:
            return path
        corrupt = f"{path} is corrupt: {problem}.\n"
        print(f"{corrupt.strip()} Downloading it again.")
    path.parent.mkdir(parents=True, exist_ok=True)
    errors = []
    for url in urls:
        try:
            return fetch(url, path, md5, published=published)
        except (OSError, ValueError) as error:     # each names its URL
            errors.append(str(error))
    raise OSError(f"could not download {what}:\n{corrupt}"
                  + "\n".join(errors) + f"\n{recovery}")
