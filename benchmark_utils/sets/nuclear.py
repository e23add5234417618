"""The nuclear-norm ball of matrices."""

import torch

from benchmark_utils.sets.base import MatrixSet, as_radius
from benchmark_utils.sets.row_ops import project_l1_rows


class NuclearNormBall(MatrixSet):
    """{M in R^{n_rows x n_cols} : ||M||_* <= radius} (sum of singular values).

    * ``lmo(C) = -radius * u_1 v_1^T`` with (u_1, v_1) the top singular pair
      of C, from a full ``torch.linalg.svd`` (exact up to floating point;
      a Lanczos / power iteration would be cheaper for large matrices but
      only approximate). Ties between top singular values: whichever pair the
      SVD returns first (all are minimizers). A zero matrix returns zero.
    * ``project``: SVD C = U diag(s) V^T, then U diag(P(s)) V^T with P the
      l1-ball projection of the nonnegative singular values (Duchi et al.
      2008), which keeps them nonnegative. A point already inside is
      returned unchanged (copied).
    * ``diameter = 2 * radius``; ``excess = max(||M||_* - radius, 0)``.
    * ``random_point``: Gaussian matrix rescaled to nuclear norm
      ``radius * u``, ``u ~ U(0, 1)``.
    """

    def __init__(self, n_rows, n_cols, radius=1.0):
        super().__init__(n_rows, n_cols)
        self.radius = as_radius(radius)

    def lmo(self, direction):
        self._check(direction, "direction")
        U, S, Vh = torch.linalg.svd(self._mat(direction), full_matrices=False)
        # (S[0] > 0) zeroes the output for a zero matrix without a host sync.
        scale = -self.radius * (S[0] > 0).to(direction.dtype)
        return (scale * torch.outer(U[:, 0], Vh[0])).reshape(-1)

    def project(self, point):
        self._check(point)
        M = self._mat(point)
        U, S, Vh = torch.linalg.svd(M, full_matrices=False)
        S_proj = project_l1_rows(S[None], self.radius)[0]
        projected = (U * S_proj) @ Vh
        # Keep inside points bit-exact instead of an SVD round trip.
        inside = S.sum() <= self.radius
        return torch.where(inside, M, projected).reshape(-1)

    def nuclear_norm(self, point):
        """||M||_* of the point (0-d tensor)."""
        self._check(point)
        return torch.linalg.svdvals(self._mat(point)).sum()

    @property
    def diameter(self):
        return 2.0 * self.radius

    def contains(self, point, tol=1e-9):
        return self._finite(point) and bool(
            self.nuclear_norm(point) <= self.radius + self._slack(tol)
        )

    def excess(self, point):
        return max(float(self.nuclear_norm(point)) - self.radius, 0.0)

    def random_point(self, generator=None, *, device="cpu",
                     dtype=torch.float64):
        u = torch.rand((), generator=generator, dtype=torch.float64)
        G = torch.randn((self.n_rows, self.n_cols), generator=generator,
                        dtype=torch.float64)
        G = G * (self.radius * u / torch.linalg.svdvals(G).sum())
        return G.reshape(-1).to(device=device, dtype=dtype)

    def cvxpy_constraints(self, var):
        import cvxpy as cp
        return [cp.normNuc(self._cvxpy_mat(var)) <= self.radius]

    def __repr__(self):
        return (f"NuclearNormBall(n_rows={self.n_rows}, n_cols={self.n_cols},"
                f" radius={self.radius})")
