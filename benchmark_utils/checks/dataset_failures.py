"""A dataset whose data cannot be built is skipped with its reason; the run
goes on and its finished results are written.

A dataset lists :class:`CheckedDataset` among its bases and writes
``make_data`` (what benchopt's ``get_data`` returns): ``get_data`` checks
the whole run once, before the run's first instance is built
(:func:`~benchmark_utils.checks.run_list.before_first_instance`), then the
parameters, then builds the data through :func:`data_or_failure`.
benchopt 1.10 builds a dataset's data outside its error handler (in
``_generate_runs``, before the runs of each solver), so an exception there
(a regression instance that is not genuinely bilevel, a corrupt download, a
damaged cache) ends ``benchopt run`` with no parquet: every run already
finished on the other datasets is lost. :func:`data_or_failure` turns the
exception into data that the objective's ``skip`` reports (benchopt prints
"<dataset> skipped: <reason>" and goes on), with the traceback on stderr.
With benchopt's ``BENCHOPT_RAISE_ON_ERROR`` (or ``BENCHOPT_DEBUG``) set,
the error is raised as before.
"""
import sys
import traceback

from benchmark_utils.checks.run_list import (
    CheckedParameters,
    before_first_instance,
)

FAILURE_KEY = "dataset_failure"


def raise_on_error():
    """benchopt's own settings to stop at the first error (``debug``,
    ``raise_on_error``: its config or ``BENCHOPT_RAISE_ON_ERROR``)."""
    from benchopt.config import get_setting
    return bool(get_setting("debug") or get_setting("raise_on_error"))


class CheckedDataset(CheckedParameters):
    """Mixin of the benchmark's datasets: list it before ``BaseDataset``
    and write ``make_data`` instead of ``get_data`` (module doc)."""

    def get_data(self):
        # benchopt run's first call into this benchmark (checks/run_list.py)
        before_first_instance()
        return data_or_failure(self, self._checked_data)

    def _checked_data(self):
        self.check_parameters()
        return self.make_data()

    def make_data(self):
        """The data of this instance: ``{"problem": P, "instance": ...}``."""
        raise NotImplementedError


def data_or_failure(dataset, get_data):
    """``get_data()``, or ``{FAILURE_KEY: reason}`` when it raises (module
    doc); benchopt keeps what ``get_data`` returned, so the failure is not
    recomputed for every solver."""
    try:
        return get_data()
    except Exception as error:
        if raise_on_error():
            raise
        print(f"\nThe data of {dataset} could not be built; every run on "
              "it is skipped:", file=sys.stderr)
        traceback.print_exc()
        failure = {FAILURE_KEY: f"get_data failed: {type(error).__name__}: "
                                f"{error}"}
        return failure


def failure_of(data):
    """``(skip, reason)`` for the objective's ``skip``."""
    reason = data.get(FAILURE_KEY)
    return reason is not None, reason
