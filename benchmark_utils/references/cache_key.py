"""The references as part of a dataset's identity in benchopt's result cache.

benchopt (1.10) caches each finished run with joblib's ``Memory``, keyed by
a hash of the arguments of ``run_one_to_cvg``; a dataset enters that hash
through its ``__reduce__``: the class file's md5, the parameters, and
``_get_state()``, which is empty by default. Its data, and so the reference
values that every gap subtracts, are not hashed: after a reference changes
(recomputed, or a cache file edited) benchopt would serve gaps computed
with the old one. benchopt calls ``get_data()`` before it hashes a run (in
``objective._set_dataset``, while it builds the run list), so a dataset that
records a digest of its references in ``get_data`` and returns it from
``_get_state`` makes them part of the key: a run is served from the cache
only if it was computed with the same reference values, bit for bit.

benchopt caches nothing else of a dataset on disk: ``get_data()`` output
lives in memory only, and its cached ``prepare`` step returns nothing (it
only downloads), so no stale reference can come from there. (A solver with
a non-callback sampling strategy would add a second cache,
``run_one_resolution``, keyed by the objective and not the dataset; every
solver here uses the callback strategy, which has none.)
"""
from benchmark_utils.references.cache import content_digest

# the reference values that enter a metric (simple family: g*, f*; general
# family: F*, x*), with their accuracies, which floor the gaps
IDENTITY_KEYS = ("g_star", "g_star_accuracy", "f_star", "f_star_accuracy",
                 "F_star", "F_star_accuracy", "x_star")


def reference_identity(references):
    """sha256 of the reference values that enter a metric; timings,
    solver statuses and stored points are left out, so recomputing the same
    values gives the same identity."""
    return content_digest({key: references[key] for key in IDENTITY_KEYS
                           if key in references})


class ReferenceIdentity:
    """Mixin for a benchopt ``Dataset`` with references: list it before
    ``BaseDataset`` and attach the references with
    :meth:`attach_references` in ``get_data``."""

    _reference_identity = None

    def attach_references(self, problem, references):
        """``problem.set_references(references)``, recording their identity
        for benchopt's cache key."""
        problem.set_references(references)
        self._reference_identity = reference_identity(references)

    def _get_state(self):
        return {**super()._get_state(),
                "reference_identity": self._reference_identity}

    def __setstate__(self, state):
        state = dict(state)
        self._reference_identity = state.pop("reference_identity", None)
        super().__setstate__(state)
