"""``python -m benchmark_utils.claims``: ``run`` writes an experiment's
evidence from its tuned config, ``list`` and ``--help`` give each
experiment's cost; an unknown experiment is refused with the closest name."""
import subprocess
import sys

import pytest

from benchmark_utils.claims import experiments, sections
from benchmark_utils.claims.__main__ import main
from benchmark_utils.claims.provenance import at_budget, at_horizon
from benchmark_utils.tuning.runner import final_iteration

from conftest import ROOT


def test_every_experiment_has_its_tuned_config():
    for exp in experiments.EXPERIMENTS.values():
        assert exp.config.is_file(), exp.config
        assert exp.axis in ("iterations", "samples", "time", "grad_evals",
                            "hvp", "lmo")


def test_an_unknown_experiment_is_refused_with_the_closest():
    with pytest.raises(ValueError, match="no experiment 'cao2023_dictionry' "
                       r"\(did you mean 'cao2023_dictionary'\?\); `python "
                       "-m benchmark_utils.claims list` has them"):
        experiments.experiment("cao2023_dictionry")
    with pytest.raises(SystemExit):
        main(["run", "nope"])


def test_a_cost_says_how_it_was_measured_and_what_to_expect():
    from benchmark_utils.claims.__main__ import wall_text
    meta = {"cpu_seconds": 600, "wall_seconds": 660, "workers": 1,
            "load_average": 1.2}
    assert wall_text(meta) == (
        " (0.18 hours wall-clock, 1 worker(s), load average 1.2 at its "
        "start); about 5.0 minutes of wall-clock with -j 2 on 2 idle "
        "cores, more under load")
    assert "load then not recorded" in wall_text({"cpu_seconds": 600})


def test_help_lists_the_experiments_with_their_cost():
    text = subprocess.run([sys.executable, "-m", "benchmark_utils.claims",
                           "--help"], cwd=ROOT, capture_output=True,
                          text=True, check=True).stdout
    for name, exp in experiments.EXPERIMENTS.items():
        line = next(line for line in text.splitlines()
                    if line.startswith(f"  {name}: "))
        # its measured cost where its evidence is committed; a longer run
        # not run yet: its base's cost scaled by the budget's factor
        if (exp.folder / "meta.yml").is_file():
            assert " at its last run (" in line, line
            assert "wall-clock with -j 2 on 2 idle cores" in line, line
        elif exp.source == "long" and (
                experiments.EXPERIMENTS[exp.base].folder / "meta.yml"
        ).is_file():
            assert line.endswith(f"10x {exp.base}'s last run)"), line
        else:
            assert line.endswith("not run yet"), line


def test_a_longer_run_is_its_tuned_config_at_a_multiple_of_its_budget():
    """``NAME_long``: the tuned config of NAME, its sample budget, its
    evaluations (1.5x apart) and its safety timeout raised together."""
    exp = experiments.experiment("cao2023_dictionary")
    long = experiments.longer(exp, 10)
    assert long.name == "cao2023_dictionary_long"
    assert long.config == exp.config and long.base == exp.name
    assert long.budget == ("samples", 2_000_000)
    config = {"objective": ["Bilevel[sample_budget=200000]"],
              "max-runs": 31, "timeout": 600}
    longer_config = at_budget(config, 2_000_000)
    assert longer_config == {"objective": ["Bilevel[sample_budget=2000000]"],
                             "max-runs": 37, "timeout": 6000}
    # the 6 more evaluations reach 10x the iteration of the last
    assert final_iteration(37) >= 10 * final_iteration(31)
    with pytest.raises(ValueError, match="needs a sample budget"):
        experiments.longer(experiments.experiment(
            "abolfazli2023_coreset"), 10)

def test_a_time_axis_run_is_continued_to_its_cpu_horizon():
    """A horizon in CPU seconds ends every run (the objective's
    cpu_budget); the sample budget becomes a safety cap 100x above it,
    with benchopt's full 100 evaluations and a timeout beyond the
    horizon; a longer run scales the horizon too."""
    config = {"objective": ["Bilevel[sample_budget=1000000]"],
              "max-runs": 31, "timeout": 600}
    assert at_horizon(config, 24) == {
        "objective": ["Bilevel[sample_budget=100000000,cpu_budget=24]"],
        "max-runs": 100, "timeout": 600}
    assert at_horizon(config, 100)["timeout"] == 1060
    # a config without a sample budget gets no cap: the horizon ends it
    assert at_horizon({**config, "objective": ["Bilevel"]}, 20)[
        "objective"] == ["Bilevel[cpu_budget=20]"]
    base = experiments.experiment(
        "benchmark_bilevel_regularization_synthetic")
    long = experiments.experiment(
        "benchmark_bilevel_regularization_synthetic_long")
    assert long.horizon == 10 * base.horizon


def test_run_on_a_dask_cluster_writes_the_committed_evidence(
        tmp_path, monkeypatch):
    """claims run of the cheapest experiment with benchopt's dask backend
    (a LocalCluster of 2 workers), into a temporary results folder (and a
    copy of docs/results.md, whose section the run rewrites): the evidence
    written, every evaluation's metrics and counters those committed,
    times aside. Its own benchopt cache: no earlier run may serve it."""
    pytest.importorskip("distributed")
    from benchmark_utils.claims import __main__ as command
    from benchmark_utils.claims import results
    monkeypatch.setenv("BENCHOPT_CACHE", str(tmp_path / "cache"))
    logs = []

    def logged(run_config, log_path, **options):
        try:
            command_run(run_config, log_path, **options)
        finally:
            logs.append(log_path.read_text())

    command_run = command.run_benchopt
    monkeypatch.setattr(command, "run_benchopt", logged)
    page = tmp_path / "results.md"
    page.write_text(sections.RESULTS_PAGE.read_text())
    monkeypatch.setattr(sections, "RESULTS_PAGE", page)
    exp = experiments.experiment("abolfazli2023_coreset_fig1")
    committed, _, _ = results.read(exp.folder)
    monkeypatch.setattr(experiments, "RESULTS_DIR", tmp_path)
    monkeypatch.setattr(type(exp), "folder",
                        property(lambda self: tmp_path / self.name))
    config = ROOT / "configs" / "parallel" / "dask_local.yml"
    assert main(["run", exp.name, "--parallel-config", str(config),
                 "-j", "2"]) == 0
    # the cluster computed every run: none served from a cache
    assert "Distributed run with backend: dask" in logs[0]
    assert "(cached)" not in logs[0]
    rerun, _, meta = results.read(tmp_path / exp.name)
    assert meta["config"]["n-repetitions"] == exp.repetitions == 30
    assert sorted(rerun["rep"].unique()) == list(range(30))
    assert rerun["iteration"].max() == 141
    assert meta["cpu_seconds"] >= 0
    assert f"results/{exp.name}/" in page.read_text()
    columns = [c for c in committed.columns if c not in ("time", "cpu_time")]
    assert len(rerun) == len(committed) == 28 * exp.repetitions
    for column in columns:
        assert (rerun[column] == committed[column]).all(), column
