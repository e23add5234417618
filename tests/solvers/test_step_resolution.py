"""One resolution of every step (benchmark_utils/solvers/steps.py): each
value with its source, frozen, recorded with every evaluation, and a curve
rerun from its recorded values given explicitly is the same curve."""
import math
import types

import pytest
import torch

from benchmark_utils.solvers.steps import (
    DEFAULTS_HEADING,
    SizeRule,
    StepRule,
    Steps,
    TunedTable,
    defaults_paragraph,
    given_size,
    given_step,
    resolve_sizes,
    resolve_steps,
    size_parameters,
    with_parameter_defaults,
)

from conftest import benchmark, run_solver

RULES = (
    StepRule("inner_step", "alpha", "y step", "1/L_g",
             lambda solver, problem, steps: 1.0 / problem.L_g),
    StepRule("outer_step", "beta", "x step", "inner_step / 2",
             lambda solver, problem, steps: steps["inner_step"] / 2),
    StepRule("ratio", "r", "derived", "outer_step / inner_step",
             lambda solver, problem, steps:
             steps["outer_step"] / steps["inner_step"], parameter=False),
)
PROBLEM = types.SimpleNamespace(L_g=4.0)


def solver(**given):
    values = {"inner_step": None, "outer_step": None, **given}
    return types.SimpleNamespace(name="Toy", **values,
                                 parameters={k: [None] for k in values})


def test_each_value_has_its_source():
    steps = resolve_steps(RULES, solver(outer_step=0.3), PROBLEM)
    assert steps.values() == {"inner_step": 0.25, "outer_step": 0.3,
                              "ratio": 1.2}
    assert steps["inner_step"].source == "default: 1/L_g"
    assert steps["outer_step"].source == "given"
    assert steps["ratio"].source == "derived: outer_step / inner_step"
    assert steps.given() == {"inner_step": 0.25, "outer_step": 0.3}


def test_a_tuned_step_is_used_where_none_is_given():
    table = TunedTable("configs/tuned/default_toy.yml",
                       {"Toy": {"inner_step": 0.5}})
    toy = solver()
    steps = resolve_steps(RULES, toy, PROBLEM, table.entry_for(toy),
                          table.source)
    assert steps.inner_step == 0.5 and steps.outer_step == 0.25
    assert steps["inner_step"].source == (
        "tuned: configs/tuned/default_toy.yml")
    # given the tuned step, or another parameter off its default: no table
    assert table.entry_for(solver(inner_step=0.1)) == {}


def test_sizes_resolve_in_order_each_with_its_source():
    rules = (SizeRule("outer", "batch_size",
                      lambda solver, problem, sizes: solver.batch_size),
             SizeRule("cross", "outer",
                      lambda solver, problem, sizes: sizes["outer"]),
             SizeRule("hessian", "outer",
                      lambda solver, problem, sizes: sizes["outer"]))
    toy = types.SimpleNamespace(batch_size=8, outer=None, cross=3,
                                hessian=None)
    sizes = resolve_sizes(rules, toy, PROBLEM)
    assert (sizes.outer, sizes.cross, sizes.hessian) == (8, 3, 8)
    assert [sizes[n].source for n in sizes] == [
        "default: batch_size", "given", "default: outer"]
    toy.batch_size = None
    assert resolve_sizes(rules, toy, PROBLEM)["outer"].source == (
        "default: batch_size, None: a full pass")


def test_a_given_size_is_read_and_recorded_as_given():
    rules = (given_size("T", 10), given_size("batch_size", 16),
             SizeRule("outer", "batch_size",
                      lambda solver, problem, sizes: sizes["batch_size"]))
    # one declaration: benchopt's entries come from the rules
    assert size_parameters(rules) == {"T": [10], "batch_size": [16],
                                      "outer": [None]}
    assert size_parameters(with_parameter_defaults(rules, T=20))["T"] == [20]
    toy = types.SimpleNamespace(T=5, batch_size=None, outer=None)
    sizes = resolve_sizes(rules, toy, PROBLEM)
    assert (sizes.T, sizes.batch_size, sizes.outer) == (5, None, None)
    assert [sizes[n].source for n in sizes] == [
        "given", "given: None, a full pass",
        "default: batch_size, None: a full pass"]
    assert sizes["batch_size"].kind == "given"


def test_the_generated_defaults_name_each_declaration_once():
    sizes = (SizeRule("upper_period", "floor(sqrt(n_upper))",
                      lambda solver, problem, sizes: 1, parameter="period"),)
    rules = (*RULES, given_step("step_offset", "k0", "offset", 10))
    parameters = {"inner_step": [None], "outer_step": [None],
                  "step_offset": [10], "period": [None],
                  "batch_size": [16], "init": ["random"]}
    text = defaults_paragraph(rules, parameters, sizes)
    lines = text.splitlines()
    assert lines[0] == DEFAULTS_HEADING and max(map(len, lines)) <= 79
    assert "* ``inner_step`` (alpha): 1/L_g" in lines
    assert "* ``ratio`` (r): derived, outer_step / inner_step" in lines
    assert "* ``step_offset`` (k0) = 10" in lines
    assert ("* ``upper_period`` (a size): floor(sqrt(n_upper)), ``period`` "
            "where given") in lines
    assert "* ``batch_size`` = 16" in lines
    for name in ("inner_step", "step_offset", "period", "batch_size"):
        assert text.count(f"``{name}``") == 1, name


def test_a_rule_reads_only_the_declared_problem_constants():
    with pytest.raises(ValueError, match="L_g_full"):
        StepRule("inner_step", "alpha", "y step", "1/L_g_full",
                 lambda solver, problem, steps: 1.0, needs=("L_g_full",))


def test_the_resolution_is_pure_and_frozen():
    toy = solver()
    steps = resolve_steps(RULES, toy, PROBLEM)
    assert toy.inner_step is None and not hasattr(toy, "inner_step_")
    with pytest.raises(AttributeError, match="frozen"):
        steps.inner_step = 1.0
    with pytest.raises(AttributeError, match="no resolved step 'nope'"):
        _ = steps.nope


def test_a_bad_default_names_the_step_and_its_rule():
    with pytest.raises(ValueError, match=r"inner_step's default rule "
                       r"\(1/L_g\) gives -0.5 on this problem, not a finite "
                       r"number > 0; pass inner_step explicitly"):
        resolve_steps(RULES, solver(), types.SimpleNamespace(L_g=-2.0))
    with pytest.raises(ValueError, match="outer_step must be a finite "
                       "number > 0, got nan"):
        resolve_steps(RULES, solver(outer_step=math.nan), PROBLEM)


def test_the_record_has_a_value_and_a_source_per_step():
    steps = Steps(resolve_steps(RULES, solver(), PROBLEM))
    record = steps.record()
    assert record["resolved_outer_step"] == 0.125
    assert record["resolved_outer_step_source"] == "default: inner_step / 2"
    assert set(record) == {f"resolved_{name}{suffix}"
                           for name in ("inner_step", "outer_step", "ratio")
                           for suffix in ("", "_source")}


def _general_solvers():
    return sorted(s.name for s in benchmark().get_solvers()
                  if getattr(s, "family", None) == "general")


@pytest.mark.parametrize("name", _general_solvers())
def test_every_evaluation_records_the_resolved_steps(name):
    """On the plain run's hyper-cleaning instance (its tuned table
    applies), each row carries the resolved steps the solver declares, as
    finite numbers with their source; x and y steps where it has them."""
    records, solver = run_solver(name, "hyper_cleaning", n_iter=2)
    declared = [rule.name for rule in type(solver).step_rules]
    assert declared, f"{name} declares no step"
    for row in records:
        for step in declared:
            value = row[f"resolved_{step}"]
            assert math.isfinite(value), (step, value)
            assert row[f"resolved_{step}_source"].split(":")[0] in (
                "given", "tuned", "default", "derived")
    for step in ("outer_step", "inner_step"):
        if step in type(solver).parameters:
            assert step in declared, f"{name}'s {step} is not resolved"


@pytest.mark.parametrize("name", ["SOBA", "F2SA", "BiAdam", "stocBiO"])
def test_a_curve_rerun_with_its_recorded_steps_is_the_same(name):
    records, solver = run_solver(name, "hyper_cleaning", n_iter=20,
                                 eval_at=[0, 5, 10])
    explicit = {step: records[0][f"resolved_{step}"]
                for step in solver.steps.given()}
    rerun, again = run_solver(name, "hyper_cleaning", n_iter=20,
                              eval_at=[0, 5, 10], solver_params=explicit)
    assert all(again.steps[step].source == "given" for step in explicit)
    # the same iterates, bit for bit; the metrics' exact y*(x) solve starts
    # from the last one it made, so F(x) may differ in its last digits
    assert torch.equal(again.x, solver.x) and torch.equal(again.y, solver.y)
    assert [r["value"] for r in rerun] == pytest.approx(
        [r["value"] for r in records], rel=1e-12)


@pytest.mark.parametrize("name, params, dataset, expected", [
    ("stocBiO", {"batch_size": 8}, "hyper_cleaning", {
        "outer_batch_size": (8, "default: batch_size"),
        "cross_batch_size": (8, "default: outer_batch_size"),
        "hessian_batch_size": (8, "default: outer_batch_size")}),
    ("stocBiO", {"batch_size": 8, "cross_batch_size": 4}, "hyper_cleaning",
     {"outer_batch_size": (8, "default: batch_size"),
      "cross_batch_size": (4, "given")}),
    ("AmIGO", {"batch_size": 16}, "hyper_cleaning",
     {"outer_batch_size": (16, "default: batch_size")}),
    ("SRBA", {"batch_size": 64}, "hyper_cleaning",
     {"period": (None, "default: ceil(max(n_upper, n_lower) / batch_size)")}),
    ("BSA", {"T": 3, "inner_steps_growth": "sqrt"}, "hyper_cleaning",
     {"inner_steps": (math.ceil(3 * 2 ** 0.5),
                      "schedule: t_k = ceil(T (k + 1)^e) at the last "
                      "iteration (k = 1)")}),
    ("TTSA", {"depth_rule": "fixed", "neumann_depth_bound": 7},
     "hyper_cleaning",
     {"t_max": (7, "schedule: neumann_depth_bound"),
      "neumann_depth_bound": (7, "given")}),
    ("TTSA", {"neumann_depth_bound": 12}, "hyper_cleaning",
     {"t_max": (None, "schedule: min(kappa log(k + 1), "
                              "neumann_depth_bound), k from 1"),
      "neumann_depth_bound": (12, "given")}),
    ("IR-FSCG", {}, "regression",
     {"batch_size": (None, "default: floor(sqrt(max(n_upper, n_lower)))"),
      "period": (None, "default: floor(sqrt(max(n_upper, n_lower)))")}),
    ("SBCGF", {"period": 5}, "regression",
     {"upper_period": (5, "given"), "lower_period": (5, "given"),
      "upper_batch_size": (None, "default: floor(sqrt(n_upper))")}),
])
def test_the_record_has_every_resolved_integer_size(name, params, dataset,
                                                    expected):
    """The sizes a run resolves that are no step (batch sizes, periods, a
    schedule's size at the last iteration) are in every row with their
    source (None in ``expected``: whatever the instance gives, an int)."""
    records, _ = run_solver(name, dataset, solver_params=params, n_iter=2)
    row = records[-1]
    for size, (value, source) in expected.items():
        recorded = row[f"resolved_{size}"]
        assert isinstance(recorded, int) and recorded >= 1, (size, recorded)
        if value is not None:
            assert recorded == value, size
        assert row[f"resolved_{size}_source"].startswith(source), (
            size, row[f"resolved_{size}_source"])


def test_soba_outer_ratio_source_names_the_branch_that_ran():
    records, _ = run_solver("SOBA", "hyper_cleaning",
                            solver_params={"outer_ratio": 10}, n_iter=1)
    assert records[-1]["resolved_outer_step_source"] == (
        "default: inner_step / outer_ratio (outer_ratio given)")
    records, _ = run_solver("SOBA", "hyper_cleaning", n_iter=1)
    assert "outer_ratio" not in records[-1]["resolved_outer_step_source"]
