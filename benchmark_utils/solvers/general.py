"""What the general-bilevel solvers share: the pair (x, y), its start and
its report, the checks on the problem that decide whether a solver can run
with its defaults, and the projection back onto X for the projection-based
methods. Base of F2SA, stocBiO, IBCG (and any general-family solver)."""
from benchmark_utils.checks.parameters import check_batch_size, check_int
from benchmark_utils.solvers.base import BilevelSolver
from benchmark_utils.solvers.inner_loops import lower_smoothness
from benchmark_utils.solvers.steps import (
    PROBLEM_CONSTANTS,
    SizeRule,
    StepRule,
)

# The outer iteration's batch size of the solvers that declare one: the
# parameter ``outer_batch_size``, None reusing the resolved ``batch_size``
# (a size declared before it).
OUTER_BATCH_SIZE = SizeRule(
    "outer_batch_size", "batch_size",
    lambda solver, problem, sizes: sizes["batch_size"])


def tuned_outer_step(value, letter, role="x step"):
    """The rule of an x step whose default was tuned on the benchmark's
    quadratic (hypergradient entries of order 1): ``value`` times the
    problem's declared ``outer_step_scale`` (1 on the quadratic; see
    :class:`~benchmark_utils.problems.general.GeneralBilevelProblem`)."""
    return StepRule(
        "outer_step", letter, role,
        f"{value:g} x the problem's outer_step_scale",
        lambda solver, problem, steps: value * problem.outer_step_scale)


class GeneralBilevelSolver(BilevelSolver):
    """A solver of ``min_{x in X} f(x, y*(x))``, ``y*(x) = argmin_y g(x, y)``.

    ``self.x`` is the upper-level iterate and ``self.y`` the lower-level one
    the metrics compare with y*(x); both are reported.

    What every general-family solver's docstring refers to here, written
    once:

    * **Step names.** ``outer_step`` is the x step (or the scale of an x
      step schedule), ``inner_step`` the y step (or its scale),
      ``linear_system_step`` the step of the linear-system variable (v, w,
      z or a Neumann series), ``momentum`` a momentum weight, ``period`` a
      restart period, ``step_offset`` / ``step_scale`` the shift and the
      scale of a decaying schedule. Each solver maps them to its paper's
      letters.
    * **Defaults.** None stands for the documented default rule, declared
      once in the solver's ``step_rules`` and resolved into ``self.steps``
      (benchmark_utils/solvers/steps.py). An outer step tuned on the
      quadratic (:func:`tuned_outer_step`) defaults to that value times the
      problem's ``outer_step_scale``; a default read from the problem's
      declared constants (mu_g, L_g) is skipped on a problem that does not
      declare them, unless the value is given.
    * **Batches.** ``batch_size`` None means full passes where the solver
      allows it; on a problem with one sample per level every batch is that
      sample (:meth:`batch`).
    * **A constrained X.** The papers' projection-based methods assume
      X = R^d; on a constrained X their x update is projected onto X
      (:meth:`to_X`, an extension without guarantee).
    * **Sources.** Every method is written from its paper's public
      description; no code was copied.
    """

    family = "general"

    @classmethod
    def defaults_from_problem(cls):
        """The steps whose default (None) is computed from the problem's
        declared constants (their rules' ``needs``): a problem that leaves
        one of :meth:`problem_constants` None is skipped (with the reason)
        unless they are given (:meth:`skip_problem`); a given value must be
        a number > 0 (:meth:`check_parameters`)."""
        return tuple(rule.name for rule in cls.step_rules
                     if rule.needs and rule.parameter)

    @classmethod
    def problem_constants(cls):
        """The constants those defaults read (of :data:`~benchmark_utils.
        solvers.steps.PROBLEM_CONSTANTS`, in that order)."""
        needed = {c for rule in cls.step_rules if rule.parameter
                  for c in rule.needs}
        return tuple(c for c in PROBLEM_CONSTANTS if c in needed)

    # Solvers with an ``outer_batch_size`` (:data:`OUTER_BATCH_SIZE`, the
    # outer iteration's batches): the levels those batches are drawn at,
    # whose sample counts bound it.
    outer_batch_size_levels = ("upper", "lower")

    def check_parameters(self):
        super().check_parameters()
        self.check_positive_if_given(*self.defaults_from_problem())
        # its upper bound depends on the problem: check_sizes
        if getattr(self, "outer_batch_size", None) is not None:
            check_int("outer_batch_size", self.outer_batch_size, 1)

    def check_sizes(self, sizes, problem):
        """``outer_batch_size`` (where a size rule declares it, e.g.
        :data:`OUTER_BATCH_SIZE`) fits the sample counts of the levels in
        ``outer_batch_size_levels`` (no bound on a one-sample problem,
        where every batch is the full pass; :meth:`batch`)."""
        if ("outer_batch_size" in sizes and not self.single_sample(problem)
                and sizes.outer_batch_size is not None):
            counts = {"upper": problem.n_upper, "lower": problem.n_lower}
            self.check_size(sizes, "outer_batch_size", check_batch_size, min(
                counts[level] for level in self.outer_batch_size_levels))

    def draw_start(self):
        """(x_0, y_0): a random point of X and the dataset's y0
        (``init="random"``), or the dataset's (x0, y0)."""
        P = self.problem
        if self.init == "random":
            self.x, self.y = P.random_start(P.rng)
        else:
            self.x, self.y = P.x0.clone(), P.y0.clone()

    def result(self):
        return {"x": self.x, "y": self.y}

    def skip_problem(self, problem):
        left = [name for name in self.defaults_from_problem()
                if getattr(self, name) is None]
        constants = self.problem_constants()
        if left and not all(getattr(problem, constant) is not None
                            for constant in constants):
            names = " and ".join(left)
            verb = "needs" if len(left) == 1 else "need"
            return True, (f"{self.name}'s default {names} {verb} the "
                          f"problem's {' and '.join(constants)}"
                          f"; pass {names} explicitly")
        return False, None

    @staticmethod
    def declares_curvature(problem):
        """Whether the problem gives mu_g and L_g for default step sizes."""
        return problem.mu_g is not None and problem.L_g is not None

    @staticmethod
    def single_sample(problem):
        """A deterministic problem: one sample per level, so mini-batches of
        more than one sample are meaningless and full passes are the method."""
        return min(problem.n_upper, problem.n_lower) == 1

    def check_shared_parameters(self, problem):
        # on a problem with one sample per level every batch size means the
        # same full pass (:meth:`batch`), so no size is out of range
        if not self.single_sample(problem):
            super().check_shared_parameters(problem)

    def batch(self, size):
        """The batch size to draw: ``size``, or None (a full pass, counted
        as the one sample it is) on a problem with one sample per level,
        where S copies of that sample would give the same estimate charged
        S times. The deterministic problems thus run with any batch_size."""
        return None if self.single_sample(self.problem) else size

    def lower_smoothness(self, problem):
        """The L_g of this run's default lower-level steps (solvers with a
        ``batch_size`` parameter): with full passes (``batch_size`` None, the
        papers' deterministic runs, or a one-sample problem) the full sum's
        ``L_g_full`` where the problem declares it, else ``L_g`` (the bound
        for any batch, down to one sample;
        :func:`~benchmark_utils.solvers.inner_loops.lower_smoothness`)."""
        return lower_smoothness(problem, self.batch(self.batch_size) is None)

    def to_X(self, x):
        """Project x onto a constrained X; the whole space needs nothing.

        The papers' methods that project assume X = R^d; projecting is an
        extension without guarantee, and unconstrained problems call no
        projection.
        """
        X = self.problem.X
        return x if X.unbounded else X.project(x)
