""":class:`SQLiteStorage`: a study journal in one SQLite file, and :func:`read_study`.

``Optimizer(..., storage="study.db")`` keeps its whole history in one SQLite
file (the standard library's :mod:`sqlite3`, no server):

* ``study``: one row per key: the format version, the search space, the
  optimizer's settings (surrogate and its parameters, acquisition, candidate
  counts, ...), the seed, the initial state of the design stream and the
  current states of the model and acquisition streams (the
  ``numpy.random`` bit-generator states, as JSON).
* ``trials``: one row per trial: number, status (``pending``, ``complete``,
  ``failed``), origin, the user-facing point (JSON, one value per dimension;
  a categorical value is stored as its index in the categories), the encoded
  point (float64 bytes, bit-exact), value, error text, the surrogate seed of
  the fit that proposed it, fit/acquisition/evaluation seconds, the
  ask/tell timestamps, and for a study with several metrics the metrics of
  a complete trial (a JSON object). A study written before that column
  existed gets it when it is opened for writing.

Durability. The database runs in write-ahead-log mode with
``synchronous=FULL``. An ``ask`` (its new trials and the random-stream states
after it) and a ``tell`` are each one transaction, committed before the call
returns. SQLite makes a transaction atomic: a process killed at any instant
(SIGKILL included, even in the middle of a commit) leaves the file as it was
after the last committed transaction, and the next connection rolls the log
back or forward. ``synchronous=FULL`` also syncs the log on every commit, so
a committed trial survives a power failure too; a commit costs one fsync
(about a millisecond on a local disk), negligible next to an expensive
objective. WAL needs a local file system (not NFS), as SQLite documents.

While a study is open for writing, :class:`~treebo.storage.locks.StudyLock`
keeps every other optimizer out of it.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..history import Trial
from ..space import Space
from ..untrusted import (
    MAX_STORED_CHARS,
    BoundExceededError,
    check_literal_bounds,
    excerpt,
    load_json,
)
from .base import Storage, StorageAccessError
from .file_checks import (
    EARLIER_TRIAL_COLUMNS,
    TRIAL_COLUMNS,
    access_error,
    check_trial_columns,
    os_access_error,
    precheck_existing,
    refuse_code_objects,
    refuse_foreign,
    write_problem,
)
from .identity import trial_row_problem
from .locks import StudyLock

__all__ = ["SQLiteStorage", "read_study"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS study (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS trials (
    number    INTEGER PRIMARY KEY,
    status    TEXT NOT NULL CHECK (status IN ('pending', 'complete', 'failed')),
    origin    TEXT NOT NULL,
    point     TEXT NOT NULL,
    x_encoded BLOB NOT NULL,
    value     REAL,
    error     TEXT,
    seed      INTEGER,
    fit_time  REAL NOT NULL DEFAULT 0,
    acq_time  REAL NOT NULL DEFAULT 0,
    eval_time REAL,
    asked_at  REAL,
    told_at   REAL,
    metrics   TEXT
);
"""


class SQLiteStorage(Storage):
    """One study in one SQLite file.

    Normally created by the optimizer from a path (``storage="study.db"``);
    build it yourself to share one object between calls or to inspect a
    study with :meth:`load_meta` and :meth:`load_trials`.

    Parameters
    ----------
    path : str or os.PathLike
        The database file; created (with its directory) when missing.
    lock : bool, default True
        Hold exclusive locks on the database file's identity while open
        (:class:`~treebo.storage.locks.StudyLock`), so a second optimizer
        cannot write to the same study under any of its names and pending
        trials of a dead run are recognised as abandoned.
    """

    def __init__(self, path: str | os.PathLike, *, lock: bool = True):
        if not isinstance(path, (str, os.PathLike)) or str(path) in ("", ":memory:"):
            raise ValueError(f"storage must be a path to a database file, got {path!r}")
        self.path = Path(path)
        self.lock = bool(lock)
        self._conn: sqlite3.Connection | None = None
        self._study_lock = StudyLock(self.path)
        self._mutex = threading.Lock()
        self._space: Space | None = None  # set by load(); trials are stored against it
        # The earlier columns in a study written before trials held metrics, opened read-only.
        self._columns: tuple[str, ...] = TRIAL_COLUMNS

    def __repr__(self) -> str:
        return f"SQLiteStorage({str(self.path)!r})"

    def __getstate__(self) -> dict:
        # A pickled storage (e.g. inside a fitted TreeBOSearchCV) is closed.
        return {"path": self.path, "lock": self.lock, "space": self._space}

    def __setstate__(self, state: dict) -> None:
        SQLiteStorage.__init__(self, state["path"], lock=state["lock"])
        self._space = state.get("space")

    @property
    def name(self) -> str:
        return str(self.path)

    # -- connection -------------------------------------------------------------------
    def open(self, *, read_only: bool = False) -> SQLiteStorage:
        """Connect (and take the lock); a no-op when already open.

        With ``read_only=True`` nothing is written (no lock, no schema, no
        journal-mode change), so a study can be read while it runs.

        Parameters
        ----------
        read_only : bool, default False
            Only read the study.

        Returns
        -------
        SQLiteStorage
            This storage.
        """
        if self._conn is not None:
            return self
        if not read_only:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as error:
                raise StorageAccessError(
                    f"storage {str(self.path)!r} cannot be created: its directory cannot be "
                    f"made ({error.strerror or error})"
                ) from None
            problem = write_problem(self.path)
            if problem is not None:
                raise StorageAccessError(f"storage {str(self.path)!r} cannot be written: {problem}")
            precheck_existing(self.path)
            if self.lock:
                try:
                    self._study_lock.acquire()
                except OSError as error:
                    raise os_access_error(self.path, error) from None
        conn = None
        try:
            conn = sqlite3.connect(
                self.path, timeout=30.0, isolation_level=None, check_same_thread=False
            )
            # Everything is checked before the first write (the WAL switch included):
            # a file that is not a treebo study is left byte for byte as it was.
            refuse_code_objects(conn, self.path)
            refuse_foreign(conn, self.path)
            tables = {
                row[0]
                for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            }
            if read_only and not {"study", "trials"} <= tables:
                conn.close()
                raise StorageAccessError(
                    f"storage {str(self.path)!r} is not a treebo study "
                    "database: it has no study and trials tables"
                )
            current = "trials" not in tables or check_trial_columns(conn, self.path)
            if not read_only:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=FULL")
                conn.executescript(_SCHEMA)
                if not current:  # a study written before trials held several metrics
                    conn.execute("ALTER TABLE trials ADD COLUMN metrics TEXT")
                current = check_trial_columns(conn, self.path)
        except BaseException as error:
            if conn is not None:
                conn.close()
            self._study_lock.release()
            if isinstance(error, sqlite3.Error):
                raise access_error(self.path, error, writing=not read_only) from None
            raise
        self._conn = conn
        self._columns = TRIAL_COLUMNS if current else EARLIER_TRIAL_COLUMNS
        return self

    def close(self) -> None:
        """Close the connection and release the lock (idempotent)."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        self._study_lock.release()

    def __enter__(self) -> SQLiteStorage:
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            raise RuntimeError(f"{self!r} is closed")
        return self._conn

    def _write(self, statements: list[tuple[str, tuple]]) -> None:
        # BEGIN IMMEDIATE takes the write lock up front, so the transaction
        # cannot fail half-way for a reader upgrading to a writer.
        with self._mutex:
            db = self._db
            try:
                # An interrupt (KeyboardInterrupt) can land between any two
                # statements, BEGIN included: a transaction it left open is
                # rolled back here rather than failing every later BEGIN.
                if db.in_transaction:
                    db.execute("ROLLBACK")
                db.execute("BEGIN IMMEDIATE")
                for sql, params in statements:
                    db.execute(sql, params)
                db.execute("COMMIT")
            except BaseException as error:
                # A failed COMMIT (disk full) leaves the transaction open too.
                if db.in_transaction:
                    try:
                        db.execute("ROLLBACK")
                    except sqlite3.Error:
                        pass  # the next write rolls it back
                if isinstance(error, sqlite3.Error):
                    raise access_error(self.path, error, writing=True) from error
                raise

    # -- study ------------------------------------------------------------------------
    def load_meta(self) -> dict[str, Any]:
        """Every ``study`` key, JSON-decoded; empty for a new study.

        Each value is read with :func:`treebo.untrusted.load_json`: at most
        :data:`~treebo.untrusted.MAX_STORED_CHARS` characters and
        :data:`~treebo.untrusted.MAX_DEPTH` levels.

        Raises
        ------
        ValueError
            Naming the file and the key, for a value that is not JSON or is
            over those bounds (a :class:`~treebo.untrusted.BoundExceededError`).
        """
        with self._mutex:
            rows = self._db.execute("SELECT key, value FROM study").fetchall()
        meta = {}
        for key, value in rows:
            try:
                meta[key] = load_json(value, what=f"stored {excerpt(key)}")
            except BoundExceededError as error:
                raise BoundExceededError(
                    f"storage {str(self.path)!r} is damaged: {error}"
                ) from None
            except ValueError as error:  # not JSON, or not text
                raise ValueError(
                    f"storage {str(self.path)!r} is damaged: stored {excerpt(key)} is not "
                    f"JSON: {error}"
                ) from None
        return meta

    def create(self, meta: dict[str, Any]) -> None:
        """Write the description of a new study (one transaction).

        Parameters
        ----------
        meta
            As for :meth:`Storage.create <treebo.storage.Storage.create>`.

        Raises
        ------
        ValueError
            If a value could not be read back (see :mod:`treebo.untrusted`):
            its JSON is longer than :data:`~treebo.untrusted.MAX_STORED_CHARS`,
            or the repr of a category is longer than
            :data:`~treebo.untrusted.MAX_REPR_CHARS` or nested deeper than
            :data:`~treebo.untrusted.MAX_DEPTH`; nothing is written then.
        """
        meta = {"created_at": time.time(), **meta}
        _check_categories(meta.get("space"))
        self._write(
            [
                ("INSERT INTO study (key, value) VALUES (?, ?)", (key, self._json(key, value)))
                for key, value in meta.items()
            ]
        )

    def _json(self, key: str, value: Any) -> str:
        """``value`` as JSON, if :meth:`load_meta` can read it back."""
        text = json.dumps(value)
        if len(text) > MAX_STORED_CHARS:
            raise ValueError(
                f"storage {str(self.path)!r}: {key!r} would be stored as {len(text):,} "
                f"characters of JSON; a study reads back at most {MAX_STORED_CHARS:,}"
            )
        return text

    # -- trials -----------------------------------------------------------------------
    def load_trials(self) -> list[dict[str, Any]]:
        """Every trial row as a dict, by number; ``x_encoded`` as a float64 array."""
        with self._mutex:
            rows = self._db.execute(
                f"SELECT {', '.join(self._columns)} FROM trials ORDER BY number"
            ).fetchall()
        trials = []
        for row in rows:
            record = dict(zip(self._columns, row))
            record.setdefault("metrics", None)
            try:
                record["x_encoded"] = np.frombuffer(record["x_encoded"], dtype="<f8").copy()
                record["point"] = load_json(record["point"], what="its point")
                if record["metrics"] is not None:
                    record["metrics"] = load_json(record["metrics"], what="its metrics")
            except (TypeError, ValueError) as error:  # not bytes / not 8-byte floats / not JSON
                raise ValueError(
                    f"storage {str(self.path)!r} is damaged: trial {record['number']!r}: {error}"
                ) from None
            trials.append(record)
        return trials

    def open_study(self, space: Space) -> dict[str, Any]:
        """Open the study (taking the lock): its ``meta``, empty for a new study.

        Parameters
        ----------
        space
            As for :meth:`Storage.open_study <treebo.storage.Storage.open_study>`.

        Returns
        -------
        dict
        """
        self.open()
        self._space = space
        return self.load_meta()

    def study_trials(self) -> list[Trial]:
        """The stored trials, each row checked against the space first.

        A resume trusts nothing in the file it did not check (see
        :func:`trial_row_problem`): a damaged row raises a ValueError naming
        the file, the trial and the problem.
        """
        space = self._opened_space()
        trials: list[Trial] = []
        for row in self.load_trials():
            if row["number"] != len(trials):
                raise ValueError(
                    f"storage {self.name!r} is damaged: trial numbers are not consecutive"
                )
            problem = trial_row_problem(space, row)
            if problem is not None:
                raise ValueError(
                    f"storage {self.name!r} is damaged: trial {row['number']}: {problem}"
                )
            trials.append(
                Trial(
                    number=row["number"],
                    x=space.point_from_json(row["point"]),
                    x_encoded=row["x_encoded"],
                    status=row["status"],
                    value=row["value"],
                    error=row["error"],
                    origin=row["origin"],
                    fit_time=row["fit_time"],
                    acq_time=row["acq_time"],
                    asked_at=row["asked_at"],
                    told_at=row["told_at"],
                    seed=row["seed"],
                    eval_time=row["eval_time"],
                    metrics=row["metrics"],
                )
            )
        return trials

    def record_ask(self, trials: Sequence[Trial], state: dict[str, Any]) -> None:
        """Insert (or, for re-offered pending trials, update) trials and save
        the random-stream states, in one transaction.

        Parameters
        ----------
        trials, state
            As for :meth:`Storage.record_ask <treebo.storage.Storage.record_ask>`.
        """
        statements = [_upsert(self._row(t)) for t in trials]
        statements += [
            (
                "INSERT OR REPLACE INTO study (key, value) VALUES (?, ?)",
                (key, self._json(key, value)),
            )
            for key, value in state.items()
        ]
        self._write(statements)

    def record_tell(self, trial: Trial) -> None:
        """Insert or update one told trial, in one transaction.

        Parameters
        ----------
        trial
            As for :meth:`Storage.record_tell <treebo.storage.Storage.record_tell>`.
        """
        self._write([_upsert(self._row(trial))])

    def _opened_space(self) -> Space:
        if self._space is None:
            raise RuntimeError(f"storage {self.name!r}: open_study(space) must come first")
        return self._space

    def _row(self, trial: Trial) -> dict[str, Any]:
        return {
            "number": trial.number,
            "status": trial.status,
            "origin": trial.origin,
            "point": self._opened_space().point_to_json(trial.x),
            "x_encoded": trial.x_encoded,
            "value": trial.value,
            "error": trial.error,
            "seed": trial.seed,
            "fit_time": trial.fit_time,
            "acq_time": trial.acq_time,
            "eval_time": trial.eval_time,
            "asked_at": trial.asked_at,
            "told_at": trial.told_at,
            "metrics": trial.metrics,
        }


def _check_categories(description: Any) -> None:
    """Refuse a category whose repr :func:`~treebo.untrusted.literal` would not read back."""
    for entry in description["dimensions"] if isinstance(description, dict) else ():
        for i, text in enumerate(entry.get("categories", ())):
            try:
                check_literal_bounds(
                    text, what=f"dimension {excerpt(entry['name'])}: the repr of category {i}"
                )
            except BoundExceededError as error:
                raise ValueError(
                    f"{error}; a study stores only categories it can read back"
                ) from None


def _upsert(trial: dict[str, Any]) -> tuple[str, tuple]:
    row = dict(trial)
    row["x_encoded"] = np.ascontiguousarray(row["x_encoded"], dtype="<f8").tobytes()
    row["point"] = json.dumps(row["point"])
    row["metrics"] = None if row["metrics"] is None else json.dumps(row["metrics"])
    columns = ", ".join(TRIAL_COLUMNS)
    marks = ", ".join("?" for _ in TRIAL_COLUMNS)
    return (
        f"INSERT OR REPLACE INTO trials ({columns}) VALUES ({marks})",
        tuple(row[c] for c in TRIAL_COLUMNS),
    )


def read_study(path: str | os.PathLike) -> dict[str, Any]:
    """Read a study without opening it for writing (no lock is taken).

    Safe while another process is running the study: SQLite readers see the
    last committed state.

    Parameters
    ----------
    path : str or os.PathLike

    Returns
    -------
    dict
        ``{"meta": {...}, "trials": [row, ...]}`` with the rows of
        :meth:`SQLiteStorage.load_trials`.
    """
    if not Path(path).exists():
        raise ValueError(f"storage {str(path)!r} does not exist")
    storage = SQLiteStorage(path, lock=False).open(read_only=True)
    try:
        return {"meta": storage.load_meta(), "trials": storage.load_trials()}
    finally:
        storage.close()
