"""A Kronecker-factored preconditioner for the Hessian of multinomial
logistic regression, for the conjugate-gradient Newton systems of the exact
hyper-cleaning metrics at MNIST scale.

The lower-level Hessian in ``y = vec(W)`` (``W`` of shape K x D)::

    H = sum_i w_i (diag(p_i) - p_i p_i^T) kron a_i a_i^T + 2c I

is approximated by the Kronecker product of its two mean factors (as in
K-FAC, Martens and Grosse 2015)::

    P = B kron S + 2c I,   S = A^T diag(w) A  (D x D, depends on x only),
                           B = sum_i w_i (diag(p_i) - p_i p_i^T) / sum_i w_i

and ``P^-1 r`` is applied exactly through the eigendecompositions of B and
S: ``P^-1 r = U [(U^T R V) / (lambda sigma^T + 2c)] V^T``. ``S`` and its
eigendecomposition (n D^2 + D^3) are reused across the Newton steps at one
x; ``B`` (K x K) is recomputed at every y. P only preconditions: CG still
solves the true Hessian system. The eigendecompositions and the
application of P^-1 go through NumPy on the CPU, its BLAS single-threaded
(:func:`blas_threads`, :func:`array_library`). Why, and what was measured:
docs/problems.md, "The numerical kernels".
"""
import numpy as np
import torch
from threadpoolctl import ThreadpoolController

# scipy.linalg is imported where it is used: its import adds about
# 0.2 s to the start of every benchopt process

# threads of NumPy's and SciPy's BLAS inside the metrics' exact solves
# (module doc); torch's own threads are left alone
METRIC_BLAS_THREADS = 1
_BLAS_CONTROLLER = []


def blas_threads():
    """A context limiting NumPy's and SciPy's BLAS to METRIC_BLAS_THREADS
    threads (threadpoolctl; restored on exit)."""
    if not _BLAS_CONTROLLER:    # finding the libraries once (tens of ms)
        _BLAS_CONTROLLER.append(ThreadpoolController())
    return _BLAS_CONTROLLER[0].limit(limits=METRIC_BLAS_THREADS,
                                     user_api="blas")


def _identity(value):
    return value


def array_library(device):
    """``(xp, to, back)`` for array work on ``device``: NumPy with
    zero-copy views ``to`` (tensor -> array) and ``back`` on the CPU
    (module doc: why), torch itself elsewhere."""
    if torch.device(device).type == "cpu":
        return np, torch.Tensor.numpy, torch.from_numpy
    return torch, _identity, _identity


def symmetric_eigh(M):
    """(eigenvalues, eigenvectors) of the symmetric ``M`` (see module doc
    for why NumPy on the CPU), as tensors of ``M``'s dtype and device."""
    if M.device.type != "cpu":
        return torch.linalg.eigh(M)
    values, vectors = np.linalg.eigh(M.numpy())
    return torch.from_numpy(values), torch.from_numpy(vectors)


def weighted_gram(A_T, weights):
    """``A^T diag(weights) A`` from ``A^T`` (D x n) and ``weights >= 0``,
    arrays of :func:`array_library`. A NumPy float64 array gets its upper
    triangle only, as the symmetric rank-n update of ``diag(sqrt(w)) A``
    (BLAS syrk: half the products of a general product, measured 3.4 s
    against 4.9 s at Kwon et al. 2023's size on a loaded machine); sums of
    such results go to :func:`gram_eigh`, which reads that triangle."""
    if isinstance(A_T, np.ndarray) and A_T.dtype == np.float64:
        from scipy.linalg.blas import dsyrk  # on first use (module top)
        scaled = A_T * np.sqrt(weights)
        # scaled.T is an n x D Fortran-ordered view: syrk(a, trans=1)
        # = a^T a = scaled scaled^T, without a copy
        return dsyrk(1.0, scaled.T, trans=1)
    scaled = A_T * weights.sqrt()
    return scaled @ scaled.T


def gram_eigh(S):
    """(eigenvalues, eigenvectors) tensors of a :func:`weighted_gram`
    result (or a sum of them)."""
    if isinstance(S, np.ndarray):
        values, vectors = np.linalg.eigh(S, UPLO="U")
        return torch.from_numpy(values), torch.from_numpy(vectors)
    return symmetric_eigh(0.5 * (S + S.T))


def class_factor(probs, weights):
    """``B = sum_i w_i (diag(p_i) - p_i p_i^T) / sum_i w_i`` (K x K)."""
    weighted = probs * weights[:, None]
    B = torch.diag(weighted.sum(dim=0)) - weighted.T @ probs
    return 0.5 * (B + B.T) / weights.sum()


def kronecker_inverse(class_eig, data_eig, shift):
    """The function ``r -> (B kron S + shift I)^-1 r`` from the
    eigendecompositions ``(lambda, U)`` of B and ``(sigma, V)`` of S."""
    lam, U = class_eig
    sigma, V = data_eig
    # both factors are PSD: clamp rounding negatives so the denominator
    # stays >= shift
    denominator = (lam.clamp(min=0)[:, None] * sigma.clamp(min=0)[None, :]
                   + shift)
    K, D = lam.shape[0], sigma.shape[0]
    _, to, back = array_library(V.device)
    U, V, denominator = to(U), to(V), to(denominator)

    def apply(r):
        R = to(r).reshape(K, D)
        return back((U @ ((U.T @ R @ V) / denominator) @ V.T).reshape(-1))
    return apply
