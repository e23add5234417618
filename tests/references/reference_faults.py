"""Fault injection on cached reference files, shared by the reference
tests: edit the stored values, with or without a matching digest."""
import json

from benchmark_utils.references.cache import content_digest


def rewrite(path, edit, digest=True):
    """Apply ``edit(references)`` to the references stored in ``path``; with
    ``digest`` the file's digest is updated too, so that only the family's
    own check can catch the edit."""
    stored = json.loads(path.read_text())
    edit(stored["references"])
    if digest:
        stored["digest"] = content_digest(stored["references"])
    path.write_text(json.dumps(stored))
