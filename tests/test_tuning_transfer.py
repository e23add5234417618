"""Tuned steps as multipliers of each solver's default rule
(benchmark_utils/tuning/multipliers.py), carried by rule from a stand-in's
tuned config to the experiment it stands for (``python -m
benchmark_utils.tune CONFIG --transfer-from TUNED``,
benchmark_utils/tuning/transfer.py), on offline instances shaped like the
real data (benchmark_utils/data/shaped.py), under a measured time cap
(benchmark_utils/tuning/timing.py)."""
import math
import re

import numpy as np
import pytest
import yaml
from test_tuning import shipped

from benchmark_utils.data.shaped import (
    MNIST_PIXEL_MEAN,
    MNIST_PIXEL_STD,
    clipped_gaussian,
    clipped_moments,
    mnist_shaped,
    omniglot_shaped_pools,
)
from benchmark_utils.tuning import config_io, multipliers, timing, transfer
from benchmark_utils.tuning.cli import main
from benchmark_utils.tuning.grids import round_significant
from benchmark_utils.tuning.runner import final_iteration
from benchmark_utils.tuning.transfer import transferred_entries

from conftest import ROOT, component, dataset_data, run_solver

DIGITS = ("hyper_cleaning[source=digits,n_train=600,n_val=300,n_test=100,"
          "corruption=0.3,c=0.001,reduction=mean]")
MNIST = ("hyper_cleaning[source=mnist,n_train=3000,n_val=500,n_test=200,"
         "corruption=0.3,c=0.001,reduction=mean]")

TRANSFERRED = shipped("Transferred by")
WITH_MULTIPLIERS = [path for path in shipped("Tuned by")
                    if multipliers.sidecar_path(path).is_file()]


def stand_in_path(transferred):
    """The stand-in's tuned config named by a transferred config's header."""
    command = re.search(r"^# Transferred by: python -m benchmark_utils.tune "
                        r"(.*)$", transferred.read_text(), re.M).group(1)
    return ROOT / command.split()[command.split().index(
        "--transfer-from") + 1]


def entries_of(path):
    return [(path, index) for index, _ in enumerate(
        yaml.safe_load(path.read_text())["solver"])]


# -- the shaped stand-ins -------------------------------------------------

def test_mnist_shaped_pixels_have_mnists_published_statistics():
    m, s = clipped_gaussian(MNIST_PIXEL_MEAN, MNIST_PIXEL_STD)
    first, second = clipped_moments(m, s)
    assert first == pytest.approx(0.1307, abs=1e-9)
    assert math.sqrt(second - first ** 2) == pytest.approx(0.3081, abs=1e-9)
    features, labels, test_features, test_labels = mnist_shaped(20000, 50, 0)
    assert features.shape == (20000, 784) and test_features.shape == (50, 784)
    assert 0 <= features.min() and features.max() <= 1
    assert features.mean() == pytest.approx(0.1307, abs=2e-3)
    assert features.std() == pytest.approx(0.3081, abs=2e-3)
    # E ||a||^2 as on MNIST, 5.5 times the digits' (about 16)
    assert (features ** 2).sum(axis=1).mean() == pytest.approx(
        784 * (0.1307 ** 2 + 0.3081 ** 2), rel=1e-2)
    assert set(labels) | set(test_labels) <= set(range(10))
    with pytest.raises(ValueError, match="no Gaussian clipped"):
        clipped_gaussian(0.1, 0.5)      # std^2 above mean (1 - mean)


def test_omniglot_shaped_pools_have_omniglots_shape():
    (train, train_labels), (test, test_labels) = omniglot_shaped_pools(0)
    assert train.shape == (964 * 20, 1, 28, 28)
    assert test.shape == (659 * 20, 1, 28, 28)
    assert 0 <= train.min() and train.max() <= 1
    assert len(set(train_labels)) == 964 and len(set(test_labels)) == 659


@pytest.mark.parametrize("name, params, shaped", [
    ("hyper_cleaning", {"source": "mnist", "n_train": 19000},
     {"source": "mnist_shaped", "n_train": 19000}),
    ("hyper_cleaning", {"source": "digits"}, None),
    ("hyper_representation", {"source": "omniglot", "network": "conv"},
     {"source": "omniglot_shaped", "network": "conv"}),
    ("hyper_representation", {"source": "synthetic"}, None),
])
def test_an_offline_instance_stands_for_the_one_that_reads_data(
        name, params, shaped):
    stand_in = component("dataset", name).get_instance(
        **params).offline_stand_in()
    if shaped is None:
        assert stand_in is None
    else:
        assert {k: stand_in[k] for k in shaped} == shaped
        assert {k: v for k, v in stand_in.items() if k != "source"} == {
            k: v for k, v in component("dataset", name).get_instance(
                **params)._parameters.items() if k != "source"}


# -- multipliers ----------------------------------------------------------

def test_every_stand_in_of_a_transfer_has_its_multipliers():
    assert {stand_in_path(p) for p in TRANSFERRED} <= set(WITH_MULTIPLIERS)
    assert len(WITH_MULTIPLIERS) >= 4


@pytest.mark.parametrize("config", WITH_MULTIPLIERS,
                         ids=lambda path: path.stem)
def test_the_multipliers_reproduce_the_shipped_values(config):
    """multiplier x the solver's default rule on the config's first
    instance (recomputed now) = the value the config runs."""
    content = config_io.read_config(config)
    sidecar = multipliers.read_sidecar(config, content)
    dataset = multipliers.first_instance(content)
    assert sidecar["instance"] == str(dataset)
    for entry, stored in zip(config_io.as_list(content["solver"]),
                             sidecar["entries"], strict=True):
        name, params = config_io.parse_entry(entry)
        assert list(stored["steps"]) == multipliers.tuned_steps(name, params)
        for step, s in stored["steps"].items():
            default, rule = multipliers.default_of(
                name, params, step, dataset, content.get("objective"))
            assert s["rule"] == rule
            assert s["multiplier"] * default == pytest.approx(
                float(params[step]), rel=1e-6)


def test_the_tuning_command_writes_the_multipliers(tmp_path):
    config = tmp_path / "tuning_example.yml"
    config.write_text((ROOT / "configs" / "tuned" /
                       "tuning_example.yml").read_text())
    path = multipliers.write_for_config(config)
    assert path == tmp_path / "tuning_example_multipliers.yml"
    content = config_io.read_config(config)
    sidecar = multipliers.read_sidecar(config, content)
    soba = sidecar["entries"][0]["steps"]
    assert soba["outer_step"]["rule"].startswith("inner_step / outer_ratio")
    # a config edited since: its multipliers are stale
    config.write_text(config.read_text().replace("outer_step=0.05",
                                                 "outer_step=0.5"))
    with pytest.raises(ValueError, match="rewrite it with python -m "
                                         "benchmark_utils.tuning.multipliers"):
        multipliers.read_sidecar(config, config_io.read_config(config))


# -- the transfer's rule --------------------------------------------------

@pytest.fixture(scope="module")
def small_transfer():
    """digits -> an MNIST-shaped instance: (target, tuned, sidecar,
    entries, details, notes)."""
    tuned = {"max-runs": 7, "dataset": [DIGITS], "solver": [
        "stocBiO[neumann_terms=4,batch_size=32,outer_step=100,"
        "inner_step=0.005,linear_system_step=0.85]",
        "BiAdam[neumann_depth_bound=3,adaptive_input=hypergradient,rho=0.0001,"
        "outer_step=5,inner_step=0.25]",
        "VRBO[neumann_terms=4,large_batch_size=300,outer_step=1000,"
        "inner_step=0.2]",
        "F2SA[batch_size=32,outer_step=400,inner_step=0.433]"]}
    target = {"dataset": [MNIST], "solver": [
        "stocBiO[neumann_terms=4,batch_size=32]",
        "BiAdam[neumann_depth_bound=3,adaptive_input=hypergradient,rho=0.0001]",
        "VRBO[neumann_terms=4,large_batch_size=500]",
        "F2SA[batch_size=32,outer_step=1000]"]}
    sidecar = multipliers.config_multipliers(tuned)
    return (target, tuned, sidecar,
            *transferred_entries(target, tuned, sidecar))


def test_a_transferred_step_follows_the_target_datas_curvature(
        small_transfer):
    target, tuned, sidecar, entries, details, notes = small_transfer
    shaped = multipliers.first_instance(target, shaped=True)
    assert shaped.source == "mnist_shaped" and shaped.n_train == 3000
    stand_in = dataset_data("hyper_cleaning", **multipliers.first_instance(
        tuned)._parameters)[1]["problem"]
    problem = dataset_data("hyper_cleaning",
                           **shaped._parameters)[1]["problem"]
    # MNIST's pixels: a per-sample curvature bound 5 times the digits'
    assert problem.L_g > 4 * stand_in.L_g
    params = config_io.parse_entry(entries[0])[1]
    steps = sidecar["entries"][0]["steps"]
    expected = {
        "inner_step": 2 / (problem.mu_g + problem.L_g),
        "linear_system_step": 1 / problem.L_g,
        "outer_step": 0.1 * problem.outer_step_scale}
    for step, default in expected.items():
        assert params[step] == round_significant(
            steps[step]["multiplier"] * default)
    # the stand-in chose a y step a tenth of its rule: so here too
    assert params["inner_step"] == pytest.approx(
        0.005 / (2 / (stand_in.mu_g + stand_in.L_g))
        * 2 / (problem.mu_g + problem.L_g), rel=5e-3)


def test_a_normalized_step_keeps_its_multiplier_and_other_parameters_are_the_targets(  # noqa: E501
        small_transfer):
    target, tuned, sidecar, entries, details, notes = small_transfer
    biadam, vrbo, f2sa = (config_io.parse_entry(e)[1] for e in entries[1:])
    # Adam on the hypergradient: the multiplier of 0.3 n_train, not a copy
    assert biadam["outer_step"] == pytest.approx(5 * 3000 / 600, rel=1e-2)
    assert biadam["inner_step"] == 0.25         # its rule is the constant 1
    assert vrbo["large_batch_size"] == 500
    assert any("large_batch_size=300" in note for note in notes)
    # F2SA: the x step at k = 0 scales with outer_step_scale; the entry's
    # own outer_step is replaced; xi is derived from the steps
    assert f2sa["outer_step"] == pytest.approx(400 * 3000 / 600, rel=1e-2)
    assert "xi" not in details[3]["steps"]


@pytest.mark.parametrize("solvers, message", [
    (["SOBA[outer_step=1]", "F2SA[outer_step=1]"],
     "1 solver entries in order, got 2"),
    (["F2SA[outer_step=1]"], "lists F2SA where the config lists SOBA"),
])
def test_mismatched_stand_in_fails_clearly(solvers, message):
    target = {"dataset": [MNIST], "solver": ["SOBA"]}
    tuned = {"dataset": [DIGITS], "solver": solvers}
    sidecar = {"entries": [{"steps": {}} for _ in solvers]}
    with pytest.raises(ValueError, match=message):
        transferred_entries(target, tuned, sidecar)


# -- the shipped transferred configs ---------------------------------------

@pytest.mark.parametrize("transferred", TRANSFERRED,
                         ids=lambda path: path.stem)
def test_a_transferred_value_is_the_multiplier_times_the_default_there(
        transferred):
    content = config_io.read_config(transferred)
    sidecar = multipliers.read_sidecar(transferred, content)
    stand_in = stand_in_path(transferred)
    source = multipliers.read_sidecar(stand_in,
                                      config_io.read_config(stand_in))
    shaped = multipliers.first_instance(content, shaped=True)
    assert sidecar["instance"] == str(shaped)
    assert "transferred" in transferred.read_text().split("\n#\n")[0]
    for entry, stored, theirs in zip(config_io.as_list(content["solver"]),
                                     sidecar["entries"], source["entries"],
                                     strict=True):
        name, params = config_io.parse_entry(entry)
        assert list(stored["steps"]) == list(theirs["steps"])
        for step, s in stored["steps"].items():
            assert s["multiplier"] == theirs["steps"][step]["multiplier"]
            default, _ = multipliers.default_of(
                name, params, step, shaped, content.get("objective"))
            assert params[step] == pytest.approx(s["multiplier"] * default,
                                                 rel=5e-3)


@pytest.mark.parametrize("transferred", TRANSFERRED,
                         ids=lambda path: path.stem)
def test_shipped_transfers_are_reproduced_by_their_command(transferred,
                                                           tmp_path,
                                                           monkeypatch):
    """Each shipped transferred config and its multipliers are what its
    header's command writes now (the time check is tested below)."""
    text = transferred.read_text()
    command = re.search(r"^# Transferred by: python -m benchmark_utils.tune "
                        r"(.*)$", text, re.M).group(1).split()
    output = tmp_path / transferred.name
    monkeypatch.chdir(ROOT)         # the command's paths are the repo's
    monkeypatch.setattr(transfer.timing, "check_time_cap",
                        lambda *args, **kwargs: [])
    if "--output" in command:
        command = command[:command.index("--output")]
    main([*command, "--output", str(output)])
    fresh = yaml.safe_load(output.read_text())
    assert fresh["n-repetitions"] == 10
    assert fresh == yaml.safe_load(text)
    sidecar = multipliers.sidecar_path(output)
    assert yaml.safe_load(sidecar.read_text())["entries"] == yaml.safe_load(
        multipliers.sidecar_path(transferred).read_text())["entries"]


KNOWN_RISES = transfer.KNOWN_RISES


@pytest.mark.parametrize("path", TRANSFERRED, ids=lambda p: p.stem)
def test_a_transferred_configs_header_names_its_known_rises(path):
    """Each transferred config's header lists exactly its entries that
    raise F on the shaped instance, with the cause (KNOWN_RISES, checked
    by the test below), where a user reads the config."""
    content = config_io.read_config(path)
    header = [line[2:] for line in path.read_text().splitlines()
              if line.startswith("# ")]
    expected = transfer.rise_lines(path.stem, content["solver"])
    start = (header.index(transfer.RISES_HEADER)
             if transfer.RISES_HEADER in header else len(header))
    assert header[start:start + len(expected)] == expected


@pytest.mark.parametrize("transferred, index", [
    pair for path in TRANSFERRED for pair in entries_of(path)],
    ids=lambda value: value.stem if hasattr(value, "stem") else str(value))
def test_a_transferred_entry_runs_on_its_shaped_instance(transferred, index,
                                                        monkeypatch):
    """50 iterations on the offline instance shaped like the config's: no
    divergence, the upper-level value not above its start (the known
    exceptions: KNOWN_RISES). An entry with the CVXPY cut-LMO runs the
    exact one: CVXPY compiles the shaped dictionary's conic program for
    about 20 s, and both backends give the same cut (tests/sets/
    test_cut_lmo.py), so the steps are checked the same. A general
    problem's metrics are F alone (upper_value_only)."""
    content = config_io.read_config(transferred)
    shaped = multipliers.first_instance(content, shaped=True)
    upper_value_only(monkeypatch, dataset_data(
        shaped.name, **shaped._parameters)[1]["problem"])
    name, params = config_io.parse_entry(content["solver"][index])
    if params.get("lmo_backend") == "cvxpy":
        params = {**params, "lmo_backend": "exact"}
    n_iter = transfer.CHECK_ITERATIONS
    records, _ = run_solver(name, shaped.name, shaped._parameters, params,
                            n_iter=n_iter)
    start, end = records[0]["value"], records[-1]["value"]
    assert records[-1]["iteration"] == n_iter and not records[-1]["diverged"]
    assert np.isfinite(end)
    reason = KNOWN_RISES.get((transferred.stem, index))
    if reason:
        # listed (and so named in the config's header): it must rise
        assert end > start, (f"listed in KNOWN_RISES but F does not rise "
                             f"({start:.6g} -> {end:.6g}): remove it")
        pytest.xfail(f"{reason}: F {start:.6g} -> {end:.6g}")
    assert end <= start * (1 + 1e-9)


# F(x) of the shaped general problems by the bytes of x: the entries of a
# config share their start
_UPPER_VALUES = {}


def upper_value_only(monkeypatch, problem):
    """A general problem's metrics reduced to ``value`` = F(x), the one the
    test reads (and the divergence guard bounds): the hypergradient and the
    task metrics took a third of the time on Kwon's MNIST shape, the exact
    y*(x) of a shared start the rest of one evaluation."""
    if not hasattr(problem, "inner_solution"):
        return

    def metrics(x, y):
        key = (id(problem), x.detach().cpu().numpy().tobytes())
        if key not in _UPPER_VALUES:
            _UPPER_VALUES[key] = float(problem.value(x))
        return {"value": _UPPER_VALUES[key]}
    monkeypatch.setattr(problem, "metrics", metrics)


# -- the time cap ---------------------------------------------------------

def slow(per_iteration, evaluation=0.01):
    def measure(entry, dataset, objective_entries, evaluation_seconds):
        return timing.EntryTime(str(entry), str(dataset), 0.0,
                                per_iteration, per_iteration, evaluation)
    return measure


def test_a_budget_the_timeout_cannot_hold_is_refused():
    entries, datasets = ["SOBA", "F2SA"], ["quadratic"]
    times = timing.check_time_cap(entries, datasets, 15, 600,
                                  measure=slow(1.0))
    assert [t.entry for t in times] == entries
    assert times[0].seconds(15) == pytest.approx(316 + 16 * 0.01)
    fits = times[0].largest_max_runs(600)
    assert final_iteration(fits) <= 600 < final_iteration(fits + 1)
    with pytest.raises(ValueError, match=(
            rf"cannot hold 17 evaluations \(iteration 711\).*Give "
            rf"--max-runs {fits} or less")):
        timing.check_time_cap(entries, datasets, 17, 600, measure=slow(1.0))
    # evaluations alone beyond the timeout: refused at the first entry
    with pytest.raises(ValueError, match=r"about 1600 s\. Give --max-runs 4"):
        timing.check_time_cap(entries, datasets, 15, 600,
                              measure=slow(0.001, evaluation=100.0))
    with pytest.raises(ValueError, match="no max-runs fits"):
        timing.check_time_cap(entries, datasets, 15, 600,
                              measure=slow(0.001, evaluation=400.0))


def test_a_sample_budget_bounds_the_iterations_timed():
    # 100 samples an iteration after a warm start of 10^5: a budget of
    # 10^6 is reached at iteration 9001, first evaluated at 12138 (24
    # evaluations), whatever the cap max-runs 45 allows
    timed = timing.EntryTime("SBCGI", "regression", 0.0, 0.0, 0.001, 0.01,
                             first_samples=100_000, samples_per_iteration=100)
    assert timed.evaluations_run(45, 1_000_000) == 24
    assert final_iteration(24) == 12138
    assert timed.seconds(45, 1_000_000) == pytest.approx(
        12137 * 0.001 + 25 * 0.01)
    # no budget, or one never reached within max-runs: the max-runs bound
    assert timed.evaluations_run(45) == 45
    assert timed.evaluations_run(10, 1_000_000) == 10
    assert timed.largest_max_runs(600, 1_000_000) == 100


def test_the_command_refuses_a_transfer_over_its_time_cap(tmp_path,
                                                          monkeypatch):
    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(timing, "time_entry", slow(10.0))
    output = tmp_path / "kwon2023_hyper_cleaning.yml"
    with pytest.raises(ValueError, match="timeout \\(600 s\\) cannot hold"):
        main(["configs/kwon2023_hyper_cleaning.yml", "--transfer-from",
              "configs/tuned/kwon2023_hyper_cleaning_digits.yml",
              "--output", str(output)])
    assert not output.exists()
    assert not multipliers.sidecar_path(output).exists()


def test_the_cvxpy_dictionary_is_refused_at_the_stand_ins_budget(
        tmp_path, monkeypatch):
    """Measured: the CVXPY cut (0.15-0.35 s an iteration on the paper's
    instance) cannot run the exact-LMO stand-in's budget (30 evaluations,
    a cap behind its 2 x 10^5 samples) in 600 s, even on a dictionary of
    40 samples instead of 250 (the cut's compilation, 4-30 s at 250 on
    this machine, is what the shrinking saves); the shipped config runs 18
    evaluations (iteration 1066), its header says why."""
    monkeypatch.chdir(ROOT)
    config = tmp_path / "giangtran2025_dictionary.yml"
    text = (ROOT / "configs" / "giangtran2025_dictionary.yml").read_text()
    line = "\n  - dictionary_learning\n"
    assert line in text
    config.write_text(text.replace(line, line[:-1] + "[n_samples=40]\n"))
    with pytest.raises(ValueError, match=(
            r"cannot hold 30 evaluations \(iteration 138255\).*"
            r"SBCGI\[.*lmo_backend=cvxpy.*n_samples=40")):
        main([str(config), "--transfer-from",
              "configs/tuned/giangtran2025_dictionary_exact_lmo.yml",
              "--output", str(tmp_path / "out.yml")])
    shipped_text = (ROOT / "configs" / "tuned" /
                    "giangtran2025_dictionary.yml").read_text()
    assert "--max-runs 18" in shipped_text
    assert yaml.safe_load(shipped_text)["max-runs"] == 18


def test_kwons_mnist_f2sa_x_step_is_within_2x_of_its_own_rule():
    """Kwon's MNIST transferred config: F2SA's x step at k = 0 (its
    ``outer_step``, xi alpha_0) is within a factor 2 of what F2SA's own
    default rule gives on the MNIST-shaped instance (the transfer once
    scaled xi and alpha_0 apart and gave a step 19x too small)."""
    path = ROOT / "configs" / "tuned" / "kwon2023_hyper_cleaning.yml"
    content = config_io.read_config(path)
    shaped = multipliers.first_instance(content, shaped=True)
    checked = 0
    for entry in config_io.as_list(content["solver"]):
        name, params = config_io.parse_entry(entry)
        if name != "F2SA":
            continue
        default, _ = multipliers.default_of(name, params, "outer_step",
                                            shaped, content.get("objective"))
        assert 0.5 <= params["outer_step"] / default <= 2, entry
        checked += 1
    assert checked == 2
