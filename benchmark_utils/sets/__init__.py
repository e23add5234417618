"""Feasible sets as objects, in the style of FrankWolfe.jl.

Algorithms never special-case a set: they only call the common interface of
:class:`FeasibleSet` (``dim``, ``lmo``, ``project``, ``diameter``,
``contains``, ``random_point``).

Conventions shared by every set:

* A point is a flat 1-D torch tensor of length ``dim`` (float64 in the
  benchmark). ``lmo`` and ``project`` compute on the input's device and dtype
  and always return a *new* tensor of the same shape, dtype and device; they
  use torch only (no numpy, no generic solver) and never synchronise with the
  host, so they can run on an accelerator.
* Matrix-shaped sets (:class:`ColumnBalls`, :class:`NuclearNormBall`) view
  the flat vector row-major as ``M = x.reshape(n_rows, n_cols)``; the
  "columns" are ``M[:, j]``.
* ``random_point`` draws on the CPU with the given ``torch.Generator`` (so
  results are reproducible across devices), in float64, then moves the point
  to ``device`` / ``dtype``.
"""

import math
import numbers
from abc import ABC, abstractmethod

import torch

__all__ = [
    "FeasibleSet",
    "UnboundedLMOError",
    "L1Ball",
    "L2Ball",
    "ColumnBalls",
    "ProductSet",
    "Simplex",
    "NuclearNormBall",
    "Box",
    "WholeSpace",
]


class UnboundedLMOError(NotImplementedError, ValueError):
    """Raised by ``lmo`` on an unbounded set (the minimum is -inf).

    Subclasses both ``NotImplementedError`` and ``ValueError`` so that either
    can be caught.
    """


# --------------------------------------------------------------------------
# validation helpers
# --------------------------------------------------------------------------

def _positive_int(name, value):
    if (isinstance(value, bool) or not isinstance(value, numbers.Integral)
            or value < 1):
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


def _positive_float(name, value):
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise ValueError(
            f"{name} must be a finite number > 0, got {value!r}"
        ) from None
    if not (math.isfinite(out) and out > 0):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return out


# --------------------------------------------------------------------------
# batched projections (rows of a 2-D tensor), shared by several sets
# --------------------------------------------------------------------------

def _project_simplex_rows(V, radius):
    """Project each row of ``V`` onto {w >= 0, sum w = radius}.

    Duchi, Shalev-Shwartz, Singer, Chandra (ICML 2008), Figure 1 (also Held,
    Wolfe, Crowder 1974): with mu = sort(v) descending,
    rho = max{j : mu_j - (sum_{r<=j} mu_r - radius) / j > 0},
    theta = (sum_{r<=rho} mu_r - radius) / rho, w = max(v - theta, 0).
    O(n log n) per row, all rows sorted at once.
    """
    n = V.shape[-1]
    # The projection is invariant under shifts v -> v - a 1. Shifting by the
    # row max makes the top entry exactly 0, so theta keeps full precision when
    # one entry dominates (e.g. v = (1e17, 0, ...) still maps to radius e_1).
    V = V - V.amax(dim=-1, keepdim=True)
    mu = torch.sort(V, dim=-1, descending=True).values
    cssv = mu.cumsum(dim=-1) - radius
    j = torch.arange(1, n + 1, device=V.device)
    cond = mu - cssv / j.to(V.dtype) > 0
    # The condition holds on a prefix of j, so rho is the largest j where it
    # holds; j = 1 always does (mu_1 = 0 after the shift), the clamp is only
    # a safeguard.
    rho = (cond * j).amax(dim=-1, keepdim=True).clamp_min(1)
    theta = cssv.gather(-1, rho - 1) / rho.to(V.dtype)
    return (V - theta).clamp_min(0)


def _project_l1_rows(V, radius):
    """Project each row of ``V`` onto the l1 ball of the given radius.

    Duchi et al. (2008), Section 4: a row with ||v||_1 <= radius is kept as
    is; otherwise |v| is projected onto the simplex of that radius and the
    signs of v are restored.
    """
    absV = V.abs()
    inside = absV.sum(dim=-1, keepdim=True) <= radius
    # torch.where rather than a Python branch: no host synchronisation.
    return torch.where(
        inside, V, torch.sign(V) * _project_simplex_rows(absV, radius)
    )


def _project_l2_rows(V, radius):
    """x * radius / max(||x||_2, radius) per row (exactly x when inside)."""
    norms = torch.linalg.vector_norm(V, dim=-1, keepdim=True)
    return V * (radius / norms.clamp_min(radius))


def _lmo_l1_rows(C, radius):
    """Per row: -radius * sign(c_i) e_i with i the first argmax of |c|.

    sign(0) = 0 makes an all-zero row return the zero row (the center).
    torch.sign(nan) is 0, so ``+ 0 * c_i`` is added to keep a non-finite
    direction visible (argmax picks a NaN entry) for the divergence guard.
    """
    idx = C.abs().argmax(dim=-1, keepdim=True)
    picked = C.gather(-1, idx)
    out = torch.zeros_like(C)
    out.scatter_(-1, idx, -radius * torch.sign(picked) + 0.0 * picked)
    return out


def _lmo_l2_rows(C, radius):
    """Per row: -radius * c / ||c||_2, and the zero row for c = 0."""
    norms = torch.linalg.vector_norm(C, dim=-1, keepdim=True)
    # -radius / 0 = -inf is discarded by torch.where, so zero rows get scale 0
    # and no NaN is produced.
    scale = torch.where(norms > 0, -radius / norms, torch.zeros_like(norms))
    return C * scale


def _random_direction_scaled(shape, ord, target, generator):
    """Gaussian direction rescaled to ``ord``-norm ``target`` (CPU float64)."""
    g = torch.randn(shape, generator=generator, dtype=torch.float64)
    norm = torch.linalg.vector_norm(g, ord=ord, dim=-1, keepdim=True)
    return g * (target / norm)


# --------------------------------------------------------------------------
# interface
# --------------------------------------------------------------------------

class FeasibleSet(ABC):
    """A closed convex set of flat vectors of length ``dim``.

    Subclasses set ``self.dim`` and implement ``lmo``, ``project``,
    ``diameter``, ``contains`` and ``random_point``.
    """

    dim: int

    @abstractmethod
    def lmo(self, direction):
        """An exact minimizer of <direction, s> over the set (new tensor)."""

    @abstractmethod
    def project(self, point):
        """The Euclidean projection argmin_s ||s - point||_2 (new tensor)."""

    @property
    @abstractmethod
    def diameter(self):
        """Euclidean diameter max ||x - y||_2 over the set (float)."""

    @property
    def unbounded(self):
        """True for the whole space: no LMO, projection is the identity."""
        return math.isinf(self.diameter)

    @abstractmethod
    def contains(self, point, tol=1e-9):
        """Whether ``point`` is finite and in the set up to a slack.

        Each defining constraint may be violated by ``tol * max(1, scale)``,
        with scale the radius (balls, simplex) or |bound| (box), so that the
        default works for large radii despite rounding in float64.
        """

    @abstractmethod
    def random_point(self, generator=None, *, device="cpu",
                     dtype=torch.float64):
        """A random point of the set, drawn with ``generator`` on the CPU."""

    def _check(self, x, name="point"):
        if not isinstance(x, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(x)}")
        if x.dim() != 1 or x.shape[0] != self.dim:
            raise ValueError(
                f"{name} must be a flat tensor of shape ({self.dim},), "
                f"got shape {tuple(x.shape)}"
            )

    def _slack(self, tol):  # for the sets that have a radius
        return tol * max(1.0, self.radius)

    @staticmethod
    def _finite(x):
        return bool(torch.isfinite(x).all())


class _MatrixSet(FeasibleSet):
    """Shared code for sets of row-major (n_rows, n_cols) matrices."""

    def __init__(self, n_rows, n_cols):
        self.n_rows = _positive_int("n_rows", n_rows)
        self.n_cols = _positive_int("n_cols", n_cols)
        self.dim = self.n_rows * self.n_cols

    def _mat(self, x):
        # reshape, not view: also accepts non-contiguous 1-D inputs.
        return x.reshape(self.n_rows, self.n_cols)


# --------------------------------------------------------------------------
# norm balls
# --------------------------------------------------------------------------

class L1Ball(FeasibleSet):
    """{x in R^dim : ||x||_1 <= radius}.

    * ``lmo(c) = -radius * sign(c_i) e_i`` with ``i`` the *first* index of
      max |c_j| (``torch.argmax`` semantics); a zero direction returns the
      zero vector (the center, which is a minimizer since every point is).
    * ``project``: sort-based method of Duchi et al. (ICML 2008), Fig. 1,
      O(dim log dim).
    * ``diameter = 2 * radius``.
    * ``random_point``: Gaussian direction rescaled to l1 norm
      ``radius * u``, ``u ~ U(0, 1)`` (not uniform in the ball).
    """

    def __init__(self, dim, radius=1.0):
        self.dim = _positive_int("dim", dim)
        self.radius = _positive_float("radius", radius)

    def lmo(self, direction):
        self._check(direction, "direction")
        return _lmo_l1_rows(direction[None], self.radius)[0]

    def project(self, point):
        self._check(point)
        return _project_l1_rows(point[None], self.radius)[0]

    @property
    def diameter(self):
        return 2.0 * self.radius

    def contains(self, point, tol=1e-9):
        self._check(point)
        return self._finite(point) and bool(
            point.abs().sum() <= self.radius + self._slack(tol)
        )

    def random_point(self, generator=None, *, device="cpu",
                     dtype=torch.float64):
        u = torch.rand((), generator=generator, dtype=torch.float64)
        x = _random_direction_scaled(
            (self.dim,), 1, self.radius * u, generator
        )
        return x.to(device=device, dtype=dtype)

    def __repr__(self):
        return f"L1Ball(dim={self.dim}, radius={self.radius})"


class L2Ball(FeasibleSet):
    """{x in R^dim : ||x||_2 <= radius}.

    * ``lmo(c) = -radius * c / ||c||_2``; a zero direction returns the zero
      vector.
    * ``project(x) = x * radius / max(||x||_2, radius)``.
    * ``diameter = 2 * radius``.
    * ``random_point``: Gaussian direction rescaled to l2 norm
      ``radius * u``, ``u ~ U(0, 1)`` (not uniform in the ball).
    """

    def __init__(self, dim, radius=1.0):
        self.dim = _positive_int("dim", dim)
        self.radius = _positive_float("radius", radius)

    def lmo(self, direction):
        self._check(direction, "direction")
        return _lmo_l2_rows(direction[None], self.radius)[0]

    def project(self, point):
        self._check(point)
        return _project_l2_rows(point[None], self.radius)[0]

    @property
    def diameter(self):
        return 2.0 * self.radius

    def contains(self, point, tol=1e-9):
        self._check(point)
        return self._finite(point) and bool(
            torch.linalg.vector_norm(point)
            <= self.radius + self._slack(tol)
        )

    def random_point(self, generator=None, *, device="cpu",
                     dtype=torch.float64):
        u = torch.rand((), generator=generator, dtype=torch.float64)
        x = _random_direction_scaled(
            (self.dim,), 2, self.radius * u, generator
        )
        return x.to(device=device, dtype=dtype)

    def __repr__(self):
        return f"L2Ball(dim={self.dim}, radius={self.radius})"


class ColumnBalls(_MatrixSet):
    """Product of ``n_cols`` balls {M[:, j] : ||M[:, j]||_norm <= radius}.

    The point is the row-major flattening of an (n_rows, n_cols) matrix M.
    This is the dictionary-learning set: unit l2 columns for a dictionary,
    l1 columns of radius delta for the codes. Everything is vectorised over
    columns (the l1 projection sorts all columns at once).

    * ``lmo``: the :class:`L1Ball` / :class:`L2Ball` rule per column (first
      argmax of |c| per column for l1; a zero column returns a zero column).
    * ``project``: per-column projection (Duchi et al. 2008 for l1, rescaling
      for l2).
    * ``diameter = 2 * radius * sqrt(n_cols)`` (sqrt of the sum of squared
      per-column diameters).
    * ``random_point``: each column drawn independently as in
      :class:`L1Ball` / :class:`L2Ball`.
    """

    _NORMS = ("l1", "l2")

    def __init__(self, n_rows, n_cols, norm="l2", radius=1.0):
        super().__init__(n_rows, n_cols)
        if norm not in self._NORMS:
            raise ValueError(
                f"norm must be one of {self._NORMS}, got {norm!r}"
            )
        self.norm = norm
        self.radius = _positive_float("radius", radius)

    def _cols(self, x):
        # Columns as rows of the transpose, so the row-wise helpers apply.
        return self._mat(x).T

    def _from_cols(self, C):
        return C.T.reshape(-1)

    def lmo(self, direction):
        self._check(direction, "direction")
        rows = _lmo_l1_rows if self.norm == "l1" else _lmo_l2_rows
        return self._from_cols(rows(self._cols(direction), self.radius))

    def project(self, point):
        self._check(point)
        rows = _project_l1_rows if self.norm == "l1" else _project_l2_rows
        return self._from_cols(rows(self._cols(point), self.radius))

    def column_norms(self, point):
        """The ``norm`` of each column, shape (n_cols,)."""
        self._check(point)
        ord = 1 if self.norm == "l1" else 2
        return torch.linalg.vector_norm(self._mat(point), ord=ord, dim=0)

    @property
    def diameter(self):
        return 2.0 * self.radius * math.sqrt(self.n_cols)

    def contains(self, point, tol=1e-9):
        return self._finite(point) and bool(
            (self.column_norms(point)
             <= self.radius + self._slack(tol)).all()
        )

    def random_point(self, generator=None, *, device="cpu",
                     dtype=torch.float64):
        u = torch.rand((self.n_cols, 1), generator=generator,
                       dtype=torch.float64)
        ord = 1 if self.norm == "l1" else 2
        C = _random_direction_scaled(
            (self.n_cols, self.n_rows), ord, self.radius * u, generator
        )
        return self._from_cols(C).to(device=device, dtype=dtype)

    def __repr__(self):
        return (f"ColumnBalls(n_rows={self.n_rows}, n_cols={self.n_cols}, "
                f"norm={self.norm!r}, radius={self.radius})")


# --------------------------------------------------------------------------
# other sets
# --------------------------------------------------------------------------

class Simplex(FeasibleSet):
    """{x in R^dim : x >= 0, sum x = radius} (probability simplex if 1).

    * ``lmo(c) = radius * e_i`` with ``i`` the *first* index of min c_j.
    * ``project``: sort-based, Duchi et al. (2008) Fig. 1 / Held et al.
      (1974).
    * ``diameter = radius * sqrt(2)`` (0 when dim = 1: a single point).
    * ``random_point``: ``radius`` times a Dirichlet(1, ..., 1) draw
      (uniform on the simplex), via normalised Exp(1) variables.
    """

    def __init__(self, dim, radius=1.0):
        self.dim = _positive_int("dim", dim)
        self.radius = _positive_float("radius", radius)

    def lmo(self, direction):
        self._check(direction, "direction")
        out = torch.zeros_like(direction)
        out[direction.argmin()] = self.radius
        return out

    def project(self, point):
        self._check(point)
        return _project_simplex_rows(point[None], self.radius)[0]

    @property
    def diameter(self):
        return self.radius * math.sqrt(2.0) if self.dim > 1 else 0.0

    def contains(self, point, tol=1e-9):
        self._check(point)
        return self._finite(point) and bool(
            (point >= -self._slack(tol)).all()
            and (point.sum() - self.radius).abs() <= self._slack(tol)
        )

    def random_point(self, generator=None, *, device="cpu",
                     dtype=torch.float64):
        e = torch.empty(self.dim, dtype=torch.float64).exponential_(
            generator=generator
        )
        return (self.radius * e / e.sum()).to(device=device, dtype=dtype)

    def __repr__(self):
        return f"Simplex(dim={self.dim}, radius={self.radius})"


class NuclearNormBall(_MatrixSet):
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
    * ``diameter = 2 * radius``.
    * ``random_point``: Gaussian matrix rescaled to nuclear norm
      ``radius * u``, ``u ~ U(0, 1)``.
    """

    def __init__(self, n_rows, n_cols, radius=1.0):
        super().__init__(n_rows, n_cols)
        self.radius = _positive_float("radius", radius)

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
        S_proj = _project_l1_rows(S[None], self.radius)[0]
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

    def random_point(self, generator=None, *, device="cpu",
                     dtype=torch.float64):
        u = torch.rand((), generator=generator, dtype=torch.float64)
        G = torch.randn((self.n_rows, self.n_cols), generator=generator,
                        dtype=torch.float64)
        G = G * (self.radius * u / torch.linalg.svdvals(G).sum())
        return G.reshape(-1).to(device=device, dtype=dtype)

    def __repr__(self):
        return (f"NuclearNormBall(n_rows={self.n_rows}, n_cols={self.n_cols},"
                f" radius={self.radius})")


class Box(FeasibleSet):
    """{x in R^dim : lower <= x <= upper} with finite bounds.

    ``lower`` / ``upper`` are 1-D tensors (or sequences) or scalars; with two
    scalars ``dim`` is required. Bounds are stored as CPU float64 tensors and
    moved to the input's device / dtype on use. ``lower == upper`` is allowed.

    * ``lmo(c)``: coordinate-wise, ``lower`` where c > 0, ``upper`` where
      c < 0, the midpoint where c = 0.
    * ``project(x) = clamp(x, lower, upper)``.
    * ``diameter = ||upper - lower||_2``.
    * ``random_point``: uniform on the box.
    """

    def __init__(self, lower, upper, dim=None):
        if dim is not None:
            dim = _positive_int("dim", dim)
        lower = self._as_bound("lower", lower)
        upper = self._as_bound("upper", upper)
        sizes = {t.shape[0] for t in (lower, upper) if t.dim() == 1}
        if dim is not None:
            sizes.add(dim)
        if len(sizes) > 1:
            raise ValueError(
                "lower, upper and dim must have consistent sizes, got "
                f"lower shape {tuple(lower.shape)}, upper shape "
                f"{tuple(upper.shape)}, dim={dim}"
            )
        if not sizes:
            raise ValueError(
                "dim must be given (an integer >= 1) when lower and upper "
                "are both scalars"
            )
        self.dim = sizes.pop()
        if self.dim < 1:
            raise ValueError(f"dim must be an integer >= 1, got {self.dim}")
        self.lower = lower.expand(self.dim).clone()
        self.upper = upper.expand(self.dim).clone()
        bad = self.lower > self.upper
        if bad.any():
            i = int(bad.nonzero()[0])
            raise ValueError(
                "lower must be <= upper elementwise, got "
                f"lower[{i}]={self.lower[i].item()} > "
                f"upper[{i}]={self.upper[i].item()}"
            )

    @staticmethod
    def _as_bound(name, value):
        try:
            t = torch.as_tensor(value).detach().to("cpu", torch.float64)
        except (TypeError, ValueError, RuntimeError):
            raise ValueError(
                f"{name} must be a number or a 1-D tensor, got {value!r}"
            ) from None
        if t.dim() > 1:
            raise ValueError(
                f"{name} must be a number or a 1-D tensor, got shape "
                f"{tuple(t.shape)}"
            )
        if not torch.isfinite(t).all():
            raise ValueError(f"{name} must be finite, got {value!r}")
        return t

    def _bounds(self, x):
        return (self.lower.to(device=x.device, dtype=x.dtype),
                self.upper.to(device=x.device, dtype=x.dtype))

    def lmo(self, direction):
        self._check(direction, "direction")
        lo, up = self._bounds(direction)
        return torch.where(direction > 0, lo,
                           torch.where(direction < 0, up, (lo + up) / 2))

    def project(self, point):
        self._check(point)
        lo, up = self._bounds(point)
        return torch.clamp(point, lo, up)

    @property
    def diameter(self):
        return float(torch.linalg.vector_norm(self.upper - self.lower))

    def contains(self, point, tol=1e-9):
        self._check(point)
        lo, up = self._bounds(point)
        return self._finite(point) and bool(
            ((point >= lo - tol * lo.abs().clamp_min(1))
             & (point <= up + tol * up.abs().clamp_min(1))).all()
        )

    def random_point(self, generator=None, *, device="cpu",
                     dtype=torch.float64):
        u = torch.rand(self.dim, generator=generator, dtype=torch.float64)
        x = self.lower + (self.upper - self.lower) * u
        return x.to(device=device, dtype=dtype)

    def __repr__(self):
        def fmt(t):
            if bool((t == t[0]).all()):
                return f"{t[0].item()}"
            return f"tensor of shape ({self.dim},)"
        return (f"Box(dim={self.dim}, lower={fmt(self.lower)}, "
                f"upper={fmt(self.upper)})")


class WholeSpace(FeasibleSet):
    """R^dim (unconstrained).

    * ``lmo`` raises :class:`UnboundedLMOError` (a ``NotImplementedError``
      and ``ValueError``): a linear function has no minimizer on R^dim.
    * ``project`` returns a copy of the point (never the same tensor, like
      every other set).
    * ``diameter = inf``; ``contains`` is True for every finite point.
    * ``random_point``: standard Gaussian.
    """

    def __init__(self, dim):
        self.dim = _positive_int("dim", dim)

    def lmo(self, direction):
        raise UnboundedLMOError(
            f"{self!r} has no linear minimization oracle: the whole space is "
            "unbounded (use a projection-based method or a bounded set)"
        )

    def project(self, point):
        self._check(point)
        return point.clone()

    @property
    def diameter(self):
        return math.inf

    def contains(self, point, tol=1e-9):
        self._check(point)
        return self._finite(point)

    def random_point(self, generator=None, *, device="cpu",
                     dtype=torch.float64):
        x = torch.randn(self.dim, generator=generator, dtype=torch.float64)
        return x.to(device=device, dtype=dtype)

    def __repr__(self):
        return f"WholeSpace(dim={self.dim})"


class ProductSet(FeasibleSet):
    """Cartesian product sets[0] x sets[1] x ... on concatenated points.

    A point is the concatenation of the blocks' flat vectors, split by each
    set's ``dim``; ``lmo`` / ``project`` / ``contains`` / ``random_point``
    act block-wise. ``diameter = sqrt(sum_i d_i^2)`` (inf if one block is
    unbounded); ``lmo`` raises if a block has no LMO.
    """

    def __init__(self, sets):
        sets = list(sets) if not isinstance(sets, FeasibleSet) else None
        if not sets or not all(isinstance(s, FeasibleSet) for s in sets):
            raise ValueError(
                "sets must be a non-empty sequence of FeasibleSet instances"
            )
        self.sets = sets
        self.dims = [s.dim for s in sets]
        self.dim = sum(self.dims)

    def blocks(self, x):
        """The list of block views of ``x`` (no copy)."""
        self._check(x)
        return list(torch.split(x, self.dims))

    def lmo(self, direction):
        return torch.cat([s.lmo(b) for s, b in
                          zip(self.sets, self.blocks(direction))])

    def project(self, point):
        return torch.cat([s.project(b) for s, b in
                          zip(self.sets, self.blocks(point))])

    @property
    def diameter(self):
        return math.sqrt(sum(s.diameter ** 2 for s in self.sets))

    def contains(self, point, tol=1e-9):
        return all(s.contains(b, tol=tol) for s, b in
                   zip(self.sets, self.blocks(point)))

    def random_point(self, generator=None, *, device="cpu",
                     dtype=torch.float64):
        return torch.cat([s.random_point(generator, device=device,
                                         dtype=dtype) for s in self.sets])

    def __getitem__(self, i):
        return self.sets[i]

    def __len__(self):
        return len(self.sets)

    def __repr__(self):
        return f"ProductSet([{', '.join(repr(s) for s in self.sets)}])"
