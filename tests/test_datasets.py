"""Datasets: the WikiMath loader on a fixture of the real format, bad input
rejected before any run, instances genuinely bilevel, references attached."""
import json
from pathlib import Path

import numpy as np
import pytest

from benchmark_utils.data.wikimath import (WIKIMATH_URL, download_wikimath,
                                      load_wikimath_matrix)
from conftest import QUICK_DICTIONARY, QUICK_REGRESSION, component, make_problem

FIXTURE = Path(__file__).parent / "data" / "wikimath_small.json"


def regression(**params):
    return component("dataset", "regression").get_instance(**params)


def test_wikimath_loader_reads_pages_by_days():
    matrix = load_wikimath_matrix(FIXTURE)
    data = json.loads(FIXTURE.read_text())
    assert matrix.shape == (45, data["time_periods"])
    np.testing.assert_array_equal(matrix[:, 3], data["3"]["y"])


def test_wikimath_download_is_atomic_and_idempotent(tmp_path):
    dest = tmp_path / "wiki" / "wikivital_mathematics.json"
    download_wikimath(dest, url=FIXTURE.resolve().as_uri())
    assert dest.read_bytes() == FIXTURE.read_bytes()
    download_wikimath(dest, url="file:///nonexistent")   # exists: no fetch


def test_wikimath_regression_instance(monkeypatch):
    Dataset = component("dataset", "regression")
    monkeypatch.setattr(Dataset, "_wikimath_path", lambda self: FIXTURE)
    problem = regression(source="wikimath").get_data()["problem"]
    assert problem.dim == 30                   # one of 31 days is the target
    assert {problem.n_upper, problem.n_lower, problem.A_test.shape[0]} == {15}
    assert problem.g_star_accuracy < 1e-6 * max(1.0, problem.g_star)
    assert problem.f_star is not None


def test_missing_wikimath_file_names_url_and_path(monkeypatch, tmp_path):
    Dataset = component("dataset", "regression")
    missing = tmp_path / "wikivital_mathematics.json"
    monkeypatch.setattr(Dataset, "_wikimath_path", lambda self: missing)
    with pytest.raises(FileNotFoundError) as error:
        regression(source="wikimath").get_data()
    assert WIKIMATH_URL in str(error.value) and str(missing) in str(error.value)


@pytest.mark.parametrize("params, match", [
    ({"radius": 0.0}, "radius"),
    ({"radius": -1.0}, "radius"),
    ({"source": "mnist"}, "source"),
    ({"loss": "huber"}, "loss"),
    ({"n_samples": 2}, "n_samples"),
])
def test_bad_regression_parameters(params, match):
    with pytest.raises(ValueError, match=match):
        regression(**params).get_data()


@pytest.mark.parametrize("params, match", [
    ({"delta": 0.0}, "delta"),
    ({"n_old_atoms": 60}, "n_old_atoms"),
    ({"n_samples": 0}, "n_samples"),
])
def test_bad_dictionary_parameters(params, match):
    dataset = component("dataset", "dictionary_learning").get_instance(**params)
    with pytest.raises(ValueError, match=match):
        dataset.get_data()


def test_underparameterized_regression_is_rejected():
    # more training rows than features: the training loss has one minimizer
    with pytest.raises(ValueError, match="not genuinely bilevel"):
        regression(n_samples=150, n_features=20).get_data()


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
