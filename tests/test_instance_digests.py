"""Default instances across CPUs. Five default instances are built from
elementwise operations and numpy's own sums only and are bit-identical
on any x86-64 CPU: their digests are pinned here, and rebuilt with
another CPU's kernels (numpy's dispatch without AVX-512 and OpenBLAS's
Haswell kernels, as on a CPU without AVX-512, on two BLAS threads) they
stay bit for bit the same. Four are built with BLAS / LAPACK products
and factorizations, whose kernels (chosen per CPU) and thread counts
round differently: rebuilt with the others they agree to the tolerance
stated here, not bit for bit (docs/results.md, "Across machines")."""
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
    "hyper_cleaning": "b28e52438e6e5d67",
    "matrix_completion": "f0a2f351c4015dad",
    "regression": "d3876e87af2e1df6",
    "regularization_selection": "4fc132f5170912ba",
}
# the largest relative difference (to the array's largest entry) of an
# array of the instance, with the other kernels
KERNEL_DEPENDENT = {
    "dictionary_learning": 1e-9,     # its warm start amplifies 1e-16
    "hyper_representation": 1e-15,
    "quadratic": 1e-14,
    # float32 LAPACK sgesdd for upstream's singular bases: float32 rounding
    "quadratic[generator=benchmark_bilevel]": 1e-4,
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
    assert set(here) == set(CPU_INDEPENDENT) | set(KERNEL_DEPENDENT)


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
    for name, tolerance in KERNEL_DEPENDENT.items():
        for path, array in here[name].items():
            scale = max(float(np.max(np.abs(array))), 1e-300)
            difference = float(np.max(np.abs(array - other[name][path])))
            assert difference <= tolerance * scale, (name, path, difference)
