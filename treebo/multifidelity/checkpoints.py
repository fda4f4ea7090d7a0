"""Trainings that continue from one budget to the next (``checkpoint_dir``).

A promotion evaluates a configuration again at a higher budget. An objective
that can resume its training from where the configuration's previous
evaluation stopped (a saved network after 9 epochs, a boosting model after 27
rounds) pays only for the budget beyond it. With ``checkpoint_dir``,
:func:`~treebo.minimize_multifidelity` gives every evaluation a
:class:`Checkpoint`: a directory that belongs to the configuration, and the
budget its previous evaluation reached; it charges the evaluation
``budget - checkpoint.budget``.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..files import check_directory

__all__ = ["Checkpoint", "checkpoint_path", "check_checkpoint_dir"]


@dataclass(frozen=True)
class Checkpoint:
    """Where one configuration's training keeps its state, and the budget it reached.

    Parameters
    ----------
    path : pathlib.Path
        A directory of this configuration alone, the same at every budget it
        is evaluated at. It exists when the objective is called (made where
        the evaluation runs, so every worker must see ``checkpoint_dir``).
    budget : int, float or None
        The budget of the configuration's previous evaluation, which this one
        continues: the state saved in ``path`` should be the training at that
        budget. None for a configuration's first evaluation, which starts
        from nothing (``path`` is empty unless a killed run left something).
    """

    path: Path
    budget: int | float | None

    @property
    def continues(self) -> bool:
        """Whether this evaluation continues an earlier one (``budget`` is not None)."""
        return self.budget is not None

    def prepare(self) -> None:
        """Make :attr:`path` (and its parents) if it does not exist."""
        self.path.mkdir(parents=True, exist_ok=True)


def checkpoint_path(root: Path, key: str) -> Path:
    """The directory of the configuration whose canonical JSON text is ``key``.

    Parameters
    ----------
    root : pathlib.Path
        The run's ``checkpoint_dir``.
    key : str
        The configuration as canonical JSON (the same text for the same
        configuration in every run).

    Returns
    -------
    pathlib.Path
        ``root / <the first 16 hex digits of the key's SHA-256>``.
    """
    return root / hashlib.sha256(key.encode()).hexdigest()[:16]


def check_checkpoint_dir(value: Any) -> Path | None:
    """``checkpoint_dir`` as a Path, or None; a ValueError for anything else.

    Checked before the first evaluation: the path must be a directory this
    user can write in, or one that can be made (its nearest existing parent
    a writable directory).

    Parameters
    ----------
    value : str, os.PathLike or None

    Returns
    -------
    pathlib.Path or None
    """
    if value is None:
        return None
    if isinstance(value, (str, os.PathLike)) and str(value):
        return check_directory(value, "checkpoint_dir")
    raise ValueError(f"checkpoint_dir must be a directory path (str or os.PathLike), got {value!r}")
