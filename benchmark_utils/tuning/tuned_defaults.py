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

A dataset opts in with one line in ``get_data``, ``problem.tuned_steps =
default_instance_steps(self)`` (hyper_cleaning does); the solver base
applies the table (``BilevelSolver.use_tuned_steps``).
"""
from benchmark_utils.tuning.config_io import as_list, parse_entry, read_config
from benchmark_utils.tuning.defaults import ROOT
from benchmark_utils.tuning.grids import STEP_PARAMETERS

TUNED_DIR = ROOT / "configs" / "tuned"


def tuned_defaults_path(dataset_name):
    """Where the default instance's tuned config of a dataset lives."""
    return TUNED_DIR / f"default_{dataset_name}.yml"


def is_default_instance(dataset):
    """Whether every parameter of ``dataset`` (a benchopt dataset) has the
    first value of its class's parameter list: the default instance."""
    return all(getattr(dataset, name) == values[0]
               for name, values in type(dataset).parameters.items())


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


def default_instance_steps(dataset):
    """The tuned steps the solvers use on ``dataset``: the table of its
    ``configs/tuned/default_<name>.yml`` on the default instance, else
    (another instance, or no such file) none."""
    path = tuned_defaults_path(dataset.name)
    if not is_default_instance(dataset) or not path.is_file():
        return {}
    return read_tuned_steps(path, dataset.name)
