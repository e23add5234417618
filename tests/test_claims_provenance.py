"""What evidence was made from is pinned in its meta.yml
(benchmark_utils/claims/provenance.py): an evidence table that is not the
one its run wrote fails ``claims check`` naming the experiment, wherever
the change is; a config or code change since the run marks the section
stale, naming what changed and the command that renews it."""
import shutil

import pandas as pd
import pytest
import yaml

from benchmark_utils.claims import experiments, provenance, sections
from benchmark_utils.claims.__main__ import main

from conftest import ROOT

NAME = "abolfazli2023_coreset_fig1"


@pytest.fixture
def copied(tmp_path, monkeypatch):
    """results/ copied, every experiment reading its copy."""
    folder = tmp_path / "results"
    shutil.copytree(ROOT / "results", folder)
    monkeypatch.setattr(experiments.Experiment, "folder",
                        property(lambda self: folder / self.name))
    return folder


def test_the_committed_evidence_is_what_its_runs_wrote():
    assert sections.integrity_errors() == {}


def test_a_value_no_verdict_reads_is_caught(copied, capsys, monkeypatch):
    """A runs.csv.gz value off the read points and params.csv scaled: the
    numbers on the page do not change, the digests do."""
    runs_file = copied / NAME / "runs.csv.gz"
    runs = pd.read_csv(runs_file)
    first = runs["iteration"] == 1
    runs.loc[first, "upper_gap_abs"] *= 1.37
    runs.to_csv(runs_file, index=False)
    params_file = copied / "kwon2023_hyper_cleaning_digits" / "params.csv"
    params = pd.read_csv(params_file)
    floats = params.select_dtypes("float").columns
    params[floats] *= 1.37
    params.to_csv(params_file, index=False)
    errors = sections.integrity_errors()
    assert set(errors) == {NAME, "kwon2023_hyper_cleaning_digits"}
    assert "runs.csv.gz is not the file its run wrote" in errors[NAME][0]
    assert f"claims run {NAME}" in errors[NAME][0]
    # the command prints each file's line (the page's comparison aside)
    monkeypatch.setattr(sections, "check", lambda: sorted(errors))
    assert main(["check"]) == 1
    out = capsys.readouterr().out
    assert f"results/{NAME}/runs.csv.gz is not the file its run wrote" in out


def test_evidence_that_pins_no_digest_is_an_error(copied):
    meta_file = copied / NAME / "meta.yml"
    meta = yaml.safe_load(meta_file.read_text())
    del meta["digests"]
    meta_file.write_text(yaml.safe_dump(meta, sort_keys=False))
    assert "pins no digests" in sections.integrity_errors()[NAME][0]


def test_an_edited_config_makes_the_evidence_stale(tmp_path, monkeypatch):
    """IBCG's outer_step edited in the tuned config the evidence ran."""
    exp = experiments.experiment(NAME)
    text = exp.config.read_text()
    assert "outer_step=0.0461" in text
    edited = tmp_path / exp.config.name
    edited.write_text(text.replace("outer_step=0.0461", "outer_step=0.461"))
    meta = yaml.safe_load((exp.folder / "meta.yml").read_text())
    assert not provenance.config_changed(exp, meta)
    monkeypatch.setattr(type(exp), "config", property(lambda self: edited))
    assert provenance.config_changed(exp, meta)
    # the page says what changed: one solver entry edited (out, in)
    assert "gives another config than this evidence ran (solver: 2 " \
        "entries in one and not the other)" in provenance.stale_text(
            exp, meta)
    # a changed number of repetitions, old -> new
    meta["config"]["n-repetitions"] = exp.repetitions - 1
    assert (f"n-repetitions: {exp.repetitions - 1} -> {exp.repetitions}"
            in provenance.config_differences(exp, meta))


def test_a_code_change_makes_the_evidence_stale_naming_the_file():
    exp = experiments.experiment(NAME)
    meta = yaml.safe_load((exp.folder / "meta.yml").read_text())
    meta["digests"]["code"] = provenance.code_digests(meta["config"])
    assert provenance.stale_code(meta) == []
    meta["digests"]["code"]["solvers/ibcg.py"] = "0" * 16
    del meta["digests"]["code"]["benchmark_utils/sets/simplex.py"]
    assert provenance.stale_code(meta) == [
        "benchmark_utils/sets/simplex.py", "solvers/ibcg.py"]
    text = provenance.stale_text(exp, meta)
    assert "the code it ran changed since (`benchmark_utils/sets/simplex" \
        ".py`, `solvers/ibcg.py`)" in text
    assert f"claims run {NAME}` renews it" in text


def test_the_code_a_run_ran_follows_its_imports():
    """objective.py, the named solvers' and datasets' files and what they
    import (absolute and relative), nothing of the claims or report."""
    exp = experiments.experiment(NAME)
    files = provenance.code_digests(provenance.evaluation_config(exp))
    assert {"objective.py", "solvers/ibcg.py", "solvers/sbfw.py",
            "benchmark_utils/solvers/base.py"} <= set(files)
    assert not any(path.startswith(("solvers/soba", "benchmark_utils/claims",
                                    "benchmark_utils/report"))
                   for path in files)
