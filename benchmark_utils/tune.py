"""``python -m benchmark_utils.tune CONFIG``: see README, "Tuning", and
``--help``; the code is in :mod:`benchmark_utils.tuning`."""
import sys

from benchmark_utils.tuning.cli import main

if __name__ == "__main__":
    try:
        main()
    except ValueError as error:
        # bad input (an option out of range, a config the tuning cannot
        # handle) is reported before any run, without a traceback
        sys.exit(f"error: {error}")
