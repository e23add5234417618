"""A tuning in pieces (``--solver ... --update``,
benchmark_utils/tuning/pieces.py): the second piece keeps the first's
entries, header lines and score tables, names the first piece, and is
refused before any run where the two would not be one tuning."""
import subprocess
import sys

import pytest
import yaml

from benchmark_utils.tuning.cli import main
from benchmark_utils.tuning.header import budget_line

from conftest import ROOT

QUADRATIC = "quadratic[dim_x=10,dim_y=10,n_samples=100,constraint=none]"
SOLVERS = ["SOBA", "stocBiO[neumann_terms=6]"]
SAME_BUDGET = ("this config runs the same budget (tuned at the experiment's "
               "budget)")


def tune(config, output, *options):
    result = subprocess.run(
        [sys.executable, "-m", "benchmark_utils.tune", str(config),
         "--grid-points", "2", "--widen", "0", "--output", str(output),
         *options], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr
    return result.stdout


def section(scores, title):
    text = scores.read_text()
    start = text.index(f"\n### {title}\n")
    end = text.find("\n### ", start + 1)
    return text[start:end if end > 0 else None]


def test_a_second_piece_keeps_the_first_and_names_it(tmp_path):
    config = tmp_path / "tiny.yml"
    config.write_text(yaml.safe_dump({
        "max-runs": 3, "dataset": [QUADRATIC], "solver": SOLVERS}))
    output = tmp_path / "tuned" / "pieces_test_tuning.yml"
    scores = output.with_name("pieces_test_tuning_scores.md")
    tune(config, output, "--solver", "SOBA")
    first_entry = yaml.safe_load(output.read_text())["solver"][0]
    first_table = section(scores, "SOBA")
    assert "`stocBiO[neumann_terms=6]`: not selected by --solver" in (
        scores.read_text())

    printed = tune(config, output, "--solver", "stocBiO", "--update")
    assert "SOBA: kept from pieces_test_tuning.yml (--update)" in printed
    solvers = yaml.safe_load(output.read_text())["solver"]
    assert solvers[0] == first_entry and solvers[1] != SOLVERS[1]
    assert section(scores, "SOBA") == first_table
    assert "### stocBiO[neumann_terms=6]" in scores.read_text()
    assert "not selected by --solver" not in scores.read_text()
    text = output.read_text()
    assert "#   SOBA: outer_step in [" in text
    assert "#   stocBiO[neumann_terms=6]: outer_step in [" in text
    earlier = [line for line in text.splitlines()
               if line.startswith("# Earlier piece: ")]
    assert len(earlier) == 1 and "--solver SOBA" in earlier[0]
    assert "its tables here: SOBA" in earlier[0]


def test_pieces_that_are_not_one_tuning_are_refused(tmp_path):
    config = tmp_path / "tiny.yml"
    config.write_text(yaml.safe_dump({
        "max-runs": 3, "dataset": [QUADRATIC], "solver": SOLVERS}))
    output = tmp_path / "tuned.yml"
    with pytest.raises(ValueError, match="--update goes with --solver"):
        main([str(config), "--output", str(output), "--update"])
    with pytest.raises(ValueError, match="has no tuned config and score "
                                         "table there"):
        main([str(config), "--output", str(output), "--solver", "SOBA",
              "--update"])
    # an existing tuning of the same config with 2 tuning seeds: a piece
    # with 3 is another tuning, refused before any run
    scores = tmp_path / "tuned_scores.md"
    scores.write_text("# Tuning scores: tuned.yml\n\n### SOBA\n\n")
    output.write_text(
        f"# Tuned by: python -m benchmark_utils.tune {config}\n"
        f"# From: {config}\n"
        f"# {budget_line(3, None, SAME_BUDGET)}\n"
        "# Tuning seeds: benchopt --seed 1000, 2 repetition(s) per point; "
        "this config's runs use the seed below\n"
        + yaml.safe_dump({"solver": ["SOBA[outer_step=1]", SOLVERS[1]]}))
    with pytest.raises(ValueError,
                       match="differ in their 'Tuning seeds:' line"):
        main([str(config), "--output", str(output), "--solver", "stocBiO",
              "--update"])
    output.write_text(yaml.safe_dump({"solver": ["SOBA"]}))
    with pytest.raises(ValueError, match="other solvers than the config"):
        main([str(config), "--output", str(output), "--solver", "stocBiO",
              "--update"])
