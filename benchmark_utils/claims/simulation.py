"""The verdict rule's error rates, measured by simulation (``python -m
benchmark_utils.claims.simulation`` prints them; docs/results.md shows
them, from :data:`RECORD`): a false "better" between two
samples of one distribution, or where a is better by exactly the margin
(the boundary where "better by more than the margin" is false), and a
false "on par" where a is worse by exactly the margin, for one verdict
and for a Holm family, on distributions from tame to awkward (heavy
tails, many ties, diverged runs).

The page's rates are kept in :data:`RECORD` with the digest of the rule's
code (:data:`RULE_FILES`): ``claims write`` computes them again only when
that code changed, and ``claims check`` reads them from the record while
its digest is the code's (the page must then show them as recorded), so
a change of the rule always recomputes them, and the suite does not spend
the simulation's minute on every run (tests/test_claims_stats.py
recomputes a cell and compares it with the record)."""
import argparse
import functools
import hashlib
import math
from pathlib import Path

import numpy as np
import yaml

from benchmark_utils.claims.rank_tests import two_sided
from benchmark_utils.claims.stats import (
    ALPHA,
    LOSS_MARGIN,
    TRIALS,
    bootstrap_ci,
    holm,
    one_sided_p_values,
    paired_by_design,
)


# samples for the simulation, from tame to awkward: each draws the two
# methods' values of ``shape`` seeds, independent between the methods, or
# sharing a seed effect (the instance and sample stream a repetition's
# runs share: the case pairing is for)
def _independent(draw):
    return lambda rng, shape: (draw(rng, shape), draw(rng, shape))


def _shared_seed(rng, shape):
    seed = rng.lognormal(0.0, 1.0, shape)
    return (seed * rng.lognormal(0.0, 0.2, shape),
            seed * rng.lognormal(0.0, 0.2, shape))


DISTRIBUTIONS = {
    "normal": ("normal (mean 1, sd 0.2)", _independent(
        lambda rng, shape: rng.normal(1.0, 0.2, shape))),
    "lognormal": ("lognormal, heavy tail (sigma 1.5)", _independent(
        lambda rng, shape: rng.lognormal(0.0, 1.5, shape))),
    "discrete": ("discrete, many ties (4 values)", _independent(
        lambda rng, shape: rng.integers(0, 4, shape).astype(float))),
    "diverging": ("lognormal (sigma 1), 30% diverged (NaN)", _independent(
        lambda rng, shape: np.where(rng.random(shape) < 0.3, np.nan,
                                    rng.lognormal(0.0, 1.0, shape)))),
    "shared": ("a shared seed effect (lognormal, sigma 1) times each "
               "method's own (sigma 0.2)", _shared_seed),
}


# the simulated settings (error_rate): the relation tested, the factor a's
# values are drawn at (b's at 1; a loss's relative margin of 10%), and the
# side whose verdict is an error ("any": every verdict is)
SCENARIOS = {
    "same": ("better", 1.0, "any"),
    "better_at_margin": ("better", 1 / (1 + LOSS_MARGIN.size), "a"),
    "on_par_at_margin": ("on_par", 1 + LOSS_MARGIN.size, "a"),
}


def error_rate(scenario="same", n=10, n_verdicts=1, trials=TRIALS, seed=0,
               distribution="normal"):
    """The fraction of ``trials`` families of ``n_verdicts`` comparisons
    (``n`` seeds, the two methods' values drawn from ``distribution``, a
    key of DISTRIBUTIONS, a's times the scenario's factor) where the rule
    (Holm over the family, the loss margin) gives a false verdict:
    ``same``, any verdict between one distribution; ``better_at_margin``,
    "a better" where a is better by exactly the margin; ``on_par_at_margin``,
    "a on par" where a is worse by exactly the margin; the test paired or
    not as the rule chooses it for ``n`` and ``n_verdicts``. The interval
    is drawn only for the comparisons whose p-value passes on a side
    whose verdict is an error (it can only veto)."""
    relation, scale, false_side = SCENARIOS[scenario]
    rng = np.random.default_rng(seed)
    x_a, x_b = DISTRIBUTIONS[distribution][1](rng, (trials * n_verdicts, n))
    a = np.where(np.isnan(x_a), np.inf, x_a) * scale
    b = np.where(np.isnan(x_b), np.inf, x_b)
    medians = np.stack([np.median(a, axis=1), np.median(b, axis=1)])
    with np.errstate(invalid="ignore"):
        finite = np.where(np.isfinite(medians), np.abs(medians), np.inf)
    m = LOSS_MARGIN.size * np.min(finite, axis=0)
    m = np.where(np.isfinite(m), m, 0.0)
    paired = paired_by_design(n, n_verdicts)
    p_a, p_b = one_sided_p_values(a, b, m, relation, paired)
    p_values = two_sided((p_a, p_b))
    # the interval only for the verdicts that would be errors
    side_a = p_a <= p_b
    drawn = holm(p_values.reshape(trials, n_verdicts)).reshape(-1) & (
        side_a | (false_side == "any"))
    low, high = bootstrap_ci(a[drawn], b[drawn], rng=rng, paired=paired)
    boundary = -m[drawn] if relation == "better" else m[drawn]
    verdict = np.zeros(drawn.shape, dtype=bool)
    verdict[drawn] = np.where(side_a[drawn], high < boundary,
                              low > m[drawn])
    return float(verdict.reshape(trials, n_verdicts).any(axis=1).mean())


def rate_table(n=10, families=(8,), trials=TRIALS, seed=0):
    """The measured error rates as markdown lines: one row per
    distribution; false "better" between one distribution (a verdict, a
    family of each of ``families``), false "a better" where a is better
    by exactly the margin, false "on par" where a is worse by exactly the
    margin (a verdict, a family of each size); each column names the test
    the rule uses there."""
    def test(k):
        return "paired" if paired_by_design(n, k) else "unpaired"
    columns = [("same", 1, "false \"better\", one distribution: single"),
               *(("same", k, f"family of {k}") for k in families),
               ("better_at_margin", 1, "false \"better\", better by "
                "exactly the margin"),
               ("on_par_at_margin", 1, "false \"on par\", worse by exactly "
                "the margin: single"),
               *(("on_par_at_margin", k, f"family of {k}")
                 for k in families)]
    lines = [f"| values (n = {n} seeds) | " + " | ".join(
        f"{label} ({'Holm, ' * (k > 1)}{test(k)})"
        for _, k, label in columns) + " |",
        "|---" * (len(columns) + 1) + "|"]
    for name, (label, _) in DISTRIBUTIONS.items():
        rates = [error_rate(scenario, n, k, trials=trials, seed=seed,
                            distribution=name)
                 for scenario, k, _ in columns]
        lines.append(f"| {label} | " + " | ".join(
            f"{r:.3f}" for r in rates) + " |")
    return lines


def section_lines():
    """docs/results.md's rates (seeded): what they measure, then the
    tables at n = 10 (families of 8, paired, and 32, unpaired) and
    n = 30."""
    return [
        f"Measured error rates of the rule (alpha = {ALPHA}, the loss "
        f"margin, {LOSS_MARGIN.text()}; {TRIALS} trials, seed 0; `python "
        "-m benchmark_utils.claims.simulation`): a false \"better\" "
        "between two samples of one distribution or where a is better by "
        "exactly the margin, a false \"on par\" where a is worse by "
        "exactly the margin (kept in `results/error_rates.yml` with the "
        "digest of the rule's code, recomputed by `claims write` when it "
        "changes):", "",
        *rate_table(families=(8, 32)), "", *rate_table(n=30)]


RECORD = Path(__file__).resolve().parents[2] / "results" / "error_rates.yml"
# the rule and its simulation: what the rates depend on
RULE_FILES = ("stats.py", "rank_tests.py", "simulation.py")


def rule_digest():
    """sha256 (first 16 digits) of the files the rates depend on."""
    digest = hashlib.sha256()
    for name in RULE_FILES:
        digest.update(name.encode() + Path(__file__).with_name(
            name).read_bytes())
    return digest.hexdigest()[:16]


def recorded_lines(record=RECORD):
    """:func:`section_lines` from ``record`` where it holds the current
    rule's (its digest is :func:`rule_digest`), else None."""
    if not record.is_file():
        return None
    stored = yaml.safe_load(record.read_text()) or {}
    if stored.get("rule_digest") != rule_digest():
        return None
    return stored.get("lines")


@functools.lru_cache(maxsize=1)
def current_lines():
    """The page's rates: recorded where the record holds the current
    rule's, else computed (:func:`section_lines`)."""
    return recorded_lines() or section_lines()


def update_record(record=RECORD):
    """Record the current rule's rates where ``record`` holds another
    rule's, or none (``claims write``)."""
    if recorded_lines(record) is None:
        record_lines(current_lines(), record)


def record_lines(lines, record=RECORD):
    """Keep ``lines`` (the current rule's) in ``record``."""
    record.write_text(yaml.safe_dump(
        {"rule_digest": rule_digest(), "command": "python -m "
         "benchmark_utils.claims write (recomputed when the digest of "
         + ", ".join(RULE_FILES) + " changes)", "lines": list(lines)},
        sort_keys=False, width=10_000))


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m benchmark_utils.claims.simulation",
        description="Print the measured error rates of the verdict "
                    "rule (false 'better', false 'on par') as a markdown "
                    "table.")
    parser.add_argument("--n", type=int, default=10,
                        help="values per method (default 10)")
    parser.add_argument("--family", type=int, default=8,
                        help="verdicts per family (default 8)")
    parser.add_argument("--trials", type=int, default=TRIALS,
                        help=f"simulated trials (default {TRIALS})")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    error = math.sqrt(ALPHA * (1 - ALPHA) / args.trials)
    print(f"Rate of false verdicts (alpha = {ALPHA}, margin "
          f"{LOSS_MARGIN.text()}, {args.trials} trials, seed {args.seed}; "
          f"standard error about {error:.3f} at a rate of {ALPHA}):\n")
    print("\n".join(rate_table(args.n, (args.family,), args.trials,
                               args.seed)))


if __name__ == "__main__":
    main()
