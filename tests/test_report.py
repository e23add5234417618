"""The report: which pairs are plotted, saved views, file names, scales.

One short ``benchopt run`` (both families, a constrained and an
unconstrained general instance, a dataset without f*) feeds the checks
that benchopt's own plotting code draws every figure with data, that each
saved view applies to every dataset its plot offers, and that
``benchopt plot --no-html`` (its ``get_figures``) writes one file per
figure with no warning but its note that tables are HTML-only. A
synthetic run of several repetitions checks the spread: each curve's median
and 20-80 % band, and the table's median and [q20, q80], against numpy.
Last, the default run's dictionary reference keeps CVXPY's "inaccurate"
note quiet.
"""
import itertools
import re
import subprocess
import sys
import warnings

import matplotlib
import numpy as np
import pandas as pd
import pytest
import yaml
from benchopt.plotting.generate_matplotlib import get_figures
from benchopt.results import read_results

from benchmark_utils.report.families import (
    GENERAL,
    SIMPLE,
    TASK,
    X_AXES,
    is_counter,
)
from benchmark_utils.report.labels import short_labels, split_name
from benchmark_utils.report.plot_helpers import (
    NO_DATASET,
    QUANTILES,
    scale_of,
    table_number,
)
from benchmark_utils.report.summary import summarize

from conftest import ROOT, benchmark, make_problem

matplotlib.use("Agg")
CONFIG = yaml.safe_load((ROOT / "config.yml").read_text())
KINDS = CONFIG["plots"]
SOLVERS = ["IR-SCG", "F2SA", "IBCG"]
DATASETS = ["regression[n_samples=150,n_features=80]",
            "dictionary_learning[n_samples=60,n_init_iter=1000]",
            "quadratic[dim_x=10,dim_y=10,n_samples=100,constraint=box]",
            "quadratic[dim_x=10,dim_y=10,n_samples=100,constraint=none]"]
TABLE_SKIP = "cannot be rendered with matplotlib"
CURVE_KINDS = ("simple_curve", "general_curve", "task_curve")
# a band's values keep 4 significant digits (plot_helpers.BAND_DIGITS)
BAND_RTOL = 5e-4
SMALL_DICTIONARY = dict(n_features=6, n_atoms=8, n_old_atoms=5,
                        n_new_atoms=3, n_samples=20, n_nonzeros=2,
                        n_init_iter=200)


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    output = tmp_path_factory.mktemp("report") / "run.parquet"
    args = ["run", ".", "--no-plot", "--no-html", "--no-display", "-n", "3",
            "-r", "2", "--timeout", "20", "--output", str(output)]
    for solver in SOLVERS:
        args += ["-s", solver]
    for dataset in DATASETS:
        args += ["-d", dataset]
    run = subprocess.run([sys.executable, "-m", "benchopt", *args], cwd=ROOT,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return read_results(output)


@pytest.fixture(scope="module")
def plot_data(results):
    """benchopt's figures of the run, and the options each plot offers."""
    return benchmark().get_plot_data(results, KINDS)


def test_counters_are_never_a_y_axis():
    for family in (SIMPLE, GENERAL, TASK):
        for candidates in family.metrics.values():
            assert not any(is_counter(column) for column in candidates)
        for axis in family.x_axes:
            assert all(is_counter(c) or c in ("time", "stop_val")
                       for c in X_AXES[axis][0])


def test_short_labels_keep_only_differing_parameters():
    names = ["SBCGI[K0=0.1,cut=True,steps=[1, 2]]",
             "SBCGI[K0=0.1,cut=False,steps=[1, 2]]",
             "IR-SCG[outer_step_exponent=None]"]
    assert split_name(names[0]) == ("SBCGI", {"K0": "0.1", "cut": "True",
                                              "steps": "[1, 2]"})
    assert short_labels(names) == {names[0]: "SBCGI[cut=True]",
                                   names[1]: "SBCGI[cut=False]",
                                   names[2]: "IR-SCG"}
    datasets = ["toy[mu=1.0,r=0.5]", "toy[mu=2.0,r=0.5]", "toy[mu=2.0,r=0.25]"]
    labels = short_labels(datasets, file_safe=True)
    assert list(labels.values()) == ["toy[mu=1,r=0p5]", "toy[mu=2,r=0p5]",
                                     "toy[mu=2,r=0p25]"]


def test_scales_log_only_positive_values_spanning_decades():
    # counts are drawn + 1 (the start at x = 1; tests/test_report_views.py)
    counts = {"x": [1, 11, 1e4 + 1], "y": [1.0, 1e-2, 1e-4]}
    assert scale_of([counts], log_y=True) == "loglog"
    assert scale_of([counts], log_y=False) == "semilog-x"
    signed = {"x": [0, 1, 2], "y": [1.0, 0.0, -1e-3]}
    assert scale_of([signed], log_y=True) == "linear"
    assert scale_of([{"x": [], "y": []}], log_y=True) == "linear"


def test_every_figure_has_data_a_scale_and_a_short_dotless_key(plot_data):
    figures_by_kind, _ = plot_data
    n_scatter = 0
    for kind, figures in figures_by_kind.items():
        for key, figure in figures.items():
            # benchopt names a figure's file after its key, cut at a last dot
            assert "." not in key and "/" not in key and len(key) < 90, key
            assert figure["data"], key
            if figure["type"] == "scatter":
                n_scatter += 1
                assert figure["scale"] in ("linear", "semilog-x",
                                           "semilog-y", "loglog")
                # a curve, or the note that no solver here makes such calls
                # (F2SA alone on the unconstrained quadratic, against HVPs)
                assert all(len(curve["x"]) or "no solver here makes"
                           in curve["label"] for curve in figure["data"]), key
                if kind in CURVE_KINDS:
                    for curve in figure["data"]:
                        _check_band(curve)
    # simple (regression, dictionary): 2 metrics x 5 axes and 2 trade-offs;
    # general (quadratic box, none): 3 x 5; task (regression, dictionary): 3
    assert n_scatter == 20 + 2 + 30 + 6


def _check_band(curve):
    """A curve with data carries its band, which holds the median."""
    if not curve["x"]:
        return
    y, low, high = (np.array(curve[k], dtype=float)
                    for k in ("y", "y_low", "y_high"))
    assert len(y) == len(low) == len(high) == len(curve["x"])
    finite = np.isfinite(y)
    slack = BAND_RTOL * np.abs(y[finite])
    assert (low[finite] <= y[finite] + slack).all()
    assert (y[finite] <= high[finite] + slack).all()


def test_each_view_applies_to_every_dataset_its_plot_offers(plot_data):
    figures_by_kind, options_by_kind = plot_data
    for name, view in CONFIG["plot_configs"].items():
        kind = view["plot_kind"]
        assert kind in KINDS, name
        options = options_by_kind[kind]
        chosen = {param: [view[f"{kind}_{param}"]] if f"{kind}_{param}" in view
                  else values for param, values in options.items()}
        for param, values in chosen.items():
            assert set(values) <= set(options[param]), (name, param)
        assert NO_DATASET not in options["dataset"], name
        for combination in itertools.product(*chosen.values()):
            # the key the HTML report looks a figure up by
            key = "_".join([kind, *map(str, combination)])
            figure = figures_by_kind[kind][key]
            assert figure["data"], (name, key)
            if figure["type"] == "scatter":
                assert all(len(curve["x"]) for curve in figure["data"]), key


@pytest.mark.parametrize("datasets, kinds, n_files", [
    # curves of both families' task metrics, trade-offs and tables (not
    # drawn: tables are HTML-only); every figure kind costs the same here
    (DATASETS, ["task_curve", "gap_tradeoff", "final_values"], 6 + 2),
    # no simple-family dataset: the figures that say so
    (DATASETS[2:], ["task_curve", "gap_tradeoff"], 3 + 1),
])
def test_no_html_writes_one_file_per_figure_and_no_warning(
        results, tmp_path, datasets, kinds, n_files):
    rows = results[results["dataset_name"].str.split("[").str[0].isin(
        {name.split("[")[0] for name in datasets})]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        figures = get_figures(benchmark(), rows, tmp_path, kinds)
    matplotlib.pyplot.close("all")
    n_figures = sum(len(kind_figures) for kind_figures in figures)
    assert len(list(tmp_path.glob("*.pdf"))) == n_figures == n_files
    # benchopt's own note that tables are HTML-only is the one warning left
    assert all(TABLE_SKIP in str(w.message) for w in caught), [
        str(w.message) for w in caught if TABLE_SKIP not in str(w.message)]


def test_a_family_missing_from_the_run_gets_a_figure_that_says_so(results):
    simple_only = results[results["dataset_name"].str.startswith("regression")]
    figures, options = benchmark().get_plot_data(simple_only,
                                                 ["general_curve"])
    assert options["general_curve"]["dataset"] == [NO_DATASET]
    for figure in figures["general_curve"].values():
        [curve] = figure["data"]
        assert curve["x"] == [] and "general family" in curve["label"]
        assert figure["scale"] == "linear"


SYNTHETIC_DATASET = "quadratic[dim_x=2,dim_y=2]"
SYNTHETIC_SOLVERS = ("SOBA[outer_step=0.1]", "SOBA[outer_step=1.0]")
N_EVALS = 6


def synthetic_run(n_reps, seed=0):
    """A general-family result frame: two solvers, ``n_reps`` repetitions of
    ``N_EVALS`` evaluations with random metrics, the last repetition (of
    several) stopped two evaluations early, as a timeout does."""
    rng = np.random.default_rng(seed)
    rows = []
    for solver in SYNTHETIC_SOLVERS:
        for rep in range(n_reps):
            n_evals = N_EVALS - 2 * (n_reps > 1 and rep == n_reps - 1)
            for it in range(n_evals):
                rows.append({
                    "dataset_name": SYNTHETIC_DATASET,
                    "objective_name": "Bilevel", "solver_name": solver,
                    "idx_rep": rep, "stop_val": it,
                    "time": 0.01 * it * (1 + rng.random()),
                    "objective_hypergrad_norm": rng.lognormal() / (1 + it),
                    "objective_upper_gap_abs": rng.random(),
                    "objective_inner_distance": rng.random(),
                    "objective_n_samples_upper": 10 * it,
                    "objective_n_samples_lower": 20 * it,
                    "objective_n_grad_evals": 3 * it,
                    "objective_n_hvp": it, "objective_diverged": 0.0})
    return pd.DataFrame(rows)


def carried_forward(frame, solver, column):
    """(evaluations x repetitions) values of ``column``, a repetition that
    stopped early repeating its last value."""
    runs = frame[frame["solver_name"] == solver]
    table = np.full((N_EVALS, runs["idx_rep"].nunique()), np.nan)
    for (rep, it), value in runs.set_index(["idx_rep", "stop_val"])[
            column].items():
        table[it, rep] = value
    return pd.DataFrame(table).ffill().to_numpy()


def synthetic_figures(frame):
    return benchmark().get_plot_data(frame, ["general_curve",
                                             "final_values"])[0]


@pytest.mark.parametrize("n_reps", [5, 1])
def test_curves_draw_the_median_and_the_quantile_band(n_reps):
    frame = synthetic_run(n_reps)
    figures = synthetic_figures(frame)["general_curve"]
    labels = short_labels(frame["solver_name"].unique())
    curves = {curve["label"]: curve for curve in figures[
        "general_curve_quadratic_Bilevel_stationarity_samples"]["data"]}
    assert set(curves) == set(labels.values())
    for solver, label in labels.items():
        values = carried_forward(frame, solver, "objective_hypergrad_norm")
        curve = curves[label]
        # counts: the median over repetitions of upper + lower samples,
        # drawn + 1 (the start at x = 1)
        assert curve["x"] == [30.0 * it + 1 for it in range(N_EVALS)]
        np.testing.assert_allclose(curve["y"], np.median(values, axis=1))
        # the band, to the 4 significant digits the report keeps
        np.testing.assert_allclose(
            [curve["y_low"], curve["y_high"]],
            np.quantile(values, QUANTILES, axis=1), rtol=BAND_RTOL)
        if n_reps == 1:
            assert curve["y_low"] == curve["y_high"]
        else:
            assert np.greater(curve["y_high"], curve["y_low"]).all()
    # every figure of the plot has its band
    assert all("y_low" in curve for figure in figures.values()
               for curve in figure["data"])


def _bracket(text):
    low, high = text.strip("[]").split(", ")
    return float(low), float(high)


@pytest.mark.parametrize("n_reps", [5, 1])
def test_final_values_give_the_median_and_the_spread(n_reps):
    frame = synthetic_run(n_reps)
    [table] = synthetic_figures(frame)["final_values"].values()
    columns = table["columns"]
    assert columns[:3] == ["solver", "hypergrad_norm",
                           "hypergrad_norm q20-q80"]
    assert "time (s) q20-q80" in columns
    # a count has its median; the parts of the samples are in the details,
    # with their spread where they vary (the early stop)
    assert "samples (upper + lower)" in columns
    assert not any(c.startswith("samples (upper + lower) q") for c in columns)
    # no solver diverged: the flag is in the details only
    assert "diverged" not in columns
    labels = short_labels(frame["solver_name"].unique())
    rows = {row[0]: dict(zip(columns, row, strict=True))
            for row in table["data"]}
    for solver, label in labels.items():
        final = carried_forward(frame, solver,
                                "objective_hypergrad_norm")[-1]
        row = rows[label]
        details = row["details"]
        assert ("n_samples_upper 50 [" in details) == (n_reps > 1), details
        assert "diverged 0" in details
        assert details.endswith(f"parameters: {solver}")
        assert row["hypergrad_norm"] == pytest.approx(np.median(final))
        low, high = _bracket(row["hypergrad_norm q20-q80"])
        # printed to the table's significant digits (table_number)
        assert (low, high) == tuple(
            float(table_number(q)) for q in np.quantile(final, QUANTILES))
        if n_reps == 1:
            assert low == high
    # the command-line summary: "median [q20, q80]"
    summary = summarize(frame, ["objective_hypergrad_norm"])
    text = summary.set_index("solver").loc[
        labels[SYNTHETIC_SOLVERS[0]], "hypergrad_norm"]
    median, _, bracket = text.partition(" ")
    final = carried_forward(frame, SYNTHETIC_SOLVERS[0],
                            "objective_hypergrad_norm")[-1]
    assert float(median) == pytest.approx(np.median(final), rel=1e-3)
    if n_reps == 1:     # one repetition: its value, no bracket
        assert bracket == ""
        return
    assert _bracket(bracket) == pytest.approx(
        tuple(np.quantile(final, QUANTILES)), rel=1e-3)


# what a data hyper-cleaning run reports besides synthetic_run's columns:
# the value, the task metrics, every counter, a resolved step
MORE_COLUMNS = {
    "objective_value": 0.9, "objective_upper_value_current": 0.9,
    "objective_inner_grad_norm": 1e-3, "objective_upper_gap": 0.1,
    "objective_test_accuracy": 0.8, "objective_cleaning_auc": 0.9,
    "objective_cleaning_f1": 0.7, "objective_n_value_evals": 3.0,
    "objective_n_lmo": 0.0, "objective_n_projections": 2.0,
    "objective_n_infeasible": 0.0, "objective_cpu_time": 0.5,
    "objective_inner_tolerance": 1e-12,
    "objective_resolved_outer_step": 0.05,
    "objective_resolved_outer_step_source": "tuned: configs/tuned/x.yml"}
# the widest final-values table (benchmark_utils/report/table_columns.py)
MAX_TABLE_COLUMNS = 16


def test_the_final_values_table_keeps_what_a_reader_compares():
    """Over 30 columns before: each metric and counter with its spread,
    the steps and the parameters. The table keeps the family's metrics
    and the task metric with their spreads, the counts of its x-axes, the
    time, and gives the rest in its last column."""
    frame = synthetic_run(3).assign(**MORE_COLUMNS)
    [table] = synthetic_figures(frame)["final_values"].values()
    columns = table["columns"]
    assert len(columns) <= MAX_TABLE_COLUMNS
    metrics = ["hypergrad_norm", "upper_gap_abs", "inner_distance",
               "test_accuracy"]
    assert columns == [
        "solver", *[name for metric in metrics
                    for name in (metric, f"{metric} q20-q80")],
        "samples (upper + lower)", "gradient evaluations",
        "Hessian-vector products", "time (s)", "time (s) q20-q80",
        "details"]
    for row in table["data"]:
        details = dict(zip(columns, row, strict=True))["details"]
        for name in ("value 9.00e-01", "cleaning_auc 9.00e-01",
                     "cleaning_f1 7.00e-01", "n_value_evals 3",
                     "n_samples_upper", "n_lmo 0", "cpu_time",
                     "outer_step=0.05 (tuned: configs/tuned/x.yml)",
                     "parameters: SOBA[outer_step="):
            assert name in details, (name, details)
    # a solver that diverged: the flag gets its column
    diverged = frame.assign(objective_diverged=frame["stop_val"].eq(5) * 1.0)
    [table] = synthetic_figures(diverged)["final_values"].values()
    assert "diverged" in table["columns"]
    assert len(table["columns"]) <= MAX_TABLE_COLUMNS


def test_matplotlib_shades_the_band(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        [figures] = get_figures(benchmark(), synthetic_run(5), tmp_path,
                                ["general_curve"])
    try:
        for figure in figures:
            # one shaded band (a fill_between) per solver
            assert len(figure.axes[0].collections) == 2
    finally:
        matplotlib.pyplot.close("all")


def test_dictionary_reference_keeps_cvxpy_inaccuracy_note_quiet(monkeypatch):
    """Clarabel's "inaccurate" end is judged by the certificate, so CVXPY's
    warning about it is silenced around that one solve, and only it."""
    from benchmark_utils.references import dictionary

    def noisy_solve(problem):
        warnings.warn("Solution may be inaccurate. Try another solver.",
                      stacklevel=1)
        warnings.warn("another library warning", stacklevel=1)
        return "optimal_inaccurate"

    monkeypatch.setattr(dictionary, "solve_clarabel", noisy_solve)
    problem = make_problem("dictionary_learning", **SMALL_DICTIONARY)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        references = dictionary.dictionary_references(problem, polish_iter=50)
    assert [str(w.message) for w in caught] == ["another library warning"]
    assert references["g_status"] == "optimal_inaccurate"


def test_the_summary_command_helps_and_names_a_bad_file(tmp_path, capsys):
    from benchmark_utils.report.summary import main
    with pytest.raises(SystemExit) as done:
        main(["--help"])
    assert done.value.code == 0
    assert "RESULT" in capsys.readouterr().out
    assert main([str(tmp_path / "nope.parquet")]) == 2
    assert "RESULT must be a benchopt result file of this benchmark, got" in (
        capsys.readouterr().err)
    # no file: RESULT alone is required, the METRIC list is optional
    for argv in ([], ["--width", "30"]):
        with pytest.raises(SystemExit) as done:
            main(argv)
        assert done.value.code == 2
        assert capsys.readouterr().err.endswith(
            "error: the following arguments are required: RESULT\n")


def test_the_summary_prints_general_metrics_in_narrow_tables(tmp_path,
                                                              capsys):
    from benchmark_utils.report.summary import main
    path = tmp_path / "synthetic.parquet"
    synthetic_run(3).to_parquet(path)
    assert main([str(path)]) == 0
    out = capsys.readouterr().out
    assert "hypergrad_norm" in out and "\nquadratic\n" in out
    assert max(len(line) for line in out.splitlines()) <= 80


def test_the_summary_refuses_other_inputs_in_one_line(tmp_path, capsys):
    """Another benchmark's table, an empty result and an unknown metric
    get one line naming what is wrong (exit 2), never a KeyError."""
    from benchmark_utils.report.summary import main
    frame = synthetic_run(1)
    cases = {
        "other": (frame.drop(columns=["objective_n_samples_upper"]),
                  [], "no column objective_n_samples_upper"),
        "empty": (frame.iloc[:0], [], "the result has no evaluations"),
        "metric": (frame, ["nosuch"], "METRIC nosuch: not a metric of this "
                   "result"),
        # the closest metric named, the file not blamed
        "typo": (frame, ["inner_distanc"], "METRIC inner_distanc (did you "
                 "mean 'inner_distance'?): not a metric of this result"),
        # a recorded source is a column, not a metric (no median of text)
        "text": (frame.assign(objective_resolved_T_source="given"),
                 ["resolved_T_source"], "METRIC resolved_T_source: not a "
                 "metric of this result"),
    }
    for name, (table, metrics, message) in cases.items():
        path = tmp_path / f"{name}.parquet"
        table.to_parquet(path)
        assert main([str(path), *metrics]) == 2, name
        error = capsys.readouterr().err
        assert message in error and error.count("\n") == 1, error
    # a width no table fits is refused by the parser (exit 2)
    for width in ("0", "-5", "abc"):
        with pytest.raises(SystemExit) as done:
            main([str(tmp_path / "metric.parquet"), "--width", width])
        assert done.value.code == 2
        assert "--width: must be an integer >= 20" in capsys.readouterr().err
    # a missing file and a folder say so, not the path again
    for path, what in ((tmp_path / "none.parquet", "no such file"),
                       (tmp_path, "a folder")):
        assert main([str(path)]) == 2
        assert capsys.readouterr().err.endswith(f": {what}\n")


def test_the_summary_keeps_solver_names_and_says_what_it_prints(
        tmp_path, capsys):
    """Every block of a wrapped table names its solvers; one repetition
    prints values, not a repeated bracket; time has its unit; a metric
    may be named without its objective_ prefix."""
    from benchmark_utils.report.summary import main
    path = tmp_path / "one.parquet"
    synthetic_run(1).to_parquet(path)
    assert main([str(path), "inner_distance", "hypergrad_norm",
                 "objective_upper_gap_abs", "--width", "40"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("one repetition: its last value")
    assert not re.search(r"\d \[", out) and "time (s)" in out
    tables = out.split("\nquadratic\n")[1].split("\ncolumns:")[0]
    for block in tables.strip().split("\n\n"):
        assert block.lstrip().startswith("solver"), block
    assert "upper_gap_abs: |f - f*|" in out
