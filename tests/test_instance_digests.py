"""Default instances across CPUs. Every default instance is built from
elementwise operations and numpy's own sums only (products,
factorizations and elementary functions by
benchmark_utils/numerics/ordered.py, not BLAS / LAPACK, whose kernels,
chosen per CPU, and thread counts round differently) and is bit-identical
on any x86-64 CPU: the digests are pinned here, and rebuilt with another
CPU's kernels (numpy's dispatch without AVX-512 and OpenBLAS's Haswell
kernels, as on a CPU without AVX-512, on two BLAS threads) they stay bit
for bit the same (docs/results.md, "Across machines")."""
import os
import platform
import subprocess
import sys

import numpy as np
import pytest
from instance_arrays import digest, instance_arrays

from conftest import ROOT, component

CPU_INDEPENDENT = {
    "coreset_toy": "807266188203d808",
    "dictionary_learning": "920adff2e4374df1",
    "hyper_cleaning": "b28e52438e6e5d67",
    "hyper_representation": "28a5288c81aba003",
    "matrix_completion": "f0a2f351c4015dad",
    "quadratic": "25f791133c5e64aa",
    "quadratic[generator=benchmark_bilevel]": "4d5659d2bfb3dadf",
    "regression": "d3876e87af2e1df6",
    "regularization_selection": "4fc132f5170912ba",
}
# another x86-64 CPU's kernels, in this process's machine, and another
# BLAS thread count
OTHER_KERNELS = {"NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL",
                 "OPENBLAS_CORETYPE": "Haswell", "OPENBLAS_NUM_THREADS": "2",
                 "ATEN_CPU_CAPABILITY": "avx2",
                 "MKL_ENABLE_INSTRUCTIONS": "AVX2"}


@pytest.fixture(scope="module")
def here():
    return instance_arrays(component)


def test_every_default_instance_is_listed(here):
    assert set(here) == set(CPU_INDEPENDENT)


def test_the_cpu_independent_instances_are_those_pinned(here):
    assert {name: digest(here[name]) for name in CPU_INDEPENDENT} == (
        CPU_INDEPENDENT)


@pytest.mark.skipif(platform.machine() != "x86_64", reason="x86-64 kernels")
def test_with_another_cpus_kernels(here, tmp_path):
    output = tmp_path / "other.npz"
    env = dict(os.environ, **OTHER_KERNELS,
               PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "tests")]))
    subprocess.run([sys.executable, str(ROOT / "tests" / "instance_arrays.py"),
                    str(output)], cwd=ROOT / "tests", env=env, check=True,
                   timeout=600, capture_output=True)
    other = {}
    with np.load(output) as stored:
        for name in stored.files:
            instance, path = name.split("|")
            other.setdefault(instance, {})[path] = stored[name]
    for name in CPU_INDEPENDENT:
        assert digest(other[name]) == CPU_INDEPENDENT[name], name
