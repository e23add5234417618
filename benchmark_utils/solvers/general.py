"""What the general-bilevel solvers share: the family, the checks on the
problem that decide whether a solver can run with its defaults, and the
projection back onto X for the projection-based methods."""
from benchmark_utils.solvers.base import BilevelSolver


class GeneralBilevelSolver(BilevelSolver):
    """Base of F2SA, stocBiO, IBCG (and any general-family solver)."""

    family = "general"

    @staticmethod
    def declares_curvature(problem):
        """Whether the problem gives mu_g and L_g for default step sizes."""
        return problem.mu_g is not None and problem.L_g is not None

    @staticmethod
    def single_sample(problem):
        """A deterministic problem: one sample per level, so mini-batches of
        more than one sample are meaningless and full passes are the method."""
        return min(problem.n_upper, problem.n_lower) == 1

    SINGLE_SAMPLE_REASON = ("this problem has one sample per level "
                            "(deterministic): pass batch_size=None")

    def to_X(self, x):
        """Project x onto a constrained X; the whole space needs nothing.

        The paper methods assume X = R^d; projecting is an extension without
        guarantee, and unconstrained problems call no projection.
        """
        X = self.problem.X
        return x if X.unbounded else X.project(x)
