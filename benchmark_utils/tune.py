"""``python -m benchmark_utils.tune CONFIG``: see README, "Tuning", and
``--help``; the code is in :mod:`benchmark_utils.tuning`."""
import sys

from benchmark_utils.tuning.cli import main

INTERRUPTED = (
    "interrupted: every run that finished is kept in benchopt's cache "
    "(its run configs and logs under outputs/tuning/); the same command "
    "resumes where it stopped")

if __name__ == "__main__":
    try:
        main()
    except ValueError as error:
        # bad input (an option out of range, a config the tuning cannot
        # handle) is reported before any run, without a traceback
        sys.exit(f"error: {error}")
    except KeyboardInterrupt:
        print(f"\n{INTERRUPTED}", file=sys.stderr)
        sys.exit(130)
