"""The adaptive matrices and the A_t-weighted step of BiAdam and VR-BiAdam
(Huang, Li, Gao, Huang 2021, "BiAdam: Fast Adaptive Bilevel Optimization
Methods", arXiv 2106.11396, Algs. 1-2; the loop is ``solvers/biadam.py``).

* A_t for x: :class:`CoordinateAdam` (eq. (4)), or a global matrix that
  the paper's Assumption 7 also admits, :class:`GlobalAdaGradNorm` or
  :class:`IdentityMatrix` (``X_MATRICES``, by the solvers' ``adaptive``),
  fed one of ``ADAPTIVE_INPUTS`` (the solvers' ``adaptive_input``);
* B_t = (b_t + eps) I for y: :class:`NormScale` (eq. (5));
* :func:`adaptive_step`: the projected step of lines 5-6.

Each ``update`` returns A_t's diagonal (a tensor) or its scalar (a 0-d
tensor: no host sync in the timed loop). docs/solvers.md
discusses the square root of eq. (4) and the exact projections.
"""
import torch

# -- adaptive matrices, eqs. (4)-(5) --------------------------------------


class CoordinateAdam:
    """Eq. (4): w~_t = a w~_{t-1} + (1 - a) g_t^2 (element-wise), w~_0 = 0,
    A_t = diag(sqrt(w~_t) + rho), with g_t = grad_x f(x_t, y_t; xi_t), the
    partial gradient of f, as the paper writes it, or the fresh
    hypergradient estimate h_t (``ADAPTIVE_INPUTS``). No bias correction
    and no first moment: the momentum estimator w_t plays that role. The
    square root is the SUPER-ADAM form the paper follows (its Remarks 3-4
    bound ||A_t|| linearly in the gradient bound)."""

    diagonal = True
    # the solver's parameters this matrix never reads (refused if given)
    unread = ()

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
    Huang et al. 2021, §4.1, cite as an admissible global matrix."""

    diagonal = False
    unread = ("decay_x",)

    def __init__(self, decay, rho):
        self.rho, self.sum_of_squares = rho, 0.0

    def update(self, grad):
        self.sum_of_squares = self.sum_of_squares + torch.sum(grad * grad)
        return torch.sqrt(self.sum_of_squares) + self.rho


class IdentityMatrix:
    """A_t = rho I: no adaptivity (momentum SGD on x, the ablation)."""

    diagonal = False
    unread = ("decay_x", "adaptive_input")

    def __init__(self, decay, rho):
        self.rho = rho

    def update(self, grad):
        return self.rho


X_MATRICES = {"adam": CoordinateAdam, "adagrad_norm": GlobalAdaGradNorm,
              "identity": IdentityMatrix}

# what A_t is built from: "grad_x_f", eq. (4) as written (zero where f does
# not depend on x, e.g. hyper-cleaning: then A_t = rho I), or the fresh
# hypergradient estimate h_t of estimator (6), whose momentum average is w_t
# (Adam's two moments of one stochastic gradient, as in SUPER-ADAM)
ADAPTIVE_INPUTS = ("grad_x_f", "hypergradient")


class NormScale:
    """Eq. (5): b_t = b b_{t-1} + (1 - b) ||grad_y g(x_t, y_t; zeta_t)||,
    b_0 > 0, B_t = (b_t + eps) I: an exponential average of the gradient
    norm (not of its square). ``update`` returns b_t + eps."""

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
    projection onto Z, which the caller supplies only where it is the
    Euclidean one: for a scalar A, or for a diagonal A on a coordinate-wise
    separable Z (a box).
    """
    target = point - step * direction / scale
    if project is not None:
        target = project(target)
    return point + eta * (target - point)
