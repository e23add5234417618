"""benchmark_utils/numerics/ordered.py: its products, factorizations and
elementary functions agree with numpy's / LAPACK's to rounding, and give
the same bits whatever numpy's SIMD dispatch (the baseline x86-64 one
included) and BLAS kernels and threads: a subprocess with other ones
rebuilds them."""
import hashlib
import json
import os
import platform
import subprocess
import sys

import numpy as np
import pytest

from benchmark_utils.numerics import ordered

from conftest import ROOT

# numpy without AVX2 and AVX-512 (x86-64-v2), OpenBLAS's Sandy Bridge
# kernels on one thread, torch's and MKL's default kernels
BASELINE_KERNELS = {
    "NPY_DISABLE_CPU_FEATURES": "X86_V3 X86_V4 AVX512_ICL",
    "OPENBLAS_CORETYPE": "Sandybridge", "OPENBLAS_NUM_THREADS": "1",
    "ATEN_CPU_CAPABILITY": "default", "MKL_ENABLE_INSTRUCTIONS": "SSE4_2"}


def outputs():
    """Every function of the module on seeded inputs, by name."""
    rng = np.random.default_rng(0)
    x = np.concatenate([5 * rng.standard_normal(20_000),
                        rng.uniform(-1e-3, 1e-3, 1000), [0.0, -0.0, 700.0]])
    p = np.abs(x) + 1e-300
    A, B = rng.standard_normal((30, 20)), rng.standard_normal((20, 25))
    S = ordered.matmul(A.T, A)
    L = ordered.cholesky(S)
    Q, R = ordered.qr(rng.standard_normal((12, 7)))
    U, s, Vt = ordered.svd(rng.standard_normal((9, 14)))
    return {"exp": ordered.exp(x), "expm1": ordered.expm1(x),
            "log": ordered.log(p), "tanh": ordered.tanh(x),
            "geomspace": ordered.geomspace(0.5, 5.0, 20),
            "logspace": ordered.logspace(-1.0, 0.5, 30),
            "matmul": ordered.matmul(A, B),
            "matvec": ordered.matvec(A, B[:, 0]), "cholesky": L,
            "solve": ordered.cholesky_solve(L, B), "Q": Q, "R": R, "U": U,
            "s": s, "Vt": Vt}


def digests(found):
    return {name: hashlib.sha256(np.ascontiguousarray(a).tobytes())
            .hexdigest() for name, a in found.items()}


@pytest.mark.skipif(platform.machine() != "x86_64", reason="x86-64 kernels")
def test_the_same_bits_with_the_baseline_cpus_kernels():
    code = ("import json, test_ordered_numerics as t; "
            "print(json.dumps(t.digests(t.outputs())))")
    env = dict(os.environ, **BASELINE_KERNELS,
               PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "tests")]))
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT / "tests",
                         env=env, check=True, timeout=300,
                         capture_output=True, text=True)
    assert json.loads(run.stdout) == digests(outputs())


def test_elementary_functions_are_within_a_few_ulps():
    rng = np.random.default_rng(1)
    x = np.concatenate([5 * rng.standard_normal(50_000),
                        rng.uniform(-1e-6, 1e-6, 1000)])
    p = np.abs(x) + 1e-300

    def ulps(mine, reference):
        return np.max(np.abs(mine - reference) / np.spacing(
            np.abs(reference)))
    assert ulps(ordered.exp(x), np.exp(x)) <= 2
    assert ulps(ordered.expm1(x), np.expm1(x)) <= 3
    assert ulps(ordered.log(p), np.log(p)) <= 3
    assert ulps(ordered.tanh(x), np.tanh(x)) <= 4
    np.testing.assert_array_equal(ordered.tanh([-50.0, 0.0, 50.0]),
                                  [-1.0, 0.0, 1.0])
    g = ordered.geomspace(0.5, 5.0, 20)
    assert g[0] == 0.5 and g[-1] == 5.0
    np.testing.assert_allclose(g, np.geomspace(0.5, 5.0, 20), rtol=1e-15)
    np.testing.assert_allclose(ordered.logspace(-1.5, 0.25, 30),
                               np.logspace(-1.5, 0.25, 30), rtol=1e-15)
    assert ordered.log10(1000.0) == pytest.approx(3.0, rel=1e-15)


def test_products_and_factorizations_agree_with_lapack(monkeypatch):
    rng = np.random.default_rng(2)
    A, B = rng.standard_normal((30, 20)), rng.standard_normal((20, 25))
    np.testing.assert_allclose(ordered.matmul(A, B), A @ B, atol=1e-13)
    np.testing.assert_allclose(ordered.matvec(A, B[:, 0]), A @ B[:, 0],
                               atol=1e-13)
    # k = 0, 1, ... in turn, whatever the shape (a single column too)
    for m, k, n in ((5, 30, 1), (1, 30, 1), (1, 30, 4), (7, 1, 3)):
        a, b = rng.standard_normal((m, k)), rng.standard_normal((k, n))
        in_turn = np.zeros((m, n))
        for i in range(k):
            in_turn = in_turn + a[:, i:i + 1] * b[i:i + 1]
        np.testing.assert_array_equal(ordered.matmul(a, b), in_turn)
    # blocks of rows change no bit
    full = ordered.matmul(A, B)
    monkeypatch.setattr(ordered, "MATMUL_BLOCK", 7 * 20 * 25)
    np.testing.assert_array_equal(ordered.matmul(A, B), full)
    # LAPACK's Q and R, signs included
    for shape in ((20, 20), (9, 4)):
        G = rng.standard_normal(shape)
        Q, R = ordered.qr(G)
        Q_lapack, R_lapack = np.linalg.qr(G, mode="complete")
        np.testing.assert_allclose(Q, Q_lapack, atol=1e-14)
        np.testing.assert_allclose(R, R_lapack, atol=1e-13)
    S = A.T @ A
    L = ordered.cholesky(S)
    np.testing.assert_allclose(L, np.linalg.cholesky(S), atol=1e-13)
    np.testing.assert_allclose(ordered.cholesky_solve(L, B),
                               np.linalg.solve(S, B), atol=1e-13)
    np.testing.assert_allclose(ordered.cholesky_solve(L, B[:, 0]),
                               np.linalg.solve(S, B[:, 0]), atol=1e-13)
    with pytest.raises(np.linalg.LinAlgError):
        ordered.cholesky(-S)
    for shape in ((20, 20), (5, 9), (9, 5), (6, 1)):
        G = rng.standard_normal(shape)
        U, s, Vt = ordered.svd(G)
        s_lapack = np.linalg.svd(G, compute_uv=False)
        np.testing.assert_allclose(s, s_lapack, rtol=1e-13)
        np.testing.assert_allclose((U * s) @ Vt, G, atol=1e-13)
        np.testing.assert_allclose(U.T @ U, np.eye(s.size), atol=1e-13)
        np.testing.assert_allclose(Vt @ Vt.T, np.eye(s.size), atol=1e-13)
