from benchmark_utils.checks.parameters import check_int, check_positive
from benchmark_utils.solvers.estimators import Storm
from benchmark_utils.solvers.general import GeneralBilevelSolver
from benchmark_utils.solvers.hypergradients import draw_neumann_depth
from benchmark_utils.solvers.inner_loops import batch_smoothness_ratio
from benchmark_utils.solvers.sampled_hypergradients import (
    draw_samples, truncated_hypergradient)
from benchmark_utils.solvers.schedules import (double_momentum_schedule,
                                               neumann_step)


class Solver(GeneralBilevelSolver):
    """SUSTAIN: single-timescale double-momentum stochastic approximation.

    Khanduri, Zeng, Hong, Wai, Wang, Yang, "A Near-Optimal Algorithm for
    Stochastic Bilevel Optimization via Double-Momentum", NeurIPS 2021
    (arXiv 2102.07367), Algorithm 1, with the step sizes of its Theorem 1
    (non-convex upper level); a baseline of Huang et al. 2021 (BiAdam).
    This follows the paper's public description (no code was copied), with
    its names: K the truncation of the Hessian-inverse estimator, L_g the
    lower level's smoothness, w, c_beta, c_eta, c_tau the schedule's
    constants.

    Iteration t = 1, 2, ... (the paper's update of the estimators at
    t + 1 is done at the start of iteration t + 1, on that iteration's
    samples, so that each benchopt iteration draws its own):

    * samples: xi (upper), zeta^0, zeta^1..zeta^{K-1} and zeta (lower),
      and a truncation depth k ~ U{0, ..., K-1} drawn independently;
    * the hypergradient estimator (the randomized truncation the paper
      takes from Hong et al. 2020, Huang et al. 2021's eq. (6)):
      hatgrad f(x, y; xibar) = grad_x f(x, y; xi) - grad^2_xy g(x, y;
      zeta^0) [K / L_g prod_{i=1}^{k} (I - grad^2_yy g(x, y; zeta^i) / L_g)]
      grad_y f(x, y; xi)
      (:func:`benchmark_utils.solvers.sampled_hypergradients.truncated_hypergradient`
      with vartheta = 1/L_g);
    * t = 1: h_f^1 = hatgrad f(x_1, y_1; xibar_1), h_g^1 = grad_y g(x_1,
      y_1; zeta_1);
    * t > 1 (STORM, the same samples and the same depth at both points):
      h_g^t = grad_y g(x_t, y_t; zeta_t)
      + (1 - tau_t) (h_g^{t-1} - grad_y g(x_{t-1}, y_{t-1}; zeta_t)),
      h_f^t = hatgrad f(x_t, y_t; xibar_t)
      + (1 - eta_t) (h_f^{t-1} - hatgrad f(x_{t-1}, y_{t-1}; xibar_t));
    * x_{t+1} = x_t - s alpha_t h_f^t, y_{t+1} = y_t - beta_t h_g^t, with
      s = ``alpha_scale`` (1 in the paper; see below) and beta_t capped at
      1/L_g (see below);
    * Theorem 1's schedule: alpha_t = 1/(w + t)^{1/3}, beta_t =
      c_beta alpha_t, eta_{t+1} = c_eta alpha_t^2, tau_{t+1} = c_tau
      alpha_t^2
      (:func:`benchmark_utils.solvers.schedules.double_momentum_schedule`).

    Per iteration: one upper and K + 1 lower mini-batches, drawn and
    charged once; at t > 1 they are evaluated at two points: 4 gradient
    calls (grad_f, both partials of f on xi, and grad_y g on zeta, at
    each point) and 2 (k + 1) Hessian-vector products (k on the zeta^i,
    one cross product on zeta^0, at each point); t = 1 half of that.

    Choices where the paper is silent or that depart from it:

    * the depth k is shared by the two points of the STORM correction, as
      the mean-square Lipschitz bound of the estimator the analysis uses
      holds only on one sample set;
    * all K + 1 lower batches are drawn and charged even when k < K - 1
      leaves zeta^{k+1}..zeta^{K-1} unused (Huang et al. 2021 count
      K + 2 samples per iteration for this estimator);
    * defaults: Theorem 1's constants (w, c_beta, c_eta, c_tau from L_f,
      L_g, mu_g and the variance bounds) need constants no problem
      provides, and K of order (L_g/mu_g) log T; w = 4, c_beta = 0.5,
      c_eta = c_tau = 0.2, K = 30 and batch 16 are tuned on the quick
      quadratic; L_g None is the problem's declared L_g (a problem
      without it is skipped unless L_g is given). ``c_eta`` and ``c_tau``
      must keep the STORM weights in (0, 1]: c (w + 1)^{-2/3} <= 1;
    * the y step is beta_t = min(c_beta alpha_t, 1/L_g): 1/L_g is the
      step under which a gradient step on a strongly convex, L_g-smooth
      g contracts the distance to y*(x) (the usual condition behind a
      y-error recursion; Theorem 1's own c_beta needs constants no
      problem provides), and L_g bounds every batch's curvature. The
      tuned c_beta = 0.5 alone breaks it on a problem whose batches are
      much more curved than the quadratic's (matrix completion with one
      row per sample: 0.29 at t = 1 against a 16-row batch's curvature
      of about 8 sends y, then x, to the ball's boundary); on the quick
      quadratic (L_g = 5.25) the cap acts only for t <= 14;
    * ``alpha_scale`` multiplies the x step only (our addition, so that
      the x step follows the problem's scale like the other solvers'
      outer steps): None is 1 times the problem's declared
      ``outer_step_scale`` (1 on the quadratic: the paper's step), divided
      by :func:`~benchmark_utils.solvers.inner_loops.batch_smoothness_ratio`
      of ``batch_size`` (about 1 where samples are alike, as on the
      quadratic; 4.7 on the default matrix completion, whose rows differ):
      STORM keeps a sample's term for about 1/eta_t iterations and
      corrects it only when the sample is drawn again, so its stable step
      follows a batch's expected curvature, not the full sum's;
    * the reported iterate is the last (x_t, y_t), not the paper's
      uniformly drawn one;
    * a constrained X (the paper's X = R^d): x_{t+1} is projected onto X
      (an extension without guarantee); ``batch_size`` None uses full
      passes for every batch; on a problem with one sample per level
      every batch is that sample.
    """

    name = "SUSTAIN"
    parameters = {
        "K": [30],
        "L_g": [None],
        "w": [4.0],
        "c_beta": [0.5],
        "c_eta": [0.2],
        "c_tau": [0.2],
        "alpha_scale": [None],
        "batch_size": [16],
    }
    batch_size_may_be_none = True       # None: full passes

    outer_steps = {"alpha_scale": 1.0}
    defaults_from_problem = ("L_g",)
    problem_constants = ("L_g",)

    def check_parameters(self):
        super().check_parameters()
        check_int("K", self.K, 1)
        for name in ("w", "c_beta", "c_eta", "c_tau"):
            check_positive(name, getattr(self, name))
        largest = (self.w + 1.0) ** (2.0 / 3.0)     # 1/alpha_1^2
        for name in ("c_eta", "c_tau"):
            if getattr(self, name) > largest:
                # the STORM weight c alpha_1^2 would exceed 1
                raise ValueError(
                    f"{name} must be in (0, (w + 1)^(2/3)] = (0, "
                    f"{largest:.6g}] so that its STORM weight stays <= 1, "
                    f"got {getattr(self, name)!r}")

    def check_with_problem(self, problem):
        L_g = problem.L_g if self.L_g is None else self.L_g
        self.vartheta_ = neumann_step(L_g)     # the estimator's 1/L_g
        if self.alpha_scale is None:
            self.alpha_scale_ /= batch_smoothness_ratio(
                problem, self.batch(self.batch_size))

    def schedule(self, t):
        """(alpha_t, eta_{t+1}, tau_{t+1}) of Theorem 1."""
        return double_momentum_schedule(t, scale=1.0, offset=self.w,
                                        c_upper=self.c_eta,
                                        c_lower=self.c_tau)

    def estimates(self, x, y, samples, depth):
        """(hatgrad f, grad_y g) at (x, y) on ``samples`` with ``depth``."""
        P = self.problem
        _, hypergrad = truncated_hypergradient(
            P, x, y, samples, depth, vartheta=self.vartheta_, K=self.K)
        return hypergrad, P.grad_g_y(x, y, batch=samples.lower)

    def iterations(self):
        P, size = self.problem, self.batch(self.batch_size)
        h_f, h_g = Storm(), Storm()
        x, y, old_point = self.x, self.y, None
        self.depths = []            # the drawn truncation depths, for tests
        t = 1
        while True:
            samples = draw_samples(P, self.K, size)
            depth = draw_neumann_depth(self.K, P.rng)
            self.depths.append(depth)
            new_f, new_g = self.estimates(x, y, samples, depth)
            if old_point is None:
                old_f = old_g = eta = tau = None
            else:
                old_f, old_g = self.estimates(*old_point, samples, depth)
                _, eta, tau = self.schedule(t - 1)
            h_f.step(new_f, old_f, eta)
            h_g.step(new_g, old_g, tau)
            alpha = self.schedule(t)[0]
            old_point = (x, y)
            x = self.to_X(x - self.alpha_scale_ * alpha * h_f.value)
            y = y - min(self.c_beta * alpha, self.vartheta_) * h_g.value
            self.x, self.y = x, y
            yield
            t += 1
