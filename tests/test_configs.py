"""Every shipped config (``configs/*.yml``, ``configs/tuned/*.yml``) names
existing datasets and solvers with parameters their checks accept, so a
typo fails here and not after hours of a paper-scale run. Instances are
built (parameter checks run), no data is loaded."""
import itertools
import re

import pytest
import yaml
from benchopt.utils.parametrized_name_mixin import _extract_options

from benchmark_utils.tuning import config_io

from conftest import ROOT, component

# the experiment configs and the tuned ones (python -m benchmark_utils.tune;
# not their multipliers, benchmark_utils/tuning/multipliers.py)
CONFIGS = sorted([*(ROOT / "configs").glob("*.yml"),
                  *(path for path in (ROOT / "configs" / "tuned").glob("*.yml")
                    if not path.name.endswith("_multipliers.yml"))])


def expand(entry):
    """(name, [params, ...]): benchopt's syntax, lists giving a grid."""
    name, args, kwargs = _extract_options(entry)
    assert not args, f"positional parameters in {entry!r}"
    grids = {k: v if isinstance(v, list) else [v] for k, v in kwargs.items()}
    return name, [dict(zip(grids, values, strict=True))
                  for values in itertools.product(*grids.values())]


@pytest.mark.parametrize("config", CONFIGS, ids=lambda path: str(
    path.relative_to(ROOT / "configs").with_suffix("")))
def test_config_entries_build(config):
    content = yaml.safe_load(config.read_text())
    assert content.get("dataset") and content.get("solver"), config.name
    for kind in ("dataset", "solver"):
        for entry in content[kind]:
            name, grid = expand(entry)
            cls = component(kind, name)
            for params in grid:
                unknown = set(params) - set(cls.parameters)
                assert not unknown, (config.name, entry, unknown)
                cls.get_instance(**params).check_parameters()


def test_a_tuning_criterion_names_the_configs_sample_budget():
    """A config header's "Tuning criterion: ... at N x 10^K samples" is the
    sample budget its objective sets (a typed number cannot go stale)."""
    checked = 0
    for path in sorted((ROOT / "configs").glob("*.yml")):
        text = path.read_text()
        found = re.search(r"^# Tuning criterion:.*? at ([0-9.]+) x 10\^(\d+) "
                          r"samples", text, re.M)
        if not found:
            continue
        budget = config_io.config_sample_budget(
            yaml.safe_load(text)["objective"])
        assert float(found[1]) * 10 ** int(found[2]) == budget, path.name
        checked += 1
    assert checked >= 1
