import itertools

from benchmark_utils.numerics.linear_systems import conjugate_gradient
from benchmark_utils.checks.parameters import check_choice, check_positive
from benchmark_utils.solvers.estimators import Storm
from benchmark_utils.solvers.general import GeneralBilevelSolver
from benchmark_utils.solvers.hypergradients import (draw_positive_depth,
                                                    positive_depth_neumann)
from benchmark_utils.solvers.sampled_hypergradients import (
    EstimatorSamples, sampled_hypergradient)
from benchmark_utils.solvers.schedules import (neumann_step, sbfw_a0,
                                               sbfw_schedule)

HESSIAN_INVERSES = ("neumann", "exact")


class Solver(GeneralBilevelSolver):
    """SBFW: Stochastic Bilevel Frank-Wolfe.

    Akhtar, Bedi, Thomdapu, Rajawat, "Projection-Free Stochastic Bi-Level
    Optimization", IEEE Trans. Signal Processing 70 (2022), 6332-6347, in
    the form Abolfazli et al. 2023 ("An Inexact Conditional Gradient Method
    for Constrained Bilevel Optimization", App. G.1) transcribe and ran as
    IBCG's projection-free baseline. Single loop, one linear minimization
    over X per iteration, no projection.

    Iteration k = 1, 2, ... from (x_{k-1}, y_{k-1}, x_k, d_{k-1}):

    * y_k = y_{k-1} - delta_k grad_y g(x_{k-1}, y_{k-1});
    * d_k = (1 - rho_k)(d_{k-1} - h(x_{k-1}, y_{k-1})) + h(x_k, y_k)
      (STORM-type momentum, :class:`Storm`), with the surrogate
      h(x, y) = grad_x f(x, y) - grad^2_xy g(x, y) w and
      w = (k/L_g) prod_{i=1}^{l} (I - grad^2_yy g(x, y)/L_g) grad_y f(x, y),
      l ~ U{1..k} (Ghadimi & Wang 2018's biased Neumann estimate of
      [grad^2_yy g]^{-1} grad_y f;
      :func:`~benchmark_utils.solvers.hypergradients.positive_depth_neumann`);
    * s_k = argmin_{s in X} <s, d_k> (one LMO);
    * x_{k+1} = (1 - eta_k) x_k + eta_k s_k.

    Steps (:func:`~benchmark_utils.solvers.schedules.sbfw_schedule`):
    rho_k = 2/k^{1/2}, eta_k = eta_factor 2/(k+1)^{3/4}, delta_k =
    delta_factor a_0/k^{1/2}, a_0 = min{2/(3 mu_g), mu_g/(2 L_g^2)} (``a0``
    None: from the problem's mu_g and L_g). Abolfazli et al. tuned the
    multipliers: delta x5 and eta x0.1 on the coreset toy (their Fig. 4),
    eta x0.8 on matrix completion. ``delta_factor`` defaults to 50 (tuned
    on the quick quadratic: the theory's a_0 = mu_g/(2 L_g^2) is 1/(2
    kappa_g) of 1/L_g, so y_k lags y*(x_k) and the Frank-Wolfe gap stalls;
    the paper's own x5 is not enough there); with the default ``a0`` the
    scaled constant is capped at 1/L_g (delta_1 <= 1/L_g, a stable
    gradient step on g whatever kappa_g), so the default step is
    delta_k = min(50 a_0, 1/L_g)/k^{1/2}; ``delta_factor=1`` is the
    theory's step. A given ``a0`` is used as is, times ``delta_factor``.

    L_g in a_0, in the cap and in the Neumann scale 1/L_g is the full
    sum's ``L_g_full`` with full passes (the paper's deterministic runs),
    where the problem declares it, and ``L_g`` otherwise
    (:meth:`lower_smoothness`).

    ``hessian_inverse``: "neumann" (the published estimator above) or
    "exact" (the default: w solves grad^2_yy g(x, y) w = grad_y f(x, y) on
    the same batch by conjugate gradient to a relative residual of 1e-12,
    the "SBFW with Hessian inverse" variant of Abolfazli et al.'s toy,
    Figs. 3-4, the only SBFW they show converging). The default is tuned:
    the Neumann estimator's scale k/L_g makes its variance grow like
    k/(2 mu_g L_g), and on the quick constrained quadratic (box) its
    Frank-Wolfe gap stalls near a tenth of its start and then rises again
    for every delta / eta multiplier we tried (also with the depth drawn
    in {0..k-1}), the failure Abolfazli et al. report; the exact inverse
    reaches 1e-2 of the start within 300 iterations.

    Oracles: the paper's experiments are deterministic, so ``batch_size``
    None (the default) uses full passes: per iteration one upper pass and
    one lower pass, shared by the y-step and every product at both points.
    An integer ``batch_size`` draws, per iteration, one upper batch (for
    grad f at both points), one lower batch for the y-step, one for the
    cross products grad^2_xy g at both points and one per Hessian factor
    (l of them): l + 2 lower batches (2 with "exact"). Hessian-vector
    products per iteration: 2 (l + 1) batch-sizes with "neumann" (l factors
    and one cross product at each point; l + 1 for k <= 4, a single point),
    the CG iterations plus one at each point with "exact".

    Choices where the papers are silent or that we make:

    * the correction h(x_{k-1}, y_{k-1}) is evaluated on the iteration's
      samples and with the same depth l (and scale k) as h(x_k, y_k):
      reusing the previous iteration's h instead makes d_k = h(x_k, y_k)
      identically (the recursion telescopes), i.e. no momentum at all;
    * rho_k and eta_k are clipped at 1 (rho_1 = 2, eta_1 = 1.19 otherwise),
      so d_k = h(x_k, y_k) for k <= 4, where the correction (weighed by
      zero) is not evaluated, and d_0 is never used;
    * x_1 = x_0 (the first direction is taken at the start) and the
      reported iterate after iteration k is (x_{k+1}, y_k), the latest of
      each;
    * X must be bounded with an LMO: problems on the whole space are
      skipped; the default a_0 needs the problem's mu_g and L_g, and the
      Neumann estimator 1/L_g (problems without them are skipped unless
      ``a0`` is given and ``hessian_inverse="exact"``);
    * the depth l ~ U{1..k} grows with k: the mean cost is k/2 Hessian
      factors per point at iteration k, as the paper's estimator asks.
    """

    name = "SBFW"
    parameters = {
        "a0": [None],
        "delta_factor": [50.0],
        "eta_factor": [1.0],
        "hessian_inverse": ["exact"],
        "batch_size": [None],
    }
    batch_size_may_be_none = True       # None: full passes, as in the paper

    def skip_problem(self, problem):
        if problem.X.unbounded:
            return True, ("SBFW needs a bounded X with a linear minimization "
                          "oracle; this problem's X is the whole space")
        needs_curvature = (self.a0 is None
                           or self.hessian_inverse == "neumann")
        if needs_curvature and not self.declares_curvature(problem):
            return True, ("SBFW's default a0 and Neumann estimator need the "
                          "problem's mu_g and L_g; pass a0 and use "
                          "hessian_inverse='exact'")
        return False, None

    def check_parameters(self):
        super().check_parameters()
        self.check_positive_if_given("a0")
        check_positive("delta_factor", self.delta_factor)
        check_positive("eta_factor", self.eta_factor)
        check_choice("hessian_inverse", self.hessian_inverse,
                     HESSIAN_INVERSES)

    def check_with_problem(self, problem):
        L_g = self.lower_smoothness(problem)
        if self.a0 is None:
            a0 = check_positive("a0", sbfw_a0(problem.mu_g, L_g))
            # the tuned multiplier never takes delta_1 above 1/L_g
            self.a0_ = min(self.delta_factor * a0, neumann_step(L_g))
        else:
            self.a0_ = self.delta_factor * self.a0
        if self.hessian_inverse == "neumann":
            self.neumann_eta_ = check_positive("1/L_g", neumann_step(L_g))

    def schedule(self, k):
        """(rho_k, eta_k, delta_k) of iteration k >= 1."""
        return sbfw_schedule(k, a0=self.a0_, eta_factor=self.eta_factor)

    def surrogate(self, x, y, upper, lower, factor_batches, k):
        """h(x, y) on the given batches, the Neumann depth ``self.depth``."""
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
                    hvp, rhs, eta=self.neumann_eta_, n_terms=k,
                    depth=self.depth)
        return sampled_hypergradient(self.problem, x, y, samples, inverse)[1]

    def iterations(self):
        P, S = self.problem, self.batch(self.batch_size)
        d = Storm()
        x_prev, y_prev, x = self.x, self.y, self.x           # x_1 = x_0
        k = 0
        while True:
            k += 1
            rho, eta, delta = self.schedule(k)
            upper, lower = P.batch_upper(S), P.batch_lower(S)
            step_batch = lower if S is None else P.batch_lower(S)
            y = y_prev - delta * P.grad_g_y(x_prev, y_prev, batch=step_batch)
            self.depth = None
            factors = []
            if self.hessian_inverse == "neumann":
                self.depth = draw_positive_depth(k, P.rng)
                factors = [lower if S is None else P.batch_lower(S)
                           for _ in range(self.depth)]
            new = self.surrogate(x, y, upper, lower, factors, k)
            # rho_k = 1 (k <= 4) weighs the correction by zero: d_k = h_k
            old = None if rho >= 1.0 else self.surrogate(
                x_prev, y_prev, upper, lower, factors, k)
            s = P.X.lmo(d.step(new, old, rho))
            x_prev, y_prev, x = x, y, x + eta * (s - x)
            self.x, self.y = x, y
            yield
