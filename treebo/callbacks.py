"""Callbacks that stop :func:`~treebo.minimize` early.

A callback is any callable taking the :class:`~treebo.OptimizeResult` so far
and returning ``True`` to stop. The classes here also have an ``on_start()``
that ``minimize`` calls before the first evaluation, and a ``message`` that
says why they stopped the run (it ends up in ``result.message``).

>>> from treebo import minimize, Real
>>> from treebo.callbacks import ThresholdStopper
>>> res = minimize(lambda x: (x[0] - 0.3) ** 2, [Real(-1, 1)], n_calls=40,
...                callback=ThresholdStopper(1e-3), random_state=0)
>>> res.fun <= 1e-3 and len(res.x_iters) < 40
True
"""

from __future__ import annotations

import math
import numbers
import time
from typing import TYPE_CHECKING, Any

import numpy as np

from ._checks import check_int

if TYPE_CHECKING:
    from .result import OptimizeResult

__all__ = ["EarlyStopper", "DeadlineStopper", "ThresholdStopper"]


def _check_number(
    value: Any, name: str, minimum: float | None = None, strict: bool = False
) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if minimum is not None and (value <= minimum if strict else value < minimum):
        relation = ">" if strict else ">="
        raise ValueError(f"{name} must be {relation} {minimum}, got {value!r}")
    return float(value)


class EarlyStopper:
    """Stop when the best value has not improved by more than ``delta`` for
    ``patience`` evaluations in a row.

    The count starts at the first complete evaluation; failed evaluations
    count as evaluations without improvement. An evaluation *improves* when
    its value is below the best value before it minus ``delta`` (above it
    plus ``delta`` when the run maximizes), so with ``delta=0`` any strictly
    better value resets the count.

    Parameters
    ----------
    patience : int, default 10
        Evaluations without improvement that stop the run.
    delta : float, default 0.0
        Improvement needed, in the objective's units, ``>= 0``.
    """

    def __init__(self, patience: int = 10, delta: float = 0.0):
        self.patience = check_int(patience, "patience")
        self.delta = _check_number(delta, "delta", 0.0)
        self.message: str | None = None

    def on_start(self) -> None:
        """Clear ``message`` (the count is recomputed from the history at each call)."""
        self.message = None

    def __call__(self, result: OptimizeResult) -> bool:
        sign = _sign(result)
        values = sign * np.asarray(result.func_vals, dtype=float)
        # Computed from the whole history rather than counted call by call,
        # so it also holds for resumed studies and parallel runs.
        last_improvement, best = None, math.inf
        for i, value in enumerate(values):
            if np.isnan(value):
                continue
            if last_improvement is None or value < best - self.delta:
                last_improvement = i
            best = min(best, value)
        if last_improvement is None:
            return False
        stale = len(values) - 1 - last_improvement
        if stale >= self.patience:
            self.message = (
                f"the best value {sign * best:.6g} did not improve by more than "
                f"{self.delta:g} in the last {stale} evaluations"
            )
            return True
        return False


class DeadlineStopper:
    """Stop before a wall-clock budget runs out.

    The clock starts when ``minimize`` starts (``on_start``), or at
    construction when used by hand. After each evaluation the run stops if
    the time left is less than the average time per evaluation so far, so
    the next evaluation would probably overrun; it always stops once the
    budget is spent.

    Parameters
    ----------
    total_time : float
        Seconds, ``> 0``.
    """

    def __init__(self, total_time: float):
        self.total_time = _check_number(total_time, "total_time", 0.0, strict=True)
        self.message: str | None = None
        self._clock = time.monotonic
        self.on_start()

    def on_start(self) -> None:
        """Restart the clock now and clear ``message``; evaluations made before are not timed."""
        self._start = self._clock()
        self._n_start: int | None = None
        self.message = None

    def __call__(self, result: OptimizeResult) -> bool:
        n = len(result.func_vals)
        if self._n_start is None:
            # Evaluations already in a resumed study are not timed here.
            self._n_start = n - 1
        elapsed = self._clock() - self._start
        per_call = elapsed / max(n - self._n_start, 1)
        if elapsed + per_call > self.total_time:
            self.message = (
                f"deadline of {self.total_time:g} s: {elapsed:.1f} s used, about "
                f"{per_call:.2g} s per evaluation"
            )
            return True
        return False


class ThresholdStopper:
    """Stop as soon as a value at or below ``threshold`` (at or above it
    when the run maximizes) has been found.

    Parameters
    ----------
    threshold : float
        Target value, in the objective's units.
    """

    def __init__(self, threshold: float):
        self.threshold = _check_number(threshold, "threshold")
        self.message: str | None = None

    def on_start(self) -> None:
        """Clear ``message``."""
        self.message = None

    def __call__(self, result: OptimizeResult) -> bool:
        sign = _sign(result)
        if np.isfinite(result.fun) and sign * result.fun <= sign * self.threshold:
            relation = "<=" if sign > 0 else ">="
            self.message = f"reached {result.fun:.6g} {relation} threshold {self.threshold:g}"
            return True
        return False


def _sign(result: OptimizeResult) -> float:
    """-1 for the result of a maximizing run, else 1: better values are lower once multiplied."""
    return -1.0 if getattr(result, "direction", "minimize") == "maximize" else 1.0
