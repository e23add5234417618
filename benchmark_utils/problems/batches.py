"""What a batch is: a 1-D tensor of sample indices, or a full pass.

Oracles take ``batch=`` as a 1-D tensor of indices (values are means over
it), ``None`` or a :class:`FullBatch` for the whole finite sum. The counting
view hands out ``FullBatch`` markers when it charges a full pass.

A problem may declare another sampling policy (``batch_sampler``, read by
the counting view): :class:`EpochBlockSampler` hands out
:class:`SliceBatch` blocks, sampling without replacement within an epoch.

``Batch`` is the type of an oracle's ``batch`` argument.
"""
import torch


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


class SliceBatch:
    """A contiguous block ``start:stop`` of one level's samples.

    Handed out by :class:`EpochBlockSampler` to problems that declare that
    sampling policy (``batch_sampler``, see
    :class:`~benchmark_utils.counting.CountingView`): oracles select the
    block's rows by slicing (a view, no gather). ``shape[0]`` is the number
    of samples, as for an index tensor, so the counting view charges it the
    same way; ``indices`` gives the equivalent index tensor for code that
    needs one (per-sample memory tables).
    """

    __slots__ = ("start", "stop", "shape")

    def __init__(self, start, stop):
        self.start, self.stop = start, stop
        self.shape = (stop - start,)

    @property
    def indices(self):
        return torch.arange(self.start, self.stop)

    def __repr__(self):
        return f"SliceBatch({self.start}:{self.stop})"


#: what an oracle's ``batch=`` may be: indices, a block, or a full pass
Batch = torch.Tensor | FullBatch | SliceBatch | None


class EpochBlockSampler:
    """Mini-batches without replacement within an epoch, as fixed blocks.

    The sampling of benchopt's benchmark_bilevel (its ``MinibatchSampler``):
    for a batch size B the n samples are cut once into the contiguous
    blocks ``[0, B), [B, 2B), ...`` (the last one shorter when B does not
    divide n); an epoch visits every block once; the first epoch goes in
    order and each later one in a fresh random order (``torch.randperm``
    on the level's seeded generator). Each batch size keeps its own blocks
    and position, so a solver may draw several sizes at one level. The
    same :class:`SliceBatch` object stands for a block in every epoch.
    """

    def __init__(self, n, generator):
        self.n, self.generator = n, generator
        self._states = {}

    def _state(self, size):
        state = self._states.get(size)
        if state is None:
            state = self._states[size] = _BlockState(self.n, size)
        return state

    def blocks(self, size):
        """The fixed blocks that batches of ``size`` samples are drawn
        from, in index order (the partition, nothing drawn)."""
        return list(self._state(size).blocks)

    def __call__(self, size):
        state = self._state(size)
        if state.position == len(state.order):
            state.order = torch.randperm(len(state.blocks),
                                         generator=self.generator).tolist()
            state.position = 0
        batch = state.blocks[state.order[state.position]]
        state.position += 1
        return batch


class _BlockState:
    __slots__ = ("blocks", "order", "position")

    def __init__(self, n, size):
        self.blocks = [SliceBatch(start, min(start + size, n))
                       for start in range(0, n, size)]
        self.order = list(range(len(self.blocks)))      # first epoch: in order
        self.position = 0

