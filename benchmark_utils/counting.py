"""Oracle accounting: the counting view of a problem handed to solvers.

Solvers never count. ``Objective.get_objective`` wraps the dataset's problem
in a :class:`CountingView`; every oracle call, sample draw, LMO and
projection goes through it, and the objective reads the counters at each
evaluation so reports can put them on the x-axis. Counters:

* ``n_samples_upper`` / ``n_samples_lower``: samples drawn (the papers'
  "stochastic oracle queries"): a drawn batch of S counts S, a full pass n;
  re-evaluating a drawn batch at another point (STORM / SPIDER) counts
  nothing more; an oracle called with ``batch=None`` (an undrawn full pass)
  is charged n on every call, so forgetting to draw never looks cheaper;
* ``n_grad_evals``, ``n_value_evals``, ``n_hvp``: per-sample evaluations,
  re-use included (the true work; a product on a batch of S costs S);
* ``n_lmo``, ``n_projections``: one per call; a cut LMO (the cutting-plane
  methods' subproblem) is one LMO, as Cao et al. 2023 count for SBCGI and
  SBCGF (Sec. 4, after Thm. 4.7); ``n_infeasible`` counts the empty ones.

Sampling: index tensors drawn uniformly with replacement, unless the
problem declares ``batch_sampler(level, generator)``, a factory of
callables ``size -> batch`` (one per level, rebuilt at every
:meth:`CountingView.seed`), such as
:class:`~benchmark_utils.problems.batches.EpochBlockSampler`; such a batch
is charged the samples it holds. The view only counts: how a set computes
its LMO or projection is the set's business (:mod:`benchmark_utils.sets`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from torch import Tensor

from benchmark_utils.problems.batches import Batch, FullBatch, SliceBatch

if TYPE_CHECKING:
    from benchmark_utils.problems.general import GeneralBilevelProblem
    from benchmark_utils.problems.simple import SimpleBilevelProblem
    from benchmark_utils.sets.base import FeasibleSet
    from benchmark_utils.sets.cut_result import CutLMOResult


COUNTER_NAMES = (
    "n_samples_upper", "n_samples_lower", "n_grad_evals", "n_value_evals",
    "n_hvp", "n_lmo", "n_projections", "n_infeasible",
)


_INDEX = {name: i for i, name in enumerate(COUNTER_NAMES)}


class _CountingSet:
    """A feasible set whose ``lmo``, ``project`` and ``cut_lmo`` calls are
    counted; everything else (``prepare_cut_lmo``, ``diameter``, ...) is
    forwarded to the real set uncounted."""

    def __init__(self, base_set: FeasibleSet, tally: list[int]):
        self._set = base_set
        self._tally = tally

    @property
    def coordinate_separable(self) -> bool:
        """The set's ``coordinate_separable`` (see ``FeasibleSet``)."""
        return self._set.coordinate_separable

    def lmo(self, direction: Tensor) -> Tensor:
        self._tally[_INDEX["n_lmo"]] += 1
        return self._set.lmo(direction)

    def project(self, point: Tensor) -> Tensor:
        self._tally[_INDEX["n_projections"]] += 1
        return self._set.project(point)

    def cut_lmo(self, c: Tensor, a: Tensor, beta: float, *,
                backend: str = "exact", **options: Any) -> CutLMOResult:
        """min <c, s> over Z cut by <a, s> <= beta: one LMO, whichever
        ``backend`` solves it (see ``FeasibleSet.cut_lmo``)."""
        self._tally[_INDEX["n_lmo"]] += 1
        result = self._set.cut_lmo(c, a, beta, backend=backend, **options)
        if not result.feasible:
            self._tally[_INDEX["n_infeasible"]] += 1
        return result

    def __getattr__(self, name: str) -> Any:
        return getattr(self._set, name)

    def __repr__(self):
        return f"Counting({self._set!r})"


class CountingView:
    """Wrap a problem: same oracles, plus counters and independent samplers.

    The oracle kinds of a problem are declared by its class attribute
    ``ORACLES`` (name -> (level, kind)) with level in {"upper", "lower"} and
    kind in {"grad", "value", "value_and_grad", "hvp"}; feasible sets are
    listed in ``SETS``. Any other attribute is forwarded unchanged.
    """

    def __init__(self,
                 problem: GeneralBilevelProblem | SimpleBilevelProblem):
        self.problem = problem
        # all counters live in one list, updated in place in the hot loop
        self._tally = [0] * len(COUNTER_NAMES)
        for name, (level, kind) in problem.ORACLES.items():
            setattr(self, name, self._counted(name, level, kind))
        for name in problem.SETS:
            setattr(self, name, _CountingSet(getattr(problem, name),
                                             self._tally))
        self.seed(0)

    # -- counters --------------------------------------------------------
    def reset_counts(self) -> None:
        self._tally[:] = [0] * len(COUNTER_NAMES)

    def counts(self) -> dict[str, int]:
        return dict(zip(COUNTER_NAMES, self._tally, strict=True))

    # -- sampling --------------------------------------------------------
    def seed(self, seed: int) -> None:
        """Seed the upper, lower and solver streams, independent of each other.

        The upper- and lower-level batches come from two generators spawned
        from one ``SeedSequence``, so they are independent (the papers' theta
        and xi) yet reproducible from a single per-repetition seed.
        """
        upper, lower, other = np.random.SeedSequence(seed).spawn(3)
        self._gen_upper = _torch_generator(upper)
        self._gen_lower = _torch_generator(lower)
        self.rng = _torch_generator(other)
        # the problem's own sampling policy, if it declares one: a fresh
        # sampler per level on that level's stream (its epochs restart)
        policy = getattr(self.problem, "batch_sampler", None)
        self._sampler_upper = self._sampler_lower = None
        if policy is not None:
            self._sampler_upper = policy("upper", self._gen_upper)
            self._sampler_lower = policy("lower", self._gen_lower)

    def sample_upper(self, size: int) -> Tensor | SliceBatch:
        """Draw an upper-level batch of ``size`` samples: indices drawn
        uniformly with replacement, or the problem's own policy (module
        doc), charged the samples the batch holds."""
        if self._sampler_upper is not None:
            batch = self._sampler_upper(size)
            self._tally[_INDEX["n_samples_upper"]] += batch.shape[0]
            return batch
        self._tally[_INDEX["n_samples_upper"]] += size
        return self._draw(self.problem.n_upper, size, self._gen_upper)

    def sample_lower(self, size: int) -> Tensor | SliceBatch:
        """Draw a lower-level batch of ``size`` samples (as
        :meth:`sample_upper`)."""
        if self._sampler_lower is not None:
            batch = self._sampler_lower(size)
            self._tally[_INDEX["n_samples_lower"]] += batch.shape[0]
            return batch
        self._tally[_INDEX["n_samples_lower"]] += size
        return self._draw(self.problem.n_lower, size, self._gen_lower)

    def fixed_blocks(self, level: str, size: int) -> list | None:
        """The partition that ``size``-sample batches of ``level`` are drawn
        from when the problem's policy draws fixed blocks
        (:class:`~benchmark_utils.problems.batches.EpochBlockSampler`),
        else None (index batches drawn with replacement). Draws nothing."""
        sampler = (self._sampler_upper if level == "upper"
                   else self._sampler_lower)
        blocks = getattr(sampler, "blocks", None)
        return None if blocks is None else blocks(size)

    def full_upper(self) -> FullBatch:
        """A full pass over the upper-level sum (charged n_upper samples)."""
        self._tally[_INDEX["n_samples_upper"]] += self.problem.n_upper
        return FullBatch(self.problem.n_upper)

    def full_lower(self) -> FullBatch:
        """A full pass over the lower-level sum (charged n_lower samples)."""
        self._tally[_INDEX["n_samples_lower"]] += self.problem.n_lower
        return FullBatch(self.problem.n_lower)

    def batch_upper(self, size: int | None) -> Batch:
        """A fresh upper batch of ``size`` samples, or a full pass for None."""
        return self.full_upper() if size is None else self.sample_upper(size)

    def batch_lower(self, size: int | None) -> Batch:
        """A fresh lower batch of ``size`` samples, or a full pass for None."""
        return self.full_lower() if size is None else self.sample_lower(size)

    def lower_of(self, batch: Batch) -> Batch:
        """The lower-level samples of the upper batch ``batch``'s indices,
        on a problem whose levels share samples (``levels_share_samples``:
        a sample is a task, its query set f's and its support set g's):
        charged as a lower batch of that size, drawn no more."""
        if not self.problem.levels_share_samples:
            raise ValueError("lower_of: the problem's two levels do not "
                             "share samples (levels_share_samples False)")
        if isinstance(batch, FullBatch):
            return self.full_lower()
        self._tally[_INDEX["n_samples_lower"]] += batch.shape[0]
        return batch

    def _draw(self, n: int, size: int, generator: torch.Generator) -> Tensor:
        idx = torch.randint(n, (size,), generator=generator)
        device = self.problem.device
        return idx if device.type == "cpu" else idx.to(device)

    # -- oracles ---------------------------------------------------------
    def _counted(self, name: str, level: str, kind: str):
        oracle = getattr(self.problem, name)
        n = self.problem.n_upper if level == "upper" else self.problem.n_lower
        samples = _INDEX[f"n_samples_{level}"]
        work = [_INDEX[attr] for attr in {
            "grad": ("n_grad_evals",), "value": ("n_value_evals",),
            "value_and_grad": ("n_grad_evals", "n_value_evals"),
            "hvp": ("n_hvp",),
        }[kind]]
        # counts live in one list while the run goes (cheap in the hot loop)
        tally = self._tally

        def counted_oracle(*args: Tensor, batch: Batch = None):
            if batch is None:
                # an undrawn full pass: charged every time (see module doc)
                tally[samples] += n
                size = n
            elif isinstance(batch, FullBatch):
                size = batch.n
            else:
                size = batch.shape[0]
            for i in work:
                tally[i] += size
            return oracle(*args, batch=batch)

        counted_oracle.__name__ = name
        counted_oracle.__doc__ = oracle.__doc__
        return counted_oracle

    def __getattr__(self, name: str) -> Any:
        # only called for attributes not found on the view itself
        if name in _INDEX:
            return self._tally[_INDEX[name]]
        return getattr(self.problem, name)

    def __repr__(self):
        return f"CountingView({self.problem!r})"


def _torch_generator(seed_sequence: np.random.SeedSequence
                     ) -> torch.Generator:
    gen = torch.Generator()
    gen.manual_seed(int(seed_sequence.generate_state(1, dtype=np.uint64)[0]))
    return gen
