"""The suite's thread setting (tests/conftest.py, pytest_configure): one
BLAS and one torch thread per test process, passed on to the benchopt runs
it starts, so that two workers on two cores never oversubscribe them."""
import os
import subprocess
import sys

import torch
from threadpoolctl import threadpool_info


def test_each_test_process_runs_one_blas_and_one_torch_thread():
    assert {pool["num_threads"] for pool in threadpool_info()} == {1}
    assert torch.get_num_threads() == 1


def test_the_processes_a_test_starts_inherit_it():
    child = subprocess.run(
        [sys.executable, "-c", "import numpy, torch; from threadpoolctl "
         "import threadpool_info as i; print(sorted({p['num_threads'] for "
         "p in i()}), torch.get_num_threads())"],
        capture_output=True, text=True, check=True, env=dict(os.environ))
    assert child.stdout.split() == ["[1]", "1"]
