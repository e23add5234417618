"""Where one method stands against each other method of an experiment (what
a comparison of a researcher's own solver decides): better, on par,
worse, inconclusive or not testable, on each of the experiment's datasets
and metrics at each of its readings (the paper's axis at its budget or
horizon, and equal samples).

Each pair is three claims decided by the benchmark's rule
(:func:`benchmark_utils.claims.verdicts.decide`, one Holm family per
pair and dataset: its three claims on every metric at every reading;
where the method stands against each other method is its own question,
so a family never grows with the number of methods, and at 10
repetitions the seeds stay paired, :func:`benchmark_utils.claims.stats.
paired_by_design`): the method better than the other by more
than the metric's margin; it at least on par with the other; the other at
least on par with it. **better**: the first is confirmed; **worse**: the
first is refuted (the other better by more than the margin); **on par**:
both non-inferiority tests pass, so the two are within the margin of each
other (an equivalence test, two one-sided); otherwise **inconclusive**. A
method whose runs do not improve on their start beyond the seeds' spread
makes the pair **not testable here**, as for the papers' claims.
"""
import dataclasses

from benchmark_utils.claims import stats
from benchmark_utils.claims.readings import claim_axes
from benchmark_utils.claims.verdicts import (
    CONFIRMED,
    NOT_CONFIRMED,
    NOT_TESTABLE,
    ON_PAR,
    Claim,
    decide,
)

BETTER, PARITY, WORSE, UNDECIDED = ("better", "on par", "worse",
                                    "inconclusive")


@dataclasses.dataclass(frozen=True)
class Standing:
    other: str          # the other method's label
    dataset: str        # the dataset's name (one problem at a time)
    metric: str
    axis: str
    point: float
    word: str           # BETTER, PARITY, WORSE, UNDECIDED or NOT_TESTABLE
    reason: str = ""    # why not testable; for UNDECIDED, the difference
    # of medians the "better" test would have detected (80% power)


def pair_claims(method, other, metric, dataset=""):
    """The three claims of the pair on ``metric`` (module doc), on the
    datasets whose name contains ``dataset``."""
    higher = metric in stats.HIGHER_IS_BETTER
    return (
        Claim(f"{method.label} better than {other.label}", metric, method,
              other, higher_is_better=higher, dataset=dataset),
        Claim(f"{method.label} at least on par with {other.label}", metric,
              method, other, relation="on_par", higher_is_better=higher,
              dataset=dataset),
        Claim(f"{other.label} at least on par with {method.label}", metric,
              other, method, relation="on_par", higher_is_better=higher,
              dataset=dataset))


def word(better, method_on_par, other_on_par):
    """The pair's standing from its three verdicts (module doc)."""
    if NOT_TESTABLE in (better.decided, method_on_par.decided):
        return NOT_TESTABLE
    if better.decided == CONFIRMED:
        return BETTER
    if better.decided == NOT_CONFIRMED:
        return WORSE
    if method_on_par.decided == ON_PAR and other_on_par.decided == ON_PAR:
        return PARITY
    return UNDECIDED


def standings(exp, runs, method):
    """``method``'s :class:`Standing` against every other method of
    ``exp`` on ``runs`` (the experiment's evidence with the method's runs
    added), metric by metric, reading by reading."""
    others = [m for m in exp.methods if m.parts != method.parts]
    readings = claim_axes(exp, runs)
    # each dataset on its own: a repetition's runs on two datasets are two
    # runs, never one curve; one family per pair (module doc)
    verdicts = [verdict for dataset in sorted(runs["dataset"].unique())
                for other in others for verdict in decide(
                    [claim for metric in exp.metrics for claim in
                     pair_claims(method, other, metric, dataset)],
                    runs, readings, score=exp.score)]
    found = []
    for triple in zip(*[iter(verdicts)] * 3, strict=True):
        first = triple[0]
        standing = word(*triple)
        reason = first.reason
        if standing == UNDECIDED:
            reason = (f"a difference of {first.detectable:.3g} would have "
                      "been detected (80% power); the margin is "
                      f"{first.comparison.margin:.3g}")
        found.append(Standing(
            first.claim.b.label, first.claim.dataset, first.claim.metric,
            first.axis, first.target, standing, reason))
    return found
