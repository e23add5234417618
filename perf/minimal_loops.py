"""Is a benchmark solver as fast as the loop one would write by hand?

For IR-SCG and SBCGI (simple family: least-squares regression, d = 500, a
batch of one sample per level) and F2SA and stocBiO (general family: the
quadratic with dim_x = dim_y = 100, the solvers' default batch of 16),
this times the benchmark's solver iteration (its ``iterations()``
generator on the counting view, exactly what ``benchopt run`` times)
against a minimal hand-written torch loop that makes the same oracle
calls with the same formulas, and prints the ratio.

The minimal loops are written as one would write each method in a
notebook: plain tensors, indices drawn with ``torch.randint``, each
drawn batch's per-sample rows gathered once (one gather per level and
batch), every formula inline, no estimator, schedule or set object. They
use the problem's raw tensors and nothing else from the benchmark, except
SBCGI's cut subproblem (the set's exact ``cut_lmo`` on the raw set: the
algorithm is the method's math, not the framework's).

Before timing, each minimal loop is checked against the benchmark
solver: same seed, same start, the iterates must agree to 1e-12 after
``CHECK_ITERATIONS`` iterations, so the two really do the same work.
Timing: both are advanced in blocks of iterations, interleaved (A, B, A,
B, ...), one thread, and the medians of the per-block times are compared.

    python perf/minimal_loops.py [n_blocks] [iterations_per_block] [case]

(``case``: a part of a case's name, e.g. ``IR-SCG``, runs that one only.)
"""
import statistics
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from timing import advance, benchmark_solver, regression_problem, streams  # noqa: E402

from benchmark_utils.problems.quadratic import make_quadratic_bilevel  # noqa: E402
from benchmark_utils.solvers.base import NUM_THREADS  # noqa: E402

SEED = 0
CHECK_ITERATIONS = 200
GOAL = 1.2


# -- problems ------------------------------------------------------------

def quadratic_problem(dim=100, n=1000):
    """The benchmark's quadratic, unconstrained, dim_x = dim_y = dim."""
    return make_quadratic_bilevel(dim_x=dim, dim_y=dim, n_samples=n)


# -- the benchmark's side ------------------------------------------------

# -- minimal loops: one generator each, one ``yield`` per iteration --------
# ``state`` is a dict the loop keeps its current iterate(s) in, so the
# agreement check can read them.

def minimal_ir_scg(P, x, state, varsigma=10.0, p=0.25, S=1):
    """IR-SCG, convex schedule, weighted average z_t (Giang-Tran et al.
    2025, Alg. 1 with Thm 1's alpha_t, sigma_t)."""
    gen_u, gen_l = streams(SEED)
    Au, bu, Al, bl = P.A_upper, P.b_upper, P.A_lower, P.b_lower
    sf, sg = 2.0 * P.c_upper / S, 2.0 * P.c_lower / S
    r = P.Z.radius
    x_prev, dF, dG, M, W, t = None, None, None, None, 0.0, 0
    while True:
        alpha, sigma = 2.0 / (t + 2), varsigma * (t + 1.0) ** -p
        i = torch.randint(P.n_upper, (S,), generator=gen_u)
        j = torch.randint(P.n_lower, (S,), generator=gen_l)
        A_i, b_i, A_j, b_j = Au[i], bu[i], Al[j], bl[j]
        gf = sf * ((A_i @ x - b_i) @ A_i)
        gg = sg * ((A_j @ x - b_j) @ A_j)
        if x_prev is None:
            dF, dG = gf, gg
        else:
            dF = gf + (1.0 - alpha) * (dF - sf * ((A_i @ x_prev - b_i) @ A_i))
            dG = gg + (1.0 - alpha) * (dG - sg * ((A_j @ x_prev - b_j) @ A_j))
        c = sigma * dF + dG
        k = c.abs().argmax()
        v = torch.zeros_like(x)
        v[k] = -r * c[k].sign()
        x_prev, x = x, x + alpha * (v - x)
        w = (t + 2) * (t + 1) * (sigma - varsigma * (t + 2.0) ** -p)
        M = w * x if M is None else M + w * x
        W += w
        head = (t + 2) * (t + 1) * varsigma * (t + 2.0) ** -p
        state["x"] = (lambda x=x, M=M, W=W, head=head:
                      (head * x + M) / (head + W))
        yield
        t += 1


def minimal_sbcgi(P, x, state, g_x0, gamma0=0.01, omega=1.0, K0=1e-4,
                  K_exponent=0.5, S=1):
    """SBCGI (Cao et al. 2023, Alg. 1): three STORM estimates, the cut
    subproblem solved by the set's exact cut-LMO, the Frank-Wolfe step."""
    gen_u, gen_l = streams(SEED)
    Au, bu, Al, bl = P.A_upper, P.b_upper, P.A_lower, P.b_lower
    sf, cg = 2.0 * P.c_upper / S, P.c_lower / S
    Z = P.Z
    x_prev, dF, dG, g_hat, t = None, None, None, None, 0
    while True:
        weight = (t + 1.0) ** -omega
        i = torch.randint(P.n_upper, (S,), generator=gen_u)
        A_i, b_i = Au[i], bu[i]
        gf = sf * ((A_i @ x - b_i) @ A_i)
        j = torch.randint(P.n_lower, (S,), generator=gen_l)
        A_j, b_j = Al[j], bl[j]
        res = A_j @ x - b_j
        gv, gg = cg * (res @ res), (2.0 * cg) * (res @ A_j)
        if x_prev is None:
            dF, dG, g_hat = gf, gg, gv
        else:
            dF = gf + (1.0 - weight) * (dF - sf * ((A_i @ x_prev - b_i) @ A_i))
            res = A_j @ x_prev - b_j
            g_hat = gv + (1.0 - weight) * (g_hat - cg * (res @ res))
            dG = gg + (1.0 - weight) * (dG - (2.0 * cg) * (res @ A_j))
        beta = (float(dG @ x) + g_x0 - float(g_hat)
                + K0 * (t + 1.0) ** -K_exponent)
        cut = Z.cut_lmo(dF, dG, beta)
        s = cut.point if cut.feasible else Z.lmo(dG)
        x_prev, x = x, x + gamma0 * (t + 2.0) ** -omega * (s - x)
        state["x"] = lambda x=x: x
        yield
        t += 1


def _lower_rows(P):
    """Per-sample lower-level data stacked once: [delta | d | p | q]."""
    return torch.cat([P.hess_diag, P.d, P.cross_left, P.cross_right], 1)


def _quadratic_oracles(P):
    """grad_y g, grad_x g, grad_y f, grad_x f, the two Hessian products of
    the quadratic on a batch of gathered rows (``rows`` of the stacked
    lower data, ``up`` of the stacked upper data [b | a])."""
    dy, H, C = P.dim_y, P.H, P.C
    rho = P.upper_reg

    def grad_g_y(x, y, rows):
        m = rows[:, :2 * dy].mean(0)
        Pj, Qj = rows[:, 2 * dy:3 * dy], rows[:, 3 * dy:]
        return (H @ y + m[:dy] * y + C @ x + Pj.T @ (Qj @ x) / rows.shape[0]
                + m[dy:])

    def cross_t(v, rows):                   # C_B^T v = grad^2_xy g v
        Pj, Qj = rows[:, 2 * dy:3 * dy], rows[:, 3 * dy:]
        return C.T @ v + Qj.T @ (Pj @ v) / rows.shape[0]

    def hess(v, rows):                      # H_B v
        return H @ v + rows[:, :dy].mean(0) * v

    def grad_f(x, y, up):                   # (grad_x f, grad_y f)
        m = up.mean(0)
        return rho * (x - m[dy:]), y - m[:dy]

    return grad_g_y, cross_t, hess, grad_f


def f2sa_gamma0(P, T=10):
    """(3a)'s bound min(1/(4 L_g), 1/(4 T mu_g)), passed explicitly."""
    return min(1.0 / (4.0 * P.L_g), 1.0 / (4.0 * T * P.mu_g))


# F2SA's parameters, given explicitly to the benchmark solver so that both
# loops run the same configuration whatever the defaults (the steps:
# f2sa_params)
F2SA_PARAMS = {"T": 10, "lambda0": 10.0,
               "step_offset": 10, "batch_size": 16, "shared_x_batch": True,
               "multiplier": "recursion", "noise": "both"}
F2SA_XI = 20.0


def f2sa_params(P):
    """F2SA_PARAMS with the steps on ``P``: gamma_0 = f2sa_gamma0 and the x
    step at k = 0 (``outer_step``) xi alpha_0, xi = F2SA_XI, alpha_0 =
    gamma_0 / lambda0 (the solver's y_step_ratio 1)."""
    gamma0 = f2sa_gamma0(P, F2SA_PARAMS["T"])
    alpha0 = gamma0 / F2SA_PARAMS["lambda0"]
    return dict(F2SA_PARAMS, inner_step=gamma0, outer_step=F2SA_XI * alpha0)


def minimal_f2sa(P, x, y, state, T=10, xi=20.0, lambda0=10.0, k0=10, S=16):
    """F2SA (Kwon et al. 2023, Alg. 1), eq. (5)-(7) steps with the
    'both' exponents, the multiplier recursion (6), one batch for the two
    x-gradients of g in line 8."""
    gen_u, gen_l = streams(SEED)
    low, up = _lower_rows(P), torch.cat([P.b, P.a], 1)
    grad_g_y, cross_t, _, grad_f = _quadratic_oracles(P)
    a, c = 5 / 7, 4 / 7
    gamma0 = f2sa_gamma0(P, T)
    c_gamma, c_alpha = gamma0 * k0 ** c, gamma0 / (2.0 * lambda0) * k0 ** a
    nu, nl = P.n_upper, P.n_lower
    z, k, lam = y.clone(), 0, lambda0
    while True:
        alpha, gamma = c_alpha / (k + k0) ** a, c_gamma / (k + k0) ** c
        for _ in range(T):
            rows = low[torch.randint(nl, (S,), generator=gen_l)]
            z = z - gamma * grad_g_y(x, z, rows)
            ups = up[torch.randint(nu, (S,), generator=gen_u)]
            rows = low[torch.randint(nl, (S,), generator=gen_l)]
            y = y - alpha * (grad_f(x, y, ups)[1] + lam * grad_g_y(x, y, rows))
        ups = up[torch.randint(nu, (S,), generator=gen_u)]
        rows = low[torch.randint(nl, (S,), generator=gen_l)]
        # one batch for both x-gradients of g (shared_x_batch=True)
        direction = grad_f(x, y, ups)[0] + lam * (cross_t(y, rows)
                                                  - cross_t(z, rows))
        x = x - xi * alpha * direction
        lam = lam + min(T * P.mu_g / 16.0 * alpha * lam ** 2,
                        gamma / (2.0 * alpha) - lam)
        state["x"] = lambda x=x: x
        yield
        k += 1


def minimal_stocbio(P, x, y, state, D=10, Q=20, beta=0.1, S=16):
    """stocBiO (Ji et al. 2021, Alg. 2 with the Neumann series of Alg. 3):
    alpha = 2/(L_g + mu_g), eta = 1/L_g."""
    gen_u, gen_l = streams(SEED)
    low, up = _lower_rows(P), torch.cat([P.b, P.a], 1)
    grad_g_y, cross_t, hess, grad_f = _quadratic_oracles(P)
    alpha, eta = 2.0 / (P.L_g + P.mu_g), 1.0 / P.L_g
    nu, nl = P.n_upper, P.n_lower
    while True:
        for _ in range(D):
            y = y - alpha * grad_g_y(x, y, low[torch.randint(
                nl, (S,), generator=gen_l)])
        gx, gy = grad_f(x, y, up[torch.randint(nu, (S,), generator=gen_u)])
        p = total = gy
        for _ in range(Q):
            rows = low[torch.randint(nl, (S,), generator=gen_l)]
            p = p - eta * hess(p, rows)
            total = total + p
        v = eta * total
        x = x - beta * (gx - cross_t(v, low[torch.randint(
            nl, (S,), generator=gen_l)]))
        state["x"] = lambda x=x: x
        yield


# -- cases ---------------------------------------------------------------

def case_ir_scg():
    P = regression_problem()
    solver = benchmark_solver("IR-SCG", P, {})
    state = {}
    return solver, minimal_ir_scg(P, solver.x.clone(), state), state


def case_sbcgi():
    P = regression_problem()
    # no SPIDER-FW warm start (the streams then start fresh in both
    # loops); g(x_0) computed untimed in pre_run_hook
    solver = benchmark_solver("SBCGI", P, {"warm_start_method": "none",
                                           "charge_warm_start": False})
    state = {}
    return solver, minimal_sbcgi(P, solver.x.clone(), state,
                                 g_x0=solver.g_x0), state


def case_f2sa():
    P = quadratic_problem()
    solver = benchmark_solver("F2SA", P, f2sa_params(P))
    state = {}
    return solver, minimal_f2sa(P, solver.x.clone(), solver.y.clone(),
                                state), state


def case_stocbio():
    P = quadratic_problem()
    solver = benchmark_solver("stocBiO", P, {
        "D": 10, "neumann_terms": 21, "outer_step": 0.1, "batch_size": 16,
        "inner_step": 2.0 / (P.L_g + P.mu_g),
        "linear_system_step": 1.0 / P.L_g})
    state = {}
    return solver, minimal_stocbio(P, solver.x.clone(), solver.y.clone(),
                                   state), state


CASES = {
    "IR-SCG (regression d=500, batch 1)": case_ir_scg,
    "SBCGI (regression d=500, batch 1)": case_sbcgi,
    "F2SA (quadratic dims 100, batch 16)": case_f2sa,
    "stocBiO (quadratic dims 100, batch 16)": case_stocbio,
}


def check_agreement(make_case):
    """Both loops from the same start and seed: the reported x agree."""
    solver, minimal, state = make_case()
    steps = solver.iterations()
    for _ in range(CHECK_ITERATIONS):
        next(steps)
        next(minimal)
    ours, theirs = solver.result()["x"], state["x"]()
    error = float((ours - theirs).abs().max() / max(1.0, ours.abs().max()))
    assert error < 1e-12, f"the minimal loop differs: {error:.3g}"
    return error


def compare(make_case, n_blocks, per_block):
    solver, minimal, _ = make_case()
    ours = solver.iterations()
    advance(ours, per_block)                 # warm-up
    advance(minimal, per_block)
    t_ours, t_min = [], []
    for block in range(n_blocks):            # interleaved, ABBA order
        pair = [(ours, t_ours), (minimal, t_min)]
        for steps, times in (pair if block % 2 == 0 else pair[::-1]):
            times.append(advance(steps, per_block) / per_block)
    return statistics.median(t_ours), statistics.median(t_min)


def main(n_blocks=15, per_block=None, only=""):
    torch.set_num_threads(NUM_THREADS)
    print(f"{'case':42s} {'benchmark':>11s} {'minimal':>11s} {'ratio':>6s}")
    worst = 0.0
    for label, make_case in CASES.items():
        if only.lower() not in label.lower():
            continue
        check_agreement(make_case)
        n = per_block or (200 if label.startswith(("IR", "SBCGI")) else 20)
        ours, minimal = compare(make_case, n_blocks, n)
        ratio = ours / minimal
        worst = max(worst, ratio)
        print(f"{label:42s} {1e6 * ours:8.1f} us {1e6 * minimal:8.1f} us "
              f"{ratio:6.2f}")
    print(f"worst ratio {worst:.2f} (goal <= {GOAL}); medians of {n_blocks} "
          f"interleaved blocks (thread CPU time), {NUM_THREADS} thread(s); "
          f"iterates checked equal to 1e-12 after {CHECK_ITERATIONS} "
          "iterations")
    return worst


if __name__ == "__main__":
    numbers = [int(a) for a in sys.argv[1:] if a.isdigit()]
    names = [a for a in sys.argv[1:] if not a.isdigit()]
    main(*numbers, only=names[0] if names else "")
