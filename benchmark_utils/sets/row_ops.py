"""Batched LMOs and projections on the rows of a 2-D tensor.

The vector balls apply these to a single row (``x[None]``), the column balls
to the columns of a matrix (the rows of its transpose), the nuclear ball to
its singular values, so each rule is written once. All of them are torch
only and never synchronise with the host.
"""

import torch


def project_simplex_rows(V, radius):
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


def project_l1_rows(V, radius):
    """Project each row of ``V`` onto the l1 ball of the given radius.

    Duchi et al. (2008), Section 4: a row with ||v||_1 <= radius is kept as
    is; otherwise |v| is projected onto the simplex of that radius and the
    signs of v are restored.
    """
    absV = V.abs()
    inside = absV.sum(dim=-1, keepdim=True) <= radius
    # torch.where rather than a Python branch: no host synchronisation.
    return torch.where(
        inside, V, torch.sign(V) * project_simplex_rows(absV, radius)
    )


def project_l2_rows(V, radius):
    """x * radius / max(||x||_2, radius) per row (exactly x when inside)."""
    norms = torch.linalg.vector_norm(V, dim=-1, keepdim=True)
    return V * (radius / norms.clamp_min(radius))


def lmo_l1_rows(C, radius):
    """Per row: -radius * sign(c_i) e_i with i the first argmax of |c|.

    A 1-D ``C`` is one row (the vector ball calls it without reshaping).

    sign(0) = 0 makes an all-zero row return the zero row (the center).
    torch.sign(nan) is 0, so ``+ 0 * c_i`` is added to keep a non-finite
    direction visible (argmax picks a NaN entry) for the divergence guard.
    """
    idx = C.abs().argmax(dim=-1, keepdim=True)
    picked = C.gather(-1, idx)
    # -radius * sign(c_i) + 0 * c_i (three calls; the last two in place)
    value = picked.sign().mul_(-radius).add_(picked, alpha=0.0)
    return torch.zeros_like(C).scatter_(-1, idx, value)


def lmo_l2_rows(C, radius):
    """Per row: -radius * c / ||c||_2, and the zero row for c = 0 (a 1-D
    ``C`` is one row)."""
    norms = torch.linalg.vector_norm(C, dim=-1, keepdim=True)
    # -radius / 0 = -inf is discarded by torch.where, so zero rows get scale 0
    # and no NaN is produced.
    scale = torch.where(norms > 0, -radius / norms, torch.zeros_like(norms))
    return C * scale


def random_direction_scaled(shape, ord, target, generator):
    """Gaussian rows rescaled to ``ord``-norm ``target`` (CPU float64)."""
    g = torch.randn(shape, generator=generator, dtype=torch.float64)
    norm = torch.linalg.vector_norm(g, ord=ord, dim=-1, keepdim=True)
    return g * (target / norm)
