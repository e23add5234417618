"""Steps carried from a stand-in's tuned config to the experiment it stands
for (``python -m benchmark_utils.tune CONFIG --transfer-from TUNED``,
benchmark_utils/tuning/transfer.py)."""
import re

import pytest
import yaml
from test_tuning import shipped

from benchmark_utils.problems.hyper_cleaning import step_scales
from benchmark_utils.tuning import config_io
from benchmark_utils.tuning.cli import main
from benchmark_utils.tuning.transfer import transferred_entries

from conftest import ROOT

DIGITS = ("hyper_cleaning[source=digits,n_train=800,n_val=400,n_test=197,"
          "corruption=0.3,c=0.001,reduction={}]")
MNIST = ("hyper_cleaning[source=mnist,n_train=5000,n_val=1000,n_test=10000,"
         "corruption=0.3,c=0.001,reduction={}]")


def configs(reduction, solvers, target_solvers=None):
    tuned = {"max-runs": 7, "dataset": [DIGITS.format(reduction)],
             "solver": solvers}
    target = {"dataset": [MNIST.format(reduction)],
              "solver": target_solvers or [config_io.format_entry(
                  *_without_steps(entry)) for entry in solvers]}
    return target, tuned


def _without_steps(entry):
    name, params = config_io.parse_entry(entry)
    return name, {k: v for k, v in params.items() if not k.endswith("step")}


def test_hyper_cleaning_scales_follow_the_problems_constants():
    # the same numbers the problem sets from its data (level_scales)
    assert step_scales(800, 400, "mean") == {
        "outer_step": 800.0, "inner_step": 1.0, "linear_system_step": 1.0}
    assert step_scales(1000, 500, "sum") == {
        "outer_step": 2.0, "inner_step": 1e-3, "linear_system_step": 1e-3}


@pytest.mark.parametrize("reduction, x_ratio, y_ratio", [
    ("mean", 5000 / 800, 1.0), ("sum", (5000 / 1000) / (800 / 400),
                                800 / 5000)])
def test_steps_are_rescaled_by_the_declared_scales(reduction, x_ratio,
                                                   y_ratio):
    target, tuned = configs(reduction, [
        "stocBiO[neumann_terms=4,batch_size=32,outer_step=100,inner_step=0.005,"
        "linear_system_step=0.85]"])
    (entry,), notes = transferred_entries(target, tuned)
    name, params = config_io.parse_entry(entry)
    assert name == "stocBiO" and params["neumann_terms"] == 4 and not notes
    assert params["outer_step"] == pytest.approx(100 * x_ratio, rel=1e-2)
    assert params["inner_step"] == pytest.approx(0.005 * y_ratio, rel=1e-2)
    assert params["linear_system_step"] == pytest.approx(0.85 * y_ratio,
                                                         rel=1e-2)


def test_a_normalized_step_is_copied_and_other_parameters_are_the_targets():
    target, tuned = configs("mean", [
        "BiAdam[neumann_terms=3,adaptive_input=hypergradient,rho=0.0001,"
        "outer_step=5,inner_step=0.25]",
        "BiAdam[neumann_terms=3,outer_step=5000,inner_step=0.25]",
        "VRBO[neumann_terms=4,large_batch_size=800,outer_step=1000,"
        "inner_step=0.2]"],
        ["BiAdam[neumann_terms=3,adaptive_input=hypergradient,rho=0.0001]",
         "BiAdam[neumann_terms=3]",
         "VRBO[neumann_terms=4,large_batch_size=5000]"])
    entries, notes = transferred_entries(target, tuned)
    params = [config_io.parse_entry(e)[1] for e in entries]
    assert params[0]["outer_step"] == 5         # Adam on the hypergradient
    assert params[1]["outer_step"] == 31200     # A_t = rho I: x 6.25
    assert params[2]["large_batch_size"] == 5000
    assert any("outer_step copied" in note for note in notes)
    assert any("large_batch_size=800" in note for note in notes)


@pytest.mark.parametrize("solvers, message", [
    (["SOBA[outer_step=1]", "F2SA[outer_step=1]"],
     "1 solver entries in order, got 2"),
    (["F2SA[outer_step=1]"], "lists F2SA where the config lists SOBA"),
])
def test_mismatched_stand_in_fails_clearly(solvers, message):
    target = {"dataset": [MNIST.format("mean")], "solver": ["SOBA"]}
    tuned = {"dataset": [DIGITS.format("mean")], "solver": solvers}
    with pytest.raises(ValueError, match=message):
        transferred_entries(target, tuned)


@pytest.mark.parametrize("transferred", shipped("Transferred by"),
                         ids=lambda path: path.stem)
def test_shipped_transfers_are_reproduced_by_their_command(transferred,
                                                           tmp_path,
                                                           monkeypatch):
    """Each shipped transferred config is what its header's command writes
    now (from the stand-in's tuned config it names), with 10 repetitions."""
    text = transferred.read_text()
    command = re.search(r"^# Transferred by: python -m benchmark_utils.tune "
                        r"(.*)$", text, re.M).group(1).split()
    output = tmp_path / transferred.name
    monkeypatch.chdir(ROOT)         # the command's paths are the repo's
    if "--output" in command:
        command = command[:command.index("--output")]
    main([*command, "--output", str(output)])
    fresh = yaml.safe_load(output.read_text())
    shipped_content = yaml.safe_load(text)
    assert shipped_content["n-repetitions"] == 10
    assert fresh == shipped_content
