"""Short names for the report: legends, dropdowns and figure file names.

benchopt names a solver or dataset ``name[k1=v1,k2=v2,...]`` with every
parameter, which cuts off at a legend's edge. A short label keeps the base
name and only the parameters whose values differ between the runs that
share it: ``SBCGI[cut=False]`` next to ``SBCGI[cut=True]``, plain
``IR-SCG`` when it ran once. Labels are computed over the whole result
file, so one solver has one label, hence one color, in every figure.
"""
import re

NAME_PATTERN = re.compile(r"([^\[]*)\[(.*)\]", re.DOTALL)
OPENING, CLOSING = "([{", ")]}"
# characters kept in a dataset label, which benchopt puts in file names
FILE_SAFE = re.compile(r"[^A-Za-z0-9_=,+\-\[\]]")


def split_name(name):
    """``"base[k1=v1,k2=v2]"`` -> ``("base", {"k1": "v1", "k2": "v2"})``.

    Commas inside brackets or quotes belong to the value (a list-valued
    parameter prints as ``steps=[1, 2]``).
    """
    match = NAME_PATTERN.fullmatch(name)
    if not match:
        return name, {}
    params = {}
    for item in _split_top_level(match.group(2)):
        key, _, value = item.partition("=")
        params[key.strip()] = value.strip()
    return match.group(1), params


def _split_top_level(text):
    items, depth, quote, start = [], 0, None, 0
    for i, char in enumerate(text):
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in OPENING:
            depth += 1
        elif char in CLOSING:
            depth -= 1
        elif char == "," and depth == 0:
            items.append(text[start:i])
            start = i + 1
    items.append(text[start:])
    return [item for item in items if item.strip()]


def short_labels(names, file_safe=False):
    """``{full name: short label}`` for distinct ``names`` (see module
    docstring). ``file_safe`` labels go into file names: ``10.0`` is written
    ``10``, any other ``.`` as ``p`` (``0.5`` -> ``0p5``; benchopt cuts a
    figure's file name at its last dot) and characters outside
    letters, digits and ``_=,+-[]`` as ``-``."""
    names = list(dict.fromkeys(names))
    parsed = {name: split_name(name) for name in names}
    labels = {}
    for name, (base, params) in parsed.items():
        siblings = [p for b, p in parsed.values() if b == base]
        keys = [key for key in _all_keys(siblings)
                if len({p.get(key) for p in siblings}) > 1]
        shown = ",".join(f"{key}={params.get(key)}" for key in keys)
        label = f"{base}[{shown}]" if shown else base
        labels[name] = _file_safe(label) if file_safe else label
    return _unique(labels)


def _all_keys(param_dicts):
    return list(dict.fromkeys(key for params in param_dicts for key in params))


def _file_safe(label):
    label = re.sub(r"(\d)\.0\b", r"\1", label)
    return FILE_SAFE.sub("-", label.replace(".", "p"))


def _unique(labels):
    """Number repeated labels (names equal up to file-safe characters)."""
    seen, unique = {}, {}
    for name, label in labels.items():
        seen[label] = seen.get(label, 0) + 1
        unique[name] = label if seen[label] == 1 else f"{label}-{seen[label]}"
    return unique
