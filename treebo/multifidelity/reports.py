"""The objective of a multi-fidelity run as the evaluation loop calls it, and the
values an ``intermediate`` objective reports on its way to its budget."""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..failures import GuardedObjective
from ..history import Trial
from ..targets import as_value
from .checkpoints import Checkpoint

__all__ = ["Outcome", "ReportingObjective", "Reports", "WithBudget", "is_report"]


class WithBudget:
    """``func(x, budget, ...)`` as the one-argument callable the failure guard wraps.

    A :class:`~treebo.multifidelity.checkpoints.Checkpoint` among the
    arguments has its directory made first, where the evaluation runs (so a
    failure to make it fails the evaluation, like any exception of ``func``).
    """

    def __init__(self, func: Callable[..., Any]):
        self.func = func

    def __call__(self, job: tuple[Any, ...]) -> Any:
        for part in job:
            if isinstance(part, Checkpoint):
                part.prepare()
        return self.func(*job)


class Reports:
    """The ``report`` function an ``intermediate`` objective is given, and what it was told.

    Parameters
    ----------
    low, high : int or float
        The budgets a report may name: ``min_budget`` and the call's own budget.
    integer : bool
        Whether budgets are integers.
    """

    def __init__(self, low: Any, high: Any, integer: bool):
        self.low, self.high, self.integer = low, high, integer
        #: (budget, value or None, error or None) per call, in order.
        self.told: list[tuple[Any, float | None, str | None]] = []

    def __call__(self, budget: Any, value: Any) -> None:
        if (
            isinstance(budget, bool)
            or not isinstance(budget, numbers.Real)
            or not math.isfinite(budget)
            or not self.low <= budget <= self.high
        ):
            raise ValueError(
                f"report(budget, value): budget must be a number from min_budget to the "
                f"budget of this evaluation, [{self.low!r}, {self.high!r}], got {budget!r}"
            )
        at = float(budget)
        if self.integer and not at.is_integer():
            raise ValueError(
                f"report(budget, value): budget must be an integer (min_budget and "
                f"max_budget are), got {budget!r}"
            )
        number, reason = as_value(value)
        error = None if reason is None else f"reported {value!r} at budget {budget!r}"
        self.told.append((int(at) if self.integer else at, number, error))


@dataclass
class Outcome:
    """What an ``intermediate`` evaluation sends back: its value (or Failure) and its reports."""

    value: Any
    reports: list


class ReportingObjective:
    """The guarded ``func(x, budget, report[, checkpoint])`` as a one-argument callable.

    The reports live outside the guard, so an evaluation that fails after
    reporting still sends back what it reported.
    """

    def __init__(self, guarded: GuardedObjective, min_budget: Any, integer: bool):
        self.guarded = guarded
        self.min_budget = min_budget
        self.integer = integer

    def __call__(self, job: tuple[Any, ...]) -> Outcome:
        config, budget, *rest = job
        reports = Reports(self.min_budget, budget, self.integer)
        value = self.guarded((config, budget, reports, *rest))
        return Outcome(value, reports.told)


def is_report(trial: Trial) -> bool:
    """Whether a trial is a reported value: told without being asked, where evaluations are."""
    return trial.asked_at is None
