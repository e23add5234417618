"""One overall progress line for a ``benchopt run``, so that a user can
tell where a long run is and whether it moves.

benchopt reports each run's own progress and status; after each run ends
(``TerminalOutput.show_status``, which benchopt's runner calls once per
finished, skipped or failed run, in the process that runs the command,
with ``-j`` too) this prints on stderr, in at most 100 columns::

    [overall] run 57/182 (31%), dataset 3/8, 2 min 10 s elapsed, about
    4 min 45 s left

(one line).
The total is the run list checked before any run (datasets x objectives x
solvers, benchmark_utils/checks/run_list.py) times benchopt's repetitions;
the estimate assumes the runs left cost what the finished ones did.
benchopt's ``TerminalOutput`` is not a documented extension point:
tests/test_progress.py runs a small benchmark and fails when the line is
no longer printed.
"""
import sys
import time

WIDTH = 100


def duration(seconds):
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"


def line(done, total, dataset, n_datasets, elapsed):
    """The overall line after ``done`` of ``total`` runs."""
    done = min(done, total)
    text = (f"[overall] run {done}/{total} ({done / total:.0%}), dataset "
            f"{dataset}/{n_datasets}, {duration(elapsed)} elapsed")
    if 0 < done < total:
        text += f", about {duration(elapsed / done * (total - done))} left"
    return text[:WIDTH]


def install(instances, n_datasets):
    """Print the overall line after each run of a ``benchopt run`` whose run
    list has ``instances`` (dataset, objective, solver) triples over
    ``n_datasets`` datasets. Once per process."""
    # benchopt's internal, imported here: only a run's own process has it
    from benchopt.utils import terminal_output

    original = terminal_output.TerminalOutput.show_status
    if instances <= 0 or getattr(original, "overall_progress", False):
        return
    state = {"done": 0, "start": time.monotonic(), "datasets": []}

    def show_status(self, status, reason=None, dataset=False,
                    objective=False, cached=False):
        original(self, status, reason=reason, dataset=dataset,
                 objective=objective, cached=cached)
        if dataset or objective:
            return
        if self.dataset not in state["datasets"]:
            state["datasets"].append(self.dataset)
        state["done"] += 1
        print(line(state["done"], instances * (self.n_repetitions or 1),
                   len(state["datasets"]), n_datasets,
                   time.monotonic() - state["start"]),
              file=sys.stderr, flush=True)

    show_status.overall_progress = True
    terminal_output.TerminalOutput.show_status = show_status
