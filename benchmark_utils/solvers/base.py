"""The shared solver base: what every bilevel solver needs, written once.

A solver subclasses a family base (:class:`~benchmark_utils.solvers.simple.
SimpleBilevelSolver` or :class:`~benchmark_utils.solvers.general.
GeneralBilevelSolver`) and writes its algorithm as a generator
``iterations()`` that updates ``self.x`` (and ``self.y``) and ``yield``s
once per iteration. :class:`BilevelSolver` provides, for both families:

* benchopt's callback loop (``stop_val`` counts iterations; the first
  evaluation is the start) and per-repetition seeds of the counting view's
  sample streams and of the start;
* torch set-up: float64, the same thread count for every solver;
* parameter checks in two steps: :meth:`check_parameters` in ``skip``
  (and for every instance before a ``benchopt run`` starts,
  :mod:`benchmark_utils.checks.run_list`) and :meth:`check_with_problem`
  in ``set_objective`` (what needs the problem); the shared parameters
  ``init`` and ``batch_size`` are declared and checked here;
* the one resolution of the solver's declared ``step_rules`` into the
  frozen ``self.steps`` (:mod:`benchmark_utils.solvers.steps`), reported
  with every evaluation, beside the integer sizes resolved from its
  ``size_rules`` (``self.sizes``) and those its schedules set at the last
  iteration (:meth:`schedule_sizes`);
* the iterate half of the divergence guard: a non-finite iterate at an
  evaluation (off benchopt's clock) or a ``torch.linalg.LinAlgError`` in an
  iteration ends the run, reporting the last finite iterate with
  ``diverged = 1`` (the metrics half is in ``benchmark_utils/metrics.py``);
* the untimed set-up in ``pre_run_hook``: counters reset, start drawn;
* a second clock beside benchopt's wall-clock time: the process's CPU
  time spent in the solver's iterations alone (``cpu_time``, reported
  with every evaluation), which other processes' load changes far less
  than the wall-clock (on a GPU it misses the device's work).
"""
import inspect
import math
import time
import warnings

import torch
from benchopt import BaseSolver

from benchmark_utils import progress
from benchmark_utils.checks.parameters import (
    check_at_most,
    check_batch_size,
    check_choice,
    check_in_interval,
    check_int,
    check_positive,
)
from benchmark_utils.checks.run_list import CheckedParameters
from benchmark_utils.code_digest import shared_code_digest
from benchmark_utils.solvers.steps import (
    MAX_SIZE,
    MAX_SIZE_REASON,
    NO_TUNED_TABLE,
    SCHEDULE_SOURCE,
    ResolvedStep,
    defaults_paragraph,
    resolve_sizes,
    resolve_steps,
    size_parameters,
    size_record,
    step_parameters,
)

# Every solver runs with the same thread setting, so that wall-clock curves
# compare methods and not thread counts. One thread: the problems are small
# and thread start-up would dominate.
NUM_THREADS = 1

# ``init``: where a run starts. "random" draws the problem's
# ``random_start`` from the repetition's stream (the papers' "randomized
# starting points"); "dataset" uses the dataset's own start.
SHARED_PARAMETERS = {"init": ["random"]}
INITS = ("random", "dataset")


class BilevelSolver(CheckedParameters, BaseSolver):
    """Base class of the benchmark's solvers (see module docstring)."""

    family = None           # "simple" or "general": set by the family bases
    sampling_strategy = "callback"
    requirements = ["pip::torch", "numpy"]

    # ``batch_size`` (for the solvers that declare it) is a number of samples
    # per level, an integer in [1, min(n_upper, n_lower)]. A solver for which
    # None has a meaning (full passes, or a default size) says so here; one
    # whose batch_size is drawn at the lower level only bounds it by n_lower.
    batch_size_may_be_none = False
    batch_size_levels = ("upper", "lower")

    # The solver's steps, declared once (benchmark_utils/solvers/steps.py):
    # resolved in set_objective into the frozen ``self.steps``, the only
    # values the loop reads, and recorded in the result file.
    step_rules = ()
    # Its integer sizes that are no step (batch sizes, periods, numbers of
    # inner steps or terms), declared once as ``steps.SizeRule`` (or
    # ``steps.given_size``): resolved beside the steps into the frozen
    # ``self.sizes``, the only sizes the loop reads, checked
    # (:meth:`check_sizes`) and recorded.
    size_rules = ()

    # No class attribute may share a parameter's name: benchopt only sets
    # parameters that are not already attributes (save_parameters), so a
    # class default would silently override the user's value.

    def __init_subclass__(cls, **kwargs):
        # benchopt reads only the class's own ``parameters`` (no merging with
        # the base): the steps and sizes declared in ``step_rules`` and
        # ``size_rules`` (declared there only, steps.step_parameters and
        # size_parameters) go first, the shared ones last; benchopt sorts
        # names, so solver names are those of a solver that lists them
        # itself. A step's entry is its rule's, also where a subclass
        # inherits its base's ``parameters`` and replaces a rule.
        super().__init_subclass__(**kwargs)
        steps = {**step_parameters(cls.step_rules),
                 **size_parameters(cls.size_rules)}
        cls.parameters = {**steps, **{
            name: values for name, values in cls.parameters.items()
            if name not in steps}, **{
            name: values for name, values in SHARED_PARAMETERS.items()
            if name not in cls.parameters}}
        # a solver's docstring ends with its defaults, written from the
        # declarations above (steps.defaults_paragraph), never by hand
        if "name" in cls.__dict__ and cls.__dict__.get("__doc__"):
            cls.__doc__ = (inspect.cleandoc(cls.__doc__) + "\n\n"
                           + defaults_paragraph(cls.step_rules,
                                                cls.parameters,
                                                cls.size_rules))

    def skip(self, problem, tuned_steps=None):
        # benchopt's first hook on a built solver, once at the start of
        # each run it computes: the overall progress line, then the
        # parameter checks (a ValueError naming the parameter; every
        # instance of a ``benchopt run`` was checked before the first run,
        # benchmark_utils/checks/run_list.py)
        progress.run_started()
        self.check_parameters()
        if problem.family != self.family:
            return True, (f"{self.name} solves {self.family} bilevel problems;"
                          f" this dataset is {problem.family} bilevel")
        return self.skip_problem(problem)

    def skip_problem(self, problem):
        """Hook: skip a problem of the right family (default: never)."""
        return False, None

    def set_objective(self, problem, tuned_steps=None):
        self.problem = problem
        self.seed = self.get_seed(use_repetition=True)
        self.check_shared_parameters(problem)
        self.steps = self.resolve(problem, tuned_steps)
        self.sizes = resolve_sizes(self.size_rules, self, problem)
        self.check_with_problem(problem)
        self.check_sizes(self.sizes, problem)

    def resolve(self, problem, tuned_steps=None):
        """The run's :class:`~benchmark_utils.solvers.steps.Steps`: the one
        resolution of ``step_rules`` from the parameters as given, the
        problem's constants and the run's tuned table (``tuned_steps``, a
        :class:`~benchmark_utils.solvers.steps.TunedTable` or None)."""
        tuned = (tuned_steps or NO_TUNED_TABLE).entry_for(self)
        return resolve_steps(self.step_rules, self, problem, tuned,
                             (tuned_steps or NO_TUNED_TABLE).source)

    def _get_state(self):
        # the shared code in benchopt's cache key (benchmark_utils/
        # code_digest.py): an edit of benchmark_utils re-runs the solver
        return {**super()._get_state(), "shared_code": shared_code_digest()}

    def __setstate__(self, state):
        state = dict(state)
        state.pop("shared_code", None)
        super().__setstate__(state)

    def check_parameters(self):
        """Check ``init``, every given step, that ``batch_size`` is an
        integer >= 1 (or None where it means something) and that no size
        exceeds MAX_SIZE; solvers extend it with their own checks that need
        no problem (ValueError at construction)."""
        check_choice("init", self.init, INITS)
        for rule in self.step_rules:
            # None stands for the default rule, except for a step whose
            # default is a number (it has no rule for None)
            value = getattr(self, rule.name) if rule.parameter else None
            if value is None and rule.parameter_default is None:
                continue
            if rule.positive:
                check_positive(rule.name, value)
            elif rule.parameter_default is not None:
                check_in_interval(rule.name, value, -math.inf, math.inf,
                                  closed=(False, False))
        # the cap first: a subclass's own check of a size states its
        # lower bound only
        for rule in self.size_rules:
            name = rule.parameter or rule.name
            check_at_most(name, getattr(self, name, None), MAX_SIZE,
                          MAX_SIZE_REASON)
        if self._checks_batch_size():
            check_int("batch_size", self.batch_size, 1)

    def check_positive_if_given(self, *names):
        """Check that each named parameter is a number > 0 unless it is
        None, which stands for a default computed from the problem (whose
        check is in check_with_problem)."""
        for name in names:
            if getattr(self, name) is not None:
                check_positive(name, getattr(self, name))

    def check_shared_parameters(self, problem):
        """Check that ``batch_size`` fits the problem's levels."""
        if self._checks_batch_size():
            check_batch_size("batch_size", self.batch_size,
                             self.batch_size_bound(problem))

    def check_sample_counts(self, counts):
        """The batch-size checks of :meth:`check_shared_parameters` on a
        problem known only by its sample counts (a dataset's
        ``sample_counts()``, :class:`~benchmark_utils.checks.run_list.
        SampleCounts`), before any run; ValueError as there."""
        if counts.family == self.family:
            self.check_shared_parameters(counts)
            self.check_sizes(resolve_sizes(self.size_rules, self, counts),
                             counts)

    def _checks_batch_size(self):
        return "batch_size" in self.parameters and not (
            self.batch_size is None and self.batch_size_may_be_none)

    def check_sizes(self, sizes, problem):
        """Hook: check the resolved ``sizes`` against ``problem`` (a
        problem, or the run-list check's sample counts, before any run:
        a size rule's default reads only ``n_upper`` and ``n_lower``);
        raise ValueError naming the parameter (default: nothing)."""

    @staticmethod
    def check_size(sizes, name, check, *bounds):
        """``check(name, value, *bounds)`` on the resolved size ``name``
        (e.g. ``check_batch_size``); where the value is its rule's default,
        the message says so and names the parameter to pass."""
        try:
            check(name, sizes[name].value, *bounds)
        except ValueError as error:
            if sizes[name].kind != "default":
                raise
            rule = sizes[name].source.split(": ", 1)[1]
            raise ValueError(f"{error} (the default: {rule}; pass {name} "
                             "explicitly)") from None

    def schedule_sizes(self, k):
        """Hook: ``{name: (value, rule)}``, the integer sizes a schedule
        set at iteration k (the last run; the first at the start), recorded
        beside the resolved ones (default: none)."""
        return {}

    def run_record(self):
        """What the run ran, for the result file: every resolved step and
        size with its source, and the schedules' sizes at the last
        iteration."""
        k = max(self.iteration - 1, 0)
        scheduled = {
            name: ResolvedStep(int(value), f"{SCHEDULE_SOURCE} {rule} at "
                               f"the last iteration (k = {k})")
            for name, (value, rule) in self.schedule_sizes(k).items()}
        return {**self.steps.record(),
                **size_record({**self.sizes, **scheduled})}

    def batch_size_bound(self, problem):
        """The largest ``batch_size``: the smallest size of its levels."""
        sizes = {"upper": problem.n_upper, "lower": problem.n_lower}
        return min(sizes[level] for level in self.batch_size_levels)

    def check_with_problem(self, problem):
        """Hook: the solver's checks and derived values that need the
        problem; raise ValueError (the others go in check_parameters)."""

    def pre_run_hook(self, callback):
        torch.set_num_threads(NUM_THREADS)
        problem = self.problem
        problem.seed(self.seed)
        problem.reset_counts()
        self.draw_start()
        self.diverged = False
        self._snapshot = None     # the last finite evaluated iterate
        self.cpu_time = 0.0       # CPU seconds in the iterations (run)
        self.iteration = 0        # iterations run

    def draw_start(self):
        """Set the run's starting iterate(s) (family bases implement it)."""
        raise NotImplementedError

    def iterations(self):
        """Generator: one ``yield`` per iteration (implemented by solvers)."""
        raise NotImplementedError

    def run(self, callback):
        steps = self.iterations()
        clock = time.process_time
        while self._keep_going(callback):
            try:
                start = clock()
                try:
                    next(steps)
                finally:
                    self.cpu_time += clock() - start
                    self.iteration += 1
            except torch.linalg.LinAlgError as error:
                # a diverging iterate reaches a projection (an SVD) or a
                # solve as inf / NaN and the linear algebra gives up: flag
                # the run as diverged rather than let benchopt drop the
                # whole curve as an error
                warnings.warn(f"{self.name} diverged: {error}",
                              RuntimeWarning, stacklevel=2)
                self.diverged = True
                # count the failed iteration; benchopt's callback logs the
                # flagged snapshot now, or when the run ends
                callback()
                return

    def _keep_going(self, callback):
        # benchopt's callback evaluates (through get_result) when it is due
        # and returns False at the end of the budget, or when the objective's
        # stopping criterion sees a row flagged diverged
        return callback() and not self.diverged

    def result(self):
        """The iterate(s) the objective evaluates (family bases write it)."""
        raise NotImplementedError

    def get_result(self):
        # Called by benchopt's callback at each evaluation, outside the
        # timed iterations: the finiteness check and the snapshot (a copy,
        # as solvers may update their iterates in place) cost no solver time.
        if not self.diverged:
            result = self.result()
            if all(_finite(v) for v in result.values()):
                self._snapshot = {k: _copy(v) for k, v in result.items()}
                return dict(result, diverged=False, record=self.run_record(),
                            cpu_time=self.cpu_time)
            self.diverged = True
            if self._snapshot is None:     # the start itself is not finite
                self._snapshot = result
        return dict(self._snapshot, diverged=True, record=self.run_record(),
                    cpu_time=self.cpu_time)


def _finite(value):
    if not torch.is_tensor(value):
        return True
    return bool(torch.isfinite(value).all())


def _copy(value):
    return value.clone() if torch.is_tensor(value) else value
