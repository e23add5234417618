from benchmark_utils.checks.parameters import check_batch_size, check_int
from benchmark_utils.solvers.estimators import Spider
from benchmark_utils.solvers.general import GeneralBilevelSolver
from benchmark_utils.solvers.sampled_hypergradients import (
    EstimatorSamples, neumann_hypergradient)
from benchmark_utils.solvers.schedules import curvature_steps


class Solver(GeneralBilevelSolver):
    """VRBO: variance-reduced bilevel optimizer (SPIDER / SARAH estimators).

    Yang, Ji, Liang, "Provably Faster Algorithms for Bilevel Optimization",
    NeurIPS 2021 (arXiv 2106.04692), Algorithm 2; a baseline of Huang et
    al. 2021 (BiAdam), who ran it with a large batch of the whole training
    set and period q = 3. Reconstructed from the paper's public description
    (no code was copied), with its names: x step alpha, y step beta,
    Neumann step eta and Q Hessian factors, period q, inner loop m, batch
    sizes S_1 (``large_batch_size``) and S_2 (``batch_size``).

    The hypergradient estimate on a sample set S = (D_F, D_G, B_1..B_Q)
    (the paper's eq. for bar-grad Phi, stocBiO's Neumann form):

        h(x, y; S) = grad_x F(x, y; D_F) - grad^2_xy G(x, y; D_G) v_Q,
        v_Q = eta sum_{q=-1}^{Q-1} prod_{j=Q-q}^{Q} (I - eta H_j)
              grad_y F(x, y; D_F),   H_j = grad^2_yy G(x, y; B_j)

    (:func:`~benchmark_utils.solvers.hypergradients.neumann_series` with
    Q + 1 terms, one B_j per factor).

    Outer iteration k (lines of Algorithm 2):

    * if k mod q = 0 (lines 3-5): on a fresh large sample set S_1,
      u_k = grad_y G(x_k, y_k; S_1), v_k = h(x_k, y_k; S_1) (SPIDER
      restart, :class:`~benchmark_utils.solvers.estimators.Spider`);
      otherwise (line 7) u_k, v_k are the last inner-loop estimates, which
      were taken at (x_k, y_k);
    * x_{k+1} = x_k - alpha v_k (line 9: x moves once, before the loop);
    * (x_{k,0}, y_{k,0}) = (x_k, y_k), x_{k,t} = x_{k+1} for t >= 1,
      y_{k,1} = y_k - beta u_k;
    * for t = 1..m+1, on a fresh small sample set S_2 used at both points:
      u_{k,t} = u_{k,t-1} + grad_y G(x_{k,t}, y_{k,t}; S_2)
      - grad_y G(x_{k,t-1}, y_{k,t-1}; S_2),
      v_{k,t} = v_{k,t-1} + h(x_{k,t}, y_{k,t}; S_2)
      - h(x_{k,t-1}, y_{k,t-1}; S_2),
      y_{k,t+1} = y_{k,t} - beta u_{k,t};
      the first difference (t = 1) thus spans the x step, the others only
      y steps;
    * y_{k+1} = y_{k,m+1}; the estimates u_{k,m+1}, v_{k,m+1} sit at
      (x_{k+1}, y_{k+1}) and carry over to the next outer iteration.

    Per outer iteration: m + 1 small sample sets, each one upper batch
    (D_F) and Q + 1 lower batches (D_G, B_1..B_Q) of S_2 samples, charged
    once and evaluated at two points (4 gradient calls, 2 (Q + 1)
    Hessian-vector products); every q-th iteration one large set more
    (the same structure with S_1 samples, one point).

    Defaults: ``beta`` None is 2/(L_g + mu_g) and ``eta`` None is 1/L_g
    (contracting steps on g and on the Neumann series, from the problem's
    declared constants; a problem without them is skipped unless both are
    given). The theory's alpha and beta (Theorem 2) need L_Phi-type
    constants no problem provides; ``alpha``, ``m``, ``Q`` and
    ``batch_size`` are tuned on the quick quadratic (Q = 20 leaves a
    Neumann bias of about a thirtieth of the starting hypergradient norm
    there, Q = 10 a ninth) and the coreset toy (where alpha = 0.3 makes x
    cycle between two vertices of the simplex); ``q`` = 3 and
    ``large_batch_size`` None (a full pass) are Huang et al.'s settings.

    Choices where the paper is silent or that depart from it:

    * the lower batch of the u estimator is D_G (one lower batch serves
      grad_y G and grad^2_xy G, as the paper draws one set S per update);
    * the step y_{k,m+2} of the last loop pass is not computed: the
      algorithm discards it (y_{k+1} = y_{k,m+1});
    * ``batch_size`` None uses full passes for S_2 (every correction is
      then exact); on a problem with one sample per level every batch is
      that sample;
    * the reported y is y_{k+1};
    * a constrained X (the paper's X = R^d): x_{k+1} is projected onto X
      (an extension without guarantee); unconstrained problems call no
      projection.

    Outer step: ``alpha`` None (the default) is 0.2 times the
    problem's declared ``outer_step_scale`` (1 on the quadratic, where
    0.2 was tuned; see ``GeneralBilevelSolver.outer_steps``); a
    given ``alpha`` is used as is.
    """

    name = "VRBO"
    parameters = {
        "alpha": [None],
        "beta": [None],
        "eta": [None],
        "Q": [20],
        "q": [3],
        "m": [3],
        "batch_size": [16],
        "large_batch_size": [None],
    }
    batch_size_may_be_none = True       # None: full passes for S_2

    defaults_from_problem = ("beta", "eta")
    outer_steps = {"alpha": 0.2}

    def check_parameters(self):
        super().check_parameters()
        check_int("Q", self.Q, 0)
        check_int("q", self.q, 1)
        check_int("m", self.m, 1)
        if self.large_batch_size is not None:   # its upper bound: check_with_problem
            check_int("large_batch_size", self.large_batch_size, 1)

    def check_with_problem(self, problem):
        self.beta_, self.eta_ = curvature_steps(
            problem.mu_g, problem.L_g, self.beta, self.eta)
        if (self.large_batch_size is not None
                and not self.single_sample(problem)):
            check_batch_size("large_batch_size", self.large_batch_size,
                             min(problem.n_upper, problem.n_lower))

    def draw_samples(self, size):
        """D_F (upper), D_G (lower: grad_y G and the cross product) and
        B_1..B_Q of ``size`` samples (None: full passes)."""
        P = self.problem
        upper, lower = P.batch_upper(size), P.batch_lower(size)
        return EstimatorSamples(
            xi=upper, cross=lower,
            hessian=tuple(P.batch_lower(size) for _ in range(self.Q)),
            lower=lower)

    def estimates(self, x, y, samples):
        """(grad_y G(x, y; D_G), h(x, y; S)) on the drawn set S, the
        Hessian factors B_j in a fixed order so both points see the same."""
        _, hypergrad = neumann_hypergradient(self.problem, x, y, samples,
                                             eta=self.eta_, Q=self.Q)
        return self.problem.grad_g_y(x, y, batch=samples.lower), hypergrad

    def iterations(self):
        S1, S2 = self.batch(self.large_batch_size), self.batch(self.batch_size)
        alpha, beta = self.alpha_, self.beta_
        u, v = Spider(), Spider()
        x, y = self.x, self.y
        k = 0
        while True:
            if k % self.q == 0:                                 # lines 3-5
                grad_y_g, hypergrad = self.estimates(
                    x, y, self.draw_samples(S1))
                u.refresh(grad_y_g)
                v.refresh(hypergrad)
            x_prev, y_prev = x, y
            x = self.to_X(x - alpha * v.value)                  # line 9
            y = y - beta * u.value                              # y_{k,1}
            for t in range(1, self.m + 2):
                samples = self.draw_samples(S2)
                new = self.estimates(x, y, samples)
                old = self.estimates(x_prev, y_prev, samples)
                u.update(new[0], old[0])
                v.update(new[1], old[1])
                if t <= self.m:         # y_{k,m+2} is discarded: not computed
                    x_prev, y_prev = x, y
                    y = y - beta * u.value
            self.x, self.y = x, y
            k += 1
            yield
