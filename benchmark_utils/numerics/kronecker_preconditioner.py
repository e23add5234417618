"""A Kronecker-factored preconditioner for the Hessian of multinomial
logistic regression, for the conjugate-gradient Newton systems of the exact
hyper-cleaning metrics at MNIST scale.

The lower-level Hessian in ``y = vec(W)`` (``W`` of shape K x D, rows the
classes) is::

    H = sum_i w_i (diag(p_i) - p_i p_i^T) kron a_i a_i^T + 2c I

with ``w_i`` the sample weights (the reduction's scale included), ``p_i``
the softmax probabilities and ``a_i`` the features. It is approximated by
the Kronecker product of its two mean factors (as in K-FAC, Martens and
Grosse 2015)::

    P = B kron S + 2c I,   S = A^T diag(w) A  (D x D, depends on x only),
                           B = sum_i w_i (diag(p_i) - p_i p_i^T) / sum_i w_i

and ``P^-1 r`` is applied exactly through the eigendecompositions
``B = U diag(lambda) U^T`` and ``S = V diag(sigma) V^T``: with ``R`` the
K x D reshaping of ``r``, ``P^-1 r = U [(U^T R V) / (lambda sigma^T + 2c)]
V^T``, two K x D x D products per application (a Hessian-vector product
costs n K D). ``S`` and its eigendecomposition are the expensive part
(n D^2 + D^3) and are reused across the Newton steps at one x; ``B`` is
K x K and recomputed at every y.

Why this one (measured on MNIST-shaped instances, 7850 unknowns, 2 cores):
P captures the data covariance that makes the Hessian ill-conditioned
(condition ~1e6-1e7 at Kwon et al. 2023's size, sums and c = 0.01), so
preconditioned CG takes 5-25 iterations per Newton step where the Jacobi
(diagonal) preconditioner took thousands; the per-class D x D diagonal
blocks would cost K times more to form. P only preconditions: CG still
solves the true Hessian system to the requested residual, so the
certificate of the Newton iterates is unchanged.

The eigendecompositions go through NumPy on the CPU: PyTorch's (MKL)
``eigh`` took over 10 s on such a 785 x 785 data Gram matrix where NumPy's
takes well under a second. So does the application of P^-1 (and the
per-sample array work of the metrics' Hessian-vector products, see
:func:`array_library`): its products are small (K x D by D x D), and
PyTorch's intra-op threads make each small operation a parallel region
that, on a loaded 2-core machine, waits for a descheduled thread (median
120 ms per application against 1.4 ms through NumPy, minimum 1 ms both).
NumPy's and SciPy's BLAS run single-threaded there (:func:`blas_threads`,
METRIC_BLAS_THREADS): with their own two threads next to torch's OpenMP
pool, four threads share two cores, and a 10 x 785 by 785 x 785 product
took 40 ms instead of 0.6 ms; a whole warm evaluation at Kwon et al.
2023's size took 10.8 s instead of 4.6 s. The idle workers of NumPy's
BLAS also spin after each call and slow the next torch operations (the
solver's steps after a metric evaluation) by 30-100 ms. The large
products with A get their parallelism from row blocks on a thread pool
instead (:mod:`benchmark_utils.numerics.softmax_sum`), each block's BLAS
call single-threaded.
"""
import numpy as np
import torch
from scipy.linalg.blas import dsyrk
from threadpoolctl import ThreadpoolController


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
