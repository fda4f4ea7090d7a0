"""Checking and converting the numbers users give: bounds and values of dimensions.

A dimension accepts any single real number (Python and numpy numbers,
``Decimal``, ``Fraction``, 0-d arrays, scalars of other array libraries) and
refuses strings, bools (except where stated) and sequences with a message
naming the dimension. These helpers are shared by the dimension classes.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

import numpy as np

#: What a numeric dimension accepts, for error messages.
NUMBER_KINDS = "an int or float (numpy numbers, Decimal, Fraction and 0-d arrays too)"

# Exact types whose lists numpy converts to float without surprises (bool is
# not among them: bool is not a number for Real and Integer dimensions).
_PLAIN_NUMBER_TYPES = frozenset({int, float, np.float64, np.float32, np.int64, np.int32})


def dimension_label(name: str | None) -> str:
    """``"dimension 'lr'"``, or ``"dimension"`` for an unnamed one, to start error messages.

    Parameters
    ----------
    name : str or None
        The dimension's name.

    Returns
    -------
    str
    """
    return f"dimension {name!r}" if name is not None else "dimension"


def short_repr(value: Any, limit: int = 60) -> str:
    """``repr(value)``, shortened to ``limit`` characters so that a 400-digit integer
    stays readable in an error message.

    Parameters
    ----------
    value : object
        What to show.
    limit : int, default 60
        Characters at most, ``"..."`` included.

    Returns
    -------
    str
    """
    text = repr(value)
    return text if len(text) <= limit else f"{text[: limit - 3]}..."


def unwrap_scalar(value: Any) -> Any:
    """The scalar held by a 0-d array (nested ones too), so that it is judged like that
    scalar; any other value unchanged.

    Parameters
    ----------
    value : object
        A value as the user gave it.

    Returns
    -------
    object
    """
    while isinstance(value, np.ndarray) and value.ndim == 0:
        value = value.item()
    return value


def why_not_a_number(value: Any, allow_bool: bool = False) -> str | None:
    """Why ``value`` (already unwrapped) is not one real number, or None if it is.

    Accepted: ``numbers.Real`` (which covers numpy integers and floats),
    ``Decimal``, and anything ``float()`` converts that is neither a string
    nor a sequence (scalars of other array libraries).

    Parameters
    ----------
    value : object
    allow_bool : bool, default False
        Accept ``True`` and ``False`` (and numpy bools).

    Returns
    -------
    str or None
        The reason, to follow the value in a message (``"is a string, not a
        number"``), or None for a number.
    """
    if isinstance(value, (bool, np.bool_)):
        return None if allow_bool else "is a bool, not a number"
    if isinstance(value, (str, bytes)):  # np.str_ and np.bytes_ too
        return "is a string, not a number"
    if isinstance(value, (numbers.Real, Decimal)):
        return None
    if isinstance(value, np.ndarray):
        return f"is an array of shape {value.shape}, not a single number"
    if isinstance(value, Sequence) or np.ndim(value) > 0:
        return f"is a {type(value).__name__}, not a single number"
    if isinstance(value, numbers.Number):
        return "is not a real number"
    try:
        float(value)
    except (TypeError, ValueError, OverflowError):
        return "is not a number"
    return None


def to_float(value: Any) -> float:
    """``float(value)`` for a number :func:`why_not_a_number` accepts, saturating at
    +-inf (an int or ``Fraction`` beyond the float64 range) instead of raising, and
    NaN for ``Decimal('sNaN')``.

    Parameters
    ----------
    value : number
        A number :func:`why_not_a_number` accepts.

    Returns
    -------
    float
    """
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf
    except ValueError:
        return math.nan


def first_offending(values: Sequence[Any], bad: np.ndarray) -> Any:
    """The first value where ``bad`` is true, as the user gave it (for error messages).

    Parameters
    ----------
    values : sequence or ndarray
        One value per point.
    bad : ndarray of bool, shape (n,)
        At least one true entry.
    """
    flat = values.reshape(-1) if isinstance(values, np.ndarray) else list(values)
    value = flat[int(np.flatnonzero(bad)[0])]
    return value.item() if isinstance(value, np.generic) else value


def number_column(
    values: Sequence[Any], name: str | None, takes: str, allow_bool: bool = False
) -> np.ndarray:
    """The values of one dimension as a float array, refusing anything but single numbers.

    Parameters
    ----------
    values : sequence
        One value per point.
    name : str or None
        Name of the dimension, for error messages.
    takes : str
        What the dimension takes, for error messages.
    allow_bool : bool, default False
        Accept ``True``/``False`` (as 1 and 0).

    Returns
    -------
    ndarray of shape (n,)
        Out-of-range values (including ints too large for a float, as
        +-inf) are left to the caller's range check.

    Raises
    ------
    ValueError
        Naming the dimension and the first value that is not a number.
    """
    if isinstance(values, np.ndarray):
        if values.dtype.kind in ("iufb" if allow_bool else "iuf"):
            return values.astype(float).reshape(-1)
        values = list(values.reshape(-1))
    values = values if isinstance(values, list) else list(values)
    plain = _PLAIN_NUMBER_TYPES | {bool} if allow_bool else _PLAIN_NUMBER_TYPES
    if plain.issuperset(map(type, values)):
        try:
            return np.array(values, dtype=float).reshape(-1)
        except OverflowError:  # an int beyond float64; saturated one by one below
            pass
    column = np.empty(len(values))
    for i, value in enumerate(values):
        scalar = unwrap_scalar(value)
        why = why_not_a_number(scalar, allow_bool)
        if why is not None:
            raise ValueError(f"{dimension_label(name)}: value {short_repr(value)} {why}; {takes}")
        column[i] = to_float(scalar)
    return column
