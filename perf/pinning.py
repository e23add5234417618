"""Pinning a timing process to cores and checking it (Linux).

Pin with :func:`pin_to_cores` / :func:`pin_to_core` before importing JAX or
torch: their thread pools start at import and inherit the affinity (an
XLA flag alone does not pin jax 0.10.2). Check it on a timed block with
:func:`thread_clocks` before and after (:func:`busy_threads`: the threads
that were busy, the cores they last ran on) and process CPU / wall time
(cores kept busy). Standard library only, so a worker can import it
before any numerical library.
"""
import os
from pathlib import Path

BUSY_FRACTION = 0.1     # a thread is busy above 10 % of the block's wall time
TASKS = Path("/proc/self/task")


def pin_to_cores(count):
    """Restrict this process (and the threads it starts later) to ``count``
    of its allowed cores; returns them."""
    allowed = sorted(os.sched_getaffinity(0))
    if len(allowed) < count:
        raise ValueError(f"--threads {count} needs {count} cores, this "
                         f"process may use {len(allowed)}")
    os.sched_setaffinity(0, allowed[:count])
    return sorted(os.sched_getaffinity(0))


def pin_to_core(core):
    """Restrict this process (and its later threads) to the one ``core``."""
    os.sched_setaffinity(0, {core})
    return sorted(os.sched_getaffinity(0))


def _stat_fields(task):
    """The fields after the command name of a thread's /proc stat line."""
    return (task / "stat").read_text().rsplit(")", 1)[1].split()


def thread_clocks():
    """{thread id: (CPU seconds, core it last ran on)} of this process's
    threads (/proc/self/task/*/stat: utime + stime, processor)."""
    ticks = os.sysconf("SC_CLK_TCK")
    out = {}
    for task in TASKS.iterdir():
        try:
            fields = _stat_fields(task)
        except OSError:
            continue            # the thread ended meanwhile
        # fields[0] is stat's 3rd field: utime, stime are 14, 15, processor 39
        out[task.name] = ((int(fields[11]) + int(fields[12])) / ticks,
                          int(fields[36]))
    return out


def busy_threads(before, after, wall):
    """(busy threads, sorted cores they last ran on) between two
    :func:`thread_clocks` snapshots ``wall`` seconds apart: threads whose CPU
    time grew by more than BUSY_FRACTION of ``wall``."""
    busy = [core for tid, (cpu, core) in after.items()
            if cpu - before.get(tid, (0.0, core))[0] > BUSY_FRACTION * wall]
    return len(busy), sorted(set(busy))


def threads_outside(cores):
    """The threads of this process whose allowed cores are not ``cores``
    (/proc/self/task/*/status, Cpus_allowed_list): none when pinned."""
    wanted = set(cores)
    out = []
    for task in TASKS.iterdir():
        try:
            status = (task / "status").read_text()
        except OSError:
            continue
        line = next(x for x in status.splitlines()
                    if x.startswith("Cpus_allowed_list:"))
        if _parse_list(line.split(":", 1)[1]) != wanted:
            out.append(task.name)
    return out


def _parse_list(text):
    """{0, 2, 3} from a kernel cpu list such as "0,2-3"."""
    cores = set()
    for part in text.strip().split(","):
        low, _, high = part.partition("-")
        cores.update(range(int(low), int(high or low) + 1))
    return cores
