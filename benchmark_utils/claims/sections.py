"""The generated sections of docs/results.md: every number a reader sees
there comes from ``results/`` through this module.

Each experiment with committed evidence has one section between the
markers ``<!-- claims:begin NAME -->`` and ``<!-- claims:end NAME -->``:
where its evidence comes from (command, commit, repetitions, CPU time),
a table of each method's metrics read at the experiment's budget (median
[q20, q80] over the repetitions, and how many did not reach it), and the
verdict of each of the paper's claims on the paper's axis, with the rule
of :mod:`benchmark_utils.claims.stats`, also read at equal samples where
the paper's axis is another; three more: the rule's simulated error
rates, the methods' performance profile and the evidence's size.
:func:`check` recomputes every section and reports each that differs
from the file; :func:`write` rewrites them.
"""

import numpy as np
import yaml

from benchmark_utils.claims import profile, provenance, results, simulation
from benchmark_utils.claims.experiments import EXPERIMENTS
from benchmark_utils.claims.readings import (
    EARLY_WORDS,
    claim_axes,
    early_reading,
    paper_axis,
    point_text,
    table_point,
    time_text,
)
from benchmark_utils.claims.verdicts import (
    INCONCLUSIVE,
    NOT_CONFIRMED,
    NOT_TESTABLE,
    decide,
    effect_shown,
    per_run,
    select,
)
from benchmark_utils.report.plot_helpers import QUANTILES
from benchmark_utils.tuning.defaults import ROOT

RESULTS_PAGE = ROOT / "docs" / "results.md"
BEGIN, END = "<!-- claims:begin {} -->", "<!-- claims:end {} -->"


def number(value):
    """A value as the tables print it: 3 significant digits."""
    if value is None or not np.isfinite(value):
        return "inf" if value is not None and value > 0 else str(value)
    return f"{value:.3g}"


def band(values):
    """``median [q20, q80]`` of the values reached, and how many runs
    diverged (NaN) or did not reach the point (None)."""
    reached = [v for v in values if v is not None and not np.isnan(v)]
    missing = sum(v is None for v in values)
    diverged = len(values) - len(reached) - missing
    notes = [f"{count}/{len(values)} {what}" for count, what in
             ((diverged, "diverged"), (missing, "not reached")) if count]
    if not reached:
        return ", ".join(notes)
    q20, median, q80 = np.quantile(reached,
                                   [QUANTILES[0], 0.5, QUANTILES[1]])
    text = f"{number(median)} [{number(q20)}, {number(q80)}]"
    return ", ".join([text, *notes])


def dataset_labels(names):
    """A short label per dataset: the parameters whose values differ
    between the experiment's datasets (its name where there is one)."""
    params = {n: dict(p.split("=", 1) for p in n.partition("[")[2]
                      .rstrip("]").split(",") if "=" in p) for n in names}
    keys = sorted({k for p in params.values() for k in p})
    differ = [k for k in keys
              if len({p.get(k) for p in params.values()}) > 1]
    return {n: (", ".join(f"{k}={params[n].get(k)}" for k in differ)
                if differ else n.partition("[")[0]) for n in names}


def method_table(exp, runs):
    axis, target = table_point(exp, runs)
    lines = ["| dataset | method | " + " | ".join(
        f"{m} at {point_text(axis, target)}" for m in exp.metrics) + " |",
        "|---" * (2 + len(exp.metrics)) + "|"]
    datasets = sorted(runs["dataset"].unique())
    labels = dataset_labels(datasets)
    for dataset in datasets:
        rows = runs[runs["dataset"] == dataset]
        for method in exp.methods:
            chosen = select(rows, method)
            cells = [band(per_run(chosen, m, axis, target))
                     for m in exp.metrics]
            lines.append(f"| {labels[dataset]} | {method.label} | "
                         + " | ".join(cells) + " |")
    return lines


def _key(claim):
    # a claim across a paper-steps, tuned and longer run of one figure
    return claim.key or (claim.metric, claim.a.parts, claim.a.at_iteration,
                         claim.b.parts, claim.b.at_iteration, claim.dataset,
                         claim.relation)


def sibling_verdicts(name, axis, early=False):
    """``{claim key: (experiment, verdict)}`` of the experiment ``name``
    on ``axis`` at its own point (``early``: its early point), where it
    exists with evidence."""
    exp = EXPERIMENTS.get(name)
    if exp is None or not (exp.folder / "meta.yml").is_file():
        return {}
    return {_key(v.claim): (exp, v) for v in experiment_verdicts(exp)
            if paper_axis(v.axis) == paper_axis(axis)
            and v.early == early}


_VERDICTS = {}


def experiment_verdicts(exp, runs=None):
    """Every verdict of ``exp`` (its claims at each reading of
    :func:`claim_axes`, one Holm family) on its committed evidence (kept
    while the evidence file is unchanged: sections and causes ask for
    one experiment's verdicts several times)."""
    path = exp.folder / "runs.csv.gz"
    state = path.stat()
    key = (exp, str(path), state.st_mtime_ns, state.st_size)
    if key not in _VERDICTS:
        if runs is None:
            runs = results.read(exp.folder)[0]
        # at the paper's own steps a method that does not move is the
        # paper's finding to test, not a tuning that failed
        _VERDICTS[key] = decide(exp.claims, runs, claim_axes(exp, runs),
                                score=exp.score,
                                judge_progress=exp.source != "paper",
                                no_effect=effect_shown(exp.effect, runs),
                                early=early_reading(exp, runs))
    return _VERDICTS[key]


def cause(exp, verdict):
    """A "not testable here" verdict's reason, what an inconclusive
    verdict's test could have detected, or the protocol's cause of a "not
    confirmed" verdict, backed by the run that shows it (the sibling
    experiments ``NAME_paper``: the paper's steps, and ``NAME_long``: a
    longer budget); "" otherwise. Tuned: the
    defaults where the paper's steps confirm it (a finding of the paper's
    steps only), the budget where a longer run does, the method
    otherwise (on a longer run itself: the method); the paper's steps:
    the defaults where the tuned run confirms it, the method where it
    does not."""
    if verdict.decided == NOT_TESTABLE:
        return verdict.reason
    if verdict.decided == INCONCLUSIVE:
        c = verdict.comparison
        close = ("the two are within the margin (the interval lies inside "
                 "+-m); " if -c.margin < c.ci_low and c.ci_high < c.margin
                 else "")
        return (f"{close}could detect a difference of "
                f"{number(verdict.detectable)} (80% power, {verdict.family} "
                "tests)")
    if verdict.decided != NOT_CONFIRMED:
        return ""
    key, axis = _key(verdict.claim), verdict.axis
    data = "; or the data (stand-in)" if exp.stand_in else ""
    if exp.source == "paper":
        tuned = sibling_verdicts(exp.name.removesuffix("_paper"), axis,
                                 verdict.early)
        if key not in tuned:
            return "not decided: no tuned run of this claim"
        other, v = tuned[key]
        if v.decided == NOT_TESTABLE:
            return f"untested: not testable with tuned steps (`{other.name}`)"
        if v.decided.startswith("confirmed"):
            return f"the defaults: confirmed with tuned steps (`{other.name}`)"
        return f"the method: tuned steps also not (`{other.name}`){data}"
    if exp.source == "long":
        return (f"the method: tuned, not at this longer budget either"
                f"{data}")
    paper = sibling_verdicts(f"{exp.name}_paper", axis, verdict.early)
    if key in paper and paper[key][1].decided.startswith("confirmed"):
        # the paper's finding holds at its own steps only
        return (f"the defaults: confirmed with the paper's steps "
                f"(`{paper[key][0].name}`), not with tuned ones{data}")
    longer = sibling_verdicts(f"{exp.name}_long", axis, verdict.early)
    if key in longer:
        other, v = longer[key]
        budget = (point_text(v.axis, v.target) if verdict.early
                  else point_text(*other.budget))
        meta = other.folder / "meta.yml"
        if meta.is_file() and provenance.config_changed(
                other, yaml.safe_load(meta.read_text())):
            return (f"untested: the run at {budget} (`{other.name}`) is "
                    "stale")
        if v.decided == NOT_TESTABLE:
            return (f"untested: not testable at {budget} (`{other.name}`: "
                    f"{v.reason})")
        if v.decided.startswith("confirmed"):
            return f"the budget: confirmed at {budget} (`{other.name}`)"
        return (f"the method: tuned, also not at {budget} "
                f"(`{other.name}`){data}")
    return f"the method: tuned, at this budget (no longer run){data}"


def cell(text):
    """``text`` in a pipe table's cell: its own pipes escaped."""
    return text.replace("|", "\\|")


def claim_table(exp, runs):
    lines = ["| claim | axis, point | medians (a / b) | difference [95% CI]"
             " | margin | p | verdict | cause, or what the test could "
             "detect |", "|---|---|---|---|---|---|---|---|"]
    common = {axis: target is None
              for axis, target in claim_axes(exp, runs)}
    for v in experiment_verdicts(exp, runs):
        c = v.comparison
        if c is None:
            lines.append(f"| {cell(v.claim.text)} | {v.axis} | - | - | - "
                         f"| - | **{v.decided}** | {cause(exp, v)} |")
            continue
        missing = "".join(
            f"; {what}: {pair[0]} / {pair[1]}" for what, pair in
            (("diverged", v.diverged), ("not reached", v.not_reached))
            if any(pair))
        lines.append(
            f"| {cell(v.claim.text)} | "
            f"{point_text(v.axis, v.target, common[v.axis] and not v.early)}"
            + (f" (the early point, {EARLY_WORDS})" if v.early
               else "") + " | "
            f"{number(c.median_a)} / {number(c.median_b)}{missing} | "
            f"{number(c.difference)} [{number(c.ci_low)}, "
            f"{number(c.ci_high)}] | {number(c.margin)} | {c.p_value:.2g} | "
            f"**{v.decided}** | {cause(exp, v)} |")
    return lines


def repetitions_text(exp, runs):
    """The repetitions per method, as run: the most common count, and
    each method that has another."""
    counts = {}
    for method in exp.methods:
        rows = select(runs, method)
        counts[method.label] = int(rows.groupby("dataset")["rep"]
                                   .nunique().min())
    usual = max(set(counts.values()), key=list(counts.values()).count)
    others = [f"{label} {n}" for label, n in counts.items() if n != usual]
    return (f"{usual} repetitions per method"
            + (f" (except {', '.join(others)})" if others else ""))


def family_text(exp, runs):
    verdicts = experiment_verdicts(exp, runs)
    tested = sum(v.comparison is not None for v in verdicts)
    early = sum(v.early for v in verdicts)
    return (f"Verdicts (the rule above, one Holm family over the {tested} "
            f"tests of this experiment: its {len(exp.claims)} claim(s) at "
            f"{len(claim_axes(exp, runs))} reading(s)"
            + (f", {early} claim(s) of speed also at the early point"
               if early else "") + ", those not testable here "
            "left out; a = the first method named):")


def section(exp):
    """The markdown section of ``exp`` (module doc), from results/."""
    runs, _, meta = results.read(exp.folder)
    lines = [
        BEGIN.format(exp.name),
        f"Evidence: `results/{exp.name}/` ({repetitions_text(exp, runs)}, "
        f"commit {meta['commit'][:10]}"
        + (" with uncommitted changes" if meta.get("uncommitted_changes")
           else "") + f", {results.cost_statement(meta)};"
        f" `python -m benchmark_utils.claims run {exp.name}` reruns it). "
        f"Paper's axis: {exp.axis}. Budget: "
        f"{point_text(*table_point(exp, runs))}; "
        f"the paper's horizon: {exp.paper_horizon or 'no paper figure'}."
        + time_text(exp, runs)
        + (f" Stand-in: {exp.stand_in}." if exp.stand_in else "")
        + provenance.stale_text(exp, meta)
        + provenance.recheck_text(meta), "",
        *method_table(exp, runs)]
    if exp.claims:
        lines += ["", family_text(exp, runs), "", *claim_table(exp, runs)]
    return "\n".join(lines + [END.format(exp.name)])


def _span(text, name):
    begin, end = BEGIN.format(name), END.format(name)
    start = text.find(begin)
    stop = text.find(end, start)
    return (start, stop + len(end)) if start >= 0 and stop >= 0 else None


RATES = "false_positive_rates"


def rates_section():
    """The rule's error rates (:func:`simulation.current_lines`)."""
    return "\n".join([BEGIN.format(RATES), *simulation.current_lines(),
                      END.format(RATES)])


SIZE = "evidence_size"
SIZE_LIMIT_MB = 30


def size_section():
    """How much the committed evidence takes, against its limit."""
    folders = sorted(e.folder for e in EXPERIMENTS.values()
                     if (e.folder / "meta.yml").is_file())
    total = sum(f.stat().st_size for folder in folders
                for f in folder.iterdir())
    return "\n".join([
        BEGIN.format(SIZE),
        f"The evidence of the {len(folders)} regenerated experiments in "
        f"`results/` takes {total / 1e6:.1f} MB (the limit: "
        f"{SIZE_LIMIT_MB} MB).", END.format(SIZE)])


PROFILE = "performance_profile"


def profile_section():
    """Where the methods stand (:mod:`benchmark_utils.claims.profile`)."""
    return "\n".join([BEGIN.format(PROFILE), *profile.section_lines(),
                      END.format(PROFILE)])


def generated(names=None):
    """``{name: section}`` of the rates, the profile, the evidence's size
    and every experiment with evidence (``names``: only these, and the
    size)."""
    sections = {SIZE: size_section()}
    if not names:
        sections[RATES] = rates_section()
        sections[PROFILE] = profile_section()
    sections.update({name: section(exp) for name, exp in EXPERIMENTS.items()
                     if (names is None or name in names)
                     and (exp.folder / "meta.yml").is_file()})
    return sections


def check(page=None, names=None):
    """The experiments whose section in ``page`` (default: docs/
    results.md) differs from what ``results/`` gives (missing sections
    included), and those with a section or a folder but no evidence
    (no meta.yml); ``names``: only these experiments (and the size)."""
    text = (page or RESULTS_PAGE).read_text()
    wrong = []
    expected_sections = generated(names)
    for name, expected in expected_sections.items():
        span = _span(text, name)
        if span is None or text[span[0]:span[1]] != expected:
            wrong.append(name)
    # a section whose evidence is gone, or evidence without its meta.yml
    wrong += [name for name, exp in EXPERIMENTS.items()
              if (names is None or name in names)
              and name not in expected_sections and (
                  _span(text, name) is not None or exp.folder.exists())]
    # evidence tables that are not those their run wrote
    wrong += [name for name in integrity_errors(names)
              if name not in wrong]
    return wrong


def integrity_errors(names=None):
    """``{name: [line]}`` of the experiments (``names``: of these) whose
    evidence tables differ from the digests their meta.yml pins
    (:func:`benchmark_utils.claims.provenance.errors`)."""
    found = {}
    for name, exp in EXPERIMENTS.items():
        if (names is None or name in names) and (
                exp.folder / "meta.yml").is_file():
            _, _, meta = results.read(exp.folder)
            lines = provenance.errors(exp, meta)
            if lines:
                found[name] = lines
    return found


def write(page=None, names=None):
    """Rewrite the sections in ``page`` (default: docs/results.md; a
    missing one is appended)."""
    page = page or RESULTS_PAGE
    text = page.read_text()
    for name, expected in generated(names).items():
        span = _span(text, name)
        if span is None:
            text = text.rstrip("\n") + "\n\n" + expected + "\n"
        else:
            text = text[:span[0]] + expected + text[span[1]:]
    page.write_text(text)
    if not names:
        simulation.update_record()

