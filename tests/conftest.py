"""Shared test helpers: load benchmark classes the way benchopt does and
drive a solver through its real lifecycle (set_objective, pre_run_hook,
run with a callback) without the CLI, caching or timing."""
import functools
import inspect
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from benchopt.benchmark import Benchmark
from benchopt.utils.run_context import RunContext
from threadpoolctl import threadpool_limits

from benchmark_utils.problems.least_squares import LeastSquaresBilevel
from benchmark_utils.sets import L1Ball
from benchmark_utils.solvers.base import BilevelSolver

ROOT = Path(__file__).resolve().parents[1]

# the thread limit of this process, held for the session (pytest_configure)
_THREAD_LIMITS = []


def one_line(text):
    """``text`` with every run of whitespace one space: a doc's sentence
    as tests search it, whatever its line breaks."""
    return " ".join(text.split())


def pytest_configure(config):
    """One BLAS and OpenMP thread in each test process and in the benchopt
    runs it starts: the suite runs two workers on two cores, and OpenBLAS
    threads that outnumber the cores busy-wait (an SVD of 1068 x 500
    measured 25x slower with two threads per process on two busy cores).
    Solvers already run torch on one thread (solvers/base.py)."""
    for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                     "MKL_NUM_THREADS"):
        os.environ.setdefault(variable, "1")
    _THREAD_LIMITS.append(threadpool_limits(
        limits=int(os.environ["OPENBLAS_NUM_THREADS"])))
    torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))

# the files whose tests take longest (pytest --durations=0 on two workers),
# longest first: they are handed out first (pytest_collection_modifyitems,
# with --no-loadscope-reorder in pytest.ini), so that no long file starts
# last while the other worker idles. The order changes the wall time only.
LONG_FILES = ("test_compare.py", "test_tuning_transfer.py", "test_benchopt.py",
              "test_tuning.py", "test_claims_report.py", "test_claims_cli.py",
              "test_hyper_cleaning_progress.py", "test_tuning_pieces.py",
              "test_tuned_hyper_cleaning.py", "test_run_list_checks.py",
              "test_instance_digests.py", "test_cut_lmo.py")


def pytest_collection_modifyitems(items):
    def rank(item):
        name = item.path.name
        return LONG_FILES.index(name) if name in LONG_FILES else len(
            LONG_FILES)
    items.sort(key=rank)    # stable: each file's tests keep their order


# the quick instances of configs/quick.yml, kept small for the test suite
QUICK_REGRESSION = dict(n_samples=150, n_features=80)
QUICK_DICTIONARY = dict(n_samples=60, n_init_iter=1000)


@functools.lru_cache(maxsize=None)
def benchmark():
    return Benchmark(ROOT)


def component(kind, name):
    classes = {"dataset": benchmark().get_datasets,
               "solver": benchmark().get_solvers}[kind]()
    matches = [c for c in classes if c.name == name]
    assert matches, f"no {kind} named {name}"
    return matches[0]


@functools.lru_cache(maxsize=None)
def _dataset_data(name, frozen_params):
    dataset = component("dataset", name).get_instance(**dict(frozen_params))
    return dataset, dataset.get_data()


def dataset_data(name, **params):
    """(dataset instance, get_data() dict), cached per parameter set."""
    return _dataset_data(name, tuple(sorted(params.items())))


def python_script(script, timeout=120):
    """``python -c script`` in the repository root, in a fresh process (what
    it imports or changes stays there): its completed process, output
    captured as text."""
    return subprocess.run([sys.executable, "-c", script], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


def make_problem(name, **params):
    return dataset_data(name, **params)[1]["problem"]


@pytest.fixture
def documented_defaults(monkeypatch):
    """Solvers that ignore the default instances' tuned steps (docs/steps.md):
    for tests of the documented default rules, which the
    tuned table of an instance replaces in a plain run."""
    resolve = BilevelSolver.resolve
    monkeypatch.setattr(BilevelSolver, "resolve",
                        lambda solver, problem, tuned_steps=None:
                        resolve(solver, problem, None))


class RecordingCallback:
    """A benchopt-like callback: logs metrics at ``eval_at`` iterations and
    stops after ``n_iter`` iterations, or at a row flagged ``diverged`` as
    the objective's stopping criterion makes benchopt do (same
    ``it``/``next_stopval`` protocol as benchopt's ``_Callback``)."""

    def __init__(self, objective, solver, n_iter, eval_at=None):
        self.objective, self.solver, self.n_iter = objective, solver, n_iter
        points = {0, n_iter} if eval_at is None else set(eval_at) | {n_iter}
        self.eval_at = sorted(points)
        self.it, self.records = 0, []
        self.next_stopval = self.eval_at[0]

    def __call__(self):
        if self.it == self.next_stopval:
            metrics = self.objective.evaluate_result(
                **self.solver.get_result())
            self.records.append(dict(metrics, iteration=self.it))
            if metrics.get("diverged"):
                return False
            later = [p for p in self.eval_at if p > self.it]
            if not later:
                return False
            self.next_stopval = later[0]
        self.it += 1
        return True


def record_depths(monkeypatch, solver_name, draw_name="draw_neumann_depth"):
    """Spy on a solver's random depth draw: the list of the depths it draws,
    appended as it runs. The draw is wrapped in the namespace of the module
    that holds the solver's loop, so solvers keep no record for tests."""
    solver = component("solver", solver_name)
    module = inspect.getmodule(solver.iterations)
    original, depths = getattr(module, draw_name), []

    def spy(*args, **kwargs):
        depths.append(original(*args, **kwargs))
        return depths[-1]

    monkeypatch.setattr(module, draw_name, spy)
    return depths


def run_solver(solver_name, dataset_name, dataset_params=None,
               solver_params=None, n_iter=100, eval_at=None, repetition=0):
    """Run a solver for ``n_iter`` iterations; return (records, solver)."""
    dataset, data = dataset_data(dataset_name, **(dataset_params or {}))
    objective = benchmark().get_benchmark_objective().get_instance()
    solver = component("solver", solver_name).get_instance(
        **(solver_params or {}))
    RunContext(base_seed="0", objective_name=objective.name,
               dataset_name=dataset.name, solver_name=solver.name,
               repetition=repetition).attach(objective, dataset, solver)
    objective.set_data(**data)
    skip, reason = solver._set_objective(objective)
    if skip:
        pytest.skip(reason)
    callback = RecordingCallback(objective, solver, n_iter, eval_at)
    solver.pre_run_hook(callback)
    solver.run(callback)
    return callback.records, solver


# a tiny least-squares simple bilevel problem, built directly (no dataset)
def least_squares_problem(loss, seed=0):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((30, 12))
    b = rng.standard_normal(30)
    return LeastSquaresBilevel(A[:10], b[:10], A[10:25], b[10:25],
                               L1Ball(12, 3.0), loss=loss,
                               A_test=A[25:], b_test=b[25:])


@pytest.fixture
def jax_layout(request):
    """(tests of the port of jax.random) JAX with
    jax_threefry_partitionable set to the parameter, restored afterwards."""
    jax = pytest.importorskip("jax")
    old = jax.config.jax_threefry_partitionable
    jax.config.update("jax_threefry_partitionable", request.param)
    yield jax, request.param
    jax.config.update("jax_threefry_partitionable", old)


def name_tables():
    """docs/steps.md's "Parameter names" tables: ``(shared, own)``, the
    names of the shared table (each row's first cell may name several)
    and ``{name: solver}`` of the one-solver table; a name listed twice
    fails."""
    text = (ROOT / "docs" / "steps.md").read_text()
    section = text.split("## Parameter names", 1)[1].split("\n## ", 1)[0]
    shared_part, own_part = section.split("### Parameters of one solver")
    shared = [name for line in shared_part.splitlines()
              if line.startswith("| `")
              for name in re.findall(r"`(\w+)`", line.split("|")[1])]
    own = [(re.findall(r"`(\w+)`", line.split("|")[1])[0],
            line.split("|")[2].strip())
           for line in own_part.splitlines() if line.startswith("| `")]
    names = shared + [name for name, _ in own]
    assert len(names) == len(set(names)), "a name listed twice"
    return set(shared), dict(own)
