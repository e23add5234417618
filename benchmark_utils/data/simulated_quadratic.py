"""benchmark_bilevel's quadratic generator (``gen_matrices``), rebuilt.

Sample i of a level is ``q_i(x, y) = 1/2 y^T H_i y + 1/2 x^T K_i x +
x^T C_i y + a_i^T y + b_i^T x``. :func:`generate_level` draws one level,
with constants (L_y, L_x, L_c, mu) and the random source ``normal``:

* ``H_i = A z_i z_i^T A``, ``A = U diag(s) U^T``, ``s = logspace(
  log10(mu)/2, log10(L_y)/2, dim_y)`` (E H_i = A^2 has spectrum [mu, L_y]),
  U the full left singular basis of a Gaussian column, z_i standard
  Gaussian;
* ``K_i`` likewise in dim_x with ``s = [0, logspace(log10(mu)/2,
  log10(L_x)/2, dim_x - 1)]`` (one flat direction);
* ``C_i = (U D z_i)(z_i^T V^T)``, ``U, _, V = svd(G)`` (G a dim_x x dim_y
  Gaussian) and D with the diagonal ``logspace(log10(mu), log10(L_c), m)``,
  m = min(dim_x, dim_y);
* ``a_i``, ``b_i`` standard Gaussian.

:func:`upstream_check_eigenvalue` is upstream's acceptance check (kept as
is, though its matrix is not the Hessian of F). The random sources:
:mod:`benchmark_utils.data.simulated_random`. Where upstream's code cannot
run as written and how its retry loop behaves: docs/problems.md,
"Simulated quadratic".
"""
import numpy as np

from benchmark_utils.data.simulated_random import draw_svd
from benchmark_utils.numerics import ordered

# upstream's retry loop bound and acceptance threshold
MAX_TRIALS = 20
MIN_EIGENVALUE = 1e-12


def _basis(column):
    """The full left singular basis of one column (d x d, orthogonal)."""
    return next(draw_svd(column))


def _rank_one_rows(A, z):
    """(A z_i)(A z_i)^T for each row z_i of z, stacked (n, d, d)."""
    rows = ordered.matmul(z, A.T)
    return rows[:, :, None] * rows[:, None, :]


def generate_level(n, dim_y, dim_x, L_y, L_x, L_c, mu, normal, level):
    """One level's per-sample arrays {H, K, C, a, b} (module doc); draw k
    of ``normal`` has key (level, k). The singular bases hold values of the
    draws' precision (:func:`~benchmark_utils.data.simulated_random.
    draw_svd`), everything else is computed in float64 by
    :mod:`benchmark_utils.numerics.ordered`: the same bits on any CPU."""
    def draw(k, shape):
        return np.asarray(normal((level, k), shape))

    def f64(k, shape):
        return np.asarray(draw(k, shape), dtype=np.float64)

    log10 = ordered.log10
    U = _basis(draw(0, (dim_y, 1)))
    s = ordered.logspace(log10(mu) / 2, log10(L_y) / 2, dim_y)
    H = _rank_one_rows(ordered.matmul(U * s, U.T), f64(1, (n, 1, dim_y))[:, 0])
    U = _basis(draw(2, (dim_x, 1)))
    s = np.concatenate([[0.0], ordered.logspace(log10(mu) / 2,
                                                log10(L_x) / 2, dim_x - 1)])
    K = _rank_one_rows(ordered.matmul(U * s, U.T), f64(3, (n, 1, dim_x))[:, 0])
    U, _, V = draw_svd(draw(4, (dim_x, dim_y)))
    m = min(dim_x, dim_y)
    D = np.zeros((dim_x, dim_y))
    D[np.arange(m), np.arange(m)] = ordered.logspace(log10(mu), log10(L_c), m)
    z = f64(5, (n, 1, dim_y))[:, 0]
    # rows (U D z_i)^T, (n, dim_x), and z_i^T V^T, (n, dim_y)
    left = ordered.matmul(z, ordered.matmul(U, D).T)
    right = ordered.matmul(z, V.T)
    C = left[:, :, None] * right[:, None, :]
    return dict(H=H, K=K, C=C, a=f64(6, (n, dim_y)), b=f64(7, (n, dim_x)))


def upstream_check_eigenvalue(inner, outer):
    """The smallest eigenvalue of upstream's acceptance matrix (module doc),
    from the levels' full means (float64 arrays)."""
    J = -np.linalg.solve(inner["H"], inner["C"].T)
    T = outer["C"] @ J
    M = J.T @ outer["H"] @ J + outer["K"] + 0.5 * (T + T.T)
    return float(np.linalg.eigvalsh(0.5 * (M + M.T))[0])
