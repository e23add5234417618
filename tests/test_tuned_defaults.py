"""The default run's tuned steps (benchmark_utils/tuning/tuned_defaults.py):
read from configs/tuned/default_<dataset>.yml, used by a solver given none
of them with every other parameter at its default, on the default instance
only, and never carried over to another problem."""
import pytest
import yaml
from benchopt.utils.run_context import RunContext

from benchmark_utils.tuning.tuned_defaults import (
    is_default_instance,
    read_tuned_steps,
    tuned_defaults_path,
)

from conftest import benchmark, component, dataset_data

SHIPPED = sorted(path.name for path in tuned_defaults_path("x").parent.glob(
    "default_*.yml"))


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
    assert is_default_instance(cls.get_instance())
    assert not is_default_instance(cls.get_instance(n_train=200))


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_tables_reach_the_default_problem(name):
    dataset_name = name[len("default_"):-len(".yml")]
    path = tuned_defaults_path(dataset_name)
    table = read_tuned_steps(path, dataset_name)
    assert table, f"{path} tunes no solver"
    problem = dataset_data(dataset_name)[1]["problem"]
    assert problem.tuned_steps == table
    # another instance of the same dataset gets none
    other = {"hyper_cleaning": {"n_train": 200}}[dataset_name]
    assert dataset_data(dataset_name, **other)[1]["problem"].tuned_steps == {}


QUADRATIC = {"n_samples": 64, "dim_x": 5, "dim_y": 5}
OTHER_QUADRATIC = {"n_samples": 80, "dim_x": 5, "dim_y": 5}


def set_on(solver, dataset_params):
    """Set ``solver`` on the quadratic of ``dataset_params`` as benchopt
    does (the same cached problem object as the fixture's)."""
    dataset, data = dataset_data("quadratic", **dataset_params)
    objective = benchmark().get_benchmark_objective().get_instance()
    RunContext(base_seed="0", objective_name=objective.name,
               dataset_name=dataset.name, solver_name=solver.name,
               repetition=0).attach(objective, dataset, solver)
    objective.set_data(**data)
    solver._set_objective(objective)
    return solver


@pytest.fixture
def tabled_problem():
    problem = dataset_data("quadratic", **QUADRATIC)[1]["problem"]
    original = problem.tuned_steps
    problem.tuned_steps = {"SOBA": {"outer_step": 0.123, "inner_step": 0.05}}
    yield problem
    problem.tuned_steps = original


def make_soba(**params):
    return component("solver", "SOBA").get_instance(**params)


def test_solver_given_no_step_uses_the_table(tabled_problem):
    solver = set_on(make_soba(), QUADRATIC)
    assert solver.tuned_steps_ == {"outer_step": 0.123, "inner_step": 0.05}
    assert solver.outer_step == 0.123 and solver.inner_step == 0.05


@pytest.mark.parametrize("given", [
    {"outer_step": 0.2},          # a tuned step given: used as given
    {"batch_size": 8},            # another parameter moved: not the tuned
])                                # point, the documented rules apply
def test_solver_off_the_tuned_point_ignores_the_table(tabled_problem, given):
    solver = set_on(make_soba(**given), QUADRATIC)
    assert solver.tuned_steps_ == {}
    assert solver.inner_step is None
    assert solver.outer_step == given.get("outer_step")


def test_tuned_steps_do_not_follow_the_solver_to_another_problem(
        tabled_problem):
    solver = set_on(make_soba(), QUADRATIC)
    set_on(solver, OTHER_QUADRATIC)
    assert solver.tuned_steps_ == {}
    assert solver.outer_step is None and solver.inner_step is None
