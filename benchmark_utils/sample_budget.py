"""A run's budget in samples: the objective's ``sample_budget`` parameter.

The papers of the simple family count "stochastic oracle queries" (Cao et
al. 2023, Sec. 5: 10^6 queries for the regression, warm start included),
and methods draw very different numbers of samples per iteration (SBCGF's
large batches against SBCGI's mini-batch of 1), so one iteration budget
cannot give every method the paper's horizon. With
``objective: [Bilevel[sample_budget=S]]`` in a config, a run ends at its
first evaluation whose samples drawn (``n_samples_upper +
n_samples_lower``, the counting view's, :mod:`benchmark_utils.counting`)
reach S: its curve covers the budget and ends at most one evaluation past
it (benchopt evaluates at iterations growing by 1.5, so at most 1.5 times
the iterations that reach S). ``max-runs`` stays a cap. A value at exactly
S is read on the curve by :func:`value_at_samples` (interpolated between
the two evaluations around S). ``None`` (the default): no sample budget.

A paper that plots time is read at a horizon in seconds: with
``Bilevel[cpu_budget=T]`` a run ends at its first evaluation whose CPU
time in the solver's iterations (``cpu_time``, the process clock the
solver loop keeps, benchmark_utils/solvers/base.py) reaches T, so every
run of every method reaches the horizon on a clock that machine load
changes far less than the wall-clock; a ``sample_budget`` beside it is
then a safety cap. Either budget reached ends the run.
"""
import itertools
import math

from benchmark_utils.checks.parameters import check_int, check_positive

SAMPLE_COLUMNS = ("objective_n_samples_upper", "objective_n_samples_lower")


def check_sample_budget(value):
    """ValueError unless ``value`` is None or an integer >= 1."""
    if value is not None:
        check_int("sample_budget", value, low=1)


def check_cpu_budget(value):
    """ValueError unless ``value`` is None or a finite number > 0 (CPU
    seconds)."""
    if value is not None:
        check_positive("cpu_budget", value)


def samples_drawn(counts):
    """Samples drawn so far, from the counting view's counters."""
    return counts["n_samples_upper"] + counts["n_samples_lower"]


def budget_reached(counts, budget, cpu_time=None, cpu_budget=None):
    """Whether a run with counters ``counts`` (and ``cpu_time`` CPU
    seconds in its iterations) has spent its sample ``budget`` or its
    ``cpu_budget``."""
    return bool((budget is not None and samples_drawn(counts) >= budget)
                or (cpu_budget is not None and cpu_time is not None
                    and cpu_time >= cpu_budget))


def value_at_samples(samples, values, target):
    """The value of a curve at ``target`` samples: linear in the log of the
    value (a gap or a loss, > 0) between the two evaluations around it,
    linear where a value is <= 0; the last value where the curve ends at
    ``target`` exactly; None where the curve stops short of it."""
    points = list(zip(samples, values, strict=True))
    for (s0, v0), (s1, v1) in itertools.pairwise(points):
        if s0 <= target <= s1:
            if s1 == s0 or not (math.isfinite(v0) and math.isfinite(v1)):
                return v1
            t = (target - s0) / (s1 - s0)
            if v0 > 0 and v1 > 0:
                return math.exp((1 - t) * math.log(v0) + t * math.log(v1))
            return (1 - t) * v0 + t * v1
    if points and points[-1][0] == target:
        return points[-1][1]
    return None

