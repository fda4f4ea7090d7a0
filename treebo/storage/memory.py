""":class:`InMemoryStorage`: the default storage, a study kept in this process's memory."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Sequence
from typing import Any

from ..history import Trial
from ..space import Space
from .base import Storage, StorageLockedError


class InMemoryStorage(Storage):
    """A study kept in this process's memory: the default storage.

    Nothing is written anywhere, and the study ends with the process. Give
    one instance to several optimizers one after the other (closing each) to
    resume a study within a process.
    """

    def __init__(self) -> None:
        self._meta: dict[str, Any] = {}
        self._trials: list[Trial] = []
        self._open = False

    def __repr__(self) -> str:
        return f"InMemoryStorage({len(self._trials)} trials)"

    @property
    def name(self) -> str:
        return "<in memory>"

    def open_study(self, space: Space) -> dict[str, Any]:
        if self._open:
            raise StorageLockedError(
                "this InMemoryStorage is in use by another optimizer; close that one first"
            )
        self._open = True
        return copy.deepcopy(self._meta)

    def study_trials(self) -> list[Trial]:
        # Copies: the trials here must not change with another optimizer's.
        return [dataclasses.replace(t) for t in self._trials]

    def create(self, meta: dict[str, Any]) -> None:
        self._meta = copy.deepcopy(meta)

    def load_meta(self) -> dict[str, Any]:
        return copy.deepcopy(self._meta)

    def record_ask(self, trials: Sequence[Trial], state: dict[str, Any]) -> None:
        for trial in trials:
            if trial.number == len(self._trials):
                self._trials.append(trial)
        self._meta.update(copy.deepcopy(state))

    def record_tell(self, trial: Trial) -> None:
        if trial.number == len(self._trials):
            self._trials.append(trial)

    def close(self) -> None:
        self._open = False
