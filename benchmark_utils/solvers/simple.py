"""What the simple-bilevel solvers share: one iterate x in Z, its start and
its report. Base of IR-SCG, IR-FSCG, SBCGI, SBCGF, CG-BiO, aR-IP-SeG, SDBGD
(and any simple-family solver)."""
from benchmark_utils.solvers.base import BilevelSolver


class SimpleBilevelSolver(BilevelSolver):
    """A solver of ``min f(x) s.t. x in argmin_{z in Z} g(z)``.

    ``self.x`` is the iterate; a solver that reports another point (a
    weighted average) overrides :meth:`result`.
    """

    family = "simple"

    def draw_start(self):
        """x_0: a random point of Z (``init="random"``) or the dataset's x0."""
        P = self.problem
        if self.init == "random":
            self.x = P.random_start(P.rng)
        else:
            self.x = P.x0.clone()

    def result(self):
        return {"x": self.x}
