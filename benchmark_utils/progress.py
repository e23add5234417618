"""One overall progress line for a ``benchopt run``, so that a user can
tell where a long run is and whether it moves.

benchopt reports each run's own progress and status; as each run starts,
this prints on stderr, in at most 100 columns::

    [overall] run 57/182, 31% done, 2 min 10 s elapsed, about 4 min 45 s
    left

(one line). The total is the run list checked before any run (datasets x
objectives x solvers, benchmark_utils/checks/run_list.py) times the
run's repetitions; the estimate assumes the runs left cost what the
finished ones did. Only benchopt's public hooks: the run list's check
calls :func:`install` in the command's process before any run, and the
base solver calls :func:`run_started` from ``skip``, which benchopt calls
once at the start of every run it computes, in the process that computes
it (with ``-j``, a worker). The runs are counted across processes in one
file that the environment names (set before any run, so local workers
inherit it). A run benchopt reads from its cache runs no code of the
benchmark and is not counted: a resumed run's count starts at its first
computed run.
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
# the counter file and the run's total and start, for the run's processes
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


def line(started, total, elapsed):
    """The overall line as run ``started`` of ``total`` starts, after
    ``elapsed`` seconds."""
    started = min(started, total)
    done = started - 1
    text = (f"[overall] run {started}/{total}, {done / total:.0%} done, "
            f"{duration(elapsed)} elapsed")
    if done > 0:
        text += f", about {duration(elapsed / done * (total - done))} left"
    return text[:WIDTH]


def install(total):
    """Count the runs of the ``benchopt run`` this process runs, whose run
    list has ``total`` runs (repetitions included): a new counter file,
    named in the environment, removed when the process ends."""
    if total <= 0:
        return
    handle, path = tempfile.mkstemp(prefix="bilevel_progress_")
    os.close(handle)
    atexit.register(Path(path).unlink, missing_ok=True)
    os.environ[ENV] = json.dumps(
        {"file": path, "total": total, "start": time.time()})


def run_started():
    """Count one more run and print the overall line (nothing outside a
    counted ``benchopt run``)."""
    state = os.environ.get(ENV)
    if state is None:
        return
    state = json.loads(state)
    try:
        with open(state["file"], "ab") as counter:
            # one byte per run, appended atomically: the position after it
            # is this run's number, also where processes start runs at once
            counter.write(b".")
            counter.flush()
            started = counter.tell()
    except OSError:                 # the command's process has ended
        return
    # over benchopt's own progress line, which ends with "\r" and is as
    # wide as the terminal
    width = shutil.get_terminal_size((WIDTH, 24)).columns - 1
    print("\r" + line(started, state["total"],
                      time.time() - state["start"]).ljust(width),
          file=sys.stderr, flush=True)
