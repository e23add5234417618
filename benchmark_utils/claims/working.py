"""Whether a method works on an experiment's evidence: its runs improve on
their start, on the tuning's score, by more than the seeds' spread
(:func:`progress`); a claim about a method that does not is not testable
(:func:`benchmark_utils.claims.verdicts.untestable`)."""
import dataclasses
import math

import numpy as np

from benchmark_utils.report.plot_helpers import QUANTILES


@dataclasses.dataclass(frozen=True)
class Progress:
    """A method's runs on the tuning's score (:func:`progress`): the
    medians of its start (first evaluation), its end (last; +inf where
    the run diverged) and its gain (each run's start - end), the seeds'
    spread of the ends, and the runs that diverged, of ``runs``."""
    score: str
    start: float
    end: float
    gain: float
    spread: float
    diverged: int
    runs: int

    @property
    def works(self):
        return bool(np.isfinite(self.end) and self.gain > self.spread)

    def text(self):
        if not np.isfinite(self.end):
            return f"{self.diverged} of {self.runs} runs diverged"
        return (f"its {self.score} gains a median {stats_number(self.gain)} "
                f"on its start, {stats_number(self.start)}, against the "
                f"seeds' spread {stats_number(self.spread)}")


def stats_number(value):
    return f"{value:.3g}" if np.isfinite(value) else str(value)


def run_score(row, columns, score, first=None):
    """``(name, value)`` of the tuning's score on one evaluation ``row``
    (benchmark_utils/tuning/scoring.py, read on the evidence's columns):
    ``levels``, the larger of f(x_k, y_k) and ||grad_y g|| relative to
    the run's ``first`` row; the simple family (a ``lower_gap``) max(|f -
    f*|, g - g*) where f* is certified, else f + (g - g*); the general
    family F - F* where certified, else F."""
    def value(name):
        return float(row[name]) if name in columns else math.nan
    if score == "levels":
        return ("max(f(x_k, y_k), ||grad_y g||) relative to the start",
                max(value(c) / float(first[c]) for c in
                    ("upper_value_current", "inner_grad_norm")))
    if "lower_gap" in columns:
        if np.isfinite(value("upper_gap_abs")):
            return ("max(|f - f*|, g - g*)", max(abs(value("upper_gap_abs")),
                                                 value("lower_gap")))
        return "f + (g - g*)", value("upper_value") + value("lower_gap")
    if np.isfinite(value("upper_gap")):
        return "F - F*", value("upper_gap")
    return "F", value("value")


def progress(rows, score="upper"):
    """The :class:`Progress` of one method's ``rows`` (every repetition):
    the medians of its start, end and gain (start - end, run by run), and
    the seeds' spread, the width of the ends' [q20, q80] band over the
    finite values (module doc: it works where the gain exceeds it)."""
    columns = set(rows.columns)
    starts, ends, name = [], [], ""
    for _, run in rows.sort_values(["rep", "iteration"]).groupby("rep"):
        first, last = run.iloc[0], run.iloc[-1]
        name, start = run_score(first, columns, score, first)
        starts.append(start)
        ends.append(math.inf if run["diverged"].max() == 1 else
                    run_score(last, columns, score, first)[1])
    starts, ends = np.asarray(starts), np.asarray(ends)
    ends = np.where(np.isnan(ends), np.inf, ends)
    finite = ends[np.isfinite(ends)]
    spread = (float(np.subtract(*np.quantile(finite, QUANTILES[::-1])))
              if len(finite) else math.inf)
    return Progress(name, float(np.median(starts)), float(np.median(ends)),
                    float(np.median(starts - ends)), spread,
                    int(np.isinf(ends).sum()), len(ends))
