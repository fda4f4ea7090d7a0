"""Where a study is recorded: the :class:`Storage` protocol, in memory or in SQLite.

An optimizer records every ask (its new trials and the random-stream states
after it) and every tell through a :class:`Storage`, and reads a study back
from one to resume it. :class:`InMemoryStorage` is the default: the study
lives as long as the process. :class:`SQLiteStorage` is a study journal in
SQLite, every trial committed as soon as it is asked or told.

The modules: ``base`` (the protocol and its errors), ``memory``
(:class:`InMemoryStorage`), ``sqlite`` (:class:`SQLiteStorage`,
:func:`read_study`), ``locks`` (one live optimizer per study) and
``identity`` (which study a storage holds, and the checks a resume makes
of its stored rows).
"""

from .base import Storage, StorageAccessError, StorageLockedError, StorageMismatchError
from .identity import (
    FORMAT_VERSION,
    check_same_study,
    open_study,
    space_description,
    stable_params,
    trial_row_problem,
)
from .memory import InMemoryStorage
from .sqlite import SQLiteStorage, read_study

__all__ = [
    "Storage",
    "InMemoryStorage",
    "SQLiteStorage",
    "StorageMismatchError",
    "StorageLockedError",
    "StorageAccessError",
    "read_study",
    "open_study",
    "FORMAT_VERSION",
    "check_same_study",
    "space_description",
    "stable_params",
    "trial_row_problem",
]
