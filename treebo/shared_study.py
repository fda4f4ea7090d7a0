"""A study in a SQLite file that several processes ask and tell, one call at a time.

``treebo ask`` and ``treebo tell`` each open the study, do one thing and
close it. A study is owned by one optimizer at a time (its lock), so a call
waits for the lock (up to ``wait`` seconds) instead of failing when another
process has the study open; every ask and tell is then one transaction on
the whole, current study. Trials asked by others and not told yet stay
pending (``resume_pending="keep"``): the surrogate sees them as constant
lies and they are never proposed twice, so no trial is lost or duplicated
however the processes interleave.

A new study takes the space and the settings given to the first ask; a
stored study is reopened with its stored space and settings (given ones
must match them).
"""

from __future__ import annotations

import contextlib
import math
import os
import random
import time
from collections.abc import Iterator, Mapping
from typing import Any

from .metrics import Metrics
from .optimizer import Optimizer
from .settings import settings_from_store
from .space import Space
from .storage import SQLiteStorage, StorageLockedError, read_study
from .untrusted import BoundExceededError

__all__ = ["open_shared", "ask", "tell", "jsonable"]

#: Seconds a call waits for another process to release the study, by default.
WAIT = 120.0


@contextlib.contextmanager
def open_shared(
    path: str | os.PathLike, space: Space | None = None, *, wait: float = WAIT, **settings: Any
) -> Iterator[Optimizer]:
    """The study in ``path`` as an optimizer, held for the ``with`` block.

    Parameters
    ----------
    path : str or os.PathLike
        The SQLite study (created by the first call).
    space : Space, optional
        Needed to create the study; checked against the stored one otherwise.
    wait : float, default ``WAIT``
        Seconds to wait for another process to release the study.
    **settings
        :class:`~treebo.Optimizer` settings (``surrogate``, ``random_state``,
        ``direction``, ...): used to create the study, and checked against
        a stored one.

    Yields
    ------
    Optimizer
        With ``resume_pending="keep"``; closed when the block ends.

    Raises
    ------
    StorageLockedError
        If the study stays in use for ``wait`` seconds.
    ValueError
        If there is no study yet and no ``space``, or the given space or
        settings differ from the stored ones (a ``StorageMismatchError``).
    """
    storage = SQLiteStorage(path)
    _acquire(storage, wait)
    try:
        meta = storage.load_meta()
        if meta:
            settings = {**settings_from_store(meta, path), **settings}
            if space is None:
                space = _stored_space(meta, path)
        elif space is None:
            raise ValueError(
                f"storage {str(path)!r} holds no study yet: the first ask needs "
                "the search space (--space FILE)"
            )
        optimizer = Optimizer(space, storage=storage, resume_pending="keep", **settings)
    except BaseException:
        storage.close()
        raise
    try:
        yield optimizer
    finally:
        optimizer.close()


def _acquire(storage: SQLiteStorage, wait: float) -> None:
    deadline = time.monotonic() + wait
    delay = 0.02
    while True:
        try:
            storage.open()
            return
        except StorageLockedError:
            if time.monotonic() >= deadline:
                raise
        # Randomized, so that waiting processes do not retry in step.
        time.sleep(min(delay * (1 + random.random()), max(deadline - time.monotonic(), 0)))
        delay = min(delay * 2, 0.5)


def _stored_space(meta: dict, path: str | os.PathLike) -> Space:
    """The study's stored space; a ValueError naming the file if it cannot be rebuilt."""
    try:
        return Space.from_dict(meta.get("space", {}))
    except BoundExceededError as error:
        raise BoundExceededError(f"storage {str(path)!r} is damaged: {error}") from None
    except ValueError as error:
        raise ValueError(f"storage {str(path)!r}: {error}") from None


def ask(
    path: str | os.PathLike, space: Space | None = None, *, wait: float = WAIT, **settings: Any
) -> dict:
    """Propose one point of the study in ``path`` and record it as a pending trial.

    Parameters
    ----------
    path, space, wait, **settings
        As for :func:`open_shared`.

    Returns
    -------
    dict
        ``{"trial": number, "x": {name: value, ...}}``, JSON-safe (see
        :func:`jsonable`); inactive dimensions are left out.
    """
    with open_shared(path, space, wait=wait, **settings) as optimizer:
        (trial,) = optimizer.ask_trials(1)
        return {"trial": trial.number, "x": jsonable(_by_name(optimizer.space, trial.x))}


def tell(
    path: str | os.PathLike,
    number: int,
    value: float | Mapping[str, float] | None = None,
    *,
    error: str | None = None,
    wait: float = WAIT,
) -> dict:
    """Record the value of pending trial ``number`` (or its failure, with ``error``).

    Parameters
    ----------
    path : str or os.PathLike
    number : int
        A pending trial of the study.
    value : float or dict, optional
        The objective's value; NaN or infinity record a failure. For a study
        with ``objectives``, a dict of metrics holding every objective and
        constrained metric (a NaN or infinite one records a failure).
    error : str, optional
        Why the evaluation failed; records a failed trial.
    wait : float

    Returns
    -------
    dict
        ``{"trial": number, "status": ..., "best": value or None}``, the best
        value of the study after this tell (for a study with objectives, the
        first objective at the result's ``x``, feasible if any point is), and
        for a study with objectives ``"objectives"`` (their names),
        ``"n_feasible"``, ``"n_told"`` and ``"n_pareto"`` (the points of the
        Pareto front).

    Raises
    ------
    ValueError
        If there is no such trial or it is not pending (already told), or
        ``value`` is not what the study takes (a number, or a dict holding
        every metric it needs): then nothing is recorded.
    """
    if error is None and value is None:
        raise ValueError("tell needs a value or an error")
    with open_shared(path, wait=wait) as optimizer:
        trials = optimizer.trials
        if not 0 <= number < len(trials):
            raise ValueError(
                f"storage {str(path)!r} has no trial {number} (its trials are 0 to "
                f"{len(trials) - 1})"
            )
        trial = trials[number]
        if trial.status != "pending":
            raise ValueError(
                f"trial {number} of {str(path)!r} was told already (it is "
                f"{trial.status}); a trial is told once"
            )
        if error is None:
            _check_value(optimizer.metrics, value, path)
        optimizer.tell_trial(trial, value, error=error)
        result = optimizer.get_result()
        best = result.fun
        told = {"trial": number, "status": trial.status, "best": None if math.isnan(best) else best}
        if optimizer.metrics is not None:
            told.update(
                objectives=list(optimizer.metrics.names),
                n_feasible=result.n_feasible,
                n_told=len(result.x_iters),
                n_pareto=len(result.pareto_index),
            )
        return told


def _check_value(metrics: Metrics | None, value: Any, path: str | os.PathLike) -> None:
    """A value of the wrong kind is refused rather than recorded as a failed trial: a
    trial is told once, and a typo should not spend it."""
    if metrics is None:
        if isinstance(value, Mapping):
            raise ValueError(
                f"the study in {str(path)!r} has one objective and no named metrics: tell "
                "a number (a study takes a dict of metrics when made with objectives)"
            )
        return
    needed = list(dict.fromkeys([*metrics.names, *(c.metric for c in metrics.constraints)]))
    if not isinstance(value, Mapping):
        raise ValueError(
            f"the study in {str(path)!r} has the objectives {list(metrics.names)}: tell a "
            f"dict (on the command line a JSON object) holding a number for each of {needed}"
        )
    missing = [name for name in needed if name not in value]
    if missing:
        raise ValueError(
            f"the metrics told lack {missing}; the study in {str(path)!r} needs a number "
            f"for each of {needed}"
        )


def _by_name(space: Space, x: Any) -> dict:
    return dict(x) if isinstance(x, dict) else dict(zip(space.names, x))


def jsonable(value: Any) -> Any:
    """``value`` in the types JSON holds.

    Numpy numbers become Python numbers, tuples lists and dict keys strings,
    in nested containers too; anything else JSON cannot hold becomes its
    ``repr``.

    Parameters
    ----------
    value : object
        A value of a point, a setting or a result (a number, string, None, or
        a dict, list or tuple of them).

    Returns
    -------
    object
    """
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if hasattr(value, "item"):
        return value.item()
    return repr(value)


def read_shared(path: str | os.PathLike) -> tuple[dict, list[dict]]:
    """The study description and its trials as rows, without taking the lock.

    Each row has ``number``, ``status``, ``value`` (the objective's own value,
    also for a maximized study; for a study with objectives, the first
    objective's), ``x`` (a dict by name, or None where the space cannot be
    rebuilt), ``error`` and ``metrics`` (a dict of every metric of a complete
    trial of a study with objectives, None otherwise).

    Raises
    ------
    ValueError
        Naming the file, if it is not a study or is damaged: a stored value
        or category over the bounds of :mod:`treebo.untrusted` is a
        :class:`~treebo.untrusted.BoundExceededError`.
    """
    study = read_study(path)
    meta = study["meta"]
    settings = settings_from_store(meta, path)
    sign = -1.0 if settings["direction"] == "maximize" else 1.0
    if settings["objectives"] is not None:
        # The stored value is the first objective as minimized.
        sign = float(Metrics(settings["objectives"], settings["constraints"]).signs[0])
    try:
        space = _stored_space(meta, path)
    except BoundExceededError:
        raise  # a damaged file, unlike a category that is an object
    except ValueError:
        space = None
    rows = []
    for row in study["trials"]:
        x = _by_name(space, space.point_from_json(row["point"])) if space is not None else None
        value = row["value"]
        rows.append(
            {
                "number": row["number"],
                "status": row["status"],
                "value": None if value is None else sign * value,
                "x": x,
                "error": row["error"],
                "metrics": row.get("metrics"),
            }
        )
    return meta, rows
