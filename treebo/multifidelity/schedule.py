"""Which configuration runs next at which budget: successive halving inside Hyperband brackets.

:class:`RungSchedule` holds every evaluation of a multi-fidelity run by
bracket and rung and decides the next job. Promotions come first, from the
highest rung down, then a new configuration at the bottom rung of the
bracket that is filling; when a bracket has started all its configurations
the next one opens (Hyperband's brackets repeated without end).

* **Synchronous** promotions: a rung promotes only once all of its
  evaluations are told, and then its best ``sizes[i + 1]`` configurations,
  as successive halving does. While a rung waits for its last values, a free
  worker starts configurations of the next bracket (several brackets run at
  once, as BOHB runs them in parallel: Falkner et al., ICML 2018), so with
  one worker this is successive halving as published and with several no
  worker waits either.
* **Asynchronous** promotions (ASHA: Li et al., "A System for Massively
  Parallel Hyperparameter Tuning", MLSys 2020): a rung promotes its best
  unpromoted configuration as soon as it is among the best ``1 / eta`` of the
  values told there; a bracket still promotes at most ``sizes[i + 1]``
  configurations per rung.

The schedule is rebuilt from the trials alone (:meth:`RungSchedule.record`
in trial order), which is what lets a stored run resume: the ``k``-th new
configuration always belongs to the same bracket, and a configuration seen
again is a promotion to the next rung of its bracket.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from .brackets import Bracket, bracket_sequence

__all__ = ["Job", "RungSchedule"]


@dataclass
class Job:
    """One evaluation the schedule asks for.

    Parameters
    ----------
    key : str or None
        The configuration's key; None for a new configuration (not chosen yet).
    bracket : int
        The bracket's position in the sequence of brackets, from 0.
    rung : int
        The rung inside the bracket, from 0.
    budget : float or int
        The budget of the evaluation.
    """

    key: str | None
    bracket: int
    rung: int
    budget: Any


@dataclass
class _Open:
    """A bracket in progress: per rung, the key -> value of its evaluations."""

    plan: Bracket
    values: list = field(default_factory=list)  # per rung: dict key -> float | None (pending)
    failed: list = field(default_factory=list)  # per rung: set of keys that failed
    promoted: list = field(default_factory=list)  # per rung: set of keys promoted from it

    def __post_init__(self) -> None:
        n = len(self.plan.sizes)
        self.values = [{} for _ in range(n)]
        self.failed = [set() for _ in range(n)]
        self.promoted = [set() for _ in range(n)]

    def told(self, i: int) -> list[tuple[float, str]]:
        """(value, key) of the complete evaluations at rung ``i``, best first."""
        return sorted(
            (v, k) for k, v in self.values[i].items() if v is not None and k not in self.failed[i]
        )

    def n_told(self, i: int) -> int:
        return sum(v is not None or k in self.failed[i] for k, v in self.values[i].items())

    def rung_done(self, i: int) -> bool:
        """Every evaluation rung ``i`` will get is told."""
        if i == 0:
            expected = self.plan.sizes[0]
        else:
            expected = min(self.plan.sizes[i], len(self.told(i - 1)))
            if not self.rung_done(i - 1):
                return False
        return len(self.values[i]) >= expected and self.n_told(i) == len(self.values[i])


class RungSchedule:
    """The evaluations of a run by bracket and rung, and the next job.

    Parameters
    ----------
    brackets : list of Bracket
        One Hyperband iteration (:func:`~treebo.multifidelity.hyperband_brackets`),
        repeated.
    eta : float
        The promotion fraction is ``1 / eta`` (asynchronous promotions).
    asynchronous : bool
        ASHA promotions instead of waiting for full rungs.
    """

    def __init__(self, brackets: list[Bracket], eta: float, asynchronous: bool):
        self.brackets = brackets
        self.eta = eta
        self.asynchronous = asynchronous
        self.open: list[_Open] = []
        #: key -> (bracket position, rung) where the configuration is now.
        self.where: dict[str, tuple[int, int]] = {}
        self._filling = -1  # the bracket new configurations go to

    # -- recording ---------------------------------------------------------------------
    def record(self, key: str, budget: Any) -> Job:
        """Add an evaluation of ``key`` at ``budget`` (pending); returns its job.

        A key not seen before is a new configuration of the filling bracket
        (which must start at ``budget``); a known key is promoted to the next
        rung of its bracket.

        Parameters
        ----------
        key : str
            The configuration's key.
        budget : float or int
            The budget it is evaluated at.

        Returns
        -------
        Job

        Raises
        ------
        ValueError
            If ``budget`` is not the budget the schedule gives this evaluation
            (a study recorded with other budgets or another ``eta``).
        """
        if key in self.where:
            b, i = self.where[key]
            bracket = self.open[b]
            bracket.promoted[i].add(key)
            job = Job(
                key,
                b,
                i + 1,
                bracket.plan.budgets[i + 1] if i + 1 < len(bracket.plan.budgets) else None,
            )
        else:
            b = self._bracket_for_new()
            job = Job(key, b, 0, self.open[b].plan.budgets[0])
        if job.budget is None or not math.isclose(float(job.budget), float(budget), rel_tol=1e-9):
            raise ValueError(
                f"an evaluation at budget {budget!r} does not fit the schedule "
                f"(expected {job.budget!r}): the study was recorded with other "
                "min_budget, max_budget or eta"
            )
        self.open[job.bracket].values[job.rung][key] = None
        self.where[key] = (job.bracket, job.rung)
        return job

    def tell(self, job: Job, value: float | None) -> None:
        """Record the value of ``job``'s evaluation.

        Parameters
        ----------
        job : Job
            A job :meth:`record` returned.
        value : float or None
            Its value; None for a failed evaluation (never promoted).
        """
        bracket = self.open[job.bracket]
        if value is None:
            bracket.failed[job.rung].add(job.key)
            bracket.values[job.rung][job.key] = math.inf
        else:
            bracket.values[job.rung][job.key] = float(value)

    # -- deciding ----------------------------------------------------------------------
    def next_job(self) -> Job:
        """The next evaluation: a promotion if one is due, else a new configuration.

        The new configuration goes to the bracket that is filling, or opens the
        next bracket when that one has started all of its configurations.
        """
        for b in range(len(self.open)):
            bracket = self.open[b]
            for i in range(len(bracket.plan.sizes) - 2, -1, -1):
                key = self._promotable(bracket, i)
                if key is not None:
                    return Job(key, b, i + 1, bracket.plan.budgets[i + 1])
        if self._filling >= 0:
            bracket = self.open[self._filling]
            if len(bracket.values[0]) < bracket.plan.sizes[0]:
                return Job(None, self._filling, 0, bracket.plan.budgets[0])
        nxt = bracket_sequence(self.brackets, self._filling + 1)
        return Job(None, self._filling + 1, 0, nxt.budgets[0])

    def _promotable(self, bracket: _Open, i: int) -> str | None:
        quota = bracket.plan.sizes[i + 1]
        if len(bracket.promoted[i]) >= quota:
            return None
        told = bracket.told(i)
        if self.asynchronous:
            best = told[: int(bracket.n_told(i) // self.eta)]
        elif bracket.rung_done(i):
            best = told[:quota]
        else:
            return None
        return next((k for _, k in best if k not in bracket.promoted[i]), None)

    def _bracket_for_new(self) -> int:
        if self._filling >= 0:
            bracket = self.open[self._filling]
            if len(bracket.values[0]) < bracket.plan.sizes[0]:
                return self._filling
        self._filling += 1
        self.open.append(_Open(bracket_sequence(self.brackets, self._filling)))
        return self._filling
