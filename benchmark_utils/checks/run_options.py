"""benchopt run's own options checked before any run.

benchopt 1.10 accepts some option values that make no run or lose the
finished ones: ``-n 0`` or ``--timeout -5`` (or ``0.5``, rounded down to
0 s) end every run at once and save an empty result (exit 0), ``-n -1
--no-timeout`` never ends, ``-j 0`` ends in joblib's traceback, a
``max-runs: abc`` in a config file in a TypeError once the runs started,
and an ``--output`` that cannot be written in a traceback after every
run finished, which are then lost. :func:`option_errors` names each such
value and its valid range; ``run_list.refuse_unknown_names`` (the
objective's ``is_installed``, the first hook of a ``benchopt run``) ends
the command with them, before any run. The values are read as benchopt's
run reads them: the command line, else the ``--config`` file's key
(``max-runs`` or ``max_runs``). A ``--timeout`` that is no duration, and
a ``--config`` file benchopt cannot read, fail in benchopt before this
hook.
"""
import math
import numbers
import os
import tempfile
from pathlib import Path

from click.core import ParameterSource

# benchopt run's options checked here, by their click names
OPTIONS = ("max_runs", "n_repetitions", "timeout", "n_jobs", "output")


def effective_options(context, config):
    """``{name: value}`` of :data:`OPTIONS` for the run of click
    ``context``: the command line's where given, else ``config``'s (the
    ``--config`` file's mapping, keys with ``-`` or ``_``), else the
    default, as benchopt's run merges them."""
    values = {}
    for name in OPTIONS:
        source = context.get_parameter_source(name)
        given = source not in (None, ParameterSource.DEFAULT)
        value = context.params.get(name)
        if not given:
            for key in (name.replace("_", "-"), name):
                if key in config:
                    value = config[key]
        values[name] = value
    return values


def _integer(value):
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def timeout_seconds(value):
    """``--timeout`` in seconds as benchopt reads it: a number, rounded
    down to whole seconds, or a pandas duration such as ``10min``; None
    where it is neither."""
    try:
        return float(int(float(value)))
    except (TypeError, ValueError, OverflowError):
        pass
    try:
        import pandas as pd
        return pd.Timedelta(value).total_seconds()
    except (TypeError, ValueError):
        return None


def output_error(output, benchmark_dir):
    """Why benchopt could not write its result to ``--output`` (None: it
    can): a path with a separator is used as given, a bare name goes to
    the benchmark's ``outputs/`` folder (benchopt's rule)."""
    if output in (None, "None"):
        return None
    path = Path(output)
    if os.sep not in str(output) and not (os.altsep and os.altsep in output):
        path = Path(benchmark_dir) / "outputs" / output
    # benchopt adds .parquet where the name has no .parquet or .csv and
    # numbers a name that exists: only the folder must be writable
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent):
            pass
    except OSError as error:
        return f"no file can be created in {path.parent} ({error.strerror})"
    return None


# the most evaluations per run and repetitions a run list takes: more would
# outlast any run's time cap (and past 2^63 benchopt's counters overflow)
MAX_COUNT = 10**6


def option_errors(options, benchmark_dir="."):
    """One line per bad value of ``options`` (:func:`effective_options`),
    naming the option and its valid range; empty when all are valid."""
    errors = []
    max_runs = options.get("max_runs")
    if not (_integer(max_runs) and 1 <= max_runs <= MAX_COUNT):
        errors.append(f"--max-runs (-n) must be an integer in [1, "
                      f"{MAX_COUNT}], got {max_runs!r}")
    repetitions = options.get("n_repetitions")
    if repetitions is not None and not (_integer(repetitions)
                                        and 1 <= repetitions <= MAX_COUNT):
        errors.append(f"--n-repetitions (-r) must be an integer in [1, "
                      f"{MAX_COUNT}], got {repetitions!r}")
    timeout = options.get("timeout")
    if timeout is not None:
        seconds = timeout_seconds(timeout)
        if seconds is None or not math.isfinite(seconds) or seconds <= 0:
            errors.append(f"--timeout must be a duration of at least 1 s "
                          f"(whole seconds, or such as 10min), got "
                          f"{timeout!r}")
    n_jobs = options.get("n_jobs")
    if n_jobs is not None and not (_integer(n_jobs) and n_jobs != 0):
        errors.append(f"--n-jobs (-j) must be a nonzero integer (1: no "
                      f"parallel runs, -1: every core), got {n_jobs!r}")
    reason = output_error(options.get("output"), benchmark_dir)
    if reason is not None:
        errors.append(f"--output {options.get('output')}: {reason}")
    return errors
