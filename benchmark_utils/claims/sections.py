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

from benchmark_utils.claims import profile, provenance, results, simulation
from benchmark_utils.claims.causes import cause, experiment_verdicts
from benchmark_utils.claims.experiments import EXPERIMENTS
from benchmark_utils.claims.readings import (
    EARLY_WORDS,
    claim_axes,
    number,
    point_text,
    table_point,
    time_text,
)
from benchmark_utils.claims.verdicts import per_run, select
from benchmark_utils.report.plot_helpers import QUANTILES
from benchmark_utils.tuning.defaults import ROOT

RESULTS_PAGE = ROOT / "docs" / "results.md"
BEGIN, END = "<!-- claims:begin {} -->", "<!-- claims:end {} -->"


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
    wrong += _without_evidence(text, expected_sections, names)
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
    missing one is appended); the experiments whose section (or folder)
    is there without evidence, whose sections are left as they were."""
    page = page or RESULTS_PAGE
    text = page.read_text()
    expected_sections = generated(names)
    for name, expected in expected_sections.items():
        span = _span(text, name)
        if span is None:
            text = text.rstrip("\n") + "\n\n" + expected + "\n"
        else:
            text = text[:span[0]] + expected + text[span[1]:]
    page.write_text(text)
    if not names:
        simulation.update_record()
    return _without_evidence(text, expected_sections, names)


def _without_evidence(text, expected_sections, names=None):
    """The experiments (of ``names``) with a section in ``text`` or a
    folder but no evidence (no meta.yml)."""
    return [name for name, exp in EXPERIMENTS.items()
            if (names is None or name in names)
            and name not in expected_sections and (
                _span(text, name) is not None or exp.folder.exists())]

