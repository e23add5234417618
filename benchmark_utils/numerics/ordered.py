"""Linear algebra and elementary functions that round the same on every CPU.

Why: numpy's products (``@``, ``dot``, ``einsum`` when it calls BLAS, the
norms without ``axis``) and factorizations (``np.linalg``,
``scipy.linalg``) run BLAS / LAPACK kernels chosen per CPU (AVX-512, AVX2,
...) and per thread count, which add in different orders and may fuse
multiply-adds, so their results differ in the last bits between machines;
numpy's ``exp``, ``log``, ``log10``, ``power`` (hence ``logspace``,
``geomspace``) and ``tanh`` dispatch per CPU too, and their AVX-512 (or
baseline) versions round differently from the AVX2 ones. The generators
whose instances must be bit-identical on any x86-64 CPU
(tests/test_instance_digests.py) use these functions instead.

What they are built from: elementwise ``+ - * /`` and ``sqrt`` (correctly
rounded, one operation per element whatever the SIMD width; never fused),
comparisons, ``frexp`` / ``ldexp`` / ``rint`` (exact), and numpy's own sum
over one axis (``np.add.reduce``), whose order is fixed by numpy's code, not
by the CPU: along a non-last axis it adds the slices one after the other,
along the last axis it sums pairwise in blocks of 8. The orders, function
by function:

* :func:`matmul` (2-D): ``sum_k a[i, k] * b[k, j]`` reduced over k, a
  non-last axis, so k = 0, 1, ... in turn; :func:`matvec`: ``sum_k a[i, k]
  * x[k]`` over the last axis (pairwise).
* :func:`householder`, :func:`qr`: LAPACK's reflectors (``dlarfg``'s sign
  convention, so ``qr`` gives LAPACK's Q, column signs included), each
  reflector's dot products summed over the rows (a non-last axis).
* :func:`cholesky`, :func:`cholesky_solve`: column by column, each entry's
  dot product over the last axis (pairwise).
* :func:`svd`: one-sided Jacobi (Hestenes) on the columns, cyclic sweeps in
  round-robin order (n/2 disjoint pairs per step, all rotated at once) until
  no pair is more than ``rows * eps`` from orthogonal; singular values in
  decreasing order, each pair's sign as the sweeps leave it (callers fix
  their own convention).
* :func:`exp`, :func:`expm1`, :func:`log`, :func:`tanh`: reduction by
  ln 2 (fdlibm's split constant) and fixed Taylor / atanh series by Horner,
  within 1 to 3 ulp of numpy's (tests/test_ordered_numerics.py);
  elementwise work in cache-sized blocks (no bit changes); :func:`logspace`,
  :func:`geomspace` on them, ``geomspace`` with numpy's exact end points.
"""
import numpy as np

# ln 2 split as in fdlibm: k * LN2_HI is exact for |k| < 2^20
LN2_HI = 6.93147180369123816490e-01
LN2_LO = 1.90821492927058770002e-10
LN10 = 2.302585092994045684018
# elements of one block of matmul's temporary and of the elementwise
# functions' work, small enough to stay in cache (blocks change no bit)
MATMUL_BLOCK = 1 << 17
ELEMENTWISE_BLOCK = 1 << 16
EPS = np.finfo(np.float64).eps


def matmul(a, b):
    """``a @ b`` for 2-D float arrays, reduced over k in order (module
    doc); blocks of rows of ``a`` bound the (rows, k, n) temporary. A
    single column is computed as the first of two (numpy would sum a
    lone column pairwise)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if b.shape[1] == 1:
        return matmul(a, np.concatenate([b, np.zeros_like(b)], axis=1))[:, :1]
    m, k = a.shape
    n = b.shape[1]
    out = np.empty((m, n))
    rows = max(1, MATMUL_BLOCK // max(1, k * n))
    for i in range(0, m, rows):
        np.add.reduce(a[i:i + rows, :, None] * b[None], axis=1,
                      out=out[i:i + rows])
    return out


def matvec(a, x):
    """``a @ x`` for a 2-D ``a`` and a vector, each row summed over the last
    axis (module doc)."""
    return np.add.reduce(np.asarray(a, dtype=np.float64) * x, axis=-1)


# -- Householder QR -------------------------------------------------------

def householder(x):
    """``(v, tau, beta)`` of LAPACK's ``dlarfg`` for the vector x: ``(I -
    tau v v^T) x = beta e_1``, ``v[0] = 1``, ``beta = -sign(x_0) ||x||``
    (tau = 0, beta = x_0 when x[1:] is zero)."""
    x = np.asarray(x, dtype=np.float64)
    alpha = float(x[0])
    v = np.zeros_like(x)
    v[0] = 1.0
    xnorm2 = float(np.add.reduce(x[1:] * x[1:]))
    if xnorm2 == 0.0:
        return v, 0.0, alpha
    beta = -np.copysign(np.sqrt(alpha * alpha + xnorm2), alpha)
    v[1:] = x[1:] / (alpha - beta)
    return v, (beta - alpha) / beta, beta


def reflect(v, tau, M):
    """``(I - tau v v^T) M`` for a matrix M (rows as v)."""
    w = np.add.reduce(v[:, None] * M, axis=0)
    return M - tau * (v[:, None] * w[None, :])


def qr(a):
    """Complete QR of a 2-D array: Q (m, m) orthogonal and R (m, n) upper
    triangular, by LAPACK's reflectors (``dgeqrf`` / ``dorgqr``: Q's column
    signs are numpy's and scipy's)."""
    R = np.array(a, dtype=np.float64)
    m, n = R.shape
    reflectors = []
    for i in range(min(m, n)):
        v, tau, beta = householder(R[i:, i])
        R[i:, i + 1:] = reflect(v, tau, R[i:, i + 1:])
        R[i, i], R[i + 1:, i] = beta, 0.0
        reflectors.append((i, v, tau))
    return reflector_product(reflectors, m), R


def reflector_product(reflectors, m):
    """``H_0 H_1 ...`` (m, m) of reflectors ``(i, v, tau)`` acting on rows
    i:, applied to the identity from the last (as ``dorgqr``)."""
    Q = np.eye(m)
    for i, v, tau in reversed(reflectors):
        Q[i:, i:] = reflect(v, tau, Q[i:, i:])
    return Q


# -- Cholesky -------------------------------------------------------------

def cholesky(a):
    """Lower Cholesky factor L of a symmetric positive definite ``a``
    (``a = L L^T``), column by column (module doc)."""
    a = np.asarray(a, dtype=np.float64)
    n = a.shape[0]
    L = np.zeros((n, n))
    for j in range(n):
        pivot = a[j, j] - np.add.reduce(L[j, :j] * L[j, :j])
        if not pivot > 0:
            raise np.linalg.LinAlgError("matrix is not positive definite")
        L[j, j] = np.sqrt(pivot)
        L[j + 1:, j] = (a[j + 1:, j] - np.add.reduce(
            L[j + 1:, :j] * L[j, :j], axis=1)) / L[j, j]
    return L


def cholesky_solve(L, b):
    """``(L L^T)^{-1} b`` for a vector or matrix b, by forward then
    backward substitution, each entry's dot product over the last axis."""
    b = np.asarray(b, dtype=np.float64)
    y = b.reshape(b.shape[0], -1).T.copy()     # right-hand sides as rows
    n = L.shape[0]
    for i in range(n):
        y[:, i] = (y[:, i] - np.add.reduce(L[i, :i] * y[:, :i], axis=1)) \
            / L[i, i]
    for i in reversed(range(n)):
        y[:, i] = (y[:, i] - np.add.reduce(L[i + 1:, i] * y[:, i + 1:],
                                           axis=1)) / L[i, i]
    return y.T.reshape(b.shape)


# -- SVD --------------------------------------------------------------------

def _round_robin(n):
    """The n - 1 (n even) steps of a round-robin tournament of 0..n-1:
    each a pair of index arrays (p, q), every pair of columns once."""
    players = list(range(n + n % 2))
    steps = []
    for _ in range(len(players) - 1):
        half = len(players) // 2
        pairs = [(players[i], players[-1 - i]) for i in range(half)]
        pairs = [(min(p, q), max(p, q)) for p, q in pairs if max(p, q) < n]
        if pairs:
            steps.append((np.array([p for p, _ in pairs]),
                          np.array([q for _, q in pairs])))
        players = [players[0], players[-1]] + players[1:-1]
    return steps


def svd(a, max_sweeps=100):
    """Thin SVD ``U, s, Vt`` of a 2-D array (``a = U diag(s) Vt``, s
    decreasing) by one-sided Jacobi (module doc); for m < n, of ``a.T``
    transposed back."""
    a = np.asarray(a, dtype=np.float64)
    if a.shape[0] < a.shape[1]:
        V, s, Ut = svd(a.T, max_sweeps)
        return Ut.T, s, V.T
    m, n = a.shape
    W, V = a.T.copy(), np.eye(n)       # columns of a as rows of W
    tol = m * EPS
    for _ in range(max_sweeps):
        rotated = False
        for p, q in _round_robin(n):
            wp, wq = W[p], W[q]
            alpha = np.add.reduce(wp * wp, axis=1)
            beta = np.add.reduce(wq * wq, axis=1)
            gamma = np.add.reduce(wp * wq, axis=1)
            rotate = np.abs(gamma) > tol * np.sqrt(alpha * beta)
            if not rotate.any():
                continue
            rotated = True
            p, q, alpha, beta, gamma = (x[rotate] for x in (p, q, alpha,
                                                           beta, gamma))
            zeta = (beta - alpha) / (2.0 * gamma)
            t = np.where(zeta >= 0, 1.0, -1.0) / (
                np.abs(zeta) + np.sqrt(1.0 + zeta * zeta))
            c = 1.0 / np.sqrt(1.0 + t * t)
            s = c * t
            for M in (W, V):
                mp, mq = M[p], M[q]
                M[p] = c[:, None] * mp - s[:, None] * mq
                M[q] = s[:, None] * mp + c[:, None] * mq
        if not rotated:
            break
    else:
        raise np.linalg.LinAlgError("Jacobi SVD did not converge")
    sigma = np.sqrt(np.add.reduce(W * W, axis=1))
    order = np.argsort(-sigma, kind="stable")
    sigma, W, V = sigma[order], W[order], V[order]
    U = W / np.where(sigma > 0, sigma, 1.0)[:, None]
    return U.T, sigma, V


# -- elementary functions ---------------------------------------------------

# 1/i!, i = 13..1 (Horner, highest degree first)
_EXPM1_COEFFS = [1.0 / float(np.prod(np.arange(1, i + 1, dtype=np.float64)))
                 for i in range(13, 0, -1)]
# 1/(2i + 1), i = 11..0: log(m) = 2 s sum_i s^(2i) / (2i + 1)
_ATANH_COEFFS = [1.0 / (2 * i + 1) for i in range(11, -1, -1)]


def _blockwise(function):
    """``function`` (elementwise, on a flat float64 array) applied block
    by block (cache-sized; no bit changes), to any float array."""
    def apply(x):
        x = np.asarray(x, dtype=np.float64)
        flat = x.reshape(-1)
        out = np.empty_like(flat)
        for i in range(0, flat.size, ELEMENTWISE_BLOCK):
            out[i:i + ELEMENTWISE_BLOCK] = function(
                flat[i:i + ELEMENTWISE_BLOCK])
        return out.reshape(x.shape)
    apply.__name__, apply.__doc__ = function.__name__, function.__doc__
    return apply


def _horner(coefficients, x):
    """sum_i c_i x^(n - i), highest degree first, in place."""
    p = np.full_like(x, coefficients[0])
    for c in coefficients[1:]:
        p *= x
        p += c
    return p


def _reduce_ln2(x):
    """``(k, r)`` with x = k ln 2 + r, k integer, |r| <= ln(2) / 2."""
    k = np.rint(x / (LN2_HI + LN2_LO))
    return k, (x - k * LN2_HI) - k * LN2_LO


def _expm1_reduced(r):
    """exp(r) - 1 for |r| <= ln(2) / 2, Taylor to degree 13."""
    p = _horner(_EXPM1_COEFFS, r)
    p *= r
    return p


@_blockwise
def exp(x):
    """e^x, elementwise (module doc); finite for x < 709."""
    k, r = _reduce_ln2(x)
    e = _expm1_reduced(r)
    e += 1.0
    return np.ldexp(e, k.astype(np.int64))


@_blockwise
def expm1(x):
    """e^x - 1, elementwise, accurate near 0 (module doc)."""
    k, r = _reduce_ln2(x)
    e = _expm1_reduced(r)
    k = k.astype(np.int64)
    # 2^k (e + 1) - 1 = 2^k e + (2^k - 1), both exact for moderate k
    return np.where(k == 0, e, np.ldexp(e, k) + (np.ldexp(1.0, k) - 1.0))


@_blockwise
def log(x):
    """Natural logarithm of x > 0, elementwise (module doc)."""
    m, e = np.frexp(x)
    low = m < np.sqrt(0.5)
    m, e = np.where(low, 2.0 * m, m), np.where(low, e - 1, e)
    f = m - 1.0                             # exact: m in [sqrt(1/2), sqrt(2))
    s = f / (2.0 + f)
    p = _horner(_ATANH_COEFFS, s * s)
    p *= 2.0 * s
    p += e * LN2_LO
    return e * LN2_HI + p


@_blockwise
def tanh(x):
    """Hyperbolic tangent, elementwise: ``-t / (t + 2)`` with ``t =
    expm1(-2|x|)``, the sign of x restored."""
    t = expm1(-2.0 * np.minimum(np.abs(x), 40.0))
    return np.copysign(-t / (t + 2.0), x)


def logspace(start, stop, num):
    """``10 ** linspace(start, stop, num)`` (numpy's ``logspace``)."""
    return exp(np.linspace(start, stop, num) * LN10)


def log10(x):
    """Base-10 logarithm, elementwise."""
    return log(x) / LN10


def geomspace(start, stop, num):
    """numpy's ``geomspace`` for 0 < start, stop: ``start (stop /
    start)^(i / (num - 1))``, the end points exactly start and stop."""
    out = exp(np.linspace(log(start), log(stop), num))
    out[0] = start
    if num > 1:
        out[-1] = stop
    return out
