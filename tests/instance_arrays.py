"""The arrays of the default instances (every dataset at its defaults,
and benchmark_bilevel's simulated quadratic), for the digests pinned in
tests/test_instance_digests.py. Run as a script, it writes them to an
``.npz`` file (the test runs it with another CPU's kernels)."""
import hashlib
import sys

import numpy as np
import torch

DEFAULT_INSTANCES = (
    ("coreset_toy", {}), ("dictionary_learning", {}), ("hyper_cleaning", {}),
    ("hyper_representation", {}), ("matrix_completion", {}),
    ("quadratic", {}), ("quadratic", {"generator": "benchmark_bilevel"}),
    ("regression", {}), ("regularization_selection", {}))


def key(name, params):
    return name + "".join(f"[{k}={v}]" for k, v in params.items())


def arrays(obj, path="", found=None, seen=None):
    """``{path: array}`` of every tensor and array reachable from ``obj``
    through this repository's objects, dicts and sequences (the data; the
    references are floats and stay out)."""
    found = {} if found is None else found
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return found
    seen.add(id(obj))
    if isinstance(obj, torch.Tensor):
        found[path] = obj.detach().cpu().numpy()
    elif isinstance(obj, np.ndarray) and obj.dtype != object:
        found[path] = obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            arrays(v, f"{path}[{k}]", found, seen)
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            arrays(v, f"{path}[{i}]", found, seen)
    elif type(obj).__module__.startswith("benchmark_utils") and hasattr(
            obj, "__dict__"):
        for k, v in vars(obj).items():
            arrays(v, f"{path}.{k}", found, seen)
    return found


def digest(found):
    """SHA-256 of the arrays' bytes in path order (16 hex digits)."""
    h = hashlib.sha256()
    for path in sorted(found):
        h.update(path.encode())
        h.update(np.ascontiguousarray(found[path]).tobytes())
    return h.hexdigest()[:16]


def instance_arrays(component):
    """``{key: {path: array}}`` of the default instances, each built anew
    (``component``: conftest's; never a cached instance that another test
    may have changed)."""
    return {key(name, params): arrays(
        component("dataset", name).get_instance(**params).get_data())
        for name, params in DEFAULT_INSTANCES}


if __name__ == "__main__":
    from conftest import component
    np.savez(sys.argv[1], **{f"{k}|{p}": a for k, found in
                             instance_arrays(component).items()
                             for p, a in found.items()})
