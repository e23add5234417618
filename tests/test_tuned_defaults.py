"""The default run's tuned steps (benchmark_utils/tuning/tuned_defaults.py):
read from configs/tuned/default_<dataset>.yml by the run layer (the
objective, for the instance ``get_data`` names), used by a solver given
none of them with every other parameter at its default, on the default
instance only, and never carried over to another problem. Problems carry
nothing of it."""
import pytest
import yaml
from benchopt.utils.run_context import RunContext

from benchmark_utils.data.instance import instance_of
from benchmark_utils.solvers.steps import TunedTable
from benchmark_utils.tuning.tuned_defaults import (
    read_tuned_steps,
    tuned_defaults_path,
    tuned_table,
)

from conftest import benchmark, component, dataset_data

# the tuned configs of default instances (not their multipliers sidecars)
SHIPPED = sorted(path.name for path in tuned_defaults_path("x").parent.glob(
    "default_*.yml") if not path.stem.endswith("_multipliers"))


def write(tmp_path, content):
    path = tmp_path / "default_quadratic.yml"
    path.write_text(yaml.safe_dump(content))
    return path


def test_reads_each_solvers_steps(tmp_path):
    path = write(tmp_path, {"dataset": ["quadratic"], "solver": [
        "SOBA[outer_step=0.5,inner_step=0.19]", "Without-BO"]})
    assert read_tuned_steps(path, "quadratic") == {
        "SOBA": {"outer_step": 0.5, "inner_step": 0.19}, "Without-BO": {}}


@pytest.mark.parametrize("content, message", [
    ({"dataset": ["quadratic[n_samples=30]"], "solver": ["SOBA"]},
     "default instance"),
    ({"dataset": ["quadratic"], "solver": ["SOBA[batch_size=8]"]},
     "batch_size"),
])
def test_refuses_another_instance_or_another_parameter(tmp_path, content,
                                                       message):
    with pytest.raises(ValueError, match=message):
        read_tuned_steps(write(tmp_path, content), "quadratic")


def test_default_instance():
    cls = component("dataset", "hyper_cleaning")
    assert instance_of(cls.get_instance()).is_default
    assert not instance_of(cls.get_instance(n_train=200)).is_default


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_tables_reach_the_default_instance_only(name):
    dataset_name = name[len("default_"):-len(".yml")]
    path = tuned_defaults_path(dataset_name)
    table = read_tuned_steps(path, dataset_name)
    assert table, f"{path} tunes no solver"
    data = dataset_data(dataset_name)[1]
    assert tuned_table(data["instance"]).entries == table
    assert tuned_table(data["instance"]).source == f"configs/tuned/{name}"
    assert not hasattr(data["problem"], "tuned_steps")
    # another instance of the same dataset gets none
    other = {"hyper_cleaning": {"n_train": 200}}[dataset_name]
    other_data = dataset_data(dataset_name, **other)[1]
    assert tuned_table(other_data["instance"]).entries == {}


QUADRATIC = {"n_samples": 64, "dim_x": 5, "dim_y": 5}
OTHER_QUADRATIC = {"n_samples": 80, "dim_x": 5, "dim_y": 5}


TABLE = TunedTable("configs/tuned/default_quadratic.yml",
                   {"SOBA": {"outer_step": 0.123, "inner_step": 0.05}})


def set_on(solver, dataset_params, table=None):
    """Set ``solver`` on the quadratic of ``dataset_params`` as benchopt
    does, the run layer handing it ``table``."""
    dataset, data = dataset_data("quadratic", **dataset_params)
    objective = benchmark().get_benchmark_objective().get_instance()
    RunContext(base_seed="0", objective_name=objective.name,
               dataset_name=dataset.name, solver_name=solver.name,
               repetition=0).attach(objective, dataset, solver)
    objective.set_data(**data)
    handed = objective.get_objective()
    if table is not None:
        handed["tuned_steps"] = table
    solver.set_objective(**handed)
    return solver


def make_soba(**params):
    return component("solver", "SOBA").get_instance(**params)


def test_solver_given_no_step_uses_the_table():
    solver = set_on(make_soba(), QUADRATIC, TABLE)
    assert solver.steps.values() == {"inner_step": 0.05, "outer_step": 0.123}
    assert solver.steps["outer_step"].source == (
        "tuned: configs/tuned/default_quadratic.yml")
    # the parameters stay as given
    assert solver.outer_step is None and solver.inner_step is None


@pytest.mark.parametrize("given", [
    {"outer_step": 0.2},          # a tuned step given: used as given
    {"batch_size": 8},            # another parameter moved: not the tuned
])                                # point, the documented rules apply
def test_solver_off_the_tuned_point_ignores_the_table(given):
    solver = set_on(make_soba(**given), QUADRATIC, TABLE)
    assert not any(solver.steps[name].kind == "tuned"
                   for name in solver.steps)
    assert solver.steps["outer_step"].kind == (
        "given" if "outer_step" in given else "default")


def test_tuned_steps_do_not_follow_the_solver_to_another_problem():
    solver = set_on(make_soba(), QUADRATIC, TABLE)
    set_on(solver, OTHER_QUADRATIC)
    assert not any(solver.steps[name].kind == "tuned"
                   for name in solver.steps)
