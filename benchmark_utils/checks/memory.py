"""Sizes whose arrays cannot fit the machine's memory are refused before
any run, naming the parameter, the memory its arrays need and the memory
the machine has (a ValueError, as every parameter check).

A dataset or solver estimates from its parameters alone the bytes its
largest arrays take (float64 entries, with a factor for the copies made
while they are built) and calls :func:`check_fits`. The estimate is a
lower bound on what a run takes, so a size refused here would have failed
in ``get_data`` or in the run after minutes, or been killed by the system.
"""
import os

BYTES = 8               # a float64 entry
# arrays are built in numpy, then copied to torch, with temporaries
BUILD_COPIES = 3


def available_bytes():
    """The memory available to a new allocation: ``MemAvailable`` of
    /proc/meminfo where there is one, else the physical memory."""
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def human(n_bytes):
    """``n_bytes`` in the largest binary unit below it: ``146.0 TiB``."""
    value = float(n_bytes)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if value < 1024 or unit == "PiB":
            return f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} PiB"


def check_fits(name, value, entries, available=None):
    """Raise unless ``entries`` float64 entries (times the build copies)
    fit the available memory; the message names ``name=value``."""
    needed = BYTES * BUILD_COPIES * entries
    available = available_bytes() if available is None else available
    if needed > available:
        raise ValueError(
            f"{name}={value!r} makes arrays of about {human(needed)}, more "
            f"than the {human(available)} of memory this machine has "
            f"available: choose a smaller {name}")
    return value
