"""Dataset -> problem: each dataset builds the documented instance (sizes,
feasible starts, pixels in [0, 1], the radius ||Xhat||_*), real-format
fixtures stand in for downloads, and the least-squares and dictionary
instances are genuinely bilevel with certified references attached."""
from pathlib import Path

import pytest
import torch

from conftest import (
    QUICK_DICTIONARY,
    QUICK_REGRESSION,
    component,
    make_problem,
)

FIXTURES = Path(__file__).resolve().parents[1] / "data"
MNIST_FIXTURE = FIXTURES / "mnist_small"
WIKIMATH_FIXTURE = FIXTURES / "wikimath_small.json"


def test_hyper_cleaning_on_digits_dataset():
    dataset = component("dataset", "hyper_cleaning").get_instance(
        n_train=60, n_val=30, n_test=30, corruption=0.5, reduction="sum")
    problem = dataset.get_data()["problem"]
    assert (problem.n_lower, problem.n_upper, problem.dim_x) == (60, 30, 60)
    assert problem.dim_y == 10 * 65 and problem.corrupted.sum() == 30
    assert problem.X.contains(problem.x0) and problem.F_star is None
    assert float(problem.A_train[:, :-1].max()) <= 1.0   # pixels in [0, 1]


def test_hyper_cleaning_on_mnist_fixture(monkeypatch):
    Dataset = component("dataset", "hyper_cleaning")
    monkeypatch.setattr(Dataset, "_mnist_dir", lambda self: MNIST_FIXTURE)
    dataset = Dataset.get_instance(source="mnist", n_train=16, n_val=10,
                                   n_test=12, corruption=0.25, c=0.05)
    problem = dataset.get_data()["problem"]
    assert (problem.n_lower, problem.n_upper, problem.dim_y) == (16, 10, 7850)
    assert not problem.dense                      # MNIST size: Newton-CG
    y_star = problem.inner_solution(problem.x0)
    assert float(torch.linalg.vector_norm(
        problem.grad_g_y(problem.x0, y_star))) <= 1e-10 * problem.mu_g
    # the fixture's classes are separable: images and labels that the reader
    # misaligned would leave the model at chance level (0.1)
    assert problem.task_metrics(problem.x0, y_star)["test_accuracy"] >= 0.75


def test_matrix_completion_dataset():
    dataset = component("dataset", "matrix_completion").get_instance(
        n=12, rank=2, split="random")
    problem = dataset.get_data()["problem"]
    assert problem.dim_x == problem.dim_y == 144
    # one sample per row; the split shares out the observed entries
    assert problem.n_upper == problem.n_lower == 12
    assert (len(problem.omega1) + len(problem.omega2)
            == problem.observed.shape[0])
    assert problem.X.contains(problem.x0)
    assert problem.radius == pytest.approx(float(torch.linalg.svdvals(
        problem.X_hat.reshape(12, 12)).sum()))


def regression(**params):
    return component("dataset", "regression").get_instance(**params)


def test_wikimath_regression_instance(monkeypatch):
    Dataset = component("dataset", "regression")
    monkeypatch.setattr(Dataset, "_wikimath_path",
                        lambda self: WIKIMATH_FIXTURE)
    problem = regression(source="wikimath").get_data()["problem"]
    assert problem.dim == 30                   # one of 31 days is the target
    assert {problem.n_upper, problem.n_lower, problem.A_test.shape[0]} == {15}
    assert problem.g_star_accuracy < 1e-6 * max(1.0, problem.g_star)
    assert problem.f_star is not None


def test_underparameterized_regression_is_rejected():
    # more training rows than features: the training loss has one minimizer
    with pytest.raises(ValueError, match="not genuinely bilevel"):
        regression(n_samples=150, n_features=20).make_data()


def test_quick_instances_have_certified_references():
    problem = make_problem("regression", **QUICK_REGRESSION)
    assert problem.f_star is not None and problem.g_star is not None
    assert 0 <= problem.g_star_accuracy < 1e-8
    # the start is far from both references
    assert float(problem.g(problem.x0)) - problem.g_star > 1e3 * (
        problem.g_star_accuracy)
    dictionary = make_problem("dictionary_learning", **QUICK_DICTIONARY)
    assert dictionary.f_star is None
    assert dictionary.g_star_accuracy < 1e-8 * max(1.0, dictionary.g_star)
    assert float(dictionary.g(dictionary.x0)) >= dictionary.g_star - (
        dictionary.g_star_accuracy)
