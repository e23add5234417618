"""The repository is lint-clean: ``ruff check .`` with the configuration of
``pyproject.toml`` (rules E, F, W, I, B) reports nothing. Part of the test
command, so CI fails on a finding."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_reports_nothing():
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "."],
        cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
