"""Argument checks shared by the package; each error names the argument and what is allowed."""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from typing import Any, Literal, TypeVar, overload

_T = TypeVar("_T")


@overload
def check_int(
    value: Any, name: str, low: int = ..., high: float = ..., *, allow_none: Literal[False] = ...
) -> int: ...


@overload
def check_int(
    value: Any, name: str, low: int = ..., high: float = ..., *, allow_none: bool
) -> int | None: ...


def check_int(
    value: Any, name: str, low: int = 1, high: float = math.inf, *, allow_none: bool = False
) -> int | None:
    """``int(value)`` for an integer in ``[low, high]`` (bools refused), else a ValueError.

    With ``allow_none=True``, None passes through unchanged.
    """
    if allow_none and value is None:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Integral)
        or not low <= int(value) <= high
    ):
        allowed = f">= {low}" if high == math.inf else f"in [{low}, {high}]"
        extra = " or None" if allow_none else ""
        raise ValueError(f"{name} must be an integer {allowed}{extra}, got {value!r}")
    return int(value)


def check_n_jobs(value: Any, name: str = "n_jobs") -> int | None:
    """joblib's convention: None, or a non-zero integer (-1 = all cores, -2 = all but one)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value == 0:
        raise ValueError(
            f"{name} must be None or a non-zero integer (-1 for all cores), got {value!r}"
        )
    return int(value)


def check_real(value: Any, name: str, low: float = 0.0, *, strict: bool = False) -> float:
    """``float(value)`` for a finite real ``>= low`` (``> low`` if ``strict``), else ValueError."""
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not math.isfinite(value)
        or value < low
        or (strict and value == low)
    ):
        bound = f"> {low:g}" if strict else f">= {low:g}"
        raise ValueError(f"{name} must be a finite number {bound}, got {value!r}")
    return float(value)


def check_choice(value: Any, name: str, allowed: tuple[str, ...]) -> str:
    """``value`` if it is one of ``allowed``, else a ValueError listing them."""
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"{name} must be one of {allowed}, got {value!r}")
    return value


def check_auto_or(
    value: Any, name: str, check: Callable[[Any, str], _T], expected: str
) -> str | _T:
    """``"auto"``, or ``check(value, name)``; the error names both choices."""
    if isinstance(value, str) and value == "auto":
        return value
    try:
        return check(value, name)
    except ValueError:
        raise ValueError(f"{name} must be 'auto' or {expected}, got {value!r}") from None
