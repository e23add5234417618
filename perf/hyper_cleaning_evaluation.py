"""Cost of one exact evaluation of the hyper-cleaning metrics at the papers'
sizes: the previous method against the current one (with float32 CG
products and with float64 only), side by side.

An evaluation is what ``general_metrics`` does at an iterate: the exact
y*(x) (Newton's method, warm-started at the previous evaluation's solution,
certified by ||grad_y g|| / mu_g >= ||y - y*||), the exact hypergradient
(one more Hessian system, conjugate gradient warm-started at the previous
one) and the task metrics. Two instances:

* Kwon et al. 2023: 19000 train / 1000 validation, sums, c = 0.01, p = 0.3;
* Huang et al. 2021: 5000 / 5000, means, C = 0.001, rho = 0.6.

Each method runs the same sequence, as a run makes it: the cold first
evaluation at x0 = 0, then ``n_warm`` evaluations at x_{t+1} = x_t + 0.05
N(0, I) (nearby points, the Kronecker preconditioner's data factor reused
while max |x - x_S| <= 0.5). "Previous" is the code of commit PREVIOUS
(the three modules of the exact solve, read with ``git show`` and run
unchanged: the products with A in torch on its two threads, the per-sample
work in NumPy); "current" is the working tree's (the products on row
blocks in parallel threads, single-threaded BLAS each, see
benchmark_utils/numerics/softmax_sum.py), once with its default
``hvp_precision="mixed"`` (CG iterations on float32 products, residuals
refined in float64) and once with ``"float64"`` products throughout.
Both at torch.set_num_threads(2). MNIST is used when its
files are in the benchmark's data folder (``benchopt prepare``); otherwise
an MNIST-shaped offline stand-in (scikit-learn's 8 x 8 digits upsampled to
28 x 28, randomly shifted by up to 2 pixels, with pixel noise, 25000
images, 784 features in [0, 1], 10 classes), labelled as such.

Columns: wall seconds, CPU seconds of the process (both threads; less
sensitive to other processes than wall time on a shared machine),
Hessian-vector products (Newton's CG + the hypergradient's; "f32": how
many of them in float32), Newton steps, and the recorded bound
||grad_y g|| / mu_g. The last lines give the medians of the warm
evaluations and their ratios to the previous method, and the agreement of
F(x) and ||grad F(x)|| between the methods.

    python perf/hyper_cleaning_evaluation.py [n_warm]
"""
import functools
import statistics
import subprocess
import sys
import time
import types
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmark_utils.data.mnist import load_mnist  # noqa: E402
from benchmark_utils.metrics import general_metrics  # noqa: E402
from benchmark_utils.problems.hyper_cleaning import make_hyper_cleaning  # noqa: E402

# the last commit with the previous method (products with A in torch;
# known rounding floor, warm starts, preconditioner reuse as now)
PREVIOUS = "e4233d65c751b5a99d5ce4cea3802c7e23f96800"
# modules of the working tree that moved since PREVIOUS
MOVED_SINCE = {
    "benchmark_utils.parameter_checks": "benchmark_utils.checks.parameters",
    "benchmark_utils.linear_systems":
        "benchmark_utils.numerics.linear_systems",
}
PREVIOUS_MODULES = ("kronecker_preconditioner", "newton_inner_solver",
                    "hyper_cleaning")
N_WARM = 3
STEP = 0.05
INSTANCES = {
    "Kwon et al. 2023 (19000/1000, sum, c=0.01)": dict(
        n_train=19000, n_val=1000, n_test=1000, corruption=0.3, c=0.01,
        reduction="sum"),
    "Huang et al. 2021 (5000/5000, mean, C=0.001)": dict(
        n_train=5000, n_val=5000, n_test=1000, corruption=0.6, c=0.001,
        reduction="mean"),
}


def mnist_standin(n_images=25000, seed=0):
    """MNIST-shaped images from scikit-learn's digits (module doc)."""
    from scipy.ndimage import zoom
    from sklearn.datasets import load_digits
    rng = np.random.default_rng(seed)
    digits = load_digits()
    base = np.stack([zoom(im, 28 / 8, order=1) for im in digits.images])
    base = np.clip(base / 16.0, 0.0, 1.0)
    index = rng.integers(0, base.shape[0], n_images)
    shifts = rng.integers(-2, 3, size=(n_images, 2))
    images = np.stack([np.roll(base[i], tuple(s), axis=(0, 1))
                       for i, s in zip(index, shifts, strict=True)])
    images = np.clip(images + 0.1 * rng.standard_normal(images.shape), 0, 1)
    return images.reshape(n_images, -1), digits.target[index]


def load_data():
    """(label, features, labels, test_features, test_labels)."""
    try:
        from benchopt.config import get_data_path
        folder = get_data_path("mnist")
    except Exception:  # outside a benchopt run: the default data folder
        folder = ROOT / "data" / "mnist"
    try:
        train, train_labels, test, test_labels = load_mnist(folder)
        return "MNIST", train, train_labels, test, test_labels
    except FileNotFoundError:
        features, labels = mnist_standin()
        return ("MNIST-SHAPED STAND-IN (digits upsampled to 28x28; MNIST "
                "files not found)", features, labels, None, None)


def previous_maker():
    """``make_hyper_cleaning`` of commit PREVIOUS: its three modules, read
    by ``git show`` and executed as private modules importing each other
    (the rest of benchmark_utils is the working tree's)."""
    for name in PREVIOUS_MODULES:
        source = subprocess.run(
            ["git", "-C", str(ROOT), "show",
             f"{PREVIOUS}:benchmark_utils/problems/{name}.py"],
            capture_output=True, text=True, check=True).stdout
        for other in PREVIOUS_MODULES:
            source = source.replace(f"benchmark_utils.problems.{other}",
                                    f"_previous_{other}")
        for before, now in MOVED_SINCE.items():
            source = source.replace(before, now)
        module = types.ModuleType(f"_previous_{name}")
        sys.modules[module.__name__] = module
        exec(compile(source, f"{PREVIOUS[:7]}:{name}.py", "exec"),
             module.__dict__)
    return sys.modules["_previous_hyper_cleaning"].make_hyper_cleaning


def evaluations(data, spec, make, n_warm):
    """The rows of the evaluation sequence (module doc)."""
    _, features, labels, test_features, test_labels = data
    problem = make(features, labels, seed=0, test_features=test_features,
                   test_labels=test_labels, n_classes=10,
                   hessian_solver="cg", **spec)
    rng = np.random.default_rng(0)
    x, rows = problem.x0.clone(), []
    for t in range(n_warm + 1):
        if t:
            x = x + STEP * torch.as_tensor(rng.standard_normal(x.shape[0]))
        start, cpu = time.perf_counter(), time.process_time()
        hvp_before = problem.hvp_count
        low_before = getattr(problem, "hvp_count_low", 0)
        metrics = general_metrics(problem, x, problem.y0)
        rows.append(dict(
            seconds=time.perf_counter() - start,
            cpu=time.process_time() - cpu,
            hvp=problem.hvp_count - hvp_before,
            low=getattr(problem, "hvp_count_low", 0) - low_before,
            newton=problem.inner_work["newton_steps"],
            tolerance=problem.inner_accuracy, value=metrics["value"],
            hypergrad_norm=metrics["hypergrad_norm"]))
    return rows


HEAD = (f"{'wall s':>6} {'cpu s':>6} {'HVPs':>4} {'f32':>4} {'newton':>6} "
        f"{'tol':>7}")


def cell(row):
    return (f"{row['seconds']:6.2f} {row['cpu']:6.2f} {row['hvp']:>4d} "
            f"{row['low']:>4d} {row['newton']:>6d} {row['tolerance']:7.1e}")


def median(rows, key):
    return statistics.median(row[key] for row in rows[1:])


def main(n_warm=N_WARM):
    torch.set_num_threads(2)
    data = load_data()
    methods = {
        "previous": previous_maker(),
        "current (mixed)": make_hyper_cleaning,
        "current (float64)": functools.partial(make_hyper_cleaning,
                                               hvp_precision="float64"),
    }
    print(f"data: {data[0]}; torch threads: 2; previous = {PREVIOUS[:7]}")
    for name, spec in INSTANCES.items():
        print(f"\n{name}")
        rows = {label: evaluations(data, spec, make, n_warm)
                for label, make in methods.items()}
        print(f"{'eval':<6} | " + " | ".join(
            f"{label:<{len(HEAD)}}" for label in rows))
        print(f"{'':<6} | " + " | ".join(HEAD for _ in rows))
        for t in range(n_warm + 1):
            label = "cold" if t == 0 else f"warm{t}"
            print(f"{label:<6} | " + " | ".join(
                cell(method[t]) for method in rows.values()))
        old = rows["previous"]
        for label, new in rows.items():
            if label == "previous":
                continue
            if n_warm:
                print(f"warm medians, previous / {label}: " + ", ".join(
                    f"{key} {median(old, key):.4g} / {median(new, key):.4g}"
                    f" = {median(old, key) / median(new, key):.2f}"
                    for key in ("seconds", "cpu")))
            value_gap = max(abs(a["value"] - b["value"])
                            for a, b in zip(old, new, strict=True))
            grad_gap = max(abs(a["hypergrad_norm"] - b["hypergrad_norm"])
                           / b["hypergrad_norm"]
                           for a, b in zip(old, new, strict=True))
            print(f"  agreement with previous: max |dF| = {value_gap:.1e}, "
                  f"max relative d||grad F|| = {grad_gap:.1e}")
    print("\nHVPs: Hessian-vector products of Newton's CG and of the "
          "hypergradient's solve (f32: of which float32); tol: the recorded "
          "bound ||grad_y g|| / mu_g >= ||y - y*(x)||. Wall times depend on "
          "the machine's load; compare the methods within one run.")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else N_WARM)
