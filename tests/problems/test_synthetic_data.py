"""The synthetic data: hyper-cleaning's label corruption and splits, the
matrix completion generator and its observed sets, the old-dictionary
fit."""
import numpy as np
import pytest
import torch

from benchmark_utils.data import dictionary_learning
from benchmark_utils.data.dictionary_learning import (
    fit_old_dictionary,
    make_continual_dictionary_data,
)
from benchmark_utils.data.hyper_cleaning import (
    corrupt_labels,
    hyper_cleaning_split,
)
from benchmark_utils.data.matrix_completion import make_matrix_completion_data


def test_corruption_flips_exactly_the_requested_fraction_to_other_classes():
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 10, 200)
    noisy, corrupted = corrupt_labels(labels, 0.3, 10, rng)
    assert corrupted.sum() == 60
    assert (noisy[corrupted] != labels[corrupted]).all()
    assert (noisy[~corrupted] == labels[~corrupted]).all()
    assert noisy.min() >= 0 and noisy.max() <= 9


def test_matrix_completion_generator_and_splits():
    M, X_hat, observed, omega1, omega2 = make_matrix_completion_data(
        40, 3, 0.5, 0.8, "random", 0)
    assert np.linalg.matrix_rank(X_hat) == 3
    np.testing.assert_allclose(M - X_hat, (M - X_hat).T)   # E = n(L + L^T)
    omega = np.flatnonzero(observed)
    assert abs(omega.size / M.size - 0.8) < 0.05
    assert not set(omega1) & set(omega2)
    np.testing.assert_array_equal(np.union1d(omega1, omega2), omega)
    _, _, _, same1, same2 = make_matrix_completion_data(40, 3, 0.5, 0.8,
                                                        "same", 0)
    np.testing.assert_array_equal(same1, omega)
    np.testing.assert_array_equal(same2, omega)


def test_split_sizes_beyond_the_data_are_rejected():
    features, labels = np.zeros((30, 2)), np.arange(30) % 3
    with pytest.raises(ValueError, match="n_train \\+ n_val \\+ n_test"):
        hyper_cleaning_split(features, labels, 20, 8, 5, 0.1)
    with pytest.raises(ValueError, match="n_test"):
        hyper_cleaning_split(features, labels, 20, 8, 5, 0.1,
                             test_features=features[:4],
                             test_labels=labels[:4])
    data = hyper_cleaning_split(features, labels, 20, 8, 2, 0.1)
    assert [data[k].shape[0] for k in ("A_train", "A_val", "A_test")] == [
        20, 8, 2]
    assert data["n_classes"] == 3 and data["corrupted"].sum() == 2


def test_old_dictionary_fit_is_feasible():
    _, A_old, _ = make_continual_dictionary_data(
        n_features=6, n_atoms=8, n_old_atoms=5, n_new_atoms=4,
        n_old_samples=15, n_new_samples=12, n_nonzeros=2, seed=0)
    D, X = fit_old_dictionary(A_old, 5, 3.0, n_iter_joint=50,
                              n_iter_dictionary=50, seed=0)
    assert D.shape == (6, 5) and X.shape == (5, 15)
    assert (np.linalg.norm(D, axis=0) <= 1 + 1e-12).all()
    assert (np.abs(X).sum(axis=0) <= 3.0 + 1e-12).all()


def test_old_dictionary_fit_is_the_ordered_one(monkeypatch):
    """The code vertices found from BLAS products where certified are those
    of the ordered products: the fit is the same bit for bit when every
    vertex comes from the ordered products (default sizes, short phases);
    and it is the plain Frank-Wolfe fit of the paper, to rounding."""
    _, A_old, _ = make_continual_dictionary_data(seed=1)
    fast = fit_old_dictionary(A_old, 40, 3.0, n_iter_joint=300,
                              n_iter_dictionary=300, seed=1)
    monkeypatch.setattr(dictionary_learning, "_certain_code_vertex",
                        lambda *args: None)
    ordered = fit_old_dictionary(A_old, 40, 3.0, n_iter_joint=300,
                                 n_iter_dictionary=300, seed=1)
    for mine, theirs in zip(fast, ordered, strict=True):
        np.testing.assert_array_equal(mine, theirs)
    # the same steps with BLAS products and dense vertices
    from benchmark_utils.sets import ColumnBalls
    rng = np.random.default_rng(1)
    n = A_old.shape[1]
    D = rng.standard_normal((A_old.shape[0], 40))
    D /= np.linalg.norm(D, axis=0)
    X = np.zeros((40, n))
    codes = ColumnBalls(40, n, "l1", 3.0)
    for t in range(300):
        R = A_old - D @ X
        grad_D, grad_X = -(R @ X.T) / n, -(D.T @ R) / n
        step = 1.0 / np.sqrt(t + 1)
        D += step * (dictionary_learning._lmo_unit_columns(grad_D) - D)
        vertex = codes.lmo(torch.from_numpy(grad_X).reshape(-1)).numpy()
        X += step * (vertex.reshape(40, n) - X)
    np.testing.assert_array_equal(X, fast[1])
    for _ in range(300):
        grad_D = -((A_old - D @ X) @ X.T) / n
        direction = dictionary_learning._lmo_unit_columns(grad_D) - D
        curvature = np.sum((direction @ (X @ X.T)) * direction) / n
        step = np.clip(-np.sum(grad_D * direction) / curvature, 0.0, 1.0)
        D += step * direction
    # rounding, amplified by the steps (7e-10 here)
    np.testing.assert_allclose(fast[0], D, rtol=0, atol=1e-8)
