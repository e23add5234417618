"""One overall progress line for a ``benchopt run``, so that a user can
tell where a long run is and whether it moves.

benchopt reports each run's own progress and status; as each run starts,
this prints on stderr, in at most 100 columns::

    [overall] run 57 of at most 182, 2 min 10 s elapsed, up to about
    4 min 52 s left

(one line). The total is the run list (datasets x objectives x solvers,
benchmark_utils/checks/run_list.py) times the run's repetitions. A run
benchopt reads from its cache runs no code of the benchmark and is not
counted, hence "at most": a resumed run counts from its first computed
run. The time left assumes that every run not yet started is computed
and costs what the finished ones did (with ``-j N``, the N runs started
last are taken as running); it is said once a run has finished.

Only benchopt's public hooks: the objective's ``is_installed`` calls
:func:`install` (through the run list's check) in the command's process
before benchopt starts any worker, and the base solver calls
:func:`run_started` from ``skip``, which benchopt calls once at the start
of every run it computes, in the process that computes it (with ``-j``, a
worker). The runs are counted across processes in one file that the
environment names; a process that cannot open it (a worker on another
machine, or after the command ended) prints nothing.
"""
import atexit
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

WIDTH = 100
# the counter file, the run's total, workers and start, for its processes
ENV = "BILEVEL_RUN_PROGRESS"


def duration(seconds):
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"


def line(started, total, elapsed, workers=1):
    """The overall line as run ``started`` of at most ``total`` starts,
    ``elapsed`` seconds into a run of ``workers`` parallel workers."""
    started = min(started, total)
    finished = started - workers
    text = (f"[overall] run {started} of at most {total}, "
            f"{duration(elapsed)} elapsed")
    if finished > 0:
        left = elapsed / finished * (total - finished)
        text += f", up to about {duration(left)} left"
    return text[:WIDTH]


def install(total, workers=1):
    """Count the runs of the ``benchopt run`` this process runs, whose run
    list has ``total`` runs (repetitions included) over ``workers``
    parallel workers: a new counter file, named in the environment (which
    the workers inherit), removed when the process ends."""
    if total <= 0:
        return
    handle, path = tempfile.mkstemp(prefix="bilevel_progress_")
    os.close(handle)
    atexit.register(Path(path).unlink, missing_ok=True)
    os.environ[ENV] = json.dumps({"file": path, "total": total,
                                  "workers": workers, "start": time.time()})


def run_started():
    """Count one more run and print the overall line (nothing outside a
    counted ``benchopt run``)."""
    state = os.environ.get(ENV)
    if state is None:
        return
    state = json.loads(state)
    try:
        # never created here: a missing file is another machine's or an
        # ended command's
        handle = os.open(state["file"], os.O_WRONLY | os.O_APPEND)
    except OSError:
        return
    try:
        # one byte per run, appended atomically: the position after it is
        # this run's number, also where processes start runs at once
        os.write(handle, b".")
        started = os.lseek(handle, 0, os.SEEK_CUR)
    finally:
        os.close(handle)
    # over benchopt's own progress line, which ends with "\r" and is as
    # wide as the terminal
    width = shutil.get_terminal_size((WIDTH, 24)).columns - 1
    text = line(started, state["total"], time.time() - state["start"],
                state["workers"])
    print("\r" + text.ljust(width), file=sys.stderr, flush=True)
