"""The closest valid name to a mistyped one, for the commands' messages."""
import difflib


def closest(name, names):
    """`` (did you mean 'X'?)`` for the name of ``names`` closest to
    ``name`` (case aside), or an empty string."""
    lowered = {other.lower(): other for other in names}
    match = difflib.get_close_matches(name.lower(), list(lowered), n=1)
    return f" (did you mean {lowered[match[0]]!r}?)" if match else ""
