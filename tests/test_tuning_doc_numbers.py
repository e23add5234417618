"""Every number docs/tuning.md states is checked here (the issue's rule:
a sentence stating a number is generated or checked by a test), against
what it comes from:

* the protocol's constants (benchmark_utils/tuning: the seeds, the
  instance offset, the lattice, the evaluation schedule, the command's
  defaults, the time cap, the transfer check's iterations);
* the shipped files it quotes (configs/tuned/: the tuned and transferred
  configs, their headers, score tables and multiplier sidecars): the
  transfers' multipliers, the shipped table's budgets, rounds and tuning
  costs, the example's scores;
* cheap seeded computations of the per-instance constants it states (the
  default hyper-cleaning instance's L_g and L_g_start, MNIST's and the
  digits' E ||a||^2, the Omniglot rule's ratios).

Each phrase is built from its source, rounded as the page rounds it, and
must appear in the page (whitespace normalized): editing a checked number
in the page, or changing its source, fails here. Timings measured once
on one machine are not stated as numbers (the page names the header line
or command that measures them)."""
import inspect
import math
import re

import torch
import yaml

from benchmark_utils.data import few_shot_tasks, shaped
from benchmark_utils.problems.hyper_representation import (
    HyperRepresentationBilevel,
)
from benchmark_utils.solvers.hypergradients import draw_positive_depth
from benchmark_utils.tuning import (
    cli,
    config_io,
    grids,
    multipliers,
    scoring,
    search,
    timing,
    transfer,
)
from benchmark_utils.tuning.config_io import (
    EVALUATION_REPETITIONS,
    EVALUATION_SEED,
    SAFETY_TIMEOUT,
)
from benchmark_utils.tuning.defaults import (
    TUNING_INSTANCE_OFFSET,
    solver_class,
    valid_values,
)
from benchmark_utils.tuning.grids import plain_number, round_significant
from benchmark_utils.tuning.header import TUNING_SEED
from benchmark_utils.tuning.runner import RHO, final_iteration

from conftest import ROOT, component, dataset_data, one_line

DOC = ROOT / "docs" / "tuning.md"
TUNED = ROOT / "configs" / "tuned"
CONFIGS = ROOT / "configs"
WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six",
         7: "seven", 8: "eight", 10: "ten"}


def page():
    return one_line(DOC.read_text())


def assert_stated(*phrases):
    text = page()
    for phrase in phrases:
        assert one_line(phrase) in text, f"docs/tuning.md lacks: {phrase!r}"


def sig(value, digits=3):
    """``value`` at ``digits`` significant digits, as the page writes it."""
    return plain_number(round_significant(value, digits))


def sci(value):
    """10^6, 5 x 10^6, 10^-4: a power of ten, or one digit times it."""
    exponent = math.floor(math.log10(value))
    mantissa = value / 10 ** exponent
    assert math.isclose(mantissa, round(mantissa)), value
    power = f"10^{exponent}"
    return power if round(mantissa) == 1 else f"{round(mantissa)} x {power}"


def grouped(value):
    """12,138 and 31,200 (five digits or more), 1066 and 5000 as is."""
    value = int(value)
    return f"{value:,}" if value >= 10_000 else str(value)


def config(name, folder=TUNED):
    return config_io.read_config(folder / f"{name}.yml")


def header(name):
    """The header lines of a shipped tuned or transferred config."""
    return [line[2:] for line in (TUNED / f"{name}.yml").read_text()
            .splitlines() if line.startswith("# ")]


def sidecar(name):
    return yaml.safe_load(multipliers.sidecar_path(
        TUNED / f"{name}.yml").read_text())


def entries(content):
    return [config_io.parse_entry(e) for e in
            config_io.as_list(content["solver"])]


def first_dataset(content):
    return config_io.parse_entry(config_io.as_list(content["dataset"])[0])[1]


def table_rows(first_cell):
    """The rows of the page's table whose header starts ``first_cell``,
    each as ``{name: [cells]}`` (the name without its backquotes)."""
    lines = DOC.read_text().splitlines()
    start = next(i for i, line in enumerate(lines)
                 if line.startswith(f"| {first_cell} |"))
    rows = {}
    for line in lines[start + 2:]:
        if not line.startswith("| "):
            break
        cells = [c.strip() for c in
                 re.split(r"(?<!\\)\|", line.strip())[1:-1]]
        rows[cells[0].split("`")[1].removesuffix(".yml")] = cells
    return rows


# --- the protocol's constants ---------------------------------------------

def test_the_protocol_numbers_are_the_codes():
    args = cli.parse_args(["CONFIG"])
    assert scoring.CRITERIA[0] == args.criterion
    assert_stated(
        f"writes a tuned config with {EVALUATION_REPETITIONS} repetitions",
        f"[--grid-points N (default {args.grid_points})]",
        f"[--tuning-seeds K (default {args.tuning_seeds})]",
        f"[--criterion {'|'.join(scoring.CRITERIA)} (default "
        f"{args.criterion})]",
        f"[--widen R (default {args.widen})]",
        f"with `-r K`, `--seed {TUNING_SEED}` and `--no-timeout`",
        f"**Seeds:** K = {args.tuning_seeds} tuning seeds by default",
        f"carries `seed: {EVALUATION_SEED}`",
        f"which must not be {TUNING_SEED}",
        f"`random_state + {TUNING_INSTANCE_OFFSET}`",
        f"`n-repetitions: {EVALUATION_REPETITIONS}`, `seed: "
        f"{EVALUATION_SEED}`",
        f"({args.grid_points ** 3} points for three)",
        f"the median over the {args.tuning_seeds} seeds and their range",
        f"checks that each table shows {args.tuning_seeds} seeds",
        f"(every choice finished, {args.tuning_seeds} tuning seeds",
        f"The tie rule was once lenient with {args.tuning_seeds} seeds",
    )
    # the class default random_state, shifted
    default_state = component("dataset", "quadratic").parameters[
        "random_state"][0]
    assert_stated(f"`quadratic[...,random_state="
                  f"{default_state + TUNING_INSTANCE_OFFSET}]`")


def test_the_lattice_and_the_schedule_are_the_codes():
    step = 2 * grids.DECADES
    assert grids.lattice_offset(3) == 0 and grids.lattice_offset(4) == 0.5
    first = grids.log_grid(1.0, 3)
    integer = grids.Axis("T", 10, 3, kind="integer")
    halves = {0.5: "x1/2", 1.0: "x1", 2.0: "x2"}
    schedule = ", ".join(str(final_iteration(m)) for m in range(16))
    assert_stated(
        f"`step = {step:g} / (N - 1)` decades, `o = 0` for an odd N",
        "and 1/2 for an even N",
        f"rounded to {grids.SIGNIFICANT_DIGITS} significant digits",
        "integers >= 1 (N = 3: " + ", ".join(
            halves[integer.value(k) / 10] for k in integer.first()) + ")",
        f"{WORDS[int(step)]} decades around the centre (N = 3: "
        + ", ".join(f"x{v:g}" for v in first) + ")",
        f"({len(search.DIRECTIONS)} per parameter)",
        f"benchopt evaluates at iterations {schedule}, ... (`max(s + 1, "
        f"int({RHO:g} s))`)",
        f"Scores at or below 0 count as {scoring.SCORE_FLOOR:g}",
        f"within {scoring.DEFAULT_TOLERANCE:g} decade of the centre",
    )


def test_the_rules_named_with_a_number_are_the_codes():
    assert "2 / (k + 2)" in grids.UNTUNED_REASONS["CG-BiO"]
    f2sa = grids.TUNED_PARAMETERS["F2SA"] + grids.TUNABLE_KNOBS["F2SA"]
    soba = grids.TUNED_PARAMETERS["SOBA"]
    assert grids.KNOB_LATTICES["lambda0"] == "log"
    assert grids.KNOB_LATTICES["T"] == "integer"
    assert_stated(
        "CG-BiO (the 2 / (k + 2) rule)",
        f"`--parameters {' '.join(f2sa)}` spans F2SA's {WORDS[len(f2sa)]}",
        f"and SOBA's {WORDS[len(soba)]} steps",
    )
    # IBCG's step interval, as its checks refuse the values around it
    dataset = component("dataset", "coreset_toy").get_instance()
    valid, refused = valid_values("IBCG", {}, "outer_step",
                                  [0.0, 1e-9, 1.0, 1.0001], dataset)
    assert valid == [1e-9, 1.0] and set(refused) == {0.0, 1.0001}
    assert_stated("(IBCG's step must lie in (0, 1])")


def test_the_aggregate_examples_are_the_geometric_mean():
    lopsided = math.sqrt(100 * 1)
    one_only = math.sqrt(20 * 1)
    assert_stated(
        f"a point 100 times the best on one and the best on the other "
        f"aggregates to {lopsided:g}, and loses to a point 5 times the best "
        f"on both; a point 20 times worse on one only, sqrt(20) = "
        f"{one_only:.2g}, wins")


def test_the_time_cap_and_the_transfer_check_are_the_codes():
    # the bound, with distinct seconds per part
    measured = timing.EntryTime("e", "i", set_up=1.0, first=2.0,
                                per_iteration=3.0, evaluation=5.0)
    for max_runs in (1, 15, 18):
        assert measured.seconds(max_runs) == (
            1.0 + 2.0 + (final_iteration(max_runs) - 1) * 3.0
            + (max_runs + 1) * 5.0)
    n_iter = transfer.CHECK_ITERATIONS
    assert "x step / 10" in transfer.TRANSFERRED_ONLY
    assert_stated(
        f"the first iteration and the mean of the next "
        f"{timing.MEASURED_ITERATIONS}); a run is bounded by set-up + first "
        "+ (iterations - 1) x mean + (max-runs + 1) x evaluation",
        f"exceeds the timeout ({SAFETY_TIMEOUT} s)",
        f"runs {n_iter} iterations of every entry there",
        f"**{n_iter} iterations on the shaped instances**",
        f'("{transfer.RISES_HEADER}"',
        f"raise F in their first {n_iter} iterations",
        f"every entry lowers F in {n_iter} iterations",
        "with the x step / 10, it lowers it",
        f"only a {SAFETY_TIMEOUT} s safety cap",
        f"under the {SAFETY_TIMEOUT} s cap",
    )


def test_the_entries_that_raise_f_are_the_known_rises():
    names = {}
    for (name, index), cause in transfer.KNOWN_RISES.items():
        solver, params = entries(config(name))[index]
        names.setdefault(cause, []).append((solver, name,
                                            params.get("batch_size")))
    at_defaults = list(dict.fromkeys(
        s for s, _, _ in names[transfer.AT_DEFAULTS_TOO]))
    only = {config: batch for solver, config, batch in
            names[transfer.TRANSFERRED_ONLY] if solver == "stocBiO"}
    assert len(only) == len(names[transfer.TRANSFERRED_ONLY]) == 2
    assert_stated(
        f"{', '.join(at_defaults[:-1])} and {at_defaults[-1]} raise F",
        f"stocBiO (Kwon et al.'s at batch {only['kwon2023_hyper_cleaning']},"
        f" Huang et al.'s at batch {only['huang2021_hyper_cleaning']}) "
        "raises it with the transferred steps only")


# --- the default hyper-cleaning instance -----------------------------------

NEUMANN_TYPE = ("stocBiO", "MRBO", "SUSTAIN", "BiAdam", "VR-BiAdam", "BSA",
                "AID-FP")
NEUMANN_LENGTHS = ("neumann_terms", "neumann_depth_bound", "k")


def test_the_hyper_cleaning_constants_are_the_default_instances():
    dataset, data = dataset_data("hyper_cleaning")
    problem = data["problem"]
    side = sidecar("default_hyper_cleaning")
    assert side["instance"] == str(dataset)
    tuned = dict(entries(config("default_hyper_cleaning")))
    lengths = []
    for name in NEUMANN_TYPE:
        params = solver_class(name).parameters
        lengths += [params[k][0] for k in NEUMANN_LENGTHS if k in params]
    chosen = _one(float(tuned[name]["linear_system_step"])
                  for name in NEUMANN_TYPE)
    times = set()
    for entry in side["entries"]:
        step = entry["steps"].get("linear_system_step")
        if config_io.parse_entry(entry["entry"])[0] in NEUMANN_TYPE:
            # BSA names its rule 1/L: the same bound
            assert step["rule"] in ("1/L_g", "1/L"), entry["entry"]
            assert math.isclose(1 / step["default"], problem.L_g,
                                rel_tol=1e-6)
            times.add(round(step["multiplier"]))
    ratio = round(problem.L_g / problem.L_g_start)
    budget = final_iteration(config("default_hyper_cleaning")["max-runs"])
    assert_stated(
        "Neumann-type solvers (stocBiO, MRBO, SUSTAIN, BiAdam, VR-BiAdam, "
        "BSA, AID-FP, ...)",
        f"per-sample bound ({sig(problem.L_g)} on the default instance, "
        f"{ratio}x the lower level's curvature at the start, `L_g_start` = "
        f"{sig(problem.L_g_start, 2)})",
        f"of their default lengths ({min(lengths)} to {max(lengths)} terms)",
        f"stayed low after {budget} iterations",
        f"every one chose `linear_system_step = {chosen:g}` "
        f"({WORDS[_one(times)]} times `1/L_g`)")


# --- the shaped instances ---------------------------------------------------

def test_the_shaped_instances_statistics():
    mean, std = shaped.MNIST_PIXEL_MEAN, shaped.MNIST_PIXEL_STD
    mnist = shaped.MNIST_FEATURES * (mean ** 2 + std ** 2)
    # the digits as the benchmark's default hyper-cleaning instance reads
    # them (its training and validation rows, the intercept column aside)
    problem = dataset_data("hyper_cleaning", source="digits")[1]["problem"]
    pixels = torch.cat([problem.A_train, problem.A_val])[:, :-1]
    digits = float((pixels ** 2).sum(dim=1).mean())
    omniglot = few_shot_tasks.SOURCE_SIZES["omniglot_shaped"]
    assert omniglot == few_shot_tasks.SOURCE_SIZES["omniglot"]
    # the size-only rule and the per-sample bound, on Kwon et al.'s configs
    target = first_dataset(config("kwon2023_hyper_cleaning"))
    stand_in = first_dataset(config("kwon2023_hyper_cleaning_digits"))
    sizes = target["n_train"] / stand_in["n_train"]
    bounds = {round(s["stand_in_default"] / s["default"] / sizes, 1)
              for e in sidecar("kwon2023_hyper_cleaning")["entries"]
              if e["entry"].startswith("stocBiO")
              for s in e["steps"].values()
              if s["rule"] in ("1/L_g", "2/(mu_g + L_g)")}
    assert len(bounds) == 1
    (bound,) = bounds
    side = inspect.signature(shaped.omniglot_shaped_pools).parameters[
        "side"].default
    assert_stated(
        f"{shaped.MNIST_FEATURES} pixels per sample",
        f"published per-pixel mean {mean} and standard deviation {std} (so "
        f"E ||a||^2 = {sig(mnist)}, against about {round(digits)} on the "
        "digits",
        f"Kwon et al.'s instance is {bound:g} times the sizes' ratio alone, "
        f"and the y and linear-system steps {bound:g} times smaller",
        f"{shaped.MNIST_CLASSES} classes, labels from",
        f"has Omniglot's {side} x {side} images, {omniglot['classes'][0]} / "
        f"{omniglot['classes'][1]} classes of {omniglot['per_class']}")


# --- the transferred configs ------------------------------------------------

def _steps(name, solver=None, step=None):
    """The sidecar's steps of ``name``: ``(entry name, step name, step)``
    for every entry (of ``solver``) and step (``step``)."""
    return [(config_io.parse_entry(e["entry"])[0], k, s)
            for e in sidecar(name)["entries"]
            for k, s in e["steps"].items()
            if (solver is None or e["entry"].startswith(solver + "["))
            and (step is None or k == step)]


def _one(values):
    values = set(values)
    assert len(values) == 1, values
    return values.pop()


SCALE_RULE = re.compile(r"^([\d.]+) x the problem's outer_step_scale$")


def _scale_ratio(name):
    """The x steps' ratio (default on the target / on the stand-in) and
    the two ``outer_step_scale`` values, from ``c x the problem's
    outer_step_scale`` rules."""
    outer = [s for _, _, s in _steps(name, step="outer_step")
             if s["rule"].endswith("x the problem's outer_step_scale")]
    ratio = _one(round(s["default"] / s["stand_in_default"], 6)
                 for s in outer)
    scales = set()
    for s in outer:
        factor = SCALE_RULE.search(s["rule"])
        if factor:
            factor = float(factor.group(1))
            scales.add((round(s["default"] / factor, 6),
                        round(s["stand_in_default"] / factor, 6)))
    return ratio, _one(scales)


def _data(name):
    data = first_dataset(config(name))
    return (f"(MNIST {data['n_train']} / {data['n_val']}, "
            f"{ {'sum': 'sums', 'mean': 'means'}[data['reduction']]})")


def _budget_drawn(name, stand_in):
    budget = _one(config_io.config_sample_budget(config(n).get("objective"))
                  for n in (name, stand_in))
    return f"| {sci(budget)} samples drawn (the stand-in's) |"


def test_kwon_s_transfer_is_its_sidecars():
    name = "kwon2023_hyper_cleaning"
    stand_in = "kwon2023_hyper_cleaning_digits"
    ratio, (scale, scale_stand_in) = _scale_ratio(name)
    f2sa_x = _steps(name, "F2SA", "outer_step")
    x_value = _one(s["value"] for _, _, s in f2sa_x)
    x_rule = _one((s["multiplier"], s["stand_in_default"])
                  for _, _, s in f2sa_x)
    values = {}         # stocBiO's y and linear-system steps: stand-in / here
    for (solver, params), (_, before) in zip(
            entries(config(name)), entries(config(stand_in)), strict=True):
        for step in ("inner_step", "linear_system_step"):
            if solver == "stocBiO":
                values.setdefault(step, set()).add(round(
                    float(before[step]) / float(params[step])))
    y, linear = _one(values["inner_step"]), _one(values["linear_system_step"])
    sizes = (first_dataset(config(name))["n_train"]
             / first_dataset(config(stand_in))["n_train"])
    f2sa_y = _steps(name, "F2SA", "inner_step")
    assert all("L_g_start" in s["rule"] for _, _, s in f2sa_y)
    f2sa_y = _one(round(s["stand_in_default"] / s["default"])
                  for _, _, s in f2sa_y)
    x_steps = f"x steps x {ratio:g} (`outer_step_scale` {scale:g} against " \
              f"{scale_stand_in:g})"
    assert_stated(
        f"| `{name}.yml` {_data(name)} | `{stand_in}.yml` "
        + _budget_drawn(name, stand_in) + f" {x_steps}; F2SA's x step "
        f"{x_value:g} at k = 0; stocBiO's y and linear-system steps x "
        f"1/{y} and 1/{linear}; F2SA's y step x 1/{f2sa_y} (in full below) |",
        f"* `{name}.yml`: {x_steps}; F2SA's x step at k = 0 is {x_value:g} "
        f"at both batch sizes, {x_rule[0]:.1f} x its own default rule on the "
        f"MNIST-shaped instance (the stand-in chose its default "
        f"{x_rule[1]:g}); stocBiO's y and linear-system steps follow "
        f"`2/(mu_g + L_g)`, `1/L_g`: x 1/{y} and 1/{linear} of the digits' "
        f"(the size-only rule would give x 1/{sizes:g}); F2SA's y step "
        f"follows L_g_start: x 1/{f2sa_y}.")


def test_huang_s_transfer_is_its_sidecars():
    name = "huang2021_hyper_cleaning"
    stand_in = "huang2021_hyper_cleaning_digits"
    ratio, _ = _scale_ratio(name)
    here = entries(config(name))
    before = entries(config(stand_in))

    def value(content, solver, step):
        return next(float(p[step]) for s, p in content if s == solver)

    sustain = _one(sig(s["default"] / s["stand_in_default"])
                   for _, _, s in _steps(name, "SUSTAIN", "outer_step"))
    y_rules = ("1/L_g", "2/(mu_g + L_g)")
    y_steps = _one(sig(s["default"] / s["stand_in_default"])
                   for _, _, s in _steps(name, step="inner_step")
                   if s["rule"] in y_rules)
    f2sa = _one(sig(s["default"] / s["stand_in_default"], 2)
                for _, _, s in _steps(name, "F2SA", "inner_step"))
    constant = [solver for solver, _, s in _steps(name, step="inner_step")
                if s["default"] == s["stand_in_default"]]
    constant = list(dict.fromkeys(constant))
    assert _one(s["rule"] for _, _, s in _steps(name, "BiAdam",
                                                "inner_step")) == "1"
    vrbo = next(p for s, p in here if s == "VRBO")
    n_train = first_dataset(config(name))["n_train"]
    assert vrbo["large_batch_size"] == n_train

    def moved(solver, step):
        return (f"{solver}'s {grouped(value(before, solver, step))} -> "
                f"{grouped(value(here, solver, step))}"
                if value(here, solver, step) >= 10_000 else
                f"{solver}'s {value(before, solver, step):g} -> "
                f"{value(here, solver, step):g}")

    assert_stated(
        f"| `{name}.yml` {_data(name)} | `{stand_in}.yml` "
        + _budget_drawn(name, stand_in) + f" x steps x {ratio:g} "
        f"(`outer_step_scale`); SUSTAIN's x step x {sustain}; y steps from "
        f"`1/L_g`, `2/(mu_g + L_g)`: x {y_steps}; F2SA's y step x {f2sa}; "
        "constant-rule y steps kept (in full below) |",
        f"* `{name}.yml`: x steps x {ratio:g} (`outer_step_scale`; "
        f"{moved('BiAdam', 'outer_step')}), the Adam-on-hypergradient x "
        f"steps included; SUSTAIN's x step x {sustain} (its batch smoothness"
        f" ratio); y steps from `1/L_g`, `2/(mu_g + L_g)`: x {y_steps} "
        f"({moved('SOBA', 'inner_step')}, {moved('stocBiO', 'inner_step')})"
        f"; F2SA's y step x {f2sa}; the y steps whose rule is a constant ("
        + ", ".join(f"{s}'s" for s in constant) + ") kept.",
        f"(VRBO's full batch is MNIST's {n_train})",
        "(BiAdam's y step `1`, the simple family's `outer_step`)")


def test_biadam_s_sampling_rate_is_the_configs():
    name = "huang2021_hyper_cleaning"
    stand_in = "huang2021_hyper_cleaning_digits"
    n_here = first_dataset(config(name))["n_train"]
    n_before = first_dataset(config(stand_in))["n_train"]
    batch = _one(p["batch_size"] for n in (name, stand_in)
                 for s, p in entries(config(n)) if s == "BiAdam")
    ratio, _ = _scale_ratio(name)
    assert math.isclose(ratio, n_here / n_before)
    assert_stated(
        f"on MNIST ({n_here} samples, batch {batch}) a weight is sampled "
        f"{ratio:g} times less often than on the digits ({n_before})",
        f"nearer the multiplier's {ratio:g} than a copy's 1")


def test_giang_tran_s_transfer_is_its_header():
    name = "giangtran2025_dictionary"
    stand_in = "giangtran2025_dictionary_exact_lmo"
    content, before = config(name), config(stand_in)
    command = header(name)[0]
    max_runs = int(re.search(r"--max-runs (\d+)", command).group(1))
    assert content["max-runs"] == max_runs
    for (solver, params), (solver_before, params_before) in zip(
            entries(content), entries(before), strict=True):
        assert solver == solver_before
        for step in grids.STEP_PARAMETERS:
            assert params.get(step) == params_before.get(step), solver
    time_line = next(line for line in header(name)
                     if line.startswith("Time:"))
    slowest = re.search(r"the slowest, ([\w-]+)\[.*\], ([\d.]+) s an "
                        r"iteration on .*: about (\d+) s a run, within the "
                        "timeout", time_line)
    assert slowest, time_line
    budget = config_io.config_sample_budget(before.get("objective"))
    iterations = final_iteration(max_runs)
    assert_stated(
        f"| {iterations} (`--max-runs {max_runs}`) | the same instance: "
        f"every value is the stand-in's; {iterations} iterations, since",
        f"At the stand-in's budget ({before['max-runs']} evaluations, a cap "
        f"behind its {sci(budget)} samples) the time check refuses it",
        f"at {iterations} iterations it passes",
        f"{slowest.group(1)}, {slowest.group(2)} s an iteration, about "
        f"{slowest.group(3)} s a run against the {content['timeout']} s "
        "timeout",
        f"The steps were chosen at {sci(budget)} samples with the exact cut")


def test_the_omniglot_rule_s_ratios():
    """The rule on Omniglot's instance, against the MLP stand-in's sidecar.
    The rules read L_g = (n_features + 1) / 2 + 2C, mu_g = 2C / n_tasks,
    L_g_full = L_g / n_tasks and the constant outer_step_scale
    (problems/hyper_representation.py), none of which depends on the
    network or the images: an MLP instance of the Omniglot config's sizes
    gives the conv net's rules without drawing Omniglot-shaped images."""
    target = config("huang_hyper_representation", CONFIGS)
    first = multipliers.first_instance(target)
    proxy = type(first).get_instance(**{
        **first._parameters, "source": "synthetic", "network": "mlp",
        "depth": 1})
    stand_in = "huang_hyper_representation_synthetic"
    ratios = {}
    for solver, step in (("stocBiO", "inner_step"), ("SUSTAIN", "outer_step"),
                         ("stocBiO", "outer_step")):
        (_, params), = [(s, p) for s, p in entries(target) if s == solver]
        params = {k: v for k, v in params.items() if k != step}
        here, _ = multipliers.default_of(solver, params, step, proxy)
        (_, _, before), = _steps(stand_in, solver, step)
        ratios[solver, step] = here / before["default"]
    assert math.isclose(ratios["stocBiO", "outer_step"], 1.0)
    features = (first._parameters["n_features"],
                first_dataset(config(stand_in))["n_features"])
    assert_stated(
        f"with y steps x {ratios['stocBiO', 'inner_step']:.2g} (`2/(mu_g + "
        f"L_g)`, L_g from {features[0]} features against {features[1]})",
        f"SUSTAIN's x step x {ratios['SUSTAIN', 'outer_step']:.2g} (its "
        f"batch smoothness ratio over {first._parameters['n_train_tasks']} "
        "tasks)",
        "every other x step unchanged (the problem's `outer_step_scale` is "
        f"a constant, {HyperRepresentationBilevel.outer_step_scale:g}, blind"
        " to the network)")


# --- the shipped tuned configs' table ---------------------------------------

PIECE = re.compile(r"UTC; (?:([\d.]+) CPU-minutes|cost not stated)")
COST = re.compile(r"Tuning cost: ([\d.]+) CPU-minutes")


def commands(name):
    """The tuning command of every piece, in the order run."""
    lines = header(name)
    earlier = [line.split(" (20")[0].removeprefix("Earlier piece: ")
               for line in lines if line.startswith("Earlier piece:")]
    return earlier + [lines[0].removeprefix("Tuned by: ")]


def piece_costs(name):
    """The CPU-minutes of each piece as its header writes them (None: not
    stated), in the order run."""
    lines = header(name)
    costs = [PIECE.search(line).group(1) for line in lines
             if line.startswith("Earlier piece:")]
    cost = [COST.match(line) for line in lines
            if line.startswith("Tuning cost:")]
    return costs + [cost[0].group(1) if cost else None]


GRID = re.compile(r"^  (\S+): .*; (\d+) points run \((\d+) in the first "
                  r"grid, (\d+) widening round\(s\)\)$")


def grid_lines(name):
    """``[(entry, points, first grid, rounds)]`` of the header."""
    return [(m[1], int(m[2]), int(m[3]), int(m[4])) for m in
            map(GRID.match, header(name)) if m]


def rounds(name, prefix):
    return _one(r for entry, _, _, r in grid_lines(name)
                if entry.startswith(prefix))


def tuned_names():
    """The shipped tuned (not transferred) configs with a score table,
    the SBFW table of matrix completion aside (its row names it)."""
    return sorted(p.stem.removesuffix("_scores")
                  for p in TUNED.glob("*_scores.md")
                  if not p.stem.endswith("_sbfw_scores"))


def test_every_tuned_config_has_a_row_stating_its_files_numbers():
    rows = table_rows("tuned config")
    assert sorted(rows) == tuned_names()
    seeds = cli.parse_args(["CONFIG"]).tuning_seeds
    for name, (_, budget, criterion, cost) in rows.items():
        lines = header(name)
        assert f"{seeds} repetition(s) per point" in " ".join(lines), name
        content = config(name)
        samples = config_io.config_sample_budget(content.get("objective"))
        if samples:
            dataset = config_io.as_list(content["dataset"])[0]
            unit = ("tasks" if config_io.parse_entry(dataset)[0]
                    == "hyper_representation" else "samples")
            assert budget.startswith(f"{sci(samples)} {unit}"), name
            assert f"at {sci(samples)} {unit}" in criterion, name
        else:
            last = int(re.search(r"the last at iteration (\d+)",
                                 " ".join(lines)).group(1))
            assert budget.startswith(f"{grouped(last)} iterations"), name
            for objective in config_io.as_list(content.get("objective", [])):
                assert f"`{objective}`" in budget, name
        if content["timeout"] != SAFETY_TIMEOUT:
            assert f" or {content['timeout']} s" in budget, name
        for command in commands(name):
            for widen in re.findall(r"--widen \d+", command):
                assert f"`{widen}" in criterion, (name, widen)
            if "--parameters" in command:
                given = command.split("--parameters ")[1].split(" --")[0]
                assert f"`--parameters {given}`" in criterion, name
        costs = piece_costs(name)
        stated = [c for c in costs if c]
        assert cost.startswith(" + ".join(stated) + " CPU-minutes"
                               if stated else "not stated"), name
        if None in costs:
            assert "not stated" in cost, name


def _horizon(name):
    return _one(p["horizon"] for s, p in entries(config(name, CONFIGS))
                if s == "IBCG")


def test_the_rows_budgets_past_a_horizon():
    rows = table_rows("tuned config")
    for name in ("abolfazli2023_coreset_fig1", "abolfazli2023_coreset",
                 "abolfazli2023_matrix_completion_n100",
                 "abolfazli2023_matrix_completion_n100_sums"):
        max_runs = config(name)["max-runs"]
        horizon = _horizon(name)
        assert final_iteration(max_runs - 1) < horizon
        assert final_iteration(max_runs) > horizon
        past = f"K = {horizon}" if horizon < 10_000 else sci(horizon)
        assert f"(the first evaluation past {past})" in rows[name][1], name
    sbfw = "abolfazli2023_matrix_completion_n100_sbfw"
    sbfw_iterations = int(re.search(r"the last at iteration (\d+)",
                                    " ".join(header(sbfw))).group(1))
    (sbfw_cost,) = piece_costs(sbfw)
    row = rows["abolfazli2023_matrix_completion_n100"]
    assert f"SBFW tuned at {sbfw_iterations} (below)" in row[1]
    assert row[3].endswith(f"SBFW's own tuning {sbfw_cost}")
    budgets = {config_io.config_sample_budget(config(n).get("objective"))
               for n in ("cao2023_regression_synthetic",
                         "giangtran2025_regression_synthetic")}
    assert len(budgets) == 1
    assert "(Cao et al.'s budget on the same problem)" in rows[
        "giangtran2025_regression_synthetic"][1]
    paper = (CONFIGS / "giangtran2025_dictionary_exact_lmo.yml").read_text()
    assert "1-minute budget" in paper
    assert "(the paper: one minute;" in rows[
        "giangtran2025_dictionary_exact_lmo"][1]


def test_the_rows_rounds_and_pieces_are_the_headers():
    rows = {name: cells[2] for name, cells in
            table_rows("tuned config").items()}
    # default hyper-cleaning: the entries the leader rule widened
    more = {e: points - first for e, points, first, _ in
            grid_lines("default_hyper_cleaning") if points > first}
    assert set(more.values()) == {1}
    assert (f"({' and '.join(more)} each ran "
            f"{WORDS[1]} more point)") in rows["default_hyper_cleaning"]
    # Kwon et al.'s digits: the later pieces re-tune batch 500 entries
    for command in commands("kwon2023_hyper_cleaning_digits")[1:]:
        named = command.split("--solver ")[1].split(" --")[0].split()
        assert all(n.startswith(("F2SA[", "stocBiO[")) and
                   "batch_size=500" in n for n in named), command
    assert ("F2SA and stocBiO at batch 500 tuned again in later pieces"
            in rows["kwon2023_hyper_cleaning_digits"])
    name = "abolfazli2023_matrix_completion_n100"
    assert f"(TTSA's grid needed {rounds(name, 'TTSA[')} rounds)" in rows[
        name]
    name = "cao2023_dictionary"
    assert (f"(aR-IP-SeG's flat grid needed {rounds(name, 'aR-IP-SeG[')} "
            "rounds)") in rows[name]
    # Giang-Tran's dictionary: aR-IP-SeG's two centres and choices
    name = "giangtran2025_dictionary_exact_lmo"
    climbs = [(float(config_io.parse_entry(e)[1]["outer_step"]), r)
              for e, _, _, r in grid_lines(name)
              if e.startswith("aR-IP-SeG[")]
    chosen = [float(p["outer_step"]) for s, p in entries(config(name))
              if s == "aR-IP-SeG"]
    (short, r_short), (long, r_long) = climbs
    assert (f"(aR-IP-SeG's short step climbed from {sci(short)} to "
            f"{chosen[0]:g} in {r_short} rounds, the long one from {long:g} "
            f"to {chosen[1]:g} in {r_long})") in rows[name]
    # Huang et al.'s digits: BiAdam as written, the corruption rates
    name = "huang2021_hyper_cleaning_digits"
    rates = first_dataset(config(name))["corruption"]
    biadam = next((e, r) for e, _, _, r in grid_lines(name)
                  if e.startswith("BiAdam[") and "adaptive_input" not in e)
    centre = float(config_io.parse_entry(biadam[0])[1]["outer_step"])
    (chosen,) = [float(p["outer_step"]) for s, p in entries(config(name))
                 if s == "BiAdam" and "adaptive_input" not in p]
    assert (f"the geometric mean over the {WORDS[len(rates)]} rho"
            in rows[name])
    assert (f"(BiAdam as written needed {biadam[1]} rounds: its first grid "
            f"was flat, and it moves only at x steps near {chosen:g}, "
            f"{sci(chosen / centre)} x the paper's {centre:g})") in rows[name]
    # hyper-representation: the panels and the pieces
    name = "huang_hyper_representation_synthetic"
    data = first_dataset(config(name))
    panels = len(data["ways"]) * len(data["shots"])
    assert (f"the geometric mean over the {WORDS[panels]} panels; "
            f"`--widen 8`, in {WORDS[len(commands(name))]} pieces"
            in rows[name])


def test_the_paragraphs_below_the_table_are_the_headers():
    n100 = "abolfazli2023_matrix_completion_n100"
    sbfw = header(f"{n100}_sbfw")[0]
    paper = first_dataset(config("abolfazli2023_matrix_completion", CONFIGS))
    max_runs = config(n100)["max-runs"]
    sbfw_runs = re.search(r"--max-runs (\d+) --evaluate-at (\d+)", sbfw)
    assert int(sbfw_runs.group(2)) == max_runs
    near = re.search(r"near ([\d,]+) iterations here", sbfw).group(1)
    horizon = sci(_horizon(n100))
    timeout = config(n100)["timeout"]
    assert "10^4 iterations or 200 s, whichever first" in " ".join(
        header(n100))
    name = "huang_hyper_representation_synthetic"
    widen = [re.search(r"--widen (\d+)", c).group(1)
             for c in commands(name)]
    assert widen[-1] != widen[0] and set(widen) == {widen[0], widen[-1]}
    samples = config_io.config_sample_budget(config(name)["objective"])
    # SBFW's depth l ~ U{1..k}: sum over k <= K of (k + 1) / 2 ~ K^2 / 4
    generator = torch.Generator().manual_seed(0)
    assert {draw_positive_depth(4, generator) for _ in range(200)} == {
        1, 2, 3, 4}
    assert_stated(
        "SBFW's Neumann depth l ~ U{1..k} makes its cost grow as k^2 "
        "(about k^2/4 Hessian-vector products in all)",
        f"on an instance of n = {first_dataset(config(n100))['n']}, "
        f"smaller than the paper's n = {paper['n']}",
        f"the paper's {timeout} s end its runs near {near} iterations",
        f"IBCG and TTSA are tuned at {grouped(final_iteration(max_runs))} "
        f"iterations (the first evaluation past {horizon}), SBFW "
        f"separately at {final_iteration(int(sbfw_runs.group(1)))} "
        f"(`--solver SBFW --max-runs {sbfw_runs.group(1)} --evaluate-at "
        f"{max_runs}`",
        f"keeps the paper's {timeout} s timeout (part of its budget, "
        f"\"{horizon} iterations or {timeout} s, whichever first\")",
        f"the {timeout} s did not hold IBCG's {horizon} iterations",
        f"at its budget, {sci(samples)} tasks drawn (the config's header "
        f"says why), {cli.parse_args(['C']).tuning_seeds} seeds, `--widen "
        f"{widen[0]}` (AID-CG's re-tune `--widen {widen[-1]}`)")


# --- the shipped example ----------------------------------------------------

def _score_rows(name, solver):
    """``{(outer, inner): (median, aggregate, low, high, verdict)}`` of one
    solver's table in ``<name>_scores.md``, and its centre."""
    text = (TUNED / f"{name}_scores.md").read_text()
    section = text.split(f"\n### {solver}\n")[1].split("\n### ")[0]
    centre = re.search(r"outer_step = ([\d.]+), inner_step = ([\d.]+)",
                       section)
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 6 and re.match(r"[\d.]+$", cells[0]):
            aggregate = re.match(r"(\S+) \[(\S+), (\S+)\]", cells[3])
            rows[cells[0], cells[1]] = (
                cells[2].split()[0], *aggregate.groups(), cells[5])
    return rows, tuple(float(v) for v in centre.groups())


def test_the_example_is_its_score_table():
    name = "tuning_example"
    lines = header(name)
    soba_grid = next(line for line in lines if line.startswith("  SOBA["))
    values = re.findall(r"(\w+) in \[([^\]]*)\]", soba_grid)
    grid = ",".join(f"{k}=[{v.replace(' ', '')}]" for k, v in values)
    example = dict(entries(config(name)))
    soba, soba_centre = _score_rows(name, "SOBA[batch_size=32]")
    stocbio, centre = _score_rows(name, "stocBiO")
    leader = min(stocbio, key=lambda k: float(stocbio[k][1]))
    (chosen,) = [k for k, v in stocbio.items() if v[4] == "**chosen**"]
    (default,) = [k for k in stocbio if (float(k[0]), float(k[1])) == (
        centre[0], float(sig(centre[1])))]
    high = float(stocbio[leader][3])
    assert float(stocbio[chosen][1]) <= high < float(stocbio[default][1])
    assert stocbio[leader][4] == "tie" and chosen != leader
    assert (float(example["stocBiO"]["outer_step"]),
            float(example["stocBiO"]["inner_step"])) == tuple(
                map(float, chosen))
    multiplier = _one(s["multiplier"] for _, _, s in
                      _steps(name, "stocBiO", "inner_step"))
    assert _one(s["rule"] for _, _, s in
                _steps(name, "SOBA", "inner_step")) == "1/L_g"
    assert [v[4] for k, v in soba.items()
            if (float(k[0]), float(k[1])) == (
                soba_centre[0], float(sig(soba_centre[1])))] == ["**chosen**"]
    n_points = int(re.search(r"Grid: (\d+) values per parameter",
                             " ".join(lines)).group(1))
    (soba_chosen,) = [k for k, v in soba.items() if v[4] == "**chosen**"]
    diverge = []
    for rows, at, choice in ((soba, soba_centre, soba_chosen),
                             (stocbio, centre, chosen)):
        axes = [grids.Axis(n, c, n_points) for n, c in zip(
            ("outer_step", "inner_step"), at, strict=True)]
        ten = plain_number(axes[1].value(1))
        assert {v[0] for k, v in rows.items() if k[1] == ten} == {"inf"}
        diverge.append(ten)
        # every lattice neighbour of the choice was run
        index = [next(k for k in range(-20, 20)
                      if axis.value(k) == float(value))
                 for axis, value in zip(axes, choice, strict=True)]
        for i, axis in enumerate(axes):
            for step in search.DIRECTIONS:
                near = list(choice)
                near[i] = plain_number(axis.value(index[i] + step))
                assert tuple(near) in rows, (choice, near)
    iteration = final_iteration(config(name)["max-runs"])
    (dataset,) = config_io.as_list(config(name)["dataset"])
    assert_stated(
        f"`{dataset}`, a {n_points} x {n_points}",
        f"`SOBA[batch_size=32,{grid}]`",
        f"{n_points} x {n_points} first grid, "
        f"{cli.parse_args(['C']).tuning_seeds} tuning "
        f"seeds on `random_state={TUNING_INSTANCE_OFFSET}`, {iteration} "
        "iterations",
        f"`F(x) - F*` at iteration {iteration}",
        f"SOBA keeps its defaults (outer {soba_centre[0]:g}, inner 1/L_g "
        f"rounded to {float(example['SOBA']['inner_step']):g})",
        f"stocBiO's lowest median is at inner {leader[1]} "
        f"({stocbio[leader][0]}, aggregate {stocbio[leader][1]} "
        f"[{stocbio[leader][2]}, {stocbio[leader][3]}]); the smaller inner "
        f"step {chosen[1]} ties with it (aggregate {stocbio[chosen][1]}, "
        f"within that range) and the default inner {default[1]} does not "
        f"({stocbio[default][1]}), so the tie goes to the smaller step: "
        f"outer {chosen[0]}, inner {chosen[1]} (multiplier "
        f"{sig(multiplier, 2)} of its default rule)",
        f"diverge at {WORDS[round(10 ** axes[1].step)]} times their "
        f"default inner step ({diverge[0]} and {diverge[1]}), and every "
        "lattice neighbour of both choices was run")

