"""Short seeded runs of simple-family solvers on the quick instances, shared
by the tests of the cutting-plane methods and of the projected baselines
(a helper module, not a test file)."""
import numpy as np

from conftest import QUICK_DICTIONARY, QUICK_REGRESSION, run_solver

N_ITER = 300


def first_and_last(solver, dataset, params):
    """The first and last records of an N_ITER run, checked finite."""
    dataset_params = (QUICK_REGRESSION if dataset == "regression"
                      else QUICK_DICTIONARY)
    records, _ = run_solver(solver, dataset, dataset_params, params,
                            n_iter=N_ITER, eval_at=[0, 1, 10, 100])
    for record in records:
        assert np.isfinite(record["lower_gap"]), (solver, record)
        assert np.isfinite(record["upper_value"]), (solver, record)
        assert record["diverged"] == 0
    return records[0], records[-1]


def samples_per_iteration(solver, params, n_iter=12):
    """Upper and lower samples drawn at each of n_iter iterations."""
    records, _ = run_solver(solver, "regression", QUICK_REGRESSION, params,
                            n_iter=n_iter, eval_at=range(n_iter + 1))
    upper = np.diff([r["n_samples_upper"] for r in records])
    lower = np.diff([r["n_samples_lower"] for r in records])
    return upper, lower
