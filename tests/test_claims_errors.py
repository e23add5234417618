"""``python -m benchmark_utils.claims`` answers a user's mistake or
damaged evidence in one line and exit code 1 (130 on Ctrl-C), before any
run where it can, and never leaves half-written evidence."""
import gzip
import shutil

import pandas as pd
import pytest

from benchmark_utils.claims import __main__ as cli
from benchmark_utils.claims import experiments, html_report, results, sections

from conftest import ROOT

EXP = "abolfazli2023_coreset_fig1"


@pytest.fixture
def copied(tmp_path, monkeypatch):
    """A copy of one experiment's evidence, every experiment's folder in
    the copy."""
    shutil.copytree(ROOT / "results" / EXP, tmp_path / EXP)
    monkeypatch.setattr(experiments.Experiment, "folder",
                        property(lambda self: tmp_path / self.name))
    return tmp_path


def test_a_truncated_evidence_file_is_named(copied, capsys, monkeypatch):
    path = copied / EXP / "runs.csv.gz"
    path.write_bytes(path.read_bytes()[:200])
    with pytest.raises(results.EvidenceError, match=f"{path} cannot be "
                       "read .*claims run abolfazli2023_coreset_fig1"):
        results.read(copied / EXP)
    # a report of this experiment alone: the error is its one line
    exp = experiments.EXPERIMENTS[EXP]
    monkeypatch.setattr(html_report, "papers",
                        lambda wanted=None: {exp.paper: [exp]})
    assert cli.main(["report", "--output", str(copied / "pages")]) == 1
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "runs.csv.gz cannot be read" in error


def test_a_missing_tuned_config_is_one_line(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(experiments.Experiment, "config",
                        property(lambda self: tmp_path / "none.yml"))
    assert cli.main(["run", EXP]) == 1
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "tune the experiment first" in error


def test_a_file_in_place_of_the_evidence_folder_is_refused_first(
        tmp_path, monkeypatch, capsys):
    (tmp_path / "results").write_text("")
    monkeypatch.setattr(experiments.Experiment, "folder", property(
        lambda self: tmp_path / "results" / self.name))
    monkeypatch.setattr(cli, "run_benchopt", lambda *a: pytest.fail(
        "ran before refusing"))
    assert cli.main(["run", EXP]) == 1
    assert "is a file, not a folder" in capsys.readouterr().err
    assert cli.main(["report", "--output",
                     str(tmp_path / "results" / "pages")]) == 1
    assert "is a file, not a folder" in capsys.readouterr().err


@pytest.mark.parametrize("options, message", [
    (["-j", "0"], "--n-jobs must be an integer >= 1, got 0"),
    (["--parallel-config", "/nonexistent.yml"],
     "--parallel-config must be an existing file"),
    (["--parallel-config", "configs"],
     "--parallel-config must be an existing file"),
    (["--parallel-config", "README.md"], "is not YAML"),
    (["--parallel-config", "requirements.txt"], "must hold benchopt's "
     "parallel config, a mapping"),
])
def test_bad_parallel_options_are_refused_before_any_run(
        options, message, monkeypatch, capsys):
    # benchopt would run the whole experiment on one worker (-j 0), or end
    # in two tracebacks
    monkeypatch.setattr(cli, "run_benchopt", lambda *a: pytest.fail(
        "ran before refusing"))
    monkeypatch.chdir(ROOT)
    assert cli.main(["run", EXP, *options]) == 1
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and message in error, error


def test_ctrl_c_says_the_evidence_is_untouched(monkeypatch, capsys):
    def interrupted(*args):
        raise KeyboardInterrupt
    monkeypatch.setattr(cli, "run", interrupted)
    assert cli.main(["run", EXP]) == 130
    assert "results/ and docs/results.md are as they were" in (
        capsys.readouterr().err)


def test_a_section_without_its_evidence_is_caught(copied, tmp_path,
                                                  monkeypatch):
    page = tmp_path / "results.md"
    page.write_text(sections.BEGIN.format(EXP) + "\nverdicts\n"
                    + sections.END.format(EXP) + "\n")
    (copied / EXP / "meta.yml").unlink()
    monkeypatch.setattr(sections, "generated", lambda names=None: {})
    assert sections.check(page) == [EXP]
    # a folder without its meta.yml is caught without a section too
    page.write_text("")
    assert sections.check(page) == [EXP]


def test_write_says_which_sections_it_left_without_evidence(
        copied, tmp_path, monkeypatch, capsys):
    # said at once, with exit 1, not only by a later check
    page = tmp_path / "results.md"
    kept = sections.BEGIN.format(EXP) + "\nverdicts\n" + sections.END.format(
        EXP) + "\n"
    page.write_text(kept)
    shutil.rmtree(copied / EXP)
    monkeypatch.setattr(sections, "generated", lambda names=None: {})
    monkeypatch.setattr(sections.simulation, "update_record", lambda: None)
    monkeypatch.setattr(sections, "RESULTS_PAGE", page)
    assert cli.main(["write"]) == 1
    assert page.read_text() == kept
    error = capsys.readouterr().err
    assert error == (f"results/{EXP}/ has no evidence (no meta.yml): its "
                     "section of docs/results.md, if any, is left as it was; "
                     f"`python -m benchmark_utils.claims run {EXP}` renews "
                     "it\n")


def test_a_report_without_evidence_says_so_where_it_is_run(
        copied, tmp_path, capsys):
    (copied / EXP / "meta.yml").unlink()
    assert cli.main(["report", "--paper", "Abolfazli", "--output",
                     str(tmp_path / "pages")]) == 0
    assert (f"claims report: results/{EXP}/ has no committed evidence"
            in capsys.readouterr().err)


def test_writing_swaps_the_whole_folder(copied):
    """New evidence replaces the old one whole: no file of the old run
    stays beside the new ones, and no staging folder is left."""
    folder = copied / EXP
    runs, params, meta = results.read(folder)
    (folder / "stray.txt").write_text("old")
    frame = pd.DataFrame({
        "dataset_name": ["d"], "solver_name": ["S"], "idx_rep": [0],
        "stop_val": [0], "time": [0.0], "objective_n_samples_upper": [1],
        "objective_n_samples_lower": [1], "objective_value": [1.0]})
    results.write(folder, frame, config={}, command="c", root=ROOT,
                  state=("0" * 40, False))
    assert sorted(p.name for p in folder.iterdir()) == sorted(results.FILES)
    assert sorted(p.name for p in copied.iterdir()) == [EXP]
    with gzip.open(folder / "runs.csv.gz", "rt") as stream:
        assert len(stream.read().splitlines()) == 2


def test_a_report_folder_the_system_refuses_is_one_line(capsys):
    # the raw "[Errno 2] ... '/proc/x'" said neither the option nor why
    assert cli.main(["report", "--output", "/proc/x"]) == 1
    error = capsys.readouterr().err
    assert error == ("claims report: --output /proc/x cannot be created "
                     "(No such file or directory)\n")


def test_a_folder_in_place_of_meta_yml_is_named(copied, monkeypatch, capsys):
    # a folder is not a missing file; the page's comparison is not the
    # point here
    monkeypatch.setattr(sections, "check", lambda: [EXP])
    monkeypatch.setattr(sections, "integrity_errors", lambda: {})
    meta = copied / EXP / "meta.yml"
    meta.unlink()
    meta.mkdir()
    assert cli.main(["check"]) == 1
    assert capsys.readouterr().out == (
        f"results/{EXP}/meta.yml is a folder, not the evidence's file: "
        f"`python -m benchmark_utils.claims run {EXP}` renews it\n")


@pytest.mark.parametrize("command", ["run", "recheck"])
def test_a_mistyped_experiment_gets_the_closest_name(command, capsys):
    with pytest.raises(SystemExit) as raised:
        cli.main([command, EXP[:-1]])
    assert raised.value.code == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert f"no experiment {EXP[:-1]!r} (did you mean {EXP!r}?)" in last
    assert "claims list" in last


def test_a_missing_meta_yml_is_said_first(copied, monkeypatch, capsys):
    # the experiment's own fault first, before the summary sections it
    # makes differ
    monkeypatch.setattr(sections, "check",
                        lambda: ["evidence_size", "profile", EXP])
    monkeypatch.setattr(sections, "integrity_errors", lambda: {})
    (copied / EXP / "meta.yml").unlink()
    assert cli.main(["check"]) == 1
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith(f"results/{EXP}/ has no evidence (no meta.yml)")


@pytest.mark.parametrize("meta", ["a: [1\n", "{}\n", "- 1\n", ""])
def test_a_damaged_meta_yml_is_named(copied, meta, capsys):
    # not YAML, no mapping, or a key missing: the file named, no traceback
    (copied / EXP / "meta.yml").write_text(meta)
    with pytest.raises(results.EvidenceError, match=f"{EXP}/meta.yml "
                       f"cannot be read .*claims run {EXP}"):
        results.read(copied / EXP)
    assert cli.main(["list"]) == 1
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "meta.yml cannot be read" in error


def test_runs_of_another_form_are_named(copied):
    # a readable table of another form is named, not read on
    with gzip.open(copied / EXP / "runs.csv.gz", "wt") as stream:
        stream.write("a,b\n1,2\n")
    with pytest.raises(results.EvidenceError, match=r"runs.csv.gz cannot be "
                       r"read \(ValueError: runs.csv.gz lacks the columns "
                       r"\['dataset'"):
        results.read(copied / EXP)
