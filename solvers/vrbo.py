from benchmark_utils.checks.parameters import check_batch_size, check_int
from benchmark_utils.solvers.estimators import Spider
from benchmark_utils.solvers.general import (
    GeneralBilevelSolver,
    tuned_outer_step,
)
from benchmark_utils.solvers.sampled_hypergradients import (
    EstimatorSamples,
    neumann_hypergradient,
)
from benchmark_utils.solvers.schedules import curvature_rules
from benchmark_utils.solvers.steps import given_size


class Solver(GeneralBilevelSolver):
    """VRBO: variance-reduced bilevel optimizer (SPIDER estimators).

    Yang, Ji, Liang, "Provably Faster Algorithms for Bilevel Optimization",
    NeurIPS 2021, Algorithm 2 (a baseline of Huang et al. 2021). On a
    sample set S: u = grad_y G(x, y; D_G) and h(x, y; S), stocBiO's Neumann
    hypergradient with Q Hessian factors B_j and step eta (Q + 1 =
    ``neumann_terms`` terms).
    Outer iteration k:

    * if k mod q = 0 (lines 3-5): u_k, v_k = u, h on a fresh large set S_1;
    * x_{k+1} = x_k - alpha v_k (line 9), y_{k,1} = y_k - beta u_k;
    * t = 1..m+1: SPIDER corrections of u and v on a fresh set S_2 taken at
      (x_{k,t}, y_{k,t}) and at the previous point, then
      y_{k,t+1} = y_{k,t} - beta u_{k,t}; y_{k+1} = y_{k,m+1}.

    ``outer_step`` = alpha, ``inner_step`` = beta, ``linear_system_step``
    = eta, ``period`` = q, ``inner_loop_length`` = m, S_1 =
    ``large_batch_size`` (None: a full pass), S_2 = ``batch_size`` (see
    GeneralBilevelSolver). Departures: one
    lower batch D_G serves grad_y G and grad^2_xy G; the discarded
    y_{k,m+2} is not computed.

    The outer step, Q, m and the batch size were tuned on the quick
    quadratic; the period and a full-pass S_1 are Huang et al.'s settings
    (docs/solvers.md).
    """

    name = "VRBO"
    parameters = {}
    size_rules = (given_size("neumann_terms", 21),
                  given_size("period", 3),
                  given_size("inner_loop_length", 3),
                  given_size("batch_size", 16),
                  given_size("large_batch_size", None))
    batch_size_may_be_none = True       # None: full passes for S_2

    step_rules = (tuned_outer_step(0.2, "alpha"),
                  *curvature_rules("beta", "eta"))

    def check_parameters(self):
        super().check_parameters()
        check_int("neumann_terms", self.neumann_terms, 1)
        check_int("period", self.period, 1)
        check_int("inner_loop_length", self.inner_loop_length, 1)
        if self.large_batch_size is not None:   # bound: check_sizes
            check_int("large_batch_size", self.large_batch_size, 1)

    def check_sizes(self, sizes, problem):
        """``large_batch_size`` (None: a full pass, no size to resolve)
        fits both levels of ``problem`` (or of its sample counts)."""
        super().check_sizes(sizes, problem)
        if (self.large_batch_size is not None
                and not self.single_sample(problem)):
            check_batch_size("large_batch_size", self.large_batch_size,
                             min(problem.n_upper, problem.n_lower))

    def draw_samples(self, size):
        """D_F (upper), D_G (lower: grad_y G and the cross product) and
        B_1..B_Q (Q = neumann_terms - 1) of ``size`` samples (None: full
        passes)."""
        P = self.problem
        upper, lower = P.batch_upper(size), P.batch_lower(size)
        return EstimatorSamples(
            xi=upper, cross=lower,
            hessian=tuple(P.batch_lower(size)
                          for _ in range(self.sizes.neumann_terms - 1)),
            lower=lower)

    def estimates(self, x, y, samples):
        """(grad_y G(x, y; D_G), h(x, y; S)) on the drawn set S, the
        Hessian factors B_j in a fixed order so both points see the same."""
        _, hypergrad = neumann_hypergradient(
            self.problem, x, y, samples,
            eta=self.steps.linear_system_step,
            n_terms=self.sizes.neumann_terms)
        return self.problem.grad_g_y(x, y, batch=samples.lower), hypergrad

    def iterations(self):
        S1 = self.batch(self.sizes.large_batch_size)
        S2 = self.batch(self.sizes.batch_size)
        alpha, beta = self.steps.outer_step, self.steps.inner_step
        u, v = Spider(), Spider()
        x, y = self.x, self.y
        k = 0
        while True:
            if k % self.sizes.period == 0:                      # lines 3-5
                grad_y_g, hypergrad = self.estimates(
                    x, y, self.draw_samples(S1))
                u.refresh(grad_y_g)
                v.refresh(hypergrad)
            x_prev, y_prev = x, y
            x = self.to_X(x - alpha * v.value)                  # line 9
            y = y - beta * u.value                              # y_{k,1}
            m = self.sizes.inner_loop_length
            for t in range(1, m + 2):
                samples = self.draw_samples(S2)
                new = self.estimates(x, y, samples)
                old = self.estimates(x_prev, y_prev, samples)
                u.update(new[0], old[0])
                v.update(new[1], old[1])
                if t <= m:         # y_{k,m+2} is discarded: not computed
                    x_prev, y_prev = x, y
                    y = y - beta * u.value
            self.x, self.y = x, y
            k += 1
            yield
