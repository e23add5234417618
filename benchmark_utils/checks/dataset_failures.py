"""A dataset whose ``get_data`` fails is skipped with its reason; the run
goes on and its finished results are written.

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

FAILURE_KEY = "dataset_failure"


def raise_on_error():
    """benchopt's own switch to stop at the first error."""
    from benchopt.utils import pdb_helpers
    return bool(pdb_helpers.DEBUG or pdb_helpers.RAISE_ON_ERROR)


def data_or_failure(dataset, get_data):
    """``get_data()``, or ``{FAILURE_KEY: reason}`` when it raises (module
    doc); the failure is kept on the dataset, so it is not recomputed for
    every solver."""
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
        dataset._data = failure
        return failure


def failure_of(data):
    """``(skip, reason)`` for the objective's ``skip``."""
    reason = data.get(FAILURE_KEY)
    return reason is not None, reason
