"""Bad input to the tuning command is refused before any run with a
message naming the file, the argument or the parameter, and the way out;
an interrupted tuning says what was kept (``python -m
benchmark_utils.tune``)."""
import os
import signal
import subprocess
import sys
import time

import pytest
import yaml

from benchmark_utils.tuning import config_io
from benchmark_utils.tuning.cli import main
from benchmark_utils.tuning.input_checks import check_output

from conftest import ROOT

EXAMPLE = ROOT / "configs" / "tuning_example.yml"
TUNED = ROOT / "configs" / "tuned" / "kwon2023_hyper_cleaning_digits.yml"
UNTUNED = ROOT / "configs" / "huang2021_hyper_cleaning_digits.yml"
TARGET = ROOT / "configs" / "kwon2023_hyper_cleaning.yml"


def config(tmp_path, **changes):
    content = yaml.safe_load(EXAMPLE.read_text())
    content.update(changes)
    path = tmp_path / "experiment.yml"
    path.write_text(yaml.safe_dump(content))
    return path


def refused(argv, match):
    with pytest.raises(ValueError) as raised:
        main([str(a) for a in argv])
    assert match in str(raised.value), str(raised.value)
    return str(raised.value)


def test_malformed_yaml_names_the_file_line_and_column(tmp_path):
    broken = tmp_path / "broken.yml"
    broken.write_text("dataset:\n  - quadratic\nsolver: [SOBA\n")
    message = refused([broken], f"CONFIG {broken} is not valid YAML: line")
    assert "column" in message
    refused([TARGET, "--transfer-from", broken],
            f"--transfer-from {broken} is not valid YAML: line")


@pytest.mark.parametrize("kind, entry", [
    ("dataset", "nosuchdataset"), ("solver", "NoSuchSolver")])
def test_an_unknown_dataset_or_solver_gets_the_same_message(tmp_path, kind,
                                                           entry):
    path = config(tmp_path, **{kind: [entry]})
    refused([path], f"CONFIG {path}: no {kind} named {entry!r}; the "
                    f"benchmark's {kind}s are [")


def test_a_mistyped_solver_gets_the_closest(tmp_path):
    path = config(tmp_path, solver=["stocBO"])
    refused([path], f"CONFIG {path}: no solver named 'stocBO' (did you mean "
                    "'stocBiO'?); the benchmark's solvers are [")


def test_an_unknown_parameter_is_refused_before_any_run(tmp_path):
    path = config(tmp_path, solver=["SOBA[batch_size=16,nosuchparam=3]"])
    refused([path], f"CONFIG {path}: solver SOBA has no parameter "
                    "nosuchparam; its parameters are [")


def test_a_mistyped_parameter_to_tune_gets_the_closest(capsys):
    with pytest.raises(SystemExit) as raised:
        main([str(EXAMPLE), "--parameters", "outre_step"])
    assert raised.value.code == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert ("argument --parameters: 'outre_step' is not tunable (did you "
            "mean 'outer_step'?); the tunable steps and knobs are [") in last


def test_a_mistyped_key_is_named_and_benchopts_spellings_read(tmp_path):
    # a near miss of a required key is named; an option is read in both
    # of benchopt's spellings (max_runs, max-runs)
    content = yaml.safe_load(EXAMPLE.read_text())
    content["datasets"] = content.pop("dataset")
    path = tmp_path / "typo.yml"
    path.write_text(yaml.safe_dump(content))
    refused([path], f"CONFIG {path} must list at least one dataset (its "
                    "key 'datasets' is not one: benchopt reads 'dataset')")
    content["dataset"] = content.pop("datasets")
    content["max_runs"] = content.pop("max-runs", 7)
    path.write_text(yaml.safe_dump(content))
    assert config_io.read_config(path)["max-runs"] == content["max_runs"]


@pytest.mark.parametrize("value", [0, "abc", 10**7])
def test_a_bad_max_runs_in_the_config_is_refused_before_any_run(tmp_path,
                                                                value):
    path = config(tmp_path, **{"max-runs": value})
    refused([path], f"CONFIG {path}: max-runs must be an integer in [1, "
                    f"1000000], got {value!r}")


def test_one_option_in_both_spellings_is_refused(tmp_path):
    # the tuning would read one, benchopt the other
    path = config(tmp_path, **{"max-runs": 7, "max_runs": 5})
    refused([path], f"CONFIG {path} gives 'max-runs' and 'max_runs', one "
                    "option in benchopt's two spellings: keep one")


def test_parameters_no_selected_solver_tunes_are_refused(tmp_path):
    # it wrote a "Tuned by" config in which nothing was tuned, exit 0
    output = tmp_path / "out.yml"
    refused([EXAMPLE, "--solver", "SOBA", "--parameters", "lambda0",
             "--output", output],
            "--parameters lambda0: no selected solver has any of them to "
            "tune (SOBA accepts inner_step, outer_step)")
    assert not output.exists()
    # an untuned solver in the selection changes nothing (Without-BO)
    refused([ROOT / "configs" / "default_hyper_cleaning.yml",
             "--parameters", "upper_weight", "--output", output],
            "--parameters upper_weight: no selected solver has any of them")


def test_a_misspelled_solver_option_names_the_closest_entry():
    message = refused([EXAMPLE, "--solver", "SOAB"],
                      "--solver must name entries of the config")
    assert message.endswith("got ['SOAB'] (did you mean 'SOBA'?)")


def test_transfer_from_names_its_own_argument(tmp_path):
    refused([TARGET, "--transfer-from", tmp_path / "nope.yml"],
            "--transfer-from must be an existing YAML file, got")


def test_transfer_from_an_untuned_config_is_refused():
    refused([TARGET, "--transfer-from", UNTUNED],
            "--transfer-from must be a tuned config (written by the tuning "
            "command, its header starting with '# Tuned by:')")
    assert TUNED.read_text().startswith("# Tuned by:")


@pytest.mark.parametrize("where, match", [
    ("a_file/out.yml", "a_file is a file, not a folder"),
    ("folder.yml", "must be a file path")])
def test_an_unwritable_output_is_refused_first(tmp_path, where, match):
    (tmp_path / "folder.yml").mkdir()
    (tmp_path / "a_file").write_text("")
    refused([EXAMPLE, "--output", tmp_path / where, "--max-runs", "2",
             "--evaluate-at", "2"], match)


def test_an_output_the_system_refuses_is_refused_first(tmp_path):
    """/proc passes the permission check (root may write there) but takes
    no new file: the file is written once up front, before any run."""
    refused([EXAMPLE, "--output", "/proc/tuned.yml", "--max-runs", "2",
             "--evaluate-at", "2"], "--output /proc/tuned.yml cannot be "
            "written")
    # a writable place is left as it was
    output = tmp_path / "new" / "tuned.yml"
    check_output(output)
    assert not output.exists()


def default_sigint():
    """SIGINT as a terminal delivers it, in the command's process: a suite
    started in the background by a non-interactive shell ignores SIGINT,
    and an ignored signal is inherited across exec."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_says_what_was_kept_and_how_to_resume(tmp_path):
    """The command interrupted while it tunes: no traceback, a line that
    says the finished runs are kept and the same command resumes."""
    process = subprocess.Popen(
        [sys.executable, "-m", "benchmark_utils.tune", str(EXAMPLE),
         "--output", str(tmp_path / "tuned.yml")], cwd=ROOT, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=dict(os.environ, PYTHONUNBUFFERED="1"),
        preexec_fn=default_sigint)
    # interrupt while benchopt runs the first grid (its line is printed
    # just before), not after a fixed time: a fast machine finishes first
    for line in process.stdout:
        if line.startswith("running "):
            break
    time.sleep(0.2)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=120)
    assert "Traceback" not in err, err[-2000:]
    assert "the same command resumes where it stopped" in err
    assert process.returncode == 130


def test_keep_timeout_without_a_timeout_is_refused(tmp_path):
    content = yaml.safe_load(EXAMPLE.read_text())
    content.pop("timeout", None)
    path = tmp_path / "experiment.yml"
    path.write_text(yaml.safe_dump(content))
    refused([path, "--keep-timeout"], "--keep-timeout needs a timeout")
