"""Our F2SA, stocBiO and SOBA against benchmark_bilevel's jitted JAX, side
by side, on benchmark_bilevel's quadratic.

The problem is built once with our dataset code (``make_simulated_quadratic``
of ``benchmark_utils/problems/simulated_quadratic.py``, upstream's sizes:
n_inner = n_outer = 1024, dims 100 / 100) and both sides run on the same
arrays: the JAX side in float32 (as upstream: JAX's default
precision), ours in float32 (the like-for-like row) and float64 (our
default). Batch 64, upstream's sampling (fixed contiguous blocks, block
order reshuffled every epoch).

The JAX side is written here (JAX is NOT a dependency of the benchmark:
``pip install jax`` to run this script; without it the script says so and
exits 0). It does the per-iteration work of benchmark_bilevel's solvers
(github.com/benchopt/benchmark_bilevel, ``solvers/soba.py``,
``solvers/stocbio.py``, ``solvers/f2sa.py``, ``benchmark_utils/`` and
``datasets/quadratic.py``; read, not copied), with their default
parameters:

* the oracle of ``datasets/quadratic.py``: ``f(inner_var, outer_var,
  start)`` is the mean over the block ``start:start+64`` (cut with
  ``jax.lax.dynamic_slice``) of the per-sample quadratics, vmapped over the
  stored per-sample matrices (B d^2 work per call); gradients by
  ``jax.grad``, Hessian-vector and cross products by ``jax.vjp`` of the
  gradient, as upstream;
* SOBA: per iteration one inner block (the gradient in y and, from one
  ``vjp``, both second-order products with v) and one outer block (both
  partials of f); steps 0.1 / sqrt(t + 1) (``step_size`` 0.1,
  ``outer_ratio`` 1, exponents 1/2);
* stocBiO: ``n_inner_steps`` = 10 SGD steps on y (one inner block each,
  ``jax.lax.fori_loop``), one outer block, ``n_shia_steps`` = 10 Neumann
  steps (one inner block each, fori_loop), one inner block for the cross
  product; constant steps 0.1;
* F2SA: ``n_inner_steps`` = 10 inner steps, each with two inner blocks (y
  and z) and one outer block (fori_loop), then one outer and two inner
  blocks for the x direction (3T + 3 = 33 blocks); ``step_size`` 0.01,
  exponents (5/7, 4/7, 4/7), ``lmbda0`` 1, ``delta_lmbda`` 0.1 with
  exponent 1/7;
* the jit granularity of upstream's ``StochasticJaxSolver``: one jitted
  ``jax.lax.scan`` over a block of iterations per call (upstream's block is
  ``eval_freq`` = 128 iterations; here the block is about half a second of
  iterations, 2 to 128, so that the slow solvers fit the time budget: one
  dispatch per block, tens of microseconds, against iterations of
  milliseconds);
* the sampler: a block order and position carried in the scan state,
  reshuffled with ``jax.random.permutation`` under ``jax.lax.cond`` at the
  end of each epoch, as upstream's ``init_sampler``. (Upstream's sampler
  tests for the end of the epoch after reading the block, so each of its
  epochs draws the last block of the order twice; the one here reshuffles
  before reading. The cost is the same.)

Our side: the benchmark's solvers on the counting view
(:func:`timing.benchmark_solver`, what ``benchopt run`` times), with the
same numbers of steps and batch sizes in our parameter names: SOBA
``batch_size`` 64, ``inner_step`` 0.1, ``outer_ratio`` 1 (constant steps);
stocBiO ``D`` = 10, ``neumann_terms`` = 11 (10 Hessian-vector products,
upstream's n_shia_steps), ``batch_size`` 64 (every batch), ``inner_step`` =
``linear_system_step`` = ``outer_step`` = 0.1; F2SA ``T`` = 10,
``batch_size`` 64, ``shared_x_batch`` False (independent batches for the
two x-gradients of g, 3T + 3 batches as upstream) and our step rule (the
step values change no per-iteration work). Each in two storage modes of
the problem:

* ``cached`` (our default): a block's batch means are computed on its first
  use and reused (exact; d^2 work per oracle afterwards);
* ``uncached``: every oracle averages the block's matrices (B d^2 work per
  oracle, the work upstream's JAX does).

Timing: wall time per iteration (``jax.block_until_ready`` on the JAX side;
torch on CPU is synchronous), the medians of ``--repeats`` interleaved
rounds (JAX, ours f32 cached, ours f32 uncached, ours f64 cached, ours f64
uncached, JAX, ...), after a warm-up (JIT compilation excluded; our cache
filled by two epochs). Each block is about half a second of iterations (2
to 128; one jitted call on the JAX side); the lengths are printed. The
"cpu" columns are the process CPU time per iteration (all threads; on a
loaded machine wall time also counts the waits for a core, CPU time only
the work, and cpu / wall is how many cores the block kept busy; spin-waits
of idle threads count as CPU time). Each thread setting N runs in its own
process, **pinned to N cores by affinity** (``os.sched_setaffinity``,
before JAX is imported) with torch.set_num_threads(N); for N = 1 also
``XLA_FLAGS=--xla_cpu_multi_thread_eigen=false
intra_op_parallelism_threads=1``. The flags alone do not pin jax 0.10.2
(two Eigen threads stay busy): only the affinity does. The pinning is
checked: the process's allowed cores are printed, and one extra block of
each case counts the threads that were busy (more than 10 % of the
block's wall time on /proc's per-thread clocks) and the cores kept busy
(CPU / wall time), which must not exceed N.

Agreement, before the timing (first process only): from our solver's
start, with the same block sequence (each level's blocks in the order our
counting view draws them, fed to the JAX side as a table) and the same
step sizes (SOBA, stocBiO: our constant steps; F2SA: our alpha_k, gamma_k,
x steps and multiplier increments as a table), the JAX iteration run in
float64 (``jax.enable_x64``) and ours in float64 must agree to 1e-10 after
``CHECK_ITERATIONS`` iterations (several epochs of blocks): the two sides
do the same math.

    python perf/jax_side_by_side.py [--repeats 5] [--threads 2,1]
"""
import argparse
import importlib.util
import math
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pinning import busy_threads, pin_to_cores, thread_clocks  # noqa: E402
from timing import benchmark_solver, solver_module, streams  # noqa: E402

from benchmark_utils.problems.batches import EpochBlockSampler  # noqa: E402
from benchmark_utils.problems.simulated_quadratic import (  # noqa: E402
    FIELDS,
    SimulatedQuadratic,
    make_simulated_quadratic,
)

SEED = 0
BATCH = 64
EVAL_FREQ = 128             # upstream's eval_freq: iterations per jitted call
# iterations of the agreement check (stocBiO and F2SA draw 22 and 33
# blocks per iteration: several epochs in 10 iterations)
CHECK_ITERATIONS = {"SOBA": 40, "stocBiO": 10, "F2SA": 10}
CHECK_TOLERANCE = 1e-10
BLOCK_SECONDS = 0.5         # about the duration of one timed block
ONE_THREAD_XLA = ("--xla_cpu_multi_thread_eigen=false "
                  "intra_op_parallelism_threads=1")
SOLVERS = ("SOBA", "stocBiO", "F2SA")

# upstream's defaults (benchmark_bilevel's solvers/*.py): step-size
# constants and exponents of its scheduler (lr_k = constant / (k + 1)^e)
UPSTREAM = {
    "SOBA": dict(constants=(0.1, 0.1), exponents=(0.5, 0.5)),
    "stocBiO": dict(constants=(0.1, 0.1, 0.1), exponents=(0.0, 0.0, 0.0),
                    n_inner_steps=10, n_shia_steps=10),
    "F2SA": dict(constants=(0.01, 0.01, 0.01, 0.1),
                 exponents=(5 / 7, 4 / 7, 4 / 7, 1 / 7), n_inner_steps=10,
                 lmbda0=1.0),
}
# the same work in our parameter names (module doc)
OURS = {
    "SOBA": {"batch_size": BATCH, "inner_step": 0.1, "outer_ratio": 1.0},
    "stocBiO": {"batch_size": BATCH, "D": 10, "neumann_terms": 11,
                "inner_step": 0.1, "linear_system_step": 0.1,
                "outer_step": 0.1},
    "F2SA": {"batch_size": BATCH, "T": 10, "shared_x_batch": False},
}
# blocks drawn per iteration at the (lower, upper) level
DRAWS = {"SOBA": (1, 1), "stocBiO": (10 + 10 + 1, 1), "F2SA": (22, 11)}

jax = jnp = None            # imported by load_jax, in the timing processes


def load_jax():
    global jax, jnp
    import jax as jax_module
    import jax.numpy as jnp_module
    jax, jnp = jax_module, jnp_module


# -- the JAX side (upstream's work, module doc) ------------------------------

def jax_oracle(arrays, batch_size=BATCH):
    """f(inner_var, outer_var, start): the mean over the block start:start +
    batch_size of the per-sample quadratics 1/2 y^T H y + 1/2 x^T K x +
    x^T C y + a^T y + b^T x, vmapped over the stored matrices."""
    def sample(y, x, H, K, C, a, b):
        value = 0.5 * y @ (H @ y)
        value += 0.5 * x @ (K @ x)
        value += x @ C @ y
        value += a @ y
        value += b @ x
        return value

    batched = jax.vmap(sample, in_axes=(None, None, 0, 0, 0, 0, 0))
    stored = [arrays[name] for name in FIELDS]

    def f(y, x, start):
        block = [jax.lax.dynamic_slice_in_dim(A, start, batch_size)
                 for A in stored]
        return jnp.mean(batched(y, x, *block))
    return f


def epoch_sampler(n, batch_size, key):
    """(draw, state): draw(state) -> (start of the next block, state); the
    blocks in order in the first epoch, reshuffled at each later one."""
    n_blocks = -(-n // batch_size)

    def reshuffle(state):
        key, subkey = jax.random.split(state["key"])
        return (jax.random.permutation(subkey, state["order"]),
                jnp.zeros_like(state["i"]), key)

    def keep(state):
        return state["order"], state["i"], state["key"]

    def draw(state):
        order, i, key = jax.lax.cond(state["i"] == n_blocks, reshuffle, keep,
                                     state)
        return batch_size * order[i], dict(order=order, i=i + 1, key=key)
    return draw, dict(order=jnp.arange(n_blocks), i=jnp.array(0), key=key)


def table_sampler(starts):
    """(draw, state): the given block starts, in order (agreement check)."""
    table = jnp.asarray(starts, dtype=jnp.int32)

    def draw(i):
        return table[i], i + 1
    return draw, jnp.array(0)


def power_schedule(constants, exponents):
    """(next_lrs, state): upstream's scheduler, lr_k = constant / (k+1)^e."""
    constants, exponents = jnp.asarray(constants), jnp.asarray(exponents)

    def next_lrs(k):
        return constants / (k + 1.0) ** exponents, k + 1
    return next_lrs, jnp.array(0)


def table_schedule(rows):
    """(next_lrs, state): row k of the table at iteration k (check)."""
    table = jnp.asarray(rows)

    def next_lrs(k):
        return table[k], k + 1
    return next_lrs, jnp.array(0)


def soba_step(f_in, f_out, draw_in, draw_out, next_lrs):
    grad_in = jax.grad(f_in, argnums=0)
    grad_out = jax.grad(f_out, argnums=(0, 1))

    def step(c, _):
        c = dict(c)
        (lr_y, lr_x), c["lr"] = next_lrs(c["lr"])
        start, c["s_in"] = draw_in(c["s_in"])
        g_y, second_order = jax.vjp(lambda y, x: grad_in(y, x, start),
                                    c["y"], c["x"])
        hvp, cross_v = second_order(c["v"])
        start, c["s_out"] = draw_out(c["s_out"])
        f_y, f_x = grad_out(c["y"], c["x"], start)
        c["y"] = c["y"] - lr_y * g_y
        c["v"] = c["v"] - lr_y * (hvp + f_y)
        c["x"] = c["x"] - lr_x * (cross_v + f_x)
        return c, None
    return step


def stocbio_step(f_in, f_out, draw_in, draw_out, next_lrs, n_inner_steps,
                 n_shia_steps):
    grad_in = jax.grad(f_in, argnums=0)
    grad_out = jax.grad(f_out, argnums=(0, 1))

    def step(c, _):
        c = dict(c)
        (lr_y, eta, lr_x), c["lr"] = next_lrs(c["lr"])
        x = c["x"]

        def sgd(_, carry):
            y, state = carry
            start, state = draw_in(state)
            return y - lr_y * grad_in(y, x, start), state
        y, s_in = jax.lax.fori_loop(0, n_inner_steps, sgd, (c["y"], c["s_in"]))
        start, c["s_out"] = draw_out(c["s_out"])
        f_y, f_x = grad_out(y, x, start)

        def neumann(_, carry):
            p, total, state = carry
            start, state = draw_in(state)
            _, hvp = jax.vjp(lambda z: grad_in(z, x, start), y)
            p = p - eta * hvp(p)[0]
            return p, total + p, state
        _, total, s_in = jax.lax.fori_loop(0, n_shia_steps, neumann,
                                           (f_y, f_y, s_in))
        start, c["s_in"] = draw_in(s_in)
        _, cross = jax.vjp(lambda x_: grad_in(y, x_, start), x)
        c["x"] = x - lr_x * (f_x - cross(eta * total)[0])
        c["y"] = y
        return c, None
    return step


def f2sa_step(f_in, f_out, draw_in, draw_out, next_lrs, n_inner_steps):
    grad_in_y = jax.grad(f_in, argnums=0)
    grad_out_y = jax.grad(f_out, argnums=0)
    grad_in_x = jax.grad(f_in, argnums=1)
    grad_out_x = jax.grad(f_out, argnums=1)

    def step(c, _):
        c = dict(c)
        (alpha, gamma, lr_x, d_lam), c["lr"] = next_lrs(c["lr"])
        x, lam = c["x"], c["lam"]

        def inner(_, carry):
            y, z, s_in, s_out = carry
            # ours draws z's block before y's (the two levels' streams are
            # independent, so only the order within a level matters)
            s_z, s_in = draw_in(s_in)
            s_f, s_out = draw_out(s_out)
            s_y, s_in = draw_in(s_in)
            d_y = lam * grad_in_y(y, x, s_y) + grad_out_y(y, x, s_f)
            d_z = grad_in_y(z, x, s_z)
            return y - alpha * d_y, z - gamma * d_z, s_in, s_out
        y, z, s_in, s_out = jax.lax.fori_loop(
            0, n_inner_steps, inner, (c["y"], c["z"], c["s_in"], c["s_out"]))
        s_f, c["s_out"] = draw_out(s_out)
        s_1, s_in = draw_in(s_in)
        s_2, c["s_in"] = draw_in(s_in)
        d_x = grad_out_x(y, x, s_f) + lam * (grad_in_x(y, x, s_1)
                                             - grad_in_x(z, x, s_2))
        c.update(x=x - lr_x * d_x, y=y, z=z, lam=lam + d_lam)
        return c, None
    return step


def jax_epoch(step, length):
    """One jitted call: ``length`` iterations under jax.lax.scan."""
    def epoch(carry):
        return jax.lax.scan(step, carry, None, length=length)[0]
    return jax.jit(epoch)


def jax_run(name, data, start, samplers, lrs, dtype):
    """(epoch factory, initial carry) of one solver on ``data`` (dict level
    -> field -> jnp array), from ``start`` = (x, y) (numpy)."""
    f_in, f_out = jax_oracle(data["lower"]), jax_oracle(data["upper"])
    (draw_in, s_in), (draw_out, s_out) = samplers
    next_lrs, lr = lrs
    x, y = (jnp.asarray(v, dtype=dtype) for v in start)
    carry = dict(x=x, y=y, lr=lr, s_in=s_in, s_out=s_out)
    up = UPSTREAM[name]
    if name == "SOBA":
        step = soba_step(f_in, f_out, draw_in, draw_out, next_lrs)
        carry["v"] = jnp.zeros_like(y)
    elif name == "stocBiO":
        step = stocbio_step(f_in, f_out, draw_in, draw_out, next_lrs,
                            up["n_inner_steps"], up["n_shia_steps"])
    else:
        step = f2sa_step(f_in, f_out, draw_in, draw_out, next_lrs,
                         up["n_inner_steps"])
        carry.update(z=y, lam=jnp.asarray(up["lmbda0"], dtype=dtype))
    return (lambda length: jax_epoch(step, length)), carry


def jax_data(problem, dtype):
    """The problem's stored per-sample arrays as JAX arrays of ``dtype``."""
    return {level: {k: jnp.asarray(v.numpy(), dtype=dtype)
                    for k, v in fields.items()}
            for level, fields in problem._data.items()}


# -- agreement (module doc) --------------------------------------------------

def block_starts(level, n, count):
    """The first ``count`` block starts our counting view draws at
    ``level`` (seed SEED, batch BATCH)."""
    upper, lower = streams(SEED)
    sampler = EpochBlockSampler(n, upper if level == "upper" else lower)
    return [sampler(BATCH).start for _ in range(count)]


def check_lrs(name, solver, count):
    """Our step sizes as the JAX side's (next_lrs, state) and the F2SA
    multiplier's start."""
    if name == "SOBA":
        return power_schedule((solver.inner_step_, solver.outer_step_),
                              (0.0, 0.0)), None
    if name == "stocBiO":
        steps = solver.steps
        return power_schedule((steps.inner_step, steps.linear_system_step,
                               steps.outer_step), (0.0, 0.0, 0.0)), None
    next_multiplier = solver_module(solver).next_multiplier
    rows, lam0 = [], solver.schedule(0)[2]
    lam = lam0
    for k in range(count):     # F2SA's multiplier="recursion" (eq. (6))
        alpha, gamma, _ = solver.schedule(k)
        new = next_multiplier(lam, alpha, gamma, T=solver.T,
                              mu_g=solver.problem.mu_g,
                              ratio=solver.y_step_ratio)
        rows.append((alpha, gamma, solver.steps.xi * alpha, new - lam))
        lam = new
    return table_schedule(rows), lam0


def check_agreement(name, problem):
    """max |JAX - ours| / max(1, |ours|) over x and y after
    CHECK_ITERATIONS[name] iterations, both in float64 (module doc)."""
    problem.cache_means = True
    solver = benchmark_solver(name, problem, OURS[name], seed=SEED)
    start = (solver.x.numpy().copy(), solver.y.numpy().copy())
    n = CHECK_ITERATIONS[name]
    lower, upper = DRAWS[name]
    with jax.enable_x64(True):
        samplers = (table_sampler(block_starts("lower", problem.n_lower,
                                               n * lower)),
                    table_sampler(block_starts("upper", problem.n_upper,
                                               n * upper)))
        lrs, lam0 = check_lrs(name, solver, n)
        make_epoch, carry = jax_run(name, jax_data(problem, jnp.float64),
                                    start, samplers, lrs, jnp.float64)
        if lam0 is not None:
            carry["lam"] = jnp.asarray(lam0, dtype=jnp.float64)
        carry = make_epoch(n)(carry)
        jx = np.asarray(carry["x"])
        jy = np.asarray(carry["z" if name == "F2SA" else "y"])
    steps = solver.iterations()
    for _ in range(n):
        next(steps)
    # F2SA reports z (the lower-level iterate) as its y
    ox, oy = solver.x.numpy(), solver.y.numpy()
    scale = max(1.0, float(np.abs(ox).max()), float(np.abs(oy).max()))
    error = max(np.abs(jx - ox).max(), np.abs(jy - oy).max()) / scale
    if not error < CHECK_TOLERANCE:
        raise AssertionError(f"{name}: JAX and ours differ by {error:.3g} "
                             f"after {n} iterations")
    return error


# -- timing ------------------------------------------------------------------

def clocks():
    return time.perf_counter(), time.process_time()


def busy(block):
    """(busy threads, cores kept busy) over one run of ``block``: threads
    whose CPU time exceeds 10 % of the wall time, and CPU / wall."""
    before = thread_clocks()
    wall, cpu, _ = block()
    count, _ = busy_threads(before, thread_clocks(), wall)
    return count, cpu / wall


def block_length(seconds_per_iteration):
    """Iterations per timed block: about BLOCK_SECONDS, 2 to EVAL_FREQ."""
    return max(2, min(EVAL_FREQ,
                      math.ceil(BLOCK_SECONDS / seconds_per_iteration)))


def jax_case(name, data, start):
    """block() -> (wall, cpu, iterations) of one jitted call (a scan of
    upstream iterations), compiled and run beforehand."""
    up = UPSTREAM[name]
    keys = jax.random.split(jax.random.PRNGKey(1), 2)
    samplers = tuple(epoch_sampler(data[level]["a"].shape[0], BATCH, key)
                     for level, key in zip(("lower", "upper"), keys,
                                           strict=True))
    lrs = power_schedule(up["constants"], up["exponents"])
    make_epoch, carry = jax_run(name, data, start, samplers, lrs,
                                jnp.float32)
    # a short scan to estimate the time, then the timed length
    probe = make_epoch(2)
    carry = jax.block_until_ready(probe(carry))
    wall = time.perf_counter()
    carry = jax.block_until_ready(probe(carry))
    length = block_length((time.perf_counter() - wall) / 2)
    epoch = make_epoch(length)
    state = {"carry": jax.block_until_ready(epoch(carry))}

    def block():
        wall, cpu = clocks()
        state["carry"] = jax.block_until_ready(epoch(state["carry"]))
        wall_end, cpu_end = clocks()
        return wall_end - wall, cpu_end - cpu, length

    def finite():
        return bool(jnp.isfinite(state["carry"]["x"]).all())
    return block, finite, length


def ours_case(name, problem, cached, threads):
    """block() -> (wall, cpu, iterations) of our solver's iterations in one
    storage mode, after a warm-up (two epochs when cached)."""
    problem.cache_means = cached
    solver = benchmark_solver(name, problem, OURS[name], seed=SEED)
    steps = solver.iterations()

    def advance(count):
        problem.cache_means = cached
        torch.set_num_threads(threads)     # pre_run_hook sets the benchmark's
        wall, cpu = clocks()
        for _ in range(count):
            next(steps)
        wall_end, cpu_end = clocks()
        return wall_end - wall, cpu_end - cpu, count

    warm = 2 * problem.n_lower // BATCH if cached else 2
    wall, _, _ = advance(warm)
    length = block_length(wall / warm)

    def finite():
        return bool(torch.isfinite(solver.x).all())
    return (lambda: advance(length)), finite, length


def median_ms(samples):
    """(wall, CPU) medians in ms per iteration of (wall, cpu, n) blocks."""
    return (1e3 * statistics.median(w / n for w, _, n in samples),
            1e3 * statistics.median(c / n for _, c, n in samples))


def time_solver(name, problems, data, repeats, threads):
    start = tuple(v.numpy().copy() for v in benchmark_solver(
        name, problems["float64"], OURS[name], seed=SEED).result().values())
    cases = {"jax": jax_case(name, data, start)}
    for dtype in ("float32", "float64"):
        for cached in (True, False):
            cases[dtype, cached] = ours_case(name, problems[dtype], cached,
                                             threads)
    samples = {key: [] for key in cases}
    for _ in range(repeats):
        for key, (block, _, _) in cases.items():
            samples[key].append(block())
    diverged = [str(key) for key, (_, finite, _) in cases.items()
                if not finite()]
    lengths = {key: length for key, (_, _, length) in cases.items()}
    occupancy = {key: busy(block) for key, (block, _, _) in cases.items()}
    return ({key: median_ms(s) for key, s in samples.items()}, lengths,
            diverged, occupancy)


def case_label(key):
    """'JAX' or '<dtype> cached|uncached'."""
    if key == "jax":
        return "JAX"
    return f"{key[0]} {'cached' if key[1] else 'uncached'}"


def float32_copy(problem):
    """The same stored arrays in float32 (one draw for both precisions)."""
    arrays = [{k: v.numpy() for k, v in problem._data[level].items()}
              for level in ("lower", "upper")]
    return SimulatedQuadratic(*arrays, dtype=torch.float32)


def child(args):
    began = time.perf_counter()
    threads = args.threads[0]
    cores = pin_to_cores(threads)       # before JAX starts its threads
    load_jax()
    torch.set_num_threads(threads)
    problems = {"float64": make_simulated_quadratic()}
    problems["float32"] = float32_copy(problems["float64"])
    if args.check:
        errors = {name: check_agreement(name, problems["float64"])
                  for name in SOLVERS}
        print("agreement, JAX (x64) vs ours (float64), same start, blocks "
              "and steps: "
              + ", ".join(f"{name} {error:.1e} after "
                          f"{CHECK_ITERATIONS[name]} iterations"
                          for name, error in errors.items())
              + f" (max |diff| / max(1, |ours|), tolerance "
                f"{CHECK_TOLERANCE:g})", flush=True)
    data = jax_data(problems["float32"], jnp.float32)
    xla = os.environ.get("XLA_FLAGS") or "default"
    print(f"\n{threads} thread(s): pinned to core(s) {cores}, "
          f"torch.set_num_threads({threads}), "
          f"XLA_FLAGS {xla}; JAX {jax.__version__} float32; median of "
          f"{args.repeats} interleaved rounds; ms per iteration, wall "
          "time and process CPU time (cpu)")
    print(f"{'':8s} {'JAX':>15s}  {'':8s} {'ours':>24s}  "
          f"{'ours / JAX':>26s}")
    print(f"{'solver':8s} {'wall':>7s} {'cpu':>7s}  {'dtype':8s} "
          f"{'cached':>7s} {'uncached':>8s} {'cpu':>7s}  {'cached':>7s} "
          f"{'uncached':>8s} {'cpu':>9s}")
    blocks, occupancies = [], []
    for name in SOLVERS:
        medians, lengths, diverged, occupancy = time_solver(
            name, problems, data, args.repeats, threads)
        occupancies.append((name, occupancy))
        jax_ms, jax_cpu = medians["jax"]
        for i, dtype in enumerate(("float32", "float64")):
            cached, _ = medians[dtype, True]
            uncached, cpu = medians[dtype, False]
            left = (f"{name:8s} {jax_ms:7.2f} {jax_cpu:7.2f}" if i == 0
                    else " " * 24)
            print(f"{left}  {dtype:8s} {cached:7.2f} {uncached:8.2f} "
                  f"{cpu:7.2f}  {cached / jax_ms:7.3f} "
                  f"{uncached / jax_ms:8.2f} {cpu / jax_cpu:9.2f}",
                  flush=True)
        blocks.append(f"{name} " + "/".join(str(n) for n in lengths.values()))
        if diverged:
            print(f"  warning: non-finite iterate at the end in {diverged}")
    worst = 0.0
    for name, occupancy in occupancies:
        print(f"busy threads / cores kept busy, {name}: " + ", ".join(
            f"{case_label(key)} {n} / {c:.2f}"
            for key, (n, c) in occupancy.items()))
        worst = max([worst] + [c for _, c in occupancy.values()])
    if worst > threads * 1.05:
        print(f"  warning: {worst:.2f} cores kept busy, more than the "
              f"{threads} pinned: the timing is not at {threads} core(s)")
    print("iterations per timed block (JAX/f32 cached/f32 uncached/f64 "
          f"cached/f64 uncached): {', '.join(blocks)}; this process took "
          f"{time.perf_counter() - began:.0f} s", flush=True)
    return 0


def parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", default="2,1",
                        help="thread settings, one process each")
    parser.add_argument("--no-check", action="store_true")
    parser.add_argument("--child", action="store_true",
                        help=argparse.SUPPRESS)
    parser.add_argument("--check", action="store_true",
                        help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.threads = [int(t) for t in args.threads.split(",")]
    if args.repeats < 1 or any(t < 1 for t in args.threads):
        raise ValueError("--repeats and --threads must be integers >= 1")
    return args


def main(argv=None):
    args = parse(sys.argv[1:] if argv is None else argv)
    if importlib.util.find_spec("jax") is None:
        print("jax is not installed: skipped (pip install jax to compare "
              "with benchmark_bilevel's jitted JAX; JAX is not a dependency "
              "of this benchmark)")
        return 0
    if args.child:
        return child(args)
    for i, threads in enumerate(args.threads):
        env = dict(os.environ)
        if threads == 1:
            env["XLA_FLAGS"] = " ".join(
                filter(None, (env.get("XLA_FLAGS"), ONE_THREAD_XLA)))
        command = [sys.executable, str(Path(__file__).resolve()), "--child",
                   "--threads", str(threads), "--repeats", str(args.repeats)]
        if i == 0 and not args.no_check:
            command.append("--check")
        subprocess.run(command, env=env, check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
