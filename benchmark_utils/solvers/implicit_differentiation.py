"""Approximate implicit differentiation (AID), the loop of AID-CG and AID-FP.

Grazzi, Franceschi, Pontil, Salzo, "On the Iteration Complexity of
Hypergradient Computation", ICML 2020, §2.1 (AID), run with mini-batches
as Huang et al. 2021 ran it. Per outer iteration:

1. T warm-started inner steps y <- y - alpha grad_y g(x, y; S_t), a fresh
   lower batch S_t each;
2. the linear system grad^2_yy g(x, y_T) v = grad_y f(x, y_T), solved by
   k steps of an iterative method (conjugate gradient: AID-CG; the
   fixed-point iteration v <- v - eta (H v - grad_y f): AID-FP) on ONE
   lower batch for the whole solve (stocBiO draws one per Neumann factor):
   a fresh one, or (``system_batch="upper"``) the upper batch's own tasks
   where the two levels share samples;
3. x <- x - beta (grad_x f(x, y_T) - grad^2_xy g(x, y_T) v), projected
   onto a constrained X.

From v = 0 the fixed-point iteration is the truncated Neumann series, so
it reuses :func:`~benchmark_utils.solvers.hypergradients.neumann_series`.
The solver classes (``solvers/aid_cg.py``, ``solvers/aid_fp.py``) only say
how the system is solved (:meth:`AIDSolver.solve_linear_system`);
:class:`InnerLoopSolver` holds what AID shares with reverse-mode ITD
(``solvers/itd.py``). Why one batch per solve, and the defaults:
docs/solvers.md.
"""
from benchmark_utils.checks.parameters import (
    check_choice,
    check_int,
    check_positive,
)
from benchmark_utils.numerics.linear_systems import conjugate_gradient
from benchmark_utils.solvers.general import (
    OUTER_BATCH_SIZE,
    GeneralBilevelSolver,
    tuned_outer_step,
)
from benchmark_utils.solvers.hypergradients import neumann_series
from benchmark_utils.solvers.inner_loops import inner_gradient_steps
from benchmark_utils.solvers.schedules import strongly_convex_inner_step
from benchmark_utils.solvers.steps import given_size

# the parameters both AID solvers share (their meanings: AIDSolver's doc)
AID_PARAMETERS = {
    "warm_start_v": [False],
    "system_batch": ["lower"],
}
SYSTEM_BATCHES = ("lower", "upper")


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
    :func:`~benchmark_utils.numerics.linear_systems.conjugate_gradient`).
    k hvp calls from zero, k + 1 from a given v0 (its initial residual).
    """
    return conjugate_gradient(hvp, rhs, tol=0.0, max_iter=n_steps, w0=v0)


# the steps AID and ITD share: alpha, 2 / (L_g + mu_g), the strongly convex
# step of the analysis; beta, 0.1 x outer_step_scale, tuned on the quick
# quadratic (see GeneralBilevelSolver)
INNER_LOOP_STEP_RULES = (strongly_convex_inner_step("alpha"),
                         tuned_outer_step(0.1, "beta"))


class InnerLoopSolver(GeneralBilevelSolver):
    """What AID and ITD share: T inner gradient steps of ``inner_step``
    (alpha) per outer iteration on lower batches of ``batch_size``, an
    outer step ``outer_step`` (beta), the outer iteration's batches of
    ``outer_batch_size`` (None: ``batch_size``; ``batch_size`` None: full
    passes everywhere). Defaults: ``INNER_LOOP_STEP_RULES``."""

    batch_size_may_be_none = True       # None: full passes everywhere
    batch_size_levels = ("lower",)      # the inner loop's S_t only

    step_rules = INNER_LOOP_STEP_RULES
    size_rules = (given_size("T", 10), given_size("batch_size", 16),
                  OUTER_BATCH_SIZE)

    def check_parameters(self):
        super().check_parameters()
        check_int("T", self.T, 1)


class AIDSolver(InnerLoopSolver):
    """The AID loop (module docstring); subclasses solve the linear system.

    Parameters besides :class:`InnerLoopSolver`'s: ``k``, the steps of the
    linear-system solver (>= 1); ``warm_start_v``, start the solve at the
    previous outer iteration's v (Ji et al. 2021's AID-BiO) instead of 0
    (default False, as Grazzi et al. 2020 analyse it). ``outer_batch_size``
    sizes the upper batch and the linear system's lower batch, which also
    serves the cross product grad^2_xy g v. ``system_batch``: that lower
    batch drawn apart from the upper one ("lower", default), or the upper
    batch's own tasks ("upper", a problem whose levels share samples:
    Huang et al. 2021, App. A.1.2, draw one meta-batch of tasks for both
    levels; on a task-separable g a Hessian of other tasks is zero on the
    right-hand side's heads, and CG on that singular system returns 0 or
    blows up, docs/problems.md). The reported y is y_T.
    """

    size_rules = (*InnerLoopSolver.size_rules, given_size("k", 10))

    def solve_linear_system(self, hvp, rhs, v0):
        """v ~ H^{-1} rhs with k steps from ``v0`` (None: zero)."""
        raise NotImplementedError

    def check_parameters(self):
        super().check_parameters()
        check_int("k", self.k, 1)
        check_choice("warm_start_v", self.warm_start_v, (False, True))
        check_choice("system_batch", self.system_batch, SYSTEM_BATCHES)

    def check_with_problem(self, problem):
        super().check_with_problem(problem)
        if self.system_batch == "upper" and not problem.levels_share_samples:
            raise ValueError(
                "system_batch='upper' needs a problem whose two levels "
                "share samples (a task per sample, e.g. hyper_"
                "representation); use system_batch='lower' here")

    def iterations(self):
        P = self.problem
        S = self.batch(self.sizes.batch_size)
        B = self.batch(self.sizes.outer_batch_size)
        alpha, beta = self.steps.inner_step, self.steps.outer_step
        x, y, v = self.x, self.y, None
        while True:
            y = inner_gradient_steps(P, x, y, step=alpha,       # step 1
                                     n_steps=self.sizes.T,
                                     batch_size=S)
            upper_batch = P.batch_upper(B)
            grad_x_f, grad_y_f = P.grad_f(x, y, batch=upper_batch)
            system_batch = (P.batch_lower(B) if self.system_batch == "lower"
                            else P.lower_of(upper_batch))   # one per solve

            def hessian(u, x=x, y=y, batch=system_batch):
                return P.hvp_yy_g(x, y, u, batch=batch)

            v = self.solve_linear_system(                   # step 2
                hessian, grad_y_f, v if self.warm_start_v else None)
            hypergrad = grad_x_f - P.hvp_xy_g(x, y, v, batch=system_batch)
            x = self.to_X(x - beta * hypergrad)             # step 3
            self.x, self.y = x, y
            yield
