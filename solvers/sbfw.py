import itertools
import math

from benchmark_utils.checks.parameters import check_choice, check_positive
from benchmark_utils.numerics.linear_systems import conjugate_gradient
from benchmark_utils.solvers.estimators import Storm
from benchmark_utils.solvers.general import GeneralBilevelSolver
from benchmark_utils.solvers.hypergradients import (
    draw_positive_depth,
    positive_depth_neumann,
)
from benchmark_utils.solvers.sampled_hypergradients import (
    EstimatorSamples,
    sampled_hypergradient,
)
from benchmark_utils.solvers.schedules import neumann_step, power_decay
from benchmark_utils.solvers.steps import StepRule, constant_rule, given_size

HESSIAN_INVERSES = ("neumann", "exact")


def theory_a0(mu_g, L_g):
    """a_0 = min{2/(3 mu_g), mu_g/(2 L_g^2)}, the lower-level step constant
    (Akhtar et al. 2022, as Abolfazli et al. 2023, App. G.1)."""
    return min(2.0 / (3.0 * mu_g), mu_g / (2.0 * L_g ** 2))


def steps(k, *, delta1, eta0):
    """(rho_k, eta_k, delta_k) = (2/k^{1/2}, eta0/(k+1)^{3/4},
    delta1/k^{1/2}) at k >= 1, rho_k and eta_k clipped at 1 (our choice: a
    momentum weight above 1 flips the correction's sign, a Frank-Wolfe
    step above 1 leaves X)."""
    rho = min(1.0, 2.0 / math.sqrt(k))
    eta = min(1.0, power_decay(k, eta0, 1, 0.75))
    return rho, eta, delta1 / math.sqrt(k)


def default_inner_step(solver, problem, steps):
    """delta_1 = delta_factor a_0 with the theory's a_0, capped at 1/L_g:
    the multiplier never takes the theory's step above 1/L_g."""
    L_g = solver.lower_smoothness(problem)
    delta1 = solver.delta_factor * theory_a0(problem.mu_g, L_g)
    return min(delta1, neumann_step(L_g))


def neumann_series_step(solver, problem, steps):
    """1/L_g, the step (and scale) of the Neumann series, with
    hessian_inverse "neumann"; 0 with "exact" (no series)."""
    if solver.hessian_inverse != "neumann":
        return 0.0
    return neumann_step(solver.lower_smoothness(problem))


class Solver(GeneralBilevelSolver):
    """SBFW: Stochastic Bilevel Frank-Wolfe.

    Akhtar, Bedi, Thomdapu, Rajawat, IEEE Trans. Signal Processing 70
    (2022), as Abolfazli et al. 2023 (App. G.1) transcribe and ran it.
    Iteration k = 1, 2, ... (x_1 = x_0), one LMO:

    * y_k = y_{k-1} - delta_k grad_y g(x_{k-1}, y_{k-1});
    * d_k = (1 - rho_k)(d_{k-1} - h(x_{k-1}, y_{k-1})) + h(x_k, y_k) with
      h = grad_x f - grad^2_xy g w, w ~ [grad^2_yy g]^-1 grad_y f;
    * s_k = argmin_{s in X} <s, d_k>; x_{k+1} = (1 - eta_k) x_k + eta_k s_k.

    Steps (``step_rules``): rho_k = 2/k^{1/2}; eta_k = ``outer_step``
    /(k+1)^{3/4} (None: the paper's 2; Abolfazli et al.'s "eta x 0.8" is
    1.6); delta_k = ``inner_step``/k^{1/2} (None: ``delta_factor`` x the
    paper's a_0 = min{2/(3 mu_g), mu_g/(2 L_g^2)}, capped at 1/L_g;
    Fig. 4's "delta x 5" is delta_factor 5). ``hessian_inverse``: "neumann",
    the paper's w = (k/L_g) prod_{i<=l} (I - grad^2_yy g/L_g) grad_y f, l ~
    U{1..k}; "exact" (default; the Neumann SBFW stalls, as Abolfazli et al.
    report), w by CG, their "SBFW with Hessian inverse". L_g: ``L_g_full``
    with full passes, where declared (:meth:`lower_smoothness`).
    Departures: rho_k, eta_k clipped at 1; the correction h(x_{k-1},
    y_{k-1}) uses the iteration's samples and depth (reusing the last h
    cancels the momentum); ``batch_size`` None (default): full passes.
    """

    name = "SBFW"
    parameters = {
        "delta_factor": [50.0],
        "hessian_inverse": ["exact"],
    }
    size_rules = (given_size("batch_size", None),)
    batch_size_may_be_none = True       # None: full passes, as in the paper

    step_rules = (
        StepRule("inner_step", "delta_1", "y step at k = 1 "
                 "(delta_k = inner_step/k^{1/2})",
                 "delta_factor x min{2/(3 mu_g), mu_g/(2 L_g^2)}, capped "
                 "at 1/L_g", default_inner_step, needs=("mu_g", "L_g")),
        constant_rule("outer_step", "eta_0", "x step numerator "
                      "(eta_k = outer_step/(k+1)^{3/4})", 2.0, "the paper's"),
        StepRule("neumann_series_step", "1/L_g", "Neumann series' step",
                 "1/L_g with hessian_inverse neumann, 0 with exact",
                 neumann_series_step, parameter=False, positive=False),
    )

    def skip_problem(self, problem):
        if problem.X.unbounded:
            return True, ("SBFW needs a bounded X with a linear minimization "
                          "oracle; this problem's X is the whole space")
        needs_curvature = (self.inner_step is None
                           or self.hessian_inverse == "neumann")
        if needs_curvature and not self.declares_curvature(problem):
            return True, ("SBFW's default inner_step and Neumann estimator "
                          "need the problem's mu_g and L_g; pass inner_step "
                          "and use hessian_inverse='exact'")
        return False, None

    def check_parameters(self):
        super().check_parameters()
        check_positive("delta_factor", self.delta_factor)
        check_choice("hessian_inverse", self.hessian_inverse,
                     HESSIAN_INVERSES)

    def check_with_problem(self, problem):
        if self.hessian_inverse == "neumann":
            check_positive("1/L_g", self.steps.neumann_series_step)

    def schedule(self, k):
        """(rho_k, eta_k, delta_k) of iteration k >= 1."""
        return steps(k, delta1=self.steps.inner_step,
                     eta0=self.steps.outer_step)

    def surrogate(self, x, y, upper, lower, factor_batches, k, depth):
        """h(x, y) on the given batches, with the Neumann depth ``depth``."""
        if self.hessian_inverse == "exact":
            # every product of the solve on the one lower batch
            samples = EstimatorSamples(xi=upper, cross=lower,
                                       hessian=itertools.repeat(lower),
                                       lower=lower)

            def inverse(hvp, rhs):
                return conjugate_gradient(hvp, rhs, tol=1e-12,
                                          max_iter=10 * rhs.numel())
        else:
            samples = EstimatorSamples(xi=upper, cross=lower,
                                       hessian=tuple(factor_batches),
                                       lower=lower)

            def inverse(hvp, rhs):
                return positive_depth_neumann(
                    hvp, rhs, eta=self.steps.neumann_series_step, n_terms=k,
                    depth=depth)
        return sampled_hypergradient(self.problem, x, y, samples, inverse)[1]

    def iterations(self):
        P, S = self.problem, self.batch(self.sizes.batch_size)
        d = Storm()
        x_prev, y_prev, x = self.x, self.y, self.x           # x_1 = x_0
        k = 0
        while True:
            k += 1
            rho, eta, delta = self.schedule(k)
            upper, lower = P.batch_upper(S), P.batch_lower(S)
            step_batch = lower if S is None else P.batch_lower(S)
            y = y_prev - delta * P.grad_g_y(x_prev, y_prev, batch=step_batch)
            depth, factors = None, []
            if self.hessian_inverse == "neumann":
                depth = draw_positive_depth(k, P.rng)        # l ~ U{1..k}
                factors = [lower if S is None else P.batch_lower(S)
                           for _ in range(depth)]
            new = self.surrogate(x, y, upper, lower, factors, k, depth)
            # rho_k = 1 (k <= 4) weighs the correction by zero: d_k = h_k
            old = None if rho >= 1.0 else self.surrogate(
                x_prev, y_prev, upper, lower, factors, k, depth)
            s = P.X.lmo(d.step(new, old, rho))
            x_prev, y_prev, x = x, y, x + eta * (s - x)
            self.x, self.y = x, y
            yield
