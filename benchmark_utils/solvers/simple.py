"""What the simple-bilevel solvers share: one iterate x in Z, its start and
its report. Base of IR-SCG, IR-FSCG, SBCGI, SBCGF, CG-BiO, aR-IP-SeG, SDBGD
(and any simple-family solver)."""
from benchmark_utils.solvers.base import BilevelSolver


class SimpleBilevelSolver(BilevelSolver):
    """A solver of ``min f(x) s.t. x in argmin_{z in Z} g(z)``.

    ``self.x`` is the iterate; a solver that reports another point (a
    weighted average) overrides :meth:`result`.

    What every simple-family solver's docstring refers to here, written
    once (per-solver discussion and measurements: ``docs/solvers.md``):

    * **Step names.** ``outer_step`` is the x step's base value, as in the
      general family: the step of a constant rule, the scale of a
      decaying one; ``outer_step_exponent`` its decay exponent,
      ``momentum_exponent`` the decay exponent of a STORM weight,
      ``upper_weight`` / ``upper_weight_exponent`` the scale and decay of
      the weight of f in a regularized objective, ``penalty_weight`` the
      weight of g in a penalized one, ``period`` a restart period,
      ``step_offset`` the shift of a decaying schedule. Each solver maps
      them to its paper's letters and declares those it runs with (all
      but the integer ``period``) in ``step_rules``
      (benchmark_utils/solvers/steps.py): the loop reads ``self.steps``,
      the result file records each value and its source. A parameter
      that is a number by default is declared by ``steps.given_step``; None
      stands for a default rule where one exists.
    * **Defaults.** The papers' own experimental values (Cao et al. 2023's
      regression experiment where a paper has several);
      ``configs/cao2023_*.yml`` and ``configs/giangtran2025_*.yml`` carry
      each experiment's values, ``configs/quick.yml`` steps sized for its
      small instances.
    * **Batches.** ``batch_size`` samples per level per draw, drawn
      uniformly with replacement, upper and lower independently (separate
      streams); the papers use 1 unless said otherwise. A finite-sum
      method's None is floor(sqrt(n)).
    * **The start.** A random point of Z per repetition (``init="random"``,
      the papers' "randomized starting points"; the distribution is the
      set's ``random_point``) or the dataset's x0 (``init="dataset"``).
    * **The reported iterate** is x_t unless the solver says otherwise.
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
