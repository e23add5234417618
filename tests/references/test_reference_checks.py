"""Cached references are re-checked before use: a file edited to wrong but
well-formed values (with a matching digest, so only the family's own check
can tell), missing keys, wrong types or absurd values is recomputed with a
warning, and the dataset ends up with the honest references and identity.

One tiny instance per family goes through the real dataset classes."""
import json
import math
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

from benchmark_utils.references.cache import CACHE_ENV, ReferenceCacheWarning

from conftest import component
from reference_faults import rewrite

INSTANCES = {
    "regression": dict(n_samples=60, n_features=30),
    "dictionary_learning": dict(n_features=6, n_atoms=8, n_old_atoms=5,
                                n_new_atoms=3, n_samples=20, n_nonzeros=2,
                                n_init_iter=200),
    "quadratic": dict(dim_x=4, dim_y=3, n_samples=20, constraint="box"),
}
USED = {"regression": ("g_star", "g_star_accuracy", "f_star",
                       "f_star_accuracy"),
        "dictionary_learning": ("g_star", "g_star_accuracy"),
        "quadratic": ("F_star", "F_star_accuracy")}


def load(name):
    """(problem, dataset) of a fresh instance, as benchopt builds it."""
    dataset = component("dataset", name).get_instance(**INSTANCES[name])
    return dataset.get_data()["problem"], dataset


@pytest.fixture(scope="module")
def honest(tmp_path_factory):
    """The honest cache files of every family, built once."""
    folder = tmp_path_factory.mktemp("honest")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(CACHE_ENV, str(folder))
        built = {name: load(name) for name in INSTANCES}
    return folder, built


@pytest.fixture
def cache_of(honest, tmp_path, monkeypatch):
    """``cache_of(name)``: this test's copy of the honest file of ``name``."""
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))

    def copy(name):
        (path,) = honest[0].glob(f"{name}-*.json")
        return Path(shutil.copy(path, tmp_path))

    return copy


def assert_honest(honest, name, problem, dataset):
    honest_problem, honest_dataset = honest[1][name]
    for key in USED[name]:
        assert getattr(problem, key) == getattr(honest_problem, key), key
    assert dataset._reference_identity == honest_dataset._reference_identity


@pytest.mark.parametrize("name", list(INSTANCES))
def test_an_honest_file_is_used_without_a_warning(honest, cache_of, name):
    path = cache_of(name)
    before = path.stat().st_mtime_ns
    with warnings.catch_warnings():
        warnings.simplefilter("error", ReferenceCacheWarning)
        assert_honest(honest, name, *load(name))
    assert path.stat().st_mtime_ns == before        # read, not rewritten


def f_at_zero(refs):
    """Move f_argmin to 0 (a point of Z, not lower-level optimal) and f_star
    to f(0), with a plausible accuracy."""
    problem = load("regression")[0]
    refs["f_argmin"] = [0.0] * len(refs["f_argmin"])
    refs["f_star"] = float(problem.f(torch.zeros(problem.dim,
                                                 dtype=torch.float64)))
    refs["f_star_accuracy"] = 1e-6


def f_at(point):
    problem = load("regression")[0]
    return float(problem.f(torch.as_tensor(np.array(point))))


REGRESSION_FAULTS = {
    "f_star=0.5,g_star=-1": (
        lambda r: r.update(f_star=0.5, g_star=-1.0), "g_star = -1.0 is below"),
    "f_star=0.5": (lambda r: r.update(f_star=0.5),
                   "f_star = 0.5 but recomputing"),
    "g_star+1e-9": (lambda r: r.update(g_star=r["g_star"] + 1e-9),
                    "g_star = .* but recomputing"),
    "accuracy-too-large": (lambda r: r.update(g_star_accuracy=1e-6),
                           "g_star_accuracy = 1e-06 but recomputing"),
    "accuracy-below-floor": (lambda r: r.update(f_star_accuracy=1e-20),
                             "below the relative floor"),
    "f-point-not-optimal": (f_at_zero, "not in the lower-level solution set"),
    # f* moved to another point of the solution set (g's minimizer): its
    # value and point agree, only the re-run LP certificate can tell
    "f-star-at-another-solution": (
        lambda r: r.update(f_argmin=r["g_argmin"], f_star=f_at(r["g_argmin"])),
        "f_star_accuracy = .* but recomputing"),
    "f-accuracy-pessimistic": (lambda r: r.update(f_star_accuracy=5e-6),
                               "f_star_accuracy = 5e-06 but recomputing"),
    "f-spread-edited": (lambda r: r.update(f_spread=2 * r["f_spread"] + 1),
                        "f_spread = .* but recomputing"),
    "g-point-outside-Z": (
        lambda r: r.update(g_argmin=[3 * v for v in r["g_argmin"]]),
        "g_argmin has norm .* outside the ball"),
    "f-point-wrong-length": (lambda r: r.update(f_argmin=r["f_argmin"][:-1]),
                             "f_argmin is not a finite array of shape"),
    "string": (lambda r: r.update(g_star="abc"),
               "g_star = 'abc' is not a finite number"),
    "nan": (lambda r: r.update(f_spread=math.nan),
            "f_spread = nan is not a finite number"),
    "null": (lambda r: r.update(f_star=None), "f_star = None is not"),
    "empty": (lambda r: r.clear(), "g_star is missing"),
    "no-mode": (lambda r: r.pop("lower_level"), "lower_level = None"),
}
DICTIONARY_FAULTS = {
    "g_star=-1": (lambda r: r.update(g_star=-1.0), "g_star = -1.0 is below"),
    "g_star+1e-6": (lambda r: r.update(g_star=r["g_star"] + 1e-6),
                    "g_star = .* but recomputing"),
    "f_star": (lambda r: r.update(f_star=0.5), "f_star = 0.5 must be null"),
}
QUADRATIC_FAULTS = {
    "F_star+1": (lambda r: r.update(F_star=r["F_star"] + 1.0),
                 "F_star = .* but recomputing"),
    "x_star=0": (lambda r: r.update(x_star=[0.0] * len(r["x_star"])),
                 "certified only to"),
    "x_star-string": (lambda r: r.update(x_star="abc"),
                      "x_star is not an array of numbers"),
    "empty": (lambda r: r.clear(), "F_star is missing"),
}
FAULTS = [pytest.param(name, edit, match, id=f"{name}-{fault}")
          for name, table in (("regression", REGRESSION_FAULTS),
                              ("dictionary_learning", DICTIONARY_FAULTS),
                              ("quadratic", QUADRATIC_FAULTS))
          for fault, (edit, match) in table.items()]


@pytest.mark.parametrize("name, edit, match", FAULTS)
def test_a_wrong_file_with_a_matching_digest_is_recomputed(
        honest, cache_of, name, edit, match):
    path = cache_of(name)
    rewrite(path, edit)
    with pytest.warns(ReferenceCacheWarning, match=match):
        problem, dataset = load(name)
    assert_honest(honest, name, problem, dataset)
    # the recomputed file replaced the wrong one
    with warnings.catch_warnings():
        warnings.simplefilter("error", ReferenceCacheWarning)
        assert_honest(honest, name, *load(name))


def test_stored_points_are_the_references_minimizers(honest):
    """The regression file keeps the points its values come from: the
    problem's own oracles (torch) agree with them to rounding."""
    problem, _ = honest[1]["regression"]
    (path,) = honest[0].glob("regression-*.json")
    refs = json.loads(path.read_text())["references"]
    for point, function, value in (("f_argmin", problem.f, "f_star"),
                                   ("g_argmin", problem.g, "g_star")):
        x = torch.as_tensor(np.array(refs[point]))
        assert float(function(x)) == pytest.approx(refs[value], rel=1e-12,
                                                   abs=1e-14)
