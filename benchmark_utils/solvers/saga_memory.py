"""SAGA memory tables (Defazio, Bach, Lacoste-Julien 2014) over mini-batches,
and the per-sample oracle values they need (SABA).

SAGA keeps, for every sample j of a finite sum, the last value alpha_j of
its term and estimates the mean at the current point from a drawn batch B
(with replacement) as

    estimate = 1/|B| sum_{b in B} (h_{j_b}(current) - alpha_{j_b})
               + 1/n sum_j alpha_j,

then stores h_j(current) in alpha_j for every j in B. The variance vanishes
as the iterates settle only if the table holds *per-sample* values.

The problem contract returns batch means; :func:`per_sample` returns the
mean and the rows of one oracle on a drawn batch: through the problem's
declared ``<name>_rows`` oracle (counted like the mean oracle), or else
the counted mean oracle plus the rows by :func:`torch.func.vmap` on
single-index batches (charged nothing more, slower). So a SAGA method's
counts are those of the same oracle calls on the same batches; the tables'
initialisation is a full pass, charged n samples. Timings: docs/solvers.md,
"SABA".
"""
import torch
from torch.func import vmap

from benchmark_utils.problems.batches import is_full

ROWS_SUFFIX = "_rows"


def index_tensor(batch, n, device):
    """The sample indices of a drawn batch as a 1-D tensor: the batch
    itself, all n for a full pass, or the block's indices for a batch that
    is not an index tensor (a contiguous block of a problem's own sampling
    policy, which carries them as ``indices``)."""
    if is_full(batch):
        return torch.arange(n, device=device)
    if torch.is_tensor(batch):
        return batch
    return batch.indices.to(device)


def _indices(P, name, batch):
    """The sample indices of ``batch`` for oracle ``name``."""
    level = P.ORACLES[name][0]
    n = P.n_upper if level == "upper" else P.n_lower
    return index_tensor(batch, n, P.device)


def _mean(rows):
    if isinstance(rows, tuple):
        return tuple(r.mean(0) for r in rows)
    return rows.mean(0)


def has_rows_oracle(P, name):
    """Whether the problem declares the per-sample oracle ``<name>_rows``."""
    return name + ROWS_SUFFIX in P.ORACLES


def vmap_rows(problem, name, *args, indices):
    """Rows of oracle ``name`` of the (uncounted) ``problem``: row k is the
    oracle on the single-index batch ``indices[k:k+1]``, by vmap."""
    oracle = getattr(problem, name)
    return vmap(lambda j: oracle(*args, batch=j))(indices[:, None])


def per_sample(P, name, *args, batch):
    """(mean, rows) of oracle ``name`` at ``args`` on the drawn ``batch``
    (see the module docstring for how each is obtained and counted).
    Tuple-valued oracles (``grad_f``) give tuples of means and of rows."""
    if has_rows_oracle(P, name):
        rows = getattr(P, name + ROWS_SUFFIX)(*args, batch=batch)
        return _mean(rows), rows
    mean = getattr(P, name)(*args, batch=batch)
    problem = getattr(P, "problem", P)      # the view's problem, uncounted
    return mean, vmap_rows(problem, name, *args,
                           indices=_indices(P, name, batch))


def per_block(P, name, *args, batch, blocks):
    """(mean, block means) of oracle ``name`` at ``args`` on the full pass
    ``batch`` (drawn, so its samples are charged): the counted oracle on
    each block of the partition ``blocks`` (n evaluations in all, as one
    full-pass call) and their mean weighted by the blocks' sizes.
    Tuple-valued oracles give tuples."""
    oracle = getattr(P, name)
    values = [oracle(*args, batch=block) for block in blocks]
    like = values[0][0] if isinstance(values[0], tuple) else values[0]
    weights = torch.tensor([block.shape[0] / batch.n for block in blocks],
                           dtype=like.dtype, device=like.device)

    def stacked(rows):
        rows = torch.stack(rows)
        return torch.tensordot(weights, rows, dims=1), rows

    if isinstance(values[0], tuple):
        pairs = [stacked(list(v)) for v in zip(*values, strict=True)]
        return (tuple(m for m, _ in pairs), tuple(r for _, r in pairs))
    return stacked(values)


def per_sample_failure(P, name, *args):
    """None if ``name`` gives per-sample rows on this problem (a declared
    ``_rows`` oracle, or vmap works on a one-sample batch), else the
    error's message; evaluated on the uncounted problem."""
    if has_rows_oracle(P, name):
        return None
    problem = getattr(P, "problem", P)
    try:
        vmap_rows(problem, name, *args,
                  indices=torch.zeros(1, dtype=torch.long, device=P.device))
    except Exception as error:      # any failure: vmap cannot run it
        return f"{type(error).__name__}: {error}"
    return None


class SagaMemory:
    """The SAGA tables of the quantities of one level, updated on one
    batch at a time.

    Built from the rows of every quantity on a full pass (``tables``: one
    (n, ...) tensor per quantity); :meth:`step` returns the SAGA estimates
    of the quantities from their (mean, rows) on a drawn batch and writes
    the rows into the tables (``index_copy_``, no loop over samples). The
    table means are kept up to date incrementally: a sample drawn twice in
    one batch is one row changed, so each row's change is weighted by one
    over its multiplicity in the batch.
    """

    oracle_values = staticmethod(per_sample)     # (mean, rows) pairs

    def __init__(self, tables):
        self.tables = [t.clone() for t in tables]
        self.means = [t.mean(0) for t in self.tables]
        self.n = self.tables[0].shape[0]

    def step(self, batch, values):
        """SAGA estimates from ``values`` = [(mean, rows), ...] on
        ``batch``, one pair per table, in the tables' order. On a full pass
        the estimates are the new means and the rows replace the tables."""
        if is_full(batch):
            # contiguous: rows may be a broadcast view (a term that does
            # not depend on the sample), and the tables are written in place
            self.tables = [rows.contiguous() for _, rows in values]
            self.means = [mean for mean, _ in values]
            return list(self.means)
        batch = index_tensor(batch, self.n, self.means[0].device)
        _, inverse, counts = torch.unique(batch, return_inverse=True,
                                          return_counts=True)
        # in the tables' dtype: 1 / an integer tensor would be float32
        weight = 1.0 / counts.index_select(0, inverse).to(self.means[0].dtype)
        estimates = []
        for i, (mean, rows) in enumerate(values):
            old = self.tables[i].index_select(0, batch)
            estimates.append(mean - old.mean(0) + self.means[i])
            change = (weight.reshape(-1, *[1] * (rows.dim() - 1))
                      * (rows - old)).sum(0)
            self.means[i] = self.means[i] + change / self.n
            self.tables[i].index_copy_(0, batch, rows)
        return estimates


class BlockSagaMemory:
    """The SAGA tables of one level when every batch is a whole block of a
    fixed partition (:class:`~benchmark_utils.problems.batches.
    EpochBlockSampler`, benchmark_bilevel's sampling): one row per block,
    holding the block's mean.

    The estimates are those of :class:`SagaMemory` on the same draws (a
    block's rows are always written together, so the mean of its per-sample
    rows is the block mean stored here), without any per-sample row: a
    step costs the batch-mean oracles alone, as upstream's SABA, which
    keeps one memory row per block too. ``tables``: one (n_blocks, ...)
    tensor of block means per quantity; ``blocks``: the partition, in
    index order.
    """

    @staticmethod
    def oracle_values(P, name, *args, batch):
        """(mean, None): the counted batch-mean oracle, no rows."""
        return getattr(P, name)(*args, batch=batch), None

    def __init__(self, tables, blocks):
        sizes = torch.tensor([b.shape[0] for b in blocks],
                             dtype=tables[0].dtype, device=tables[0].device)
        self.weights = sizes / sizes.sum()     # n_k / n
        self.row = {(b.start, b.stop): k for k, b in enumerate(blocks)}
        self.tables = [t.clone() for t in tables]
        self.means = [torch.tensordot(self.weights, t, dims=1)
                      for t in self.tables]

    def step(self, batch, values):
        """SAGA estimates from ``values`` = [(mean, rows), ...] on the block
        ``batch`` (rows unused); the block's rows become the means."""
        k = self.row[(batch.start, batch.stop)]
        weight = self.weights[k]
        estimates = []
        for i, (mean, _) in enumerate(values):
            change = mean - self.tables[i][k]
            estimates.append(change + self.means[i])
            self.means[i] = self.means[i] + weight * change
            self.tables[i][k] = mean
        return estimates
