"""One way to download a data file: atomically, optionally checked by MD5.

The file is streamed into a temporary file in the destination folder and
renamed over ``dest`` only once complete (and its checksum verified), so an
interrupted or corrupted download never leaves a partial file that a later
run would take for the real one.
"""
import hashlib
import os
import shutil
import tempfile
import urllib.request
from pathlib import Path


def fetch(url, dest, md5=None, timeout=120):
    """Download ``url`` to ``dest`` atomically; raise ``ValueError`` (and
    keep nothing) when ``md5`` is given and the content does not match."""
    dest = Path(dest)
    with urllib.request.urlopen(url, timeout=timeout) as response, \
            tempfile.NamedTemporaryFile(dir=dest.parent, delete=False) as tmp:
        shutil.copyfileobj(response, tmp)
    if md5 is not None:
        digest = hashlib.md5(Path(tmp.name).read_bytes()).hexdigest()
        if digest != md5:
            os.unlink(tmp.name)
            raise ValueError(f"MD5 mismatch ({digest} != {md5})")
    os.replace(tmp.name, dest)
    return dest
