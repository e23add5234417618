"""Approximate implicit differentiation (AID), the loop of AID-CG and AID-FP.

Grazzi, Franceschi, Pontil, Salzo, "On the Iteration Complexity of
Hypergradient Computation", ICML 2020, §2.1 (AID), run with mini-batches as
Huang et al. 2021 (BiAdam) ran it as a baseline. Per outer iteration:

1. T warm-started inner steps y <- y - alpha grad_y g(x, y; S_t), a fresh
   lower batch S_t each (y_0 = the previous outer iteration's y_T);
2. the linear system grad^2_yy g(x, y_T) v = grad_y f(x, y_T), solved
   approximately by k steps of an iterative method (conjugate gradient for
   AID-CG, the fixed-point iteration v <- v - eta (H v - grad_y f) for
   AID-FP) on ONE lower batch for the whole solve;
3. the hypergradient grad_x f(x, y_T) - grad^2_xy g(x, y_T) v and the outer
   step x <- x - beta hypergradient (projected onto a constrained X).

One batch per solve is what separates AID from stocBiO (Ji, Yang, Liang
2021), which draws a fresh batch per Neumann factor: conjugate gradient on a
changing operator has no meaning, and the fixed-point iteration on one batch
converges to that batch's solution H_B^{-1} grad_y f (biased, since
E[H_B^{-1}] != H^{-1}), where stocBiO's product of independent factors is an
unbiased estimate of the truncated series. The fixed-point iteration from
v = 0 is the truncated Neumann series eta sum_{q<k} (I - eta H)^q grad_y f,
so AID-FP reuses :func:`~benchmark_utils.solvers.hypergradients.neumann_series`
(with one batch instead of stocBiO's one per factor).

The solver classes (``solvers/aid_cg.py``, ``solvers/aid_fp.py``) only say
how the system is solved (:meth:`AIDSolver.solve_linear_system`);
:class:`InnerLoopSolver` holds the parameters and checks AID shares with
reverse-mode ITD (``solvers/itd.py``).
"""
from benchmark_utils.numerics.linear_systems import conjugate_gradient
from benchmark_utils.checks.parameters import (check_choice, check_int,
                                              check_positive)
from benchmark_utils.solvers.general import GeneralBilevelSolver
from benchmark_utils.solvers.hypergradients import neumann_series
from benchmark_utils.solvers.schedules import strongly_convex_step

# the parameters both AID solvers share (their meanings: AIDSolver's doc)
AID_PARAMETERS = {
    "T": [10],
    "k": [10],
    "alpha": [None],
    "beta": [None],
    "batch_size": [16],
    "outer_batch_size": [None],
    "warm_start_v": [False],
}


def fixed_point_solve(hvp, rhs, *, eta, n_steps, v0=None):
    """k = ``n_steps`` steps of v <- v - eta (hvp(v) - rhs) from ``v0``.

    From v0 = None (zero) the k-th iterate is the truncated Neumann series
    eta sum_{q=0}^{k-1} (I - eta H)^q rhs, computed by
    :func:`neumann_series` with k - 1 hvp calls (the first step, from zero,
    needs no product); from a given v0 every step costs one hvp call (k).
    ``hvp`` should use one fixed batch: the iteration then converges to
    that batch's H^{-1} rhs when 0 < eta < 2 / L.
    """
    n_steps = check_int("n_steps", n_steps, 1)
    check_positive("eta", eta)
    if v0 is None:
        return neumann_series(hvp, rhs, eta=eta, n_terms=n_steps)
    v = v0
    for _ in range(n_steps):
        v = v - eta * (hvp(v) - rhs)
    return v


def conjugate_gradient_solve(hvp, rhs, *, n_steps, v0=None):
    """k = ``n_steps`` conjugate-gradient steps on H v = rhs from ``v0``.

    No tolerance stop (``tol = 0``): the k steps are the method's budget,
    as in Grazzi et al. 2020; CG still stops early on an exactly zero
    residual or a non-positive curvature (see
    :func:`~benchmark_utils.numerics.linear_systems.conjugate_gradient`). k hvp
    calls from zero, k + 1 from a given v0 (its initial residual).
    """
    return conjugate_gradient(hvp, rhs, tol=0.0, max_iter=n_steps, w0=v0)


class InnerLoopSolver(GeneralBilevelSolver):
    """What AID and ITD (``benchmark_utils/solvers/unrolled.py``) share: T
    inner gradient steps with step ``alpha`` per outer iteration, an outer
    step ``beta``, inner batches of ``batch_size`` and the outer iteration's
    batches of ``outer_batch_size`` (None: ``batch_size``; ``batch_size``
    None: full passes everywhere), and ``alpha`` None = 2 / (L_g + mu_g),
    the strongly convex step of the analysis (problems without mu_g / L_g
    are then skipped)."""

    batch_size_may_be_none = True       # None: full passes everywhere
    batch_size_levels = ("lower",)      # the inner loop's S_t only

    defaults_from_problem = ("alpha",)
    outer_steps = {"beta": 0.1}

    def check_parameters(self):
        super().check_parameters()
        check_int("T", self.T, 1)

    def check_with_problem(self, problem):
        self.alpha_ = self.alpha
        if self.alpha is None:
            self.alpha_ = check_positive("alpha", strongly_convex_step(
                problem.mu_g, problem.L_g))
        self.resolve_outer_batch_size(problem)


class AIDSolver(InnerLoopSolver):
    """The AID loop (module docstring); subclasses solve the linear system.

    Parameters (Grazzi et al. 2020's names T and k; alpha, beta as in
    stocBiO, Ji et al. 2021):

    * ``T``: inner gradient steps per outer iteration (>= 1);
    * ``k``: steps of the linear-system solver (>= 1);
    * ``alpha``: inner step; None is 2 / (L_g + mu_g), the strongly convex
      step of the analysis (problems without mu_g / L_g are skipped);
    * ``beta``: outer step, tuned on the quick quadratic (Grazzi et al.
      analyse one hypergradient, not the outer loop);
    * ``batch_size``: size of each inner batch S_t; ``outer_batch_size``:
      size of the upper batch and of the linear system's lower batch (None:
      ``batch_size``); ``batch_size`` None uses full passes everywhere
      (deterministic AID);
    * ``warm_start_v``: start the solve at the previous outer iteration's v
      (Ji et al. 2021's AID-BiO) instead of 0. Default False: Grazzi et al.
      2020 analyse the solve from v = 0, and so does hypertorch, the
      public code of their AID that Huang et al. 2021 ran as baselines; a
      cold start also keeps each estimate free of earlier batches' bias.
      A warm start costs one more hvp for CG (the initial residual) and
      one more for FP (its first step is no longer free).

    Choices where the papers are silent: the cross product grad^2_xy g v
    uses the linear system's lower batch (one batch for all second-order
    work of the iteration); the reported y is y_T; a constrained X (the
    papers' X = R^d) is handled by projecting x after the outer step, an
    extension without guarantee.

    Per outer iteration: T lower batches of ``batch_size`` for the inner
    steps, one upper batch and one lower batch of ``outer_batch_size``;
    T + 1 gradient calls; the solver's hvp calls plus one cross product
    on the linear system's batch.
    """

    def solve_linear_system(self, hvp, rhs, v0):
        """v ~ H^{-1} rhs with k steps from ``v0`` (None: zero)."""
        raise NotImplementedError

    def check_parameters(self):
        super().check_parameters()
        check_int("k", self.k, 1)
        check_choice("warm_start_v", self.warm_start_v, (False, True))

    def iterations(self):
        P = self.problem
        S, B = self.batch(self.batch_size), self.batch(self.outer_batch_size_)
        alpha, beta = self.alpha_, self.beta_
        x, y, v = self.x, self.y, None
        while True:
            for _ in range(self.T):                         # step 1
                y = y - alpha * P.grad_g_y(x, y, batch=P.batch_lower(S))
            grad_x_f, grad_y_f = P.grad_f(x, y, batch=P.batch_upper(B))
            system_batch = P.batch_lower(B)                 # one for the solve

            def hessian(u, x=x, y=y):
                return P.hvp_yy_g(x, y, u, batch=system_batch)

            v = self.solve_linear_system(                   # step 2
                hessian, grad_y_f, v if self.warm_start_v else None)
            hypergrad = grad_x_f - P.hvp_xy_g(x, y, v, batch=system_batch)
            x = self.to_X(x - beta * hypergrad)             # step 3
            self.x, self.y, self.v = x, y, v
            yield

