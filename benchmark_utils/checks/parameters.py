"""Up-front parameter checks with messages that name the parameter and range.

Every dataset and solver validates its parameters before any run starts, so a
typo in a config fails at once with an actionable message instead of
producing a silent, meaningless curve.

Every check raises the same ``ValueError`` ("<name> must be ..., got
<value>") for any value it refuses, whatever its type: a string from a
config typo (``corruption=abc``), ``None``, NaN, a boolean where a number is
expected, or a list; a check never lets a ``TypeError`` from a comparison
escape.
"""
import math
import numbers


def check_positive(name, value):
    """Raise unless ``value`` is a finite number > 0."""
    if not (_is_finite_number(value) and value > 0):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return value


def check_nonnegative(name, value):
    """Raise unless ``value`` is a finite number >= 0."""
    if not (_is_finite_number(value) and value >= 0):
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return value


def check_int(name, value, low=None, high=None):
    """Raise unless ``value`` is an integer in [low, high] (None: unbounded).

    An integral float (``3.0``, as a config may write it) is accepted and
    returned as an ``int``.
    """
    interval = (f"[{'-inf' if low is None else low}, "
                f"{'inf' if high is None else high}]")
    integral = isinstance(value, numbers.Integral) or (
        _is_finite_number(value) and float(value).is_integer())
    if isinstance(value, bool) or not integral:
        raise ValueError(
            f"{name} must be an integer in {interval}, got {value!r}")
    if not isinstance(value, numbers.Integral):
        value = int(value)
    if ((low is not None and value < low)
            or (high is not None and value > high)):
        raise ValueError(
            f"{name} must be an integer in {interval}, got {value!r}")
    return value


def check_in_interval(name, value, low, high, closed=(True, True)):
    """Raise unless ``low <= value <= high`` (bounds open per ``closed``)."""
    interval = ("[" if closed[0] else "(") + f"{low}, {high}" + (
        "]" if closed[1] else ")")
    if not _is_number(value) or math.isnan(value):
        raise ValueError(
            f"{name} must be a number in {interval}, got {value!r}")
    ok_low = value >= low if closed[0] else value > low
    ok_high = value <= high if closed[1] else value < high
    if not (ok_low and ok_high):
        raise ValueError(f"{name} must be in {interval}, got {value!r}")
    return value


def check_choice(name, value, choices):
    """Raise unless ``value`` is one of ``choices``.

    A boolean matches only a boolean (``True == 1`` in Python, but
    ``cut=1`` is not ``cut=True``), and an unhashable value (a list) is
    refused like any other, even when ``choices`` is a dict.
    """
    if not any(same_value(value, choice) for choice in choices):
        raise ValueError(
            f"{name} must be one of {_sorted_choices(choices)}, got {value!r}")
    return value


def check_at_most(name, value, high, reason):
    """Raise where ``value`` is a number above ``high`` (``reason``: why
    the bound); any other value is left to the parameter's own check."""
    if _is_number(value) and not math.isnan(value) and value > high:
        raise ValueError(f"{name} must be at most {high} ({reason}), got "
                         f"{value!r}")
    return value


def refuse_unread(owner, names, reason):
    """Raise where a parameter of ``names`` has a value other than its
    default although the setting ``reason`` says makes it unread: a
    parameter a setting makes irrelevant is refused, never ignored (its
    default value is the one it holds when not given)."""
    defaults = type(owner).parameters
    given = [name for name in names
             if not same_value(getattr(owner, name), defaults[name][0])]
    if given:
        values = ", ".join(f"{name}={getattr(owner, name)!r}"
                           for name in given)
        raise ValueError(f"{' and '.join(given)} {_verb(given)} not read "
                         f"{reason}: drop {_pronoun(given)}, got {values}")


def _verb(names):
    return "is" if len(names) == 1 else "are"


def _pronoun(names):
    return "it" if len(names) == 1 else "them"


def check_batch_size(name, value, n_samples):
    """A mini-batch size must be an integer in [1, n_samples]."""
    return check_int(name, value, 1, n_samples)


def _is_number(value):
    # numbers.Real also admits numpy scalars (np.int64, np.float64)
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _is_finite_number(value):
    return _is_number(value) and math.isfinite(value)


def same_value(value, choice):
    """Whether a parameter's ``value`` is ``choice`` (a choice or its
    default): a boolean only a boolean (``True == 1`` in Python), 1 and
    1.0 the same number, an unhashable or array value never."""
    if isinstance(value, bool) != isinstance(choice, bool):
        return False
    try:
        return bool(value == choice)
    except (TypeError, ValueError):     # e.g. an array's ambiguous truth value
        return False


def _sorted_choices(choices):
    # the choices in a stable order for the message; mixed types (None and
    # strings) cannot be compared, so they are ordered by their repr
    try:
        return sorted(choices)
    except TypeError:
        return sorted(choices, key=repr)
