"""What every problem object shares: float64 tensors on one device and
row selection by a batch of sample indices (``None`` / ``FullBatch``: all)."""
import torch

from benchmark_utils.problems.batches import is_full


class FiniteSumProblem:
    """Base of the simple and general problem classes."""

    device = torch.device("cpu")
    dtype = torch.float64

    @staticmethod
    def rows(matrix, batch):
        """The rows of ``matrix`` selected by ``batch`` (all for a full
        pass)."""
        return matrix if is_full(batch) else matrix.index_select(0, batch)

    def as_tensor(self, array):
        return torch.as_tensor(array, dtype=self.dtype, device=self.device)
