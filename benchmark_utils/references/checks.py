"""Field checks of stored references: present, of the right type, in range.

Shared by the family checks that run when references are loaded from the
cache (:func:`~benchmark_utils.references.cache.cached_references`). Each
helper returns the value as NumPy / Python floats or raises
:class:`~benchmark_utils.references.cache.InvalidReference` naming the field,
so a damaged file never surfaces as a KeyError or TypeError.
"""
import math

import numpy as np

from benchmark_utils.references.cache import InvalidReference
from benchmark_utils.references.certificate import best_of_brackets
from benchmark_utils.references.precision import relative_floor

# a stored point may lie outside its ball by rounding only (projections are
# exact to a few ulps); anything beyond this relative excess is not rounding
BALL_SLACK = 1e-12


def finite_float(references, key, minimum=None):
    """``references[key]`` as a float: a finite number, >= ``minimum``."""
    if key not in references:
        raise InvalidReference(f"{key} is missing")
    value = references[key]
    if (isinstance(value, bool) or not isinstance(value, (int, float))
            or not math.isfinite(value)):
        raise InvalidReference(f"{key} = {value!r} is not a finite number")
    if minimum is not None and value < minimum:
        raise InvalidReference(f"{key} = {value!r} is below {minimum}, "
                               "impossible for this reference")
    return float(value)


def value_and_accuracy(references, key, minimum=None):
    """(value, accuracy) of ``key`` and ``key + "_accuracy"``; an accuracy is
    never below the relative floor ``1e-14 * max(1, |value|)``."""
    value = finite_float(references, key, minimum)
    accuracy = finite_float(references, f"{key}_accuracy", 0.0)
    if accuracy < relative_floor(value):
        raise InvalidReference(
            f"{key}_accuracy = {accuracy!r} is below the relative floor "
            f"{relative_floor(value):.3g} of every reference")
    return value, accuracy


def float_array(references, key, shape):
    """``references[key]`` as a finite float64 array of this shape."""
    if key not in references:
        raise InvalidReference(f"{key} is missing")
    value = references[key]
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidReference(f"{key} is not an array of numbers") from None
    if array.shape != tuple(shape) or not np.isfinite(array).all():
        raise InvalidReference(
            f"{key} is not a finite array of shape {tuple(shape)} (got shape "
            f"{array.shape})")
    return array


def require_none(references, key):
    """A reference that does not exist for this family must be null."""
    if references.get(key, None) is not None:
        raise InvalidReference(f"{key} = {references[key]!r} must be null "
                               "for this problem")


def require_close(key, stored, recomputed, tolerance):
    """The stored value must equal its recomputation within ``tolerance``."""
    if not abs(stored - recomputed) <= tolerance:
        raise InvalidReference(
            f"{key} = {stored!r} but recomputing it from the stored point "
            f"gives {recomputed!r} (tolerance {tolerance:.3g})")


def require_in_ball(key, norm, radius):
    """A stored point must lie in its ball, up to rounding."""
    if not norm <= radius * (1.0 + BALL_SLACK):
        raise InvalidReference(f"{key} has norm {norm!r}, outside the ball "
                               f"of radius {radius!r}")


def require_certificate(key, stored, accuracy, certify, argmin, dual_point):
    """A stored minimum and its accuracy must be the dual bracket recomputed
    at the stored points (``certify(point) -> bracket``, see
    :func:`~benchmark_utils.references.certificate.best_of_brackets`): the
    computation that produced them, so they agree bit for bit on the same
    machine, and within the relative floor on another. Returns the raw
    accuracy (before the floor), which bounds derived from it use."""
    certified = {"argmin": certify(argmin), "dual": certify(dual_point)}
    _, _, value, raw = best_of_brackets(certified)
    floor = relative_floor(stored)
    require_close(key, stored, value, certified["argmin"]["rounding"] + floor)
    require_close(f"{key}_accuracy", accuracy,
                  max(raw, relative_floor(value)), floor)
    return raw
