"""The shared solver base: what every bilevel solver needs, written once.

A solver subclasses :class:`BilevelSolver`, declares its ``family``
("simple" or "general"), and writes its algorithm as a generator
``iterations()`` that updates ``self.x`` (and whatever else it reports) and
``yield``s once per iteration, so the method reads like the paper's
pseudocode. The base provides:

* the benchopt callback loop (``sampling_strategy = "callback"``; benchopt's
  ``stop_val`` is the iteration count since the callback runs once per
  iteration, and the first evaluation is the starting point);
* per-repetition seeds: ``get_seed(use_repetition=True)`` seeds the counting
  view's independent upper / lower sample streams and the start;
* torch setup: float64, the problem's device, a fixed number of threads for
  every solver (``NUM_THREADS``);
* a divergence guard: a non-finite iterate ends the run, the last finite
  evaluated iterate is kept and reported with ``diverged = 1`` (benchopt
  drops curves that raise, so the guard is what keeps failures visible);
* the untimed set-up: counters reset and the start drawn in
  ``pre_run_hook``, outside benchopt's clock.
"""
import torch
from benchopt import BaseSolver

# Every solver runs with the same thread setting (DESIGN.md, fair timing).
# One thread: the problems are small and thread start-up would dominate.
NUM_THREADS = 1


class BilevelSolver(BaseSolver):
    """Base class of the benchmark's solvers (see module docstring)."""

    family = "simple"
    sampling_strategy = "callback"
    requirements = ["pip::torch", "numpy"]

    # No class attribute may share a parameter's name: benchopt only sets
    # parameters that are not already attributes (save_parameters), so a
    # class default would silently override the user's value.

    def skip(self, problem):
        if problem.family != self.family:
            return True, (f"{self.name} solves {self.family} bilevel problems;"
                          f" this dataset is {problem.family} bilevel")
        return self.skip_problem(problem)

    def skip_problem(self, problem):
        """Hook: skip a problem of the right family (default: never)."""
        return False, None

    def set_objective(self, problem):
        self.problem = problem
        self.seed = self.get_seed(use_repetition=True)
        self.validate(problem)

    def validate(self, problem):
        """Hook: check parameters against the problem; raise ValueError."""

    def pre_run_hook(self, callback):
        torch.set_num_threads(NUM_THREADS)
        problem = self.problem
        problem.seed(self.seed)
        problem.reset_counts()
        start = self.starting_point()
        if self.family == "general":
            self.x, self.y = start
        else:
            self.x = start
        self.diverged = False
        self._frozen_result = None
        self._snapshot = None

    def starting_point(self):
        """x (simple family) or the pair (x, y) (general family).

        ``init="random"`` draws the problem's ``random_start`` from the
        repetition's stream; ``"dataset"`` uses the dataset's x0 (and y0).
        """
        # default start: the papers' "randomized starting points"; solvers
        # exposing ``init`` let users pick the dataset's start instead
        if getattr(self, "init", "random") == "random":
            return self.problem.random_start(self.problem.rng)
        if self.family == "general":
            return self.problem.x0.clone(), self.problem.y0.clone()
        return self.problem.x0.clone()

    def iterations(self):
        """Generator: one ``yield`` per iteration (implemented by solvers)."""
        raise NotImplementedError

    def run(self, callback):
        steps = self.iterations()
        while self._keep_going(callback):
            next(steps)

    def _keep_going(self, callback):
        # Check finiteness only when benchopt is about to evaluate, so the
        # guard adds no per-iteration work (or device sync) to the clock.
        about_to_log = getattr(callback, "it", 0) == getattr(
            callback, "next_stopval", 0)
        if about_to_log or not hasattr(callback, "next_stopval"):
            result = self.result()
            if not all(_finite(v) for v in result.values()):
                self.diverged = True
                self._frozen_result = self._snapshot
                callback()     # log the last finite iterate, flagged
                return False
            self._snapshot = {k: _copy(v) for k, v in result.items()}
        return callback()

    def result(self):
        """The iterate(s) the objective evaluates: x, and y for the general family."""
        if self.family == "general":
            return {"x": self.x, "y": self.y}
        return {"x": self.x}

    def get_result(self):
        result = (self._frozen_result if self._frozen_result is not None
                  else self.result())
        return dict(result, diverged=self.diverged)


def _finite(value):
    return bool(torch.isfinite(value).all()) if torch.is_tensor(value) else True


def _copy(value):
    return value.clone() if torch.is_tensor(value) else value
