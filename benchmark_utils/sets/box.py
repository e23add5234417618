"""Boxes with finite bounds."""

import torch

from benchmark_utils.sets.base import FeasibleSet, as_dimension


class Box(FeasibleSet):
    """{x in R^dim : lower <= x <= upper} with finite bounds.

    ``lower`` / ``upper`` are 1-D tensors (or sequences) or scalars; with two
    scalars ``dim`` is required. Bounds are stored as CPU float64 tensors and
    moved to the input's device / dtype on use. ``lower == upper`` is allowed.

    * ``lmo(c)``: coordinate-wise, ``lower`` where c > 0, ``upper`` where
      c < 0, the midpoint where c = 0.
    * ``project(x) = clamp(x, lower, upper)``.
    * ``diameter = ||upper - lower||_2``.
    * ``excess``: the largest violation of a bound.
    * ``random_point``: uniform on the box.
    * cut-LMO: at lam = inf, coordinates where the cut normal ``a`` is zero
      follow ``c``.
    """

    polyhedral = True
    coordinate_separable = True

    def __init__(self, lower, upper, dim=None):
        if dim is not None:
            dim = as_dimension("dim", dim)
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

    def excess(self, point):
        self._check(point)
        lo, up = self._bounds(point)
        return max(float((lo - point).max()), float((point - up).max()), 0.0)

    def random_point(self, generator=None, *, device="cpu",
                     dtype=torch.float64):
        u = torch.rand(self.dim, generator=generator, dtype=torch.float64)
        x = self.lower + (self.upper - self.lower) * u
        return x.to(device=device, dtype=dtype)

    def cvxpy_constraints(self, var):
        return [var >= self.lower.numpy(), var <= self.upper.numpy()]

    def lmo_direction_at_infinity(self, c, a):
        return torch.where(a == 0, c, a)

    @property
    def cache_key(self):
        return ("Box", self.dim, self.lower.numpy().tobytes(),
                self.upper.numpy().tobytes())

    def __repr__(self):
        def fmt(t):
            if bool((t == t[0]).all()):
                return f"{t[0].item()}"
            return f"tensor of shape ({self.dim},)"
        return (f"Box(dim={self.dim}, lower={fmt(self.lower)}, "
                f"upper={fmt(self.upper)})")
