"""``python -m benchmark_utils.compare``: the protocol a researcher's own
solver goes through. The end-to-end test copies the repository with the
docs' general example solver added to solvers/ and runs ``--quick`` there
(the two cheapest experiments: the coreset figures, about a minute)."""
import re
import shutil
import subprocess
import sys

import pandas as pd
import pytest

from benchmark_utils.claims import results
from benchmark_utils.claims.experiments import EXPERIMENTS
from benchmark_utils.claims.readings import claim_axes
from benchmark_utils.claims.standing import (
    BETTER,
    PARITY,
    UNDECIDED,
    WORSE,
    standings,
)
from benchmark_utils.claims.verdicts import NOT_TESTABLE, Method
from benchmark_utils.compare import plan, stages
from benchmark_utils.compare.__main__ import main

from conftest import ROOT

WORDS = {BETTER, PARITY, WORSE, UNDECIDED, NOT_TESTABLE}


def test_the_protocol_options_are_those_every_piece_shared():
    # pieces tuned with --widen 8 and 14: the widest; --solver, --update
    # and the machines' options are not the protocol
    _, pieces = plan.tuning_commands(
        EXPERIMENTS["huang_hyper_representation_synthetic"].config)
    assert len(pieces) > 1
    assert plan.protocol_options(pieces) == ["--widen", "14"]
    # every piece spanned three steps: so does the new solver
    _, pieces = plan.tuning_commands(
        EXPERIMENTS["kwon2023_hyper_cleaning_digits"].config)
    assert plan.protocol_options(pieces) == [
        "--widen", "4", "--parameters", "outer_step", "inner_step",
        "linear_system_step"]
    # one piece's own budget (--max-runs for SBFW) is not the others'
    _, pieces = plan.tuning_commands(
        EXPERIMENTS["abolfazli2023_matrix_completion_n100"].config)
    assert plan.protocol_options(pieces) == ["--widen", "8", "--score",
                                             "levels"]


def test_experiments_of_the_other_family_are_refused_by_name(capsys,
                                                            tmp_path):
    # an output folder of its own: a comparison a user ran is no refusal
    assert main(["SOBA", "--experiments", "cao2023_dictionary",
                 "--output", str(tmp_path / "out")]) == 1
    assert "its methods are of the simple family" in capsys.readouterr().err
    assert main(["NoSuchSolver"]) == 1
    assert "no solver named 'NoSuchSolver'" in capsys.readouterr().err
    assert main(["soba", "--plan"]) == 1
    assert ("no solver named 'soba' (did you mean 'SOBA'?)"
            in capsys.readouterr().err)
    # a misspelled parameter, before any run (--plan ran with it)
    assert main(["SOBA[batch_sise=8]", "--plan"]) == 1
    assert ("solver SOBA has no parameter batch_sise (did you mean "
            "'batch_size'?)") in capsys.readouterr().err
    assert main(["SOBA", "--quick", "--experiments",
                 "benchmark_bilevel_simulated"]) == 1
    assert "--quick" in capsys.readouterr().err
    # a misspelled experiment, the closest named
    assert main(["SOBA", "--plan", "--experiments",
                 "benchmark_bilevel_simulatd"]) == 1
    assert ("got 'benchmark_bilevel_simulatd' (did you mean "
            "'benchmark_bilevel_simulated'?)") in capsys.readouterr().err
    # a folder that cannot be made (no place for it in /proc), in a line
    assert main(["SOBA", "--quick", "--output", "/proc/x"]) == 1
    assert ("--output /proc/x cannot be created (No such file or "
            "directory)") in capsys.readouterr().err


def test_every_tuned_experiment_with_evidence_applies_to_its_family():
    general = {c.name for c in plan.comparisons("SOBA")}
    simple = {c.name for c in plan.comparisons("SBCGF")}
    tuned = {name for name, exp in EXPERIMENTS.items()
             if exp.source == "tuned" and (exp.folder / "meta.yml").is_file()}
    assert general | simple == tuned and not general & simple


def _copy(tmp_path):
    """The repository as a user has it (tracked and untracked files git
    does not ignore), a git repository, with the example solver added."""
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT,
        capture_output=True, check=True).stdout.decode().split("\0")
    copy = tmp_path / "repo"
    for name in filter(None, listed):
        if (ROOT / name).is_file():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, copy / name)
    shutil.copy(ROOT / "docs" / "examples" / "general_solver.py",
                copy / "solvers" / "my_method.py")

    def git(*args):
        return subprocess.run(["git", *args], cwd=copy, check=True,
                              capture_output=True, text=True).stdout
    git("init", "-q")
    git("add", "-A")
    git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "c")
    return copy, git


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    copy, git = _copy(tmp_path_factory.mktemp("compare"))
    done = subprocess.run(
        [sys.executable, "-m", "benchmark_utils.compare", "Example-General",
         "--quick"], cwd=copy, capture_output=True, text=True, timeout=600)
    return copy, git, done


def test_quick_writes_a_page_and_changes_nothing_shipped(quick):
    copy, git, done = quick
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    # the cost is printed before anything runs
    assert "estimated cost" in lines[0]
    # README: "under 5 CPU-minutes with --quick for the general example"
    total = re.search(r"in all ~([\d.]+) CPU-min", done.stdout)
    assert total and float(total.group(1)) < 5
    assert lines[-1] == "outputs/compare/Example-General/index.html"
    # git status clean outside outputs/ (ignored): nothing shipped changed
    assert git("status", "--porcelain") == ""
    page = (copy / lines[-1]).read_text()
    assert "<script" not in page and not re.search(
        r"(src|href)=\"https?:", page)
    assert page.count("<svg") >= 2 and "Performance profile" in page


def test_quick_decides_the_new_method_against_every_method(quick):
    copy, _, done = quick
    assert done.returncode == 0, done.stderr[-3000:]
    verdicts = pd.read_csv(copy / "outputs/compare/Example-General"
                           / "verdicts.csv")
    assert set(verdicts["standing"]) <= WORDS
    assert verdicts["experiment"].nunique() == 2
    for name, rows in verdicts.groupby("experiment"):
        exp = EXPERIMENTS[name]
        labels = {m.label for m in exp.methods}
        assert set(rows["against"]) == labels
        # each pair on each dataset, metric and reading, once
        assert len(rows) == len(labels) * len(exp.metrics) * rows[
            "axis"].nunique() * rows["dataset"].nunique()


def test_a_second_run_resumes_from_the_finished_steps(quick):
    copy, _, done = quick
    assert done.returncode == 0, done.stderr[-3000:]
    again = subprocess.run(
        [sys.executable, "-m", "benchmark_utils.compare", "Example-General",
         "--quick"], cwd=copy, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]
    # no tuning grid and no benchopt run again: every step was kept
    assert "points x 3 seeds" in done.stdout
    assert "evidence runs of" in done.stdout
    assert "points x 3 seeds" not in again.stdout
    assert "evidence runs of" not in again.stdout
    assert again.stdout.count("(kept from an earlier run)") == 4
    # nor the probes: the same estimates, read from the output folder

    def plan_lines(text):
        lines = text.splitlines()
        return lines[:next(i for i, line in enumerate(lines)
                           if "in all ~" in line) + 1]
    assert plan_lines(again.stdout) == plan_lines(done.stdout)
    assert (copy / "outputs/compare/Example-General/estimates.yml").is_file()
    assert again.stdout.splitlines()[-1] == done.stdout.splitlines()[-1]


@pytest.mark.parametrize("name", ["benchmark_bilevel_simulated",
                                  "benchmark_bilevel_regularization_synthetic"])
def test_a_copy_of_soba_is_on_par_with_soba(name):
    """SOBA's committed runs under another name, after every other
    method's (on a clock the runs hold every method's: the new one is
    found by its name, never by the first row): on par with SOBA on every
    dataset, metric and reading (paired by seed, each pair its own Holm
    family), and standing against every other method as SOBA does."""
    exp = EXPERIMENTS[name]
    runs = results.read(exp.folder)[0]
    soba = runs[runs["solver"].str.startswith("SOBA[")]
    copy = soba.assign(solver=soba["solver"].str.replace(
        "SOBA[", "SOBA-copy[", regex=False))
    runs = pd.concat([runs, copy], ignore_index=True)
    new = Method("SOBA-copy", (stages.solver_name(runs, "SOBA-copy"),))
    found = standings(exp, runs, new)
    against_soba = [s for s in found if s.other == "SOBA"]
    assert len(against_soba) == len(exp.metrics) * len(
        claim_axes(exp, runs)) * runs["dataset"].nunique()
    assert {s.word for s in against_soba} == {PARITY}, against_soba
    with pytest.raises(ValueError, match="one expected"):
        stages.solver_name(runs, "SOB")


def test_the_new_solver_gets_the_settings_the_methods_share():
    entries = ["SOBA[batch_size=64,outer_step=0.1]", "SABA[batch_size=64]",
               "stocBiO[batch_size=64,neumann_terms=6]"]
    # batch_size set alike by all three; the step is tuned; the Neumann
    # terms are one method's own
    assert plan.shared_settings(entries) == {"batch_size": 64}
    assert plan.new_entry("SOBA", entries) == "SOBA[batch_size=64]"
    # the solver's own knobs win; a knob it does not have is not given
    assert plan.new_entry("SOBA[batch_size=8]", entries) == (
        "SOBA[batch_size=8]")
    assert plan.new_entry("Optuna", entries) == "Optuna"


def test_a_folder_of_another_comparison_is_refused(tmp_path, capsys):
    (tmp_path / "solver.yml").write_text("solver: SABA\nsha256: '0'\n")
    assert main(["SOBA", "--experiments", "abolfazli2023_coreset_fig1",
                 "--output", str(tmp_path)]) == 1
    assert "holds a comparison of another solver" in capsys.readouterr().err


def test_ctrl_c_says_the_same_command_resumes(tmp_path, capsys,
                                               monkeypatch):
    from benchmark_utils.compare import stages

    def interrupted(*args):
        raise KeyboardInterrupt
    monkeypatch.setattr(stages, "tune", interrupted)
    assert main(["SOBA", "--experiments", "abolfazli2023_coreset_fig1",
                 "--output", str(tmp_path)]) == 130
    assert "the same command resumes" in capsys.readouterr().err
