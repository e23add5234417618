"""What a batch is: a 1-D tensor of sample indices, or a full pass.

Oracles take ``batch=`` as a 1-D tensor of indices (values are means over
it), ``None`` or a :class:`FullBatch` for the whole finite sum. The counting
view hands out ``FullBatch`` markers when it charges a full pass.
"""


class FullBatch:
    """Marker for a full pass over one level's finite sum.

    Oracles treat it like ``None`` (all samples); the counting view hands out
    a fresh marker per drawn pass, already charged n samples.
    """

    __slots__ = ("n",)

    def __init__(self, n):
        self.n = n

    def __repr__(self):
        return f"FullBatch(n={self.n})"


def is_full(batch):
    """True when ``batch`` denotes the whole finite sum."""
    return batch is None or isinstance(batch, FullBatch)
