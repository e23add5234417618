"""The synthetic data of matrix completion with denoising.

The generator of Abolfazli et al. 2023 (IBCG, Sec. 5.2 and App. G.3):
``M = Xhat + E`` with ``Xhat = W W^T`` (``W`` n x r standard normal) and
``E = noise (L + L^T)`` (``L`` n x n standard normal); each entry is
observed with probability ``p_observed``. The paper uses n = 250, r = 10,
noise = 0.5 and p = 0.8.

Choices where the paper is silent:

* observation is i.i.d. Bernoulli(p) per entry (so O is not symmetric);
* the paper never defines the two observed sets O1 (upper level) and O2
  (lower level) of its eq. (2), only "the set of observable entries" O:
  ``split="same"`` (the literal reading) uses ``O1 = O2 = O``;
  ``split="random"`` splits ``O`` into two disjoint random halves (O1 gets
  ``floor(|O| / 2)`` entries), a validation / training reading.
"""
import numpy as np

from benchmark_utils.checks.parameters import (
    check_choice,
    check_in_interval,
    check_int,
)

SPLITS = ("same", "random")


def make_matrix_completion_data(n, rank, noise, p_observed, split, seed):
    """(M, Xhat, observed, omega1, omega2) of the paper's generator.

    ``observed`` is the boolean n x n mask of O; ``omega1`` / ``omega2`` are
    sorted flat (row-major) indices of O1 / O2 (see ``split``).
    """
    check_int("n", n, 2)
    check_int("rank", rank, 1, n)
    check_in_interval("noise", noise, 0.0, 1.0, closed=(True, False))
    check_in_interval("p_observed", p_observed, 0.0, 1.0,
                      closed=(False, True))
    check_choice("split", split, SPLITS)
    rng = np.random.default_rng(seed)
    W = rng.standard_normal((n, rank))
    X_hat = W @ W.T
    L = rng.standard_normal((n, n))
    M = X_hat + noise * (L + L.T)
    observed = rng.random((n, n)) < p_observed
    omega = np.flatnonzero(observed)
    if omega.size < 2:
        raise ValueError(
            f"p_observed={p_observed} with n={n} observes {omega.size} "
            "entries; at least 2 are needed")
    if split == "same":
        omega1 = omega2 = omega
    else:
        shuffled = rng.permutation(omega)
        half = omega.size // 2
        omega1, omega2 = np.sort(shuffled[:half]), np.sort(shuffled[half:])
    return M, X_hat, observed, omega1, omega2
