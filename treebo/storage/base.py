"""The :class:`Storage` protocol an optimizer records its study through, and its errors."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..history import Trial
from ..space import Space


class StorageMismatchError(ValueError):
    """The storage holds a study with another space, surrogate or settings."""


class StorageLockedError(RuntimeError):
    """Another live optimizer has the storage open."""


class StorageAccessError(ValueError):
    """The storage file cannot be used: the message names the file and the cause.

    The causes told apart: the file or its directory is read-only for this
    user or on a read-only file system, the disk is full (or the process's
    file size limit is reached), another input/output error, a file that is
    not an SQLite database, and the SQLite database of another application
    (which is left unchanged).
    """


class Storage:
    """The protocol an optimizer records its study through.

    A storage holds one study: its description (``meta``: the space, the
    settings, the seed and the random-stream states, JSON-safe) and its
    trials. The optimizer calls :meth:`open_study` once, then :meth:`create`
    if the study is new or :meth:`study_trials` to resume it, then
    :meth:`record_ask` and :meth:`record_tell` as it goes, and :meth:`close`
    at the end. A record method returns only once the
    change is durable for this storage; if it raises, the optimizer undoes
    the change in memory.
    """

    @property
    def name(self) -> str:
        """How error messages name this storage."""
        raise NotImplementedError

    def open_study(self, space: Space) -> dict[str, Any]:
        """Open the study: its ``meta``, empty for a new study.

        Parameters
        ----------
        space : Space
            The optimizer's space; trials are stored and read against it.

        Raises
        ------
        StorageLockedError
            If another live optimizer has the study open.
        """
        raise NotImplementedError

    def study_trials(self) -> list[Trial]:
        """The trials of an opened, existing study, in order of their numbers.

        Raises
        ------
        ValueError
            If a stored trial is damaged.
        """
        raise NotImplementedError

    def create(self, meta: dict[str, Any]) -> None:
        """Record the description of a new study.

        Parameters
        ----------
        meta : dict
            Key -> JSON-serializable value: the format version, the space
            description, the settings, the seed and the random streams' states.
        """
        raise NotImplementedError

    def load_meta(self) -> dict[str, Any]:
        """The opened study's ``meta`` as it is now (the states of its last ask included)."""
        raise NotImplementedError

    def record_ask(self, trials: Sequence[Trial], state: dict[str, Any]) -> None:
        """Record newly asked (or re-offered) trials and update ``meta`` with ``state``.

        Parameters
        ----------
        trials : sequence of Trial
            The trials asked: new ones, or pending ones offered again.
        state : dict
            Key -> JSON-serializable value written into ``meta`` (the random
            streams' states after the ask).
        """
        raise NotImplementedError

    def record_tell(self, trial: Trial) -> None:
        """Record a told trial.

        Parameters
        ----------
        trial : Trial
            A trial whose value (or failure) has been told.
        """
        raise NotImplementedError

    def close(self) -> None:
        """Release the study (idempotent); it can be loaded again afterwards."""
        raise NotImplementedError
