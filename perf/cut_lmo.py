"""Exact cut-LMO against the CVXPY backend, side by side, at d = 730.

The cutting-plane methods (SBCGI, SBCGF, CG-BiO) solve at every iteration

    min <c, s>  s.t.  ||s||_1 <= 10,  <a, s> <= beta

(Cao et al. 2023, eqs. (82)-(83)). Cao et al. 2023 and Giang-Tran et al.
2025 solve it with a generic LP solver (CVX / CVXPY); the set's
``cut_lmo`` (backend "exact", :func:`benchmark_utils.sets.cut_lmo.cut_lmo`)
solves it exactly by a one-dimensional dual search. This script draws the
inputs the solvers actually see on the regression problem's size (d = 730:
c and a are stochastic gradients of least-squares losses at a point of the
ball, beta from the cut's right-hand side with a small slack), solves each
instance with both backends, checks they agree, and prints the time ratio.

    python perf/cut_lmo.py [n_instances]
"""
import sys
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmark_utils.sets import L1Ball  # noqa: E402
from benchmark_utils.sets.cut_lmo import cut_lmo, cut_lmo_cvxpy  # noqa: E402

DIM, RADIUS, N_ROWS = 730, 10.0, 356


def instances(n, seed=0):
    """(c, a, beta) as SBCGI sees them on an over-parameterized regression."""
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((2 * N_ROWS, DIM))
    b = A[:, :5] @ rng.standard_normal(5)
    Z = L1Ball(DIM, RADIUS)
    out = []
    for _ in range(n):
        x = Z.project(torch.as_tensor(rng.standard_normal(DIM)))
        x = x.numpy()
        rows_f = rng.integers(0, N_ROWS, 8)
        rows_g = rng.integers(N_ROWS, 2 * N_ROWS, 8)
        c = 2 * A[rows_f].T @ (A[rows_f] @ x - b[rows_f]) / 8
        a = 2 * A[rows_g].T @ (A[rows_g] @ x - b[rows_g]) / 8
        # <a, s - x> <= -slack: the cut excludes x_t and binds (hard case)
        slack = abs(rng.normal()) * 0.01 * RADIUS * np.abs(a).max()
        beta = float(a @ x) - slack
        out.append((torch.as_tensor(c), torch.as_tensor(a), beta))
    return Z, out


def timed(solve, Z, problems):
    """Per-call seconds and results."""
    seconds, results = [], []
    for c, a, beta in problems:
        start = time.perf_counter()
        results.append(solve(Z, c, a, beta))
        seconds.append(time.perf_counter() - start)
    return np.array(seconds), results


def main(n=200):
    torch.set_num_threads(1)
    Z, problems = instances(n)
    Z.prepare_cut_lmo("cvxpy")          # compile the CVXPY problem once
    cut_lmo(Z, *problems[0])
    t_exact, exact = timed(cut_lmo, Z, problems)
    t_cvxpy, reference = timed(cut_lmo_cvxpy, Z, problems)
    worst = max(abs(e.value - r.value) / max(1.0, abs(r.value))
                for e, r in zip(exact, reference, strict=True) if r.feasible)
    infeasible = sum(not e.feasible for e in exact)
    active = sum(e.feasible and e.multiplier > 0 for e in exact)
    print(f"d = {DIM}, {n} instances: {active} with an active cut, "
          f"{infeasible} infeasible, {n - active - infeasible} inactive")
    assert all(e.feasible == r.feasible
               for e, r in zip(exact, reference, strict=True))
    binding = np.array([e.feasible and e.multiplier > 0 for e in exact])
    for label, keep in (("all instances", np.ones(n, bool)),
                        ("active cuts only", binding)):
        if keep.any():
            exact_us = 1e6 * t_exact[keep].mean()
            cvxpy_us = 1e6 * t_cvxpy[keep].mean()
            print(f"{label:17s}: exact {exact_us:8.1f} us, CVXPY "
                  f"{cvxpy_us:8.1f} us per call, ratio CVXPY / exact = "
                  f"{cvxpy_us / exact_us:.0f}x")
    print(f"largest relative difference of the optimal values: {worst:.2e}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
