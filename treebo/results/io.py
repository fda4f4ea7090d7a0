"""Saving, loading and reading results: :func:`dump`, :func:`load`, :func:`read_result`.

:func:`dump` and :func:`load` keep an :class:`~treebo.result.OptimizeResult`
in a file with Python's :mod:`pickle`, so every field comes back as it was:
the points with their categories of any type, the values (NaN for failed
evaluations), the timings and the :class:`~treebo.space.Space`. A pickle can
run code when it is loaded: load only files you made or trust.

:func:`read_result` builds a result from a storage file (``storage="study.db"``)
without opening the study for writing, so it is safe while a run is still
adding trials; :func:`as_result` accepts either kind of source and is what
the plots and the report call.
"""

from __future__ import annotations

import math
import os
import pickle
from pathlib import Path

import numpy as np

from ..files import write_atomically
from ..metrics import Metrics
from ..result import OptimizeResult
from ..space import Space

__all__ = ["dump", "load", "read_result", "as_result"]

#: The format tag of a :func:`dump` file, checked by :func:`load`.
_DUMP_FORMAT = "treebo.OptimizeResult"
_DUMP_VERSION = 1


def dump(result: OptimizeResult, path: str | os.PathLike) -> None:
    """Write a result to a file (a pickle), replacing the file if it exists.

    Parameters
    ----------
    result : OptimizeResult
        Every field is kept; each must be picklable (those ``minimize`` and
        :func:`read_result` set are).
    path : str or os.PathLike
        The file; written whole or not at all
        (:func:`treebo.files.write_atomically`): a crash or a failed write
        (a full disk) leaves the previous file under ``path`` unchanged.

    Raises
    ------
    treebo.files.WriteError
        When the file cannot be written; it names the file and the cause.

    Notes
    -----
    The file is a pickle: :func:`load` gives the fields back exactly, but
    unpickling can run code, so only load files you trust. To share a study
    as data, share its storage file instead (SQLite, read with
    :func:`read_result`).
    """
    if not isinstance(result, OptimizeResult):
        raise ValueError(f"result must be an OptimizeResult, got {type(result).__name__}")
    path = Path(path)
    from .. import __version__

    payload = {
        "format": _DUMP_FORMAT,
        "version": _DUMP_VERSION,
        "treebo": __version__,
        "result": dict(result),
    }
    write_atomically(
        path, lambda handle: pickle.dump(payload, handle, protocol=pickle.HIGHEST_PROTOCOL)
    )


def load(path: str | os.PathLike) -> OptimizeResult:
    """Read a result written by :func:`dump`.

    Parameters
    ----------
    path : str or os.PathLike

    Returns
    -------
    OptimizeResult
        Equal, field by field, to the result that was dumped.

    Raises
    ------
    ValueError
        If the file is not one :func:`dump` wrote.

    Warnings
    --------
    The file is unpickled, which can run code: load only files you trust.
    """
    with open(path, "rb") as handle:
        try:
            payload = pickle.load(handle)
        except (
            pickle.UnpicklingError,
            EOFError,
            AttributeError,
            ImportError,
            IndexError,
            TypeError,
            ValueError,
        ) as error:
            raise ValueError(
                f"{str(path)!r} is not a result written by treebo.dump "
                f"({type(error).__name__}: {error})"
            ) from None
    if not (isinstance(payload, dict) and payload.get("format") == _DUMP_FORMAT):
        raise ValueError(f"{str(path)!r} is not a result written by treebo.dump")
    if payload.get("version") != _DUMP_VERSION:
        raise ValueError(
            f"{str(path)!r} has dump format version {payload.get('version')!r}; "
            f"this treebo reads version {_DUMP_VERSION}"
        )
    return OptimizeResult(**payload["result"])


def read_result(path: str | os.PathLike) -> OptimizeResult:
    """The result of the study recorded in a storage file.

    Read-only: no lock is taken and nothing is written, so it works while
    another process is still running the study (it sees the trials
    committed so far).

    Parameters
    ----------
    path : str or os.PathLike
        A SQLite storage file (``storage=`` of ``minimize`` or ``Optimizer``).

    Returns
    -------
    OptimizeResult
        The fields of :meth:`Optimizer.get_result <treebo.Optimizer.get_result>`
        (for a study with ``objectives``, the metrics and the Pareto front too)
        over the told trials, in trial order (pending trials are left out and
        counted in ``n_pending``), plus what the storage holds per trial:
        ``numbers`` (trial numbers), ``origins``, ``eval_time`` (seconds,
        NaN when not measured), ``asked_at`` and ``told_at`` (``time.time()``
        stamps, NaN when unknown); and per study: ``settings`` (the
        keyword arguments of :class:`~treebo.Optimizer` that reproduce the
        study, read by :func:`treebo.settings.settings_from_store`),
        ``surrogate``, ``surrogate_params`` (those that differ from the
        surrogate's defaults), ``random_state`` (the study's seed) and
        ``storage`` (the path).

    Notes
    -----
    The storage keeps a categorical value as its index and the categories as
    their ``repr``; a category whose ``repr`` is a Python literal (a string,
    a number, ``None``, a tuple of those) comes back as that value, any
    other category as its ``repr`` string.
    """
    from ..settings import settings_from_store
    from ..storage import read_study

    study = read_study(path)
    meta = study["meta"]
    if "space" not in meta:
        raise ValueError(f"storage {str(path)!r} holds no study yet")
    try:
        space = Space.from_dict(meta["space"], object_categories="repr")
    except ValueError as error:
        raise ValueError(f"storage {str(path)!r} is damaged: {error}") from None
    rows = [row for row in study["trials"] if row["status"] != "pending"]
    x_iters = [space.point_from_json(row["point"]) for row in rows]
    settings = settings_from_store(meta, path)
    # A maximized study stores negated values; the result has the objective's own.
    sign = -1.0 if settings["direction"] == "maximize" else 1.0
    stored = np.array(
        [row["value"] if row["status"] == "complete" else math.nan for row in rows], dtype=float
    )
    values = sign * stored
    complete = [i for i, row in enumerate(rows) if row["status"] == "complete"]
    # The best value, and on a tie the lowest trial number (rows are in number order).
    best = min(complete, key=lambda i: stored[i]) if complete else None

    def column(name: str) -> np.ndarray:
        return np.array([math.nan if row[name] is None else row[name] for row in rows], dtype=float)

    result = OptimizeResult(
        x=x_iters[best] if best is not None else None,
        fun=float(values[best]) if best is not None else math.nan,
        x_iters=x_iters,
        func_vals=values,
        statuses=[row["status"] for row in rows],
        errors=[row["error"] for row in rows],
        fit_time=column("fit_time"),
        acq_time=column("acq_time"),
        space=space,
        n_failed=sum(row["status"] == "failed" for row in rows),
        n_pending=len(study["trials"]) - len(rows),
        numbers=[row["number"] for row in rows],
        origins=[row["origin"] for row in rows],
        eval_time=column("eval_time"),
        asked_at=column("asked_at"),
        told_at=column("told_at"),
        settings=settings,
        surrogate=settings["surrogate"],
        surrogate_params=settings["surrogate_params"] or {},
        random_state=settings["random_state"],
        storage=str(path),
        direction=settings["direction"],
        message=f"read from {str(path)!r}: {len(rows)} told trials",
    )
    if settings["objectives"] is not None:
        fields = Metrics(settings["objectives"], settings["constraints"]).result_fields(
            [row["metrics"] for row in rows], x_iters
        )
        if "message" in fields:
            fields["message"] = f"{result.message}; {fields['message']}"
        result.update(fields)
    return result


def as_result(source: OptimizeResult | str | os.PathLike) -> OptimizeResult:
    """``source`` itself if it is a result, else the result read from that storage file.

    Parameters
    ----------
    source : OptimizeResult, str or os.PathLike
        A result (of ``minimize``, ``Optimizer.get_result`` or :func:`load`)
        or the path of a storage file (read with :func:`read_result`).

    Returns
    -------
    OptimizeResult
    """
    if isinstance(source, OptimizeResult):
        return source
    if isinstance(source, (str, os.PathLike)):
        return read_result(source)
    raise ValueError(
        f"expected an OptimizeResult or the path of a storage file, got {type(source).__name__}"
    )
