"""Targets: the objective values turned into what a surrogate is fitted on.

An objective's return becomes a value or a failure (:func:`as_value`).

A surrogate never sees raw objective values: they are standardized, and for
tree ensembles first log-scaled so that the values near the best one are
spread out (see :func:`transform_targets` and docs/design.md).
"""

from __future__ import annotations

import decimal
import math
import numbers
from collections.abc import Callable
from typing import Any, cast

import numpy as np

__all__ = [
    "as_value",
    "transform_targets",
    "training_values",
    "check_failure_value",
    "check_strategy",
    "Y_TRANSFORMS",
    "STRATEGIES",
    "LOG_OFFSET",
]


#: Accepted values of ``y_transform``.
Y_TRANSFORMS = ("auto", "log", "standardize")

#: Constant-liar strategies: the value a pending point is shown at.
STRATEGIES = ("cl_min", "cl_mean", "cl_max")

_LIES: dict[str, Callable[[np.ndarray], float]] = {
    "cl_min": np.min,
    "cl_mean": np.mean,
    "cl_max": np.max,
}

#: Offset of the log transform, as a fraction of the range of the values.
LOG_OFFSET = 1e-3


def transform_targets(values: np.ndarray, kind: str = "log") -> np.ndarray:
    """Map objective values to the standardized targets a surrogate is fitted on.

    Parameters
    ----------
    values : ndarray of shape (n,)
        Finite objective values (failed evaluations already imputed).
    kind : {"log", "standardize"}
        ``"standardize"``: ``(y - mean) / std``. ``"log"``: first
        ``log((y - min) / (max - min) + LOG_OFFSET)``, a monotone map that
        stretches the values near the minimum (the best value maps to
        ``log(1e-3)``, the worst to ``log(1.001)``), then standardized. Both
        keep the order of the values, so the incumbent stays the minimum.
        ``"log"`` lets a tree ensemble resolve the region near the best value;
        ``"standardize"`` suits a GP, whose smooth kernel fits the cusp
        ``"log"`` puts at the minimum badly. (The optimizer resolves
        ``"auto"`` before calling this.)

    Returns
    -------
    ndarray of shape (n,)
        Mean 0 and standard deviation 1, or all zeros when the values are
        constant.
    """
    if kind not in ("log", "standardize"):
        raise ValueError(f"kind must be 'log' or 'standardize', got {kind!r}")
    values = np.asarray(values, dtype=float)
    # Values this large overflow the span or the variance (squares beyond
    # 1e308); both transforms are invariant to scaling, so scale them down.
    # Ordinary values are left untouched, bit for bit.
    magnitude = np.abs(values).max() if values.size else 0.0
    if magnitude > 1e150:
        values = values / magnitude
    span = values.max() - values.min()
    if kind == "log" and span > 0:
        values = np.log((values - values.min()) / span + LOG_OFFSET)
    scale = values.std()
    return (values - values.mean()) / (scale if scale > 0 else 1.0)


def check_strategy(strategy: Any) -> str:
    """``strategy`` if it is one of :data:`STRATEGIES`, else a ValueError naming it.

    Parameters
    ----------
    strategy : str

    Returns
    -------
    str
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {STRATEGIES}, got {strategy!r}")
    return strategy


def check_failure_value(failure_value: Any) -> str | float:
    """``failure_value`` if it is ``"worst"`` or a finite number, else a ValueError naming it.

    Parameters
    ----------
    failure_value : "worst" or float
        The value failed evaluations are given in the surrogate's training
        data (see :func:`training_values`).

    Returns
    -------
    "worst" or float
        ``failure_value`` as given (an int stays an int).
    """
    if failure_value == "worst" and isinstance(failure_value, str):
        return failure_value
    if (
        isinstance(failure_value, numbers.Real)
        and not isinstance(failure_value, bool)
        and math.isfinite(failure_value)
    ):
        # Returned as given (an int stays an int), so that get_params round-trips.
        return cast(float, failure_value)
    raise ValueError(f"failure_value must be 'worst' or a finite number, got {failure_value!r}")


def training_values(
    y: np.ndarray,
    n_pending: int = 0,
    failure_value: str | float = "worst",
    strategy: str | None = None,
    lie_over: np.ndarray | None = None,
) -> np.ndarray:
    """The values a surrogate is fitted on: failures filled in, pending points lied about.

    Parameters
    ----------
    y : ndarray of shape (n_told,)
        Told values in objective units (lower is better); NaN marks a failed
        evaluation. At least one must be finite.
    n_pending : int, default 0
        Pending points that follow the told ones in the training data.
    failure_value : "worst" or float, default "worst"
        The value failed evaluations take: the largest finite value, or this.
    strategy : {"cl_min", "cl_mean", "cl_max"}, optional
        The constant lie of the pending points: the minimum, mean or maximum
        of the finite values. Required when ``n_pending > 0``.
    lie_over : ndarray of bool, shape (n_told,), optional
        The told values the lie is taken over (default: the finite ones).

    Returns
    -------
    ndarray of shape (n_told + n_pending,)
    """
    y = np.asarray(y, dtype=float)
    finite = np.isfinite(y)
    fill = np.max(y[finite]) if failure_value == "worst" else failure_value
    values = np.where(finite, y, fill)
    if n_pending:
        lie = _LIES[check_strategy(strategy)](y[finite if lie_over is None else lie_over])
        values = np.concatenate([values, np.full(n_pending, lie)])
    return values


def as_value(y: Any) -> tuple[float | None, str | None]:
    """(value, None) for a finite number, (None, reason) otherwise.

    Parameters
    ----------
    y : object
        What an objective returned: a real number (Python, numpy or
        :class:`decimal.Decimal`), or an object holding one number (a
        one-element array, pandas Series or tensor). ``bool`` is not a number.

    Returns
    -------
    value : float or None
        ``y`` as a float, or None when it is not a finite number.
    reason : str or None
        Why ``y`` is not a value (the error text of the failed trial), or
        None.
    """
    if y is None:
        return None, "objective returned None"
    if hasattr(y, "__array__") and not isinstance(y, (numbers.Number, np.generic)):
        # A one-element array, pandas Series or tensor holds a number.
        try:
            array = np.asarray(y)
        except Exception:  # noqa: BLE001 - whatever it is, it is not a number
            array = None
        if array is not None and array.size == 1 and array.dtype.kind in "biuf":
            y = array.reshape(-1)[0]
    if isinstance(y, decimal.Decimal):
        y = float(y) if y.is_finite() else float("nan")
    if isinstance(y, bool) or not isinstance(y, (numbers.Real, np.floating, np.integer)):
        return None, f"objective returned {type(y).__name__} {y!r}, not a number"
    try:
        y = float(y)
    except (OverflowError, ValueError):  # e.g. an int beyond the float range
        return None, f"objective returned an {type(y).__name__} value beyond the float range"
    if not math.isfinite(y):
        return None, f"objective returned {y!r}"
    return y, None
