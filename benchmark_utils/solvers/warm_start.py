"""Lower-level warm starts of the cutting-plane methods (Cao et al. 2023,
§3 and Remark 3.1; Jiang et al. 2023).

SBCGI / SBCGF / CG-BiO need x_0 in Z with g(x_0) - g* <= eps_g / 2, found by
a separate single-level method on the lower level only, and then the exact
value g(x_0) for the right-hand side of the cut.

* :func:`spider_fw_lower`: SPIDER-FW (Yurtsever, Sra, Cevher, ICML 2019,
  Alg. 2) on g, step gamma_t = gamma0 / (t + 1), the papers' warm start
  (Cao et al. 2023, App. F.1: gamma0 = 0.1, 10^5 stochastic oracle
  queries).
* :func:`fw_lower`: deterministic Frank-Wolfe on g with gamma_k = 2/(k+2),
  stopped at a Frank-Wolfe gap <= tol (the warm start of the public CG-BiO
  code).

Both draw their samples through the counting view, so whether they are
charged to the method is decided by *when* the caller runs them (inside the
timed ``iterations`` or in the untimed ``pre_run_hook`` followed by a
counter reset).
"""
import math

from benchmark_utils.solvers.estimators import Spider, at_both_points
from benchmark_utils.solvers.schedules import frank_wolfe_step, spider_fw_step


def spider_fw_lower(P, x, n_samples, gamma0=0.1, batch_size=None,
                    period=None):
    """SPIDER-FW on the lower level from x until ``n_samples`` are drawn.

    Choices where the papers are silent (Cao et al. 2023 give neither the
    batch, the period nor the start): S = q = floor(sqrt(n_lower))
    (Yurtsever et al.'s finite-sum choice), the refresh is a full pass
    (n_lower samples), the start is the solver's start. Returns the last
    iterate (in Z: a convex combination of points of Z).
    """
    S = batch_size or max(1, math.isqrt(P.n_lower))
    q = period or max(1, math.isqrt(P.n_lower))
    grad_G = Spider()
    x_prev, spent, t = None, 0, 0
    while spent < n_samples:
        if t % q == 0:
            grad_G.refresh(P.grad_g(x, batch=P.full_lower()))
            spent += P.n_lower
        else:
            grad_G.update(*at_both_points(P.grad_g, P.sample_lower(S), x,
                                          x_prev))
            spent += S
        gamma = spider_fw_step(t, gamma0)
        x_prev, x = x, x + gamma * (P.Z.lmo(grad_G.value) - x)
        t += 1
    return x


def fw_lower(P, x, tol, max_iter):
    """Deterministic Frank-Wolfe on g (full gradients) until gap <= tol."""
    for k in range(max_iter):
        grad = P.grad_g(x, batch=P.full_lower())
        s = P.Z.lmo(grad)
        if float(grad @ (x - s)) <= tol:
            break
        x = x + frank_wolfe_step(k) * (s - x)
    return x
