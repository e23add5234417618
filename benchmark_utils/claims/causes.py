"""What each verdict of docs/results.md rests on: an experiment's verdicts
on its committed evidence (:func:`experiment_verdicts`, one Holm family),
and the cause a "not confirmed" names, read from the same claim's
verdicts in the experiment's siblings (``NAME_paper``: the paper's steps,
``NAME_long``: a longer budget; :func:`cause`), with what an inconclusive
verdict's test could have detected.
"""

from benchmark_utils.claims import provenance, results
from benchmark_utils.claims.experiments import EXPERIMENTS
from benchmark_utils.claims.readings import (
    claim_axes,
    early_reading,
    number,
    paper_axis,
    point_text,
)
from benchmark_utils.claims.verdicts import (
    INCONCLUSIVE,
    NOT_CONFIRMED,
    NOT_TESTABLE,
    decide,
    effect_shown,
)


def _key(claim):
    # a claim across a paper-steps, tuned and longer run of one figure
    return claim.key or (claim.metric, claim.a.parts, claim.a.at_iteration,
                         claim.b.parts, claim.b.at_iteration, claim.dataset,
                         claim.relation)


def sibling_verdicts(name, axis, early=False):
    """``{claim key: (experiment, verdicts)}`` of the experiment ``name``
    on ``axis`` at its own point (``early``: its early point), where it
    exists with evidence; several verdicts where it runs one method at
    several steps (the paper's short and long steps)."""
    exp = EXPERIMENTS.get(name)
    if exp is None or not (exp.folder / "meta.yml").is_file():
        return {}
    found = {}
    for v in experiment_verdicts(exp):
        if paper_axis(v.axis) == paper_axis(axis) and v.early == early:
            found.setdefault(_key(v.claim), (exp, []))[1].append(v)
    return found


def _sibling(verdicts):
    """The one verdict that stands for a sibling's ``verdicts`` of a
    claim, whatever their order: a confirmed one, else a not confirmed
    one, else an inconclusive one, else the first (not testable)."""
    for wanted in ("confirmed", NOT_CONFIRMED, INCONCLUSIVE):
        for v in verdicts:
            if v.decided.startswith(wanted):
                return v
    return verdicts[0]


def _which(verdicts):
    """`` for X only`` where some of a sibling's ``verdicts`` of a claim
    are confirmed and others not (the entries confirmed named)."""
    held = [v.claim.b.label for v in verdicts
            if v.decided.startswith("confirmed")]
    return (f" for {', '.join(held)} only" if len(held) < len(verdicts)
            else "")


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
    longer budget); "" otherwise. Tuned: the defaults where the paper's
    steps confirm it (a finding of the paper's steps only; one of its
    entries is enough, and named), the budget where a longer run does,
    undecided where that run is inconclusive, the method otherwise (on a
    longer run itself: the method); the paper's steps: the defaults where
    the tuned run confirms it, undecided where it is inconclusive, the
    method where it does not."""
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
        other, found = tuned[key]
        v = _sibling(found)
        if v.decided == NOT_TESTABLE:
            return f"untested: not testable with tuned steps (`{other.name}`)"
        if v.decided.startswith("confirmed"):
            return f"the defaults: confirmed with tuned steps (`{other.name}`)"
        if v.decided == INCONCLUSIVE:
            return f"undecided: inconclusive with tuned steps (`{other.name}`)"
        return f"the method: tuned steps also not (`{other.name}`){data}"
    if exp.source == "long":
        return (f"the method: tuned, not at this longer budget either"
                f"{data}")
    paper = sibling_verdicts(f"{exp.name}_paper", axis, verdict.early)
    if key in paper and _sibling(paper[key][1]).decided.startswith(
            "confirmed"):
        # the paper's finding holds at its own steps only
        other, found = paper[key]
        return (f"the defaults: confirmed with the paper's steps"
                f"{_which(found)} (`{other.name}`), not with tuned ones"
                f"{data}")
    longer = sibling_verdicts(f"{exp.name}_long", axis, verdict.early)
    if key in longer:
        other, found = longer[key]
        v = _sibling(found)
        budget = (point_text(v.axis, v.target) if verdict.early
                  else point_text(*other.budget))
        meta = other.folder / "meta.yml"
        if meta.is_file() and provenance.config_changed(
                other, results.read_meta(other.folder)):
            return (f"untested: the run at {budget} (`{other.name}`) is "
                    "stale")
        if v.decided == NOT_TESTABLE:
            return (f"untested: not testable at {budget} (`{other.name}`: "
                    f"{v.reason})")
        if v.decided.startswith("confirmed"):
            return f"the budget: confirmed at {budget} (`{other.name}`)"
        if v.decided == INCONCLUSIVE:
            return f"undecided: inconclusive at {budget} (`{other.name}`)"
        return (f"the method: tuned, also not at {budget} "
                f"(`{other.name}`){data}")
    return f"the method: tuned, at this budget (no longer run){data}"
