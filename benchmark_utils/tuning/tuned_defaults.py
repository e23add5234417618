"""The tuned steps of the default run, read from the tuning command's output.

A plain ``benchopt run .`` runs every dataset's default instance. For a
dataset with a file ``configs/tuned/default_<dataset name>.yml`` (written
by ``python -m benchmark_utils.tune configs/default_<dataset name>.yml``:
that instance, every solver at its defaults, a grid over its steps), the
steps chosen there become the solvers' defaults on that instance:

* only on the default instance (every dataset parameter at its default),
  the one the steps were tuned on;
* only for a solver entered there, given none of the tuned steps (role-named
  steps: ``outer_step``, ``inner_step``, ``linear_system_step``...), and
  with every other parameter at its default (the point that was tuned);
* anywhere else the documented rules apply unchanged (README, "Default
  steps").

The run layer reads the table: the objective looks it up for the dataset
instance that ``get_data`` names (:func:`tuned_table`) and hands it to
each solver with its problem; the solver's one step resolution
(benchmark_utils/solvers/steps.py) takes a step from it with the source
``tuned: <file>``. Problems and datasets know nothing of it.
"""
from pathlib import Path

from benchmark_utils.solvers.steps import NO_TUNED_TABLE, TunedTable
from benchmark_utils.tuning.config_io import as_list, parse_entry, read_config
from benchmark_utils.tuning.grids import STEP_PARAMETERS

# the repository root: benchmark_utils/tuning/tuned_defaults.py -> parents[2]
# (not tuning.defaults.ROOT: that module, which imports benchopt's
# internals to set solvers up for the tuning, stays off a run's path)
ROOT = Path(__file__).resolve().parents[2]
TUNED_DIR = ROOT / "configs" / "tuned"


def tuned_defaults_path(dataset_name):
    """Where the default instance's tuned config of a dataset lives."""
    return TUNED_DIR / f"default_{dataset_name}.yml"


def read_tuned_steps(path, dataset_name):
    """``{solver name: {step: value}}`` from a default instance's tuned
    config; ValueError if it tunes another instance or sets anything but
    the tuned steps."""
    content = read_config(path)
    if as_list(content["dataset"]) != [dataset_name]:
        raise ValueError(f"{path} must tune the default instance, i.e. list "
                         f"the dataset as {dataset_name!r} alone, got "
                         f"{content['dataset']!r}")
    steps = {}
    for entry in as_list(content["solver"]):
        name, params = parse_entry(entry)
        extra = sorted(set(params) - set(STEP_PARAMETERS))
        if extra:
            raise ValueError(f"{path}: entry {entry!r} sets {extra}: a "
                             f"tuned default sets only steps "
                             f"({', '.join(STEP_PARAMETERS)})")
        steps[name] = {key: float(value) for key, value in params.items()}
    return steps


def tuned_table(instance):
    """The :class:`~benchmark_utils.solvers.steps.TunedTable` of a
    :class:`~benchmark_utils.data.instance.DatasetInstance`: the table of
    its ``configs/tuned/default_<name>.yml`` on the default instance, else
    (another instance, no such file, no instance) the empty table."""
    if instance is None or not instance.is_default:
        return NO_TUNED_TABLE
    path = tuned_defaults_path(instance.name)
    if not path.is_file():
        return NO_TUNED_TABLE
    return TunedTable(path.relative_to(ROOT).as_posix(),
                      read_tuned_steps(path, instance.name))
