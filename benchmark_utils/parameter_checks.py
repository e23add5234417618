"""Up-front parameter checks with messages that name the parameter and range.

Every dataset and solver validates its parameters before any run starts, so a
typo in a config fails at once with an actionable message instead of
producing a silent, meaningless curve.
"""
import math
import numbers


def check_positive(name, value):
    """Raise unless ``value`` is a finite number > 0."""
    if not _is_number(value) or not value > 0 or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return value


def check_nonnegative(name, value):
    """Raise unless ``value`` is a finite number >= 0."""
    if not _is_number(value) or not value >= 0 or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return value


def check_int(name, value, low=None, high=None):
    """Raise unless ``value`` is an integer in [low, high] (None: unbounded)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        if not (_is_number(value) and float(value).is_integer()):
            raise ValueError(f"{name} must be an integer, got {value!r}")
        value = int(value)
    if (low is not None and value < low) or (high is not None and value > high):
        raise ValueError(
            f"{name} must be an integer in "
            f"[{'-inf' if low is None else low}, "
            f"{'inf' if high is None else high}], got {value!r}"
        )
    return value


def check_in_interval(name, value, low, high, closed=(True, True)):
    """Raise unless ``low <= value <= high`` (bounds open per ``closed``)."""
    interval = ("[" if closed[0] else "(") + f"{low}, {high}" + (
        "]" if closed[1] else ")")
    if not _is_number(value):
        raise ValueError(f"{name} must be a number in {interval}, got {value!r}")
    ok_low = value >= low if closed[0] else value > low
    ok_high = value <= high if closed[1] else value < high
    if not (ok_low and ok_high):
        raise ValueError(f"{name} must be in {interval}, got {value!r}")
    return value


def check_choice(name, value, choices):
    """Raise unless ``value`` is one of ``choices``."""
    if value not in choices:
        raise ValueError(
            f"{name} must be one of {sorted(choices)}, got {value!r}"
        )
    return value


def check_batch_size(name, value, n_samples):
    """A mini-batch size must be an integer in [1, n_samples]."""
    return check_int(name, value, 1, n_samples)


def _is_number(value):
    # numbers.Real also admits numpy scalars (np.int64, np.float64)
    return isinstance(value, numbers.Real) and not isinstance(value, bool)
