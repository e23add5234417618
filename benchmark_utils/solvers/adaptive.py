"""What BiAdam and VR-BiAdam share (Huang, Li, Gao, Huang 2021, "BiAdam:
Fast Adaptive Bilevel Optimization Methods", arXiv 2106.11396, Algs. 1-2).

* the adaptive matrices: A_t for x (:class:`CoordinateAdam`, eq. (4), or
  the global :class:`GlobalAdaGradNorm` / :class:`IdentityMatrix` that the
  paper's Assumption 7 also admits) and the scalar B_t = (b_t + eps) I for
  y (:class:`NormScale`, eq. (5));
* the K + 2 mini-batches of one iteration and the hypergradient
  estimator (6) on them with a given truncation depth (``draw_samples``
  and ``truncated_hypergradient`` of
  :mod:`benchmark_utils.solvers.sampled_hypergradients`, which SUSTAIN
  shares);
* the A_t-weighted projected step of lines 5-6 (:func:`adaptive_step`);
* :class:`AdaptiveBilevelSolver`, the loop of both algorithms; the two
  solvers differ only in how the new stochastic estimates enter the
  running ones (:meth:`AdaptiveBilevelSolver.combine`).
"""
import torch

from benchmark_utils.checks.parameters import (check_choice, check_in_interval,
                                              check_int, check_positive)
from benchmark_utils.sets import Box
from benchmark_utils.solvers.general import GeneralBilevelSolver
from benchmark_utils.solvers.hypergradients import draw_neumann_depth
from benchmark_utils.solvers.sampled_hypergradients import (
    draw_samples, truncated_hypergradient)
from benchmark_utils.solvers.schedules import (adaptive_bilevel_min_offset,
                                               adaptive_bilevel_schedule,
                                               checked_offset,
                                               neumann_step)


# -- adaptive matrices, eqs. (4)-(5) --------------------------------------

class CoordinateAdam:
    """Eq. (4): w~_t = a w~_{t-1} + (1 - a) g_t^2 (element-wise), w~_0 = 0,
    A_t = diag(sqrt(w~_t) + rho), with g_t = grad_x f(x_t, y_t; xi_t), the
    partial gradient of f (not the hypergradient). No bias correction and
    no first moment: the momentum estimator w_t plays that role. The
    square root is the SUPER-ADAM form the paper follows; its Remarks 3-4
    bound ||A_t|| linearly in the gradient bound, which needs it.
    ``update`` returns the diagonal of A_t (a tensor)."""

    diagonal = True

    def __init__(self, decay, rho):
        self.decay, self.rho, self.second_moment = decay, rho, None

    def update(self, grad):
        square = grad * grad
        if self.second_moment is None:          # w~_0 = 0
            self.second_moment = (1.0 - self.decay) * square
        else:
            self.second_moment = (self.decay * self.second_moment
                                  + (1.0 - self.decay) * square)
        return torch.sqrt(self.second_moment) + self.rho


class GlobalAdaGradNorm:
    """A global A_t = (a_t + rho) I with the AdaGrad-Norm rate
    a_t^2 = a_{t-1}^2 + ||g_t||^2, a_0 = 0 (Ward, Wu, Bottou 2019), which
    Huang et al. 2021, §4.1, cite as an admissible global matrix.
    ``update`` returns the scalar a_t + rho (a 0-d tensor: no host sync in
    the timed loop)."""

    diagonal = False

    def __init__(self, decay, rho):
        self.rho, self.sum_of_squares = rho, 0.0

    def update(self, grad):
        self.sum_of_squares = self.sum_of_squares + torch.sum(grad * grad)
        return torch.sqrt(self.sum_of_squares) + self.rho


class IdentityMatrix:
    """A_t = rho I: no adaptivity (momentum SGD on x, the ablation)."""

    diagonal = False

    def __init__(self, decay, rho):
        self.rho = rho

    def update(self, grad):
        return self.rho


X_MATRICES = {"adam": CoordinateAdam, "adagrad_norm": GlobalAdaGradNorm,
              "identity": IdentityMatrix}


class NormScale:
    """Eq. (5): b_t = b b_{t-1} + (1 - b) ||grad_y g(x_t, y_t; zeta_t)||,
    b_0 > 0, B_t = (b_t + eps) I: an exponential average of the gradient
    norm (not of its square). ``update`` returns b_t + eps (a 0-d tensor:
    no host sync in the timed loop)."""

    def __init__(self, decay, b0, epsilon):
        self.decay, self.b, self.epsilon = decay, b0, epsilon

    def update(self, grad):
        norm = torch.linalg.vector_norm(grad)
        self.b = self.decay * self.b + (1.0 - self.decay) * norm
        return self.b + self.epsilon


# -- the step of lines 5-6 -------------------------------------------------

def adaptive_step(point, direction, scale, *, step, eta, project=None):
    """point + eta (argmin_{z in Z} <d, z> + ||z - point||^2_A / (2 step)
    - point).

    ``scale`` is A's diagonal (a tensor) or its scalar; ``project`` is None
    on the whole space (z~ = point - step A^{-1} d) or the A-weighted
    projection onto Z, which the caller supplies only where it is exact:
    the Euclidean projection for a scalar A, the coordinate-wise clamp of a
    box for a diagonal A.
    """
    target = point - step * direction / scale
    if project is not None:
        target = project(target)
    return point + eta * (target - point)


# -- the loop of Algorithms 1 and 2 ---------------------------------------

# The parameters of both solvers and BiAdam's defaults (tuned on the quick
# quadratic; the solvers' docstrings say why): K, vartheta (None: 1/L_g),
# gamma and lam (the x and y steps), the matrices (``adaptive``, decay_x,
# decay_y, rho, epsilon, b0) and the schedule (eta_scale = k, m, c1, c2).
DEFAULT_PARAMETERS = {
    "K": [30],
    "vartheta": [None],
    "gamma": [None],
    "lam": [1.0],
    "adaptive": ["adam"],
    "decay_x": [0.9],
    "decay_y": [0.9],
    "rho": [1.0],
    "epsilon": [1.0],
    "b0": [1.0],
    "eta_scale": [1.0],
    "m": [None],
    "c1": [1.0],
    "c2": [1.0],
    "batch_size": [16],
}

class AdaptiveBilevelSolver(GeneralBilevelSolver):
    """Algorithm 1 (BiAdam) or 2 (VR-BiAdam), iteration t = 1, 2, ...:

    * draw the K + 2 batches and the depth k ~ U{0..K-1}; the new estimates
      grad_y g(x_t, y_t; zeta_t) and estimator (6) at (x_t, y_t) give v_t
      and w_t through :meth:`combine` (t = 1: the plain estimates; t > 1:
      the paper's lines 7-9 of iteration t - 1, moved here so that each
      benchopt iteration draws its own K + 2 batches);
    * A_t from grad_x f(x_t, y_t; xi_t) and B_t from grad_y g(x_t, y_t;
      zeta_t) (line 4);
    * x_{t+1}, y_{t+1} by the steps of lines 5-6, both from (x_t, y_t).
    """

    variance_reduced = False    # the schedule of Theorem 1 or Theorem 2
    batch_size_may_be_none = True       # None: full passes
    defaults_from_problem = ("vartheta",)
    outer_steps = {"gamma": 0.3}
    problem_constants = ("L_g",)

    def skip_problem(self, problem):
        X = problem.X
        if (X_MATRICES[self.adaptive].diagonal and not X.unbounded
                and not isinstance(getattr(X, "_set", X), Box)):
            return True, ("the A_t-weighted projection of a coordinate-wise "
                          "A_t is exact only on a box; use adaptive="
                          "'adagrad_norm' or 'identity' on this X")
        return super().skip_problem(problem)

    def check_parameters(self):
        super().check_parameters()
        check_int("K", self.K, 1)
        for name in ("lam", "rho", "epsilon", "b0", "eta_scale",
                     "c1", "c2"):
            check_positive(name, getattr(self, name))
        check_choice("adaptive", self.adaptive, tuple(X_MATRICES))
        check_in_interval("decay_x", self.decay_x, 0, 1, closed=(False, False))
        check_in_interval("decay_y", self.decay_y, 0, 1, closed=(False, False))
        smallest = adaptive_bilevel_min_offset(
            self.eta_scale, self.c1, self.c2, self.variance_reduced)
        # below it eta_t, alpha_t or beta_t exceeds 1 (Theorems 1-2)
        self.m_ = checked_offset(
            self.m, smallest, "the theorem's max{k^p, (c1 k)^p, (c2 k)^p} "
            "with these eta_scale, c1 and c2")

    def check_with_problem(self, problem):
        self.vartheta_ = self.vartheta
        if self.vartheta is None:
            self.vartheta_ = check_positive("vartheta",
                                            neumann_step(problem.L_g))

    def schedule(self, t):
        """(eta_t, alpha_{t+1}, beta_{t+1}) of Theorem 1 or 2."""
        return adaptive_bilevel_schedule(
            t, k=self.eta_scale, m=self.m_, c1=self.c1, c2=self.c2,
            variance_reduced=self.variance_reduced)

    def combine(self, estimates, new, old_point, samples, depth, weights):
        """The running (v_t, w_t) from the previous ones ``estimates``
        (None at t = 1), the new ``(grad_y g, hypergradient)`` at (x_t, y_t),
        the previous point (x_{t-1}, y_{t-1}), this iteration's samples and
        depth, and ``weights`` = (alpha_t, beta_t)."""
        raise NotImplementedError

    def estimates_at(self, x, y, samples, depth):
        """(grad_x f, grad_y g, estimator (6)) at (x, y) on ``samples``."""
        P = self.problem
        grad_x_f, hypergrad = truncated_hypergradient(
            P, x, y, samples, depth, vartheta=self.vartheta_, K=self.K)
        return grad_x_f, P.grad_g_y(x, y, batch=samples.lower), hypergrad

    def iterations(self):
        P, size = self.problem, self.batch(self.batch_size)
        x_matrix = X_MATRICES[self.adaptive](self.decay_x, self.rho)
        y_scale = NormScale(self.decay_y, self.b0, self.epsilon)
        project = None if P.X.unbounded else P.X.project
        x, y, old_point, estimates = self.x, self.y, None, None
        self.depths = []            # the drawn truncation depths, for tests
        t = 1
        while True:
            samples = draw_samples(P, self.K, size)
            depth = draw_neumann_depth(self.K, P.rng)
            self.depths.append(depth)
            grad_x_f, grad_y_g, hypergrad = self.estimates_at(x, y, samples,
                                                              depth)
            weights = None if t == 1 else self.schedule(t - 1)[1:]
            estimates = self.combine(estimates, (grad_y_g, hypergrad),
                                     old_point, samples, depth, weights)
            v, w = estimates
            a_t, b_t = x_matrix.update(grad_x_f), y_scale.update(grad_y_g)
            eta = self.schedule(t)[0]
            old_point = (x, y)
            x = adaptive_step(x, w, a_t, step=self.gamma_, eta=eta,
                              project=project)
            y = adaptive_step(y, v, b_t, step=self.lam, eta=eta)
            self.x, self.y = x, y
            yield
            t += 1
