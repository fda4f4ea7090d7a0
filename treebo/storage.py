"""Where a study is recorded: the :class:`Storage` protocol, in memory or in SQLite.

An optimizer records every ask (its new trials and the random-stream states
after it) and every tell through a :class:`Storage`, and reads a study back
from one to resume it. :class:`InMemoryStorage` is the default: the study
lives as long as the process. :class:`SQLiteStorage` is a study journal in
SQLite, every trial committed as soon as it is asked or told.

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
  the fit that proposed it, fit/acquisition/evaluation seconds and the
  ask/tell timestamps.

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

One optimizer at a time. A study is owned by one live optimizer: it holds
exclusive ``flock`` locks, which the kernel releases when the process ends
however it ends. Opening a storage whose lock is held raises
:class:`StorageLockedError`; acquiring it proves that whoever asked the trials
still ``pending`` is gone, so they can safely be offered again. The locks are
keyed on the file, not on the name it was opened by, so every name of one
study (the path, a symlink, a hard link) takes the same locks:

* the path lock ``<real path>-lock``, next to the database's resolved real
  path (``os.path.realpath``): all symlinks to a study lock the same file, and
  for a plain path it is ``<path>-lock``;
* the identity lock ``/tmp/treebo-locks-<uid>/<st_dev>-<st_ino>.lock``
  (a private directory, mode 0700), named by the database file's identity:
  hard links (other names of the same inode, in any directory) have no common
  directory, so their common lock lives in one place per machine. The
  database file is created (empty, ``O_EXCL``) under the path lock before it
  is stat'ed, so the identity is known from the first open on. It covers
  processes of one user that see the same ``/tmp``; the path lock covers the
  others as before.

The database file itself is not locked with ``flock``: closing any other
descriptor of it would drop SQLite's own POSIX locks held by the process, and
on some systems ``flock`` and ``fcntl`` locks interfere.

A lock file is opened with ``O_NOFOLLOW``: a symlink (or any other file that is
not a regular file) at a lock's path is refused with an error naming it, never
followed. The holder's ``pid ... since ...`` is written only into a regular
file owned by the user, with one link, that is empty or holds such a line; any
other file is locked as it is and left unchanged. Lock files are not removed
on close (removing one while another process opens it would let two holders
coexist); they are a few bytes each.
"""

from __future__ import annotations

import copy
import dataclasses
import errno
import json
import logging
import math
import os
import re
import sqlite3
import stat
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .history import Trial
from .random_streams import RandomStreams
from .space import Integer, Real, Space

try:  # POSIX only; elsewhere the lock is skipped (documented).
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None

__all__ = ["Storage", "InMemoryStorage", "SQLiteStorage", "StorageMismatchError",
           "StorageLockedError", "StorageAccessError", "read_study", "open_study"]

logger = logging.getLogger("treebo")

#: Bumped when the schema changes incompatibly.
FORMAT_VERSION = 1

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
    told_at   REAL
);
"""

_TRIAL_COLUMNS = ("number", "status", "origin", "point", "x_encoded", "value", "error", "seed",
                  "fit_time", "acq_time", "eval_time", "asked_at", "told_at")


_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_OWNER_LINE = re.compile(rb"\A(pid \d+ since [0-9: -]+)?\s*\Z")
_OWNER_MAX = 200  # bytes; a lock file never holds more


def _identity_lock_dir() -> Path:
    """The private directory of the identity locks (``/tmp/treebo-locks-<uid>``)."""
    base = "/tmp" if os.path.isdir("/tmp") else tempfile.gettempdir()
    path = Path(base) / f"treebo-locks-{os.geteuid()}"
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    info = os.lstat(path)
    if (not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid()
            or info.st_mode & 0o022):
        raise OSError(f"the treebo lock directory {str(path)!r} is not a directory owned by "
                      "this user and writable only by it; remove it")
    return path


def _not_a_lock_file(path: Path, kind: str) -> OSError:
    return OSError(errno.EINVAL, f"the lock file {str(path)!r} is {kind}, not a regular file; "
                   "refusing to use it (remove it, a lock file is recreated when needed)")


def _open_lock_file(path: Path) -> tuple[int, bool]:
    """Open (creating it) a lock file without following a symlink.

    Returns the descriptor and whether it may be written. Anything but a
    regular file is refused before it is opened (a device or FIFO is never
    opened) and checked again after (the name may change in between).
    """
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        info = None
    if info is not None and stat.S_ISLNK(info.st_mode):
        raise _not_a_lock_file(path, f"a symbolic link (to {os.readlink(path)!r})")
    if info is not None and not stat.S_ISREG(info.st_mode):
        raise _not_a_lock_file(path, "a directory" if stat.S_ISDIR(info.st_mode) else "special")
    flags = os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | _O_CLOEXEC
    writable = True
    try:
        try:
            fd = os.open(path, flags | os.O_RDWR, 0o644)
        except PermissionError:  # another user's lock file: a read-only descriptor locks too
            fd = os.open(path, flags | os.O_RDONLY, 0o644)
            writable = False
    except OSError as error:
        if os.path.islink(path) or error.errno in (errno.ELOOP, errno.EMLINK):
            raise _not_a_lock_file(path, "a symbolic link") from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise _not_a_lock_file(path, "not a regular file")
    return fd, writable


def _lock_owner(fd: int) -> str:
    text = os.pread(fd, _OWNER_MAX + 1, 0)
    if _OWNER_LINE.match(text) and text.strip():
        return text.strip().decode("ascii")
    return "pid unknown"


def _write_owner(fd: int) -> None:
    """Write ``pid ... since ...`` into a lock file that is surely only a lock file."""
    info = os.fstat(fd)
    if (not stat.S_ISREG(info.st_mode) or info.st_nlink != 1 or info.st_uid != os.geteuid()
            or info.st_size > _OWNER_MAX or not _OWNER_LINE.match(os.pread(fd, _OWNER_MAX + 1, 0))):
        return  # locked as it is, never rewritten
    line = f"pid {os.getpid()} since {time.strftime('%Y-%m-%d %H:%M:%S')}".encode("ascii")
    os.ftruncate(fd, 0)
    os.pwrite(fd, line, 0)


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


# SQLite's primary result codes (the low byte of an extended code).
_SQLITE_BUSY, _SQLITE_READONLY, _SQLITE_IOERR, _SQLITE_CORRUPT = 5, 8, 10, 11
_SQLITE_FULL, _SQLITE_CANTOPEN, _SQLITE_NOTADB = 13, 14, 26

_DISK_ERRNOS = {errno.ENOSPC: "the disk is full (no space left on the device)",
                errno.EDQUOT: "the disk quota of this user is exceeded",
                errno.EFBIG: "the file size limit of this process (ulimit -f) is reached",
                errno.EROFS: "it is on a read-only file system",
                errno.EACCES: "permission denied", errno.EPERM: "permission denied"}


def _writable(path: Path) -> bool:
    if os.access in os.supports_effective_ids:
        return os.access(path, os.W_OK, effective_ids=True)
    return os.access(path, os.W_OK)  # pragma: no cover - platforms without effective ids


def _write_problem(path: Path) -> str | None:
    """Why this process cannot write the study at ``path``, or ``None``.

    SQLite writes the database and, next to it, its ``-wal`` and ``-shm``
    files, so the directory must be writable too.
    """
    real = Path(os.path.realpath(path))
    directory = real.parent
    try:
        read_only_fs = bool(os.statvfs(directory).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):  # pragma: no cover - no statvfs
        read_only_fs = False
    if read_only_fs:
        return f"it is on a read-only file system (the one holding {str(directory)!r})"
    if real.exists() and not _writable(real):
        return ("the file is read-only for this user (no write permission); "
                "read_study() can still read it")
    if not _writable(directory):
        return (f"its directory {str(directory)!r} is not writable by this user (SQLite "
                "writes the study's -wal and -shm files there)")
    return None


def _disk_problem(path: Path) -> str | None:
    """Why writing next to ``path`` may fail for lack of room, or ``None``."""
    try:
        info = os.statvfs(Path(os.path.realpath(path)).parent)
        if info.f_bavail == 0:
            return "the disk is full (no space left on the device)"
    except (OSError, AttributeError):  # pragma: no cover - no statvfs
        pass
    try:
        import resource
        limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    except (ImportError, OSError, AttributeError):  # pragma: no cover - not POSIX
        return None
    if limit != resource.RLIM_INFINITY:
        return f"the file size limit of this process (ulimit -f) is {limit} bytes"
    return None


def _access_error(path: Path, error: sqlite3.Error, *, writing: bool) -> StorageAccessError:
    """A :class:`StorageAccessError` naming ``path`` and the cause of SQLite's ``error``."""
    code = getattr(error, "sqlite_errorcode", None)
    primary = code & 0xFF if isinstance(code, int) else None
    name, text = str(path), str(error)
    if primary in (_SQLITE_NOTADB, _SQLITE_CORRUPT):
        return StorageAccessError(f"storage {name!r} is not a treebo study database: it is not "
                                  f"an SQLite database, or a damaged one ({text})")
    action = "written" if writing else "read"
    if primary in (_SQLITE_READONLY, _SQLITE_CANTOPEN):
        cause = _write_problem(path) or "SQLite could not open it for writing"
        return StorageAccessError(f"storage {name!r} cannot be {action}: {cause} ({text})")
    if primary in (_SQLITE_IOERR, _SQLITE_FULL):
        cause = _disk_problem(path) or "an input/output error of the disk or file system"
        return StorageAccessError(f"storage {name!r} cannot be {action}: {cause} ({text})")
    if primary == _SQLITE_BUSY:
        return StorageAccessError(f"storage {name!r} is locked by another program ({text})")
    return StorageAccessError(f"storage {name!r} cannot be {action}: {text}")


def _os_access_error(path: Path, error: OSError) -> OSError:
    """``error`` as a :class:`StorageAccessError` naming the study and the file, if it is
    one of the access or disk errors; any other OSError unchanged."""
    cause = _DISK_ERRNOS.get(error.errno)
    if cause is None:
        return error
    if error.errno in (errno.EACCES, errno.EPERM):
        cause = _write_problem(path) or cause
    where = f" ({error.filename})" if error.filename else ""
    return StorageAccessError(f"storage {str(path)!r} cannot be opened for writing: {cause} "
                              f"({error.strerror or error}{where})")


def _refuse_code_objects(conn: sqlite3.Connection, path: Path) -> None:
    """Refuse a file holding triggers or views: treebo creates neither, and a
    trigger would run on every write (it could delete or rewrite trials)."""
    found = conn.execute("SELECT type, name FROM sqlite_master "
                         "WHERE type IN ('trigger', 'view') ORDER BY name").fetchall()
    if found:
        listed = ", ".join(f"{kind} {name!r}" for kind, name in found)
        conn.close()
        raise ValueError(f"storage {str(path)!r} holds {listed}; a treebo study has no "
                         "triggers or views, so the file was changed by something else "
                         "and is not opened")


def _check_trial_columns(conn: sqlite3.Connection, path: Path) -> None:
    columns = tuple(row[1] for row in conn.execute("PRAGMA table_info(trials)"))
    if columns != _TRIAL_COLUMNS:
        conn.close()
        raise ValueError(f"storage {str(path)!r} is damaged: its trials table has the "
                         f"columns {list(columns)}, expected {list(_TRIAL_COLUMNS)}")


_STUDY_COLUMNS = ("key", "value")


def _refuse_foreign(conn: sqlite3.Connection, path: Path) -> None:
    """Refuse, before anything is written, an SQLite file that is not a treebo study.

    A treebo study holds the tables ``study`` (``key``, ``value``) and
    ``trials`` (:data:`_TRIAL_COLUMNS`), or some of them while it is being
    created, and nothing else; an empty database is a new study. Anything
    else belongs to another application and must be left as it is.
    """
    tables = sorted(row[0] for row in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' "
        "ESCAPE '\\'"))
    problem = None
    others = [name for name in tables if name not in ("study", "trials")]
    if others:
        problem = (f"it holds the table(s) {others}; a treebo study holds only 'study' and "
                   "'trials'")
    elif "study" in tables:
        columns = tuple(row[1] for row in conn.execute("PRAGMA table_info(study)"))
        if columns != _STUDY_COLUMNS:
            problem = (f"its study table has the columns {list(columns)}; a treebo study's "
                       f"has {list(_STUDY_COLUMNS)}")
    if problem is None:
        ids = conn.execute("PRAGMA application_id").fetchone()[0], conn.execute(
            "PRAGMA user_version").fetchone()[0]
        if ids != (0, 0):
            problem = (f"it carries application_id {ids[0]} and user_version {ids[1]}, which "
                       "treebo never sets")
    if problem is not None:
        conn.close()
        raise StorageAccessError(
            f"storage {str(path)!r} is not a treebo study: it is the SQLite database of "
            f"another application ({problem}); it was left unchanged: give the study a file "
            "of its own")


def _precheck_existing(path: Path) -> None:
    """Refuse a foreign or damaged file without writing anything, not even a lock file.

    Read through a read-only connection; a file that cannot be read this way
    is left to the main connection, which names the cause.
    """
    try:
        if not path.is_file() or path.stat().st_size == 0:
            return
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=30.0)
    except (OSError, sqlite3.Error):
        return
    try:
        try:
            _refuse_code_objects(conn, path)
            _refuse_foreign(conn, path)
        except sqlite3.Error:
            return
    finally:
        conn.close()


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
        """Record the description of a new study."""
        raise NotImplementedError

    def load_meta(self) -> dict[str, Any]:
        """The opened study's ``meta`` as it is now (the states of its last ask included)."""
        raise NotImplementedError

    def record_ask(self, trials: Sequence[Trial], state: dict[str, Any]) -> None:
        """Record newly asked (or re-offered) trials and update ``meta`` with ``state``."""
        raise NotImplementedError

    def record_tell(self, trial: Trial) -> None:
        """Record a told trial."""
        raise NotImplementedError

    def close(self) -> None:
        """Release the study (idempotent); it can be loaded again afterwards."""
        raise NotImplementedError


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
            raise StorageLockedError("this InMemoryStorage is in use by another optimizer; "
                                     "close that one first")
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
        Hold exclusive locks on the database file's identity while open (see
        the module documentation), so a second optimizer cannot write to the
        same study under any of its names and pending trials of a dead run
        are recognised as abandoned.
    """

    def __init__(self, path: str | os.PathLike, *, lock: bool = True):
        if not isinstance(path, (str, os.PathLike)) or str(path) in ("", ":memory:"):
            raise ValueError(f"storage must be a path to a database file, got {path!r}")
        self.path = Path(path)
        self.lock = bool(lock)
        self._conn: sqlite3.Connection | None = None
        self._lock_fds: list[int] = []
        self._mutex = threading.Lock()
        self._space: Space | None = None  # set by load(); trials are stored against it

    def __repr__(self) -> str:
        return f"SQLiteStorage({str(self.path)!r})"

    def __getstate__(self) -> dict:
        # A pickled storage (e.g. inside a fitted TreeBOSearchCV) is closed.
        return {"path": self.path, "lock": self.lock, "space": self._space}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["path"], lock=state["lock"])
        self._space = state.get("space")

    @property
    def name(self) -> str:
        return str(self.path)

    # -- connection -------------------------------------------------------------------
    def open(self, *, read_only: bool = False) -> SQLiteStorage:
        """Connect (and take the lock); a no-op when already open.

        With ``read_only=True`` nothing is written (no lock, no schema, no
        journal-mode change), so a study can be read while it runs.
        """
        if self._conn is not None:
            return self
        if not read_only:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as error:
                raise StorageAccessError(
                    f"storage {str(self.path)!r} cannot be created: its directory cannot be "
                    f"made ({error.strerror or error})") from None
            problem = _write_problem(self.path)
            if problem is not None:
                raise StorageAccessError(f"storage {str(self.path)!r} cannot be written: "
                                         f"{problem}")
            _precheck_existing(self.path)
            if self.lock:
                try:
                    self._acquire_lock()
                except OSError as error:
                    raise _os_access_error(self.path, error) from None
        conn = None
        try:
            conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None,
                                   check_same_thread=False)
            # Everything is checked before the first write (the WAL switch included):
            # a file that is not a treebo study is left byte for byte as it was.
            _refuse_code_objects(conn, self.path)
            _refuse_foreign(conn, self.path)
            tables = {row[0] for row in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'")}
            if read_only and not {"study", "trials"} <= tables:
                conn.close()
                raise StorageAccessError(f"storage {str(self.path)!r} is not a treebo study "
                                         "database: it has no study and trials tables")
            if "trials" in tables:
                _check_trial_columns(conn, self.path)
            if not read_only:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=FULL")
                conn.executescript(_SCHEMA)
                _check_trial_columns(conn, self.path)
        except BaseException as error:
            if conn is not None:
                conn.close()
            self._release_lock()
            if isinstance(error, sqlite3.Error):
                raise _access_error(self.path, error, writing=not read_only) from None
            raise
        self._conn = conn
        return self

    def close(self) -> None:
        """Close the connection and release the lock (idempotent)."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        self._release_lock()

    def __enter__(self) -> SQLiteStorage:
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _acquire_lock(self) -> None:
        if fcntl is None:  # pragma: no cover - Windows
            return
        real = Path(os.path.realpath(self.path))
        real.parent.mkdir(parents=True, exist_ok=True)
        fds: list[int] = []
        try:
            fds.append(self._lock_one(real.with_name(real.name + "-lock")))
            try:  # create the database under the path lock, so that it has an identity
                os.close(os.open(real, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_CLOEXEC, 0o644))
            except FileExistsError:
                pass
            for _ in range(5):
                before = os.stat(real)
                fds.append(self._lock_one(_identity_lock_dir()
                                          / f"{before.st_dev}-{before.st_ino}.lock"))
                after = os.stat(real)
                if (after.st_dev, after.st_ino) == (before.st_dev, before.st_ino):
                    break
                os.close(fds.pop())  # the file was replaced meanwhile: lock the new one
            else:  # pragma: no cover - a file replaced over and over
                raise OSError(f"storage {str(self.path)!r} keeps being replaced; cannot lock it")
        except BaseException:
            for fd in fds:
                os.close(fd)
            raise
        self._lock_fds = fds

    def _lock_one(self, lock_path: Path) -> int:
        """Open ``lock_path`` safely, ``flock`` it and return its descriptor."""
        fd, writable = _open_lock_file(lock_path)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            owner = _lock_owner(fd)
            os.close(fd)
            same = "" if lock_path.name.endswith("-lock") else ", under this or another name"
            raise StorageLockedError(
                f"storage {str(self.path)!r} is open in another optimizer ({owner}{same}); "
                "close it (Optimizer.close()) or wait for that process to end") from None
        except BaseException:
            os.close(fd)
            raise
        if writable:
            _write_owner(fd)
        return fd

    def _release_lock(self) -> None:
        fds, self._lock_fds = self._lock_fds, []
        for fd in fds:
            os.close(fd)  # closing the descriptor releases the flock

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
                    raise _access_error(self.path, error, writing=True) from error
                raise

    # -- study ------------------------------------------------------------------------
    def load_meta(self) -> dict[str, Any]:
        """Every ``study`` key, JSON-decoded; empty for a new study."""
        with self._mutex:
            rows = self._db.execute("SELECT key, value FROM study").fetchall()
        return {key: json.loads(value) for key, value in rows}

    def create(self, meta: dict[str, Any]) -> None:
        """Write the description of a new study (one transaction)."""
        meta = {"created_at": time.time(), **meta}
        self._write([("INSERT INTO study (key, value) VALUES (?, ?)", (key, json.dumps(value)))
                     for key, value in meta.items()])

    # -- trials -----------------------------------------------------------------------
    def load_trials(self) -> list[dict[str, Any]]:
        """Every trial row as a dict, by number; ``x_encoded`` as a float64 array."""
        with self._mutex:
            rows = self._db.execute(
                f"SELECT {', '.join(_TRIAL_COLUMNS)} FROM trials ORDER BY number").fetchall()
        trials = []
        for row in rows:
            record = dict(zip(_TRIAL_COLUMNS, row))
            try:
                record["x_encoded"] = np.frombuffer(record["x_encoded"], dtype="<f8").copy()
                record["point"] = json.loads(record["point"])
            except (TypeError, ValueError) as error:  # not bytes / not 8-byte floats / not JSON
                raise ValueError(f"storage {str(self.path)!r} is damaged: trial "
                                 f"{record['number']!r}: {error}") from None
            trials.append(record)
        return trials

    def open_study(self, space: Space) -> dict[str, Any]:
        """Open the study (taking the lock): its ``meta``, empty for a new study."""
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
        trials = []
        for row in self.load_trials():
            if row["number"] != len(trials):
                raise ValueError(f"storage {self.name!r} is damaged: trial numbers are not "
                                 "consecutive")
            problem = trial_row_problem(space, row)
            if problem is not None:
                raise ValueError(f"storage {self.name!r} is damaged: trial {row['number']}: "
                                 f"{problem}")
            trials.append(Trial(
                number=row["number"], x=space.point_from_json(row["point"]),
                x_encoded=row["x_encoded"], status=row["status"], value=row["value"],
                error=row["error"], origin=row["origin"], fit_time=row["fit_time"],
                acq_time=row["acq_time"], asked_at=row["asked_at"], told_at=row["told_at"],
                seed=row["seed"], eval_time=row["eval_time"]))
        return trials

    def record_ask(self, trials: Sequence[Trial], state: dict[str, Any]) -> None:
        """Insert (or, for re-offered pending trials, update) trials and save
        the random-stream states, in one transaction."""
        statements = [_upsert(self._row(t)) for t in trials]
        statements += [("INSERT OR REPLACE INTO study (key, value) VALUES (?, ?)",
                        (key, json.dumps(value))) for key, value in state.items()]
        self._write(statements)

    def record_tell(self, trial: Trial) -> None:
        """Insert or update one told trial, in one transaction."""
        self._write([_upsert(self._row(trial))])

    def _opened_space(self) -> Space:
        if self._space is None:
            raise RuntimeError(f"storage {self.name!r}: open_study(space) must come first")
        return self._space

    def _row(self, trial: Trial) -> dict[str, Any]:
        return {"number": trial.number, "status": trial.status, "origin": trial.origin,
                "point": self._opened_space().point_to_json(trial.x), "x_encoded": trial.x_encoded,
                "value": trial.value, "error": trial.error, "seed": trial.seed,
                "fit_time": trial.fit_time, "acq_time": trial.acq_time,
                "eval_time": trial.eval_time, "asked_at": trial.asked_at,
                "told_at": trial.told_at}


def _upsert(trial: dict[str, Any]) -> tuple[str, tuple]:
    row = dict(trial)
    row["x_encoded"] = np.ascontiguousarray(row["x_encoded"], dtype="<f8").tobytes()
    row["point"] = json.dumps(row["point"])
    columns = ", ".join(_TRIAL_COLUMNS)
    marks = ", ".join("?" for _ in _TRIAL_COLUMNS)
    return (f"INSERT OR REPLACE INTO trials ({columns}) VALUES ({marks})",
            tuple(row[c] for c in _TRIAL_COLUMNS))


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


_STATUSES = ("pending", "complete", "failed")
_ORIGINS = ("initial", "model", "random", "user")
_TIME_COLUMNS = ("fit_time", "acq_time", "eval_time", "asked_at", "told_at")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def trial_row_problem(space: Space, row: dict[str, Any]) -> str | None:
    """What is wrong with a stored trial row for ``space``, or ``None``.

    A resume trusts nothing in the file it did not check: a point is shown to
    the objective and told to the surrogate, so each stored value must be one
    of its dimension's values, the encoded point must be that point's
    encoding, and status, value, error, seed and timings must have their
    types.

    Parameters
    ----------
    space : Space
    row : dict
        One row of :meth:`SQLiteStorage.load_trials`.

    Returns
    -------
    str or None
        A description of the first problem found.
    """
    status = row["status"]
    if status not in _STATUSES:
        return f"status {status!r} (allowed: {', '.join(_STATUSES)})"
    if row["origin"] not in _ORIGINS:
        return f"origin {row['origin']!r} (allowed: {', '.join(_ORIGINS)})"
    point = row["point"]
    if not isinstance(point, list) or len(point) != len(space.dimensions):
        return f"point {point!r} (allowed: a list of {len(space.dimensions)} values)"
    for dim, value in zip(space.dimensions, point):
        if value is None and dim.active_if is not None:
            continue  # an inactive dimension of a conditional space; checked below
        problem = dim.number_problem(value)
        if problem is not None:
            return f"{dim.name!r} = {problem}"
    try:
        expected = space.encode([space.point_from_json(point)])[0]
        # Nulls exactly where a dimension is inactive, and nowhere else.
        if space.conditional and space.point_to_json(space.point_from_json(point)) != point:
            return (f"point {point!r} (allowed: null exactly for the inactive dimensions, "
                    f"as in {space.point_to_json(space.point_from_json(point))!r})")
    except ValueError as error:
        return f"point {point!r}: {error}"
    encoded = row["x_encoded"]
    # Proposed points are stored as the snapped candidate the point was decoded
    # from, which equals its re-encoding up to rounding in real columns.
    if encoded.shape != expected.shape or not np.allclose(encoded, expected, rtol=0,
                                                          atol=1e-9):
        return f"encoded point {encoded.tolist()!r} is not the encoding of point {point!r}"
    value = row["value"]
    if status == "complete":
        if not (_is_number(value) and math.isfinite(value)):
            return f"value {value!r} of a complete trial (allowed: a finite number)"
    elif value is not None:
        return f"value {value!r} of a {status} trial (allowed: none)"
    if row["error"] is not None and not isinstance(row["error"], str):
        return f"error {row['error']!r} (allowed: text or none)"
    if row["seed"] is not None and not (isinstance(row["seed"], int)
                                        and not isinstance(row["seed"], bool)
                                        and row["seed"] >= 0):
        return f"seed {row['seed']!r} (allowed: an integer >= 0 or none)"
    for column in _TIME_COLUMNS:
        if row[column] is not None and not (_is_number(row[column])
                                            and math.isfinite(row[column])):
            return f"{column} {row[column]!r} (allowed: a finite number or none)"
    return None


def open_study(storage: Storage, space: Space, settings: dict, streams: RandomStreams, *,
               seed_given: bool) -> tuple[list[Trial], dict[str, int]]:
    """Create a new study in ``storage``, or check the stored one is this study and load it.

    Parameters
    ----------
    storage : Storage
    space : Space
    settings : dict
        Everything besides the space and the seed that shapes the proposals;
        a stored study must have been run with the same.
    streams : RandomStreams
        Saved into a new study; set to the stored states when resuming.
    seed_given : bool
        Whether the user gave the seed (then it must match the stored one).

    Returns
    -------
    trials : list of Trial
        The stored trials (none for a new study).
    resume_offers : dict
        How often each pending trial (by number, as a string) was offered again.

    Raises
    ------
    StorageMismatchError
        If the stored study has another space, other settings or another seed.
    ValueError
        If the stored study is damaged.
    """
    meta = storage.open_study(space)
    description = space_description(space)
    if not meta:
        storage.create({"format_version": FORMAT_VERSION, "space": description,
                        "settings": settings, **streams.to_meta()})
        return [], {}
    # JSON turns tuples into lists; compare like with like.
    settings = json.loads(json.dumps(settings))
    if meta.get("space") == _legacy_space_description(space):
        description = meta["space"]  # stored before categories were canonical
    check_same_study(storage.name, meta, description, settings,
                     streams.seed if seed_given else None)
    try:
        streams.load_meta(meta)
    except ValueError as error:
        raise ValueError(f"storage {storage.name!r} is damaged: {error}") from None
    offers = meta.get("resume_offers", {})
    if not (isinstance(offers, dict) and all(
            isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in offers.values())):
        raise ValueError(f"storage {storage.name!r} is damaged: resume_offers {offers!r} "
                         "(allowed: trial numbers with counts >= 0)")
    trials = storage.study_trials()
    n_pending = sum(t.status == "pending" for t in trials)
    logger.info("resuming %s: %d trials told, %d pending", storage.name,
                len(trials) - n_pending, n_pending)
    return trials, dict(offers)


def space_description(space: Space) -> dict:
    """:meth:`Space.to_dict` with each category written canonically (see :func:`_canonical_repr`).

    Equal spaces get equal descriptions in every process: set elements are
    sorted (a set's ``repr`` follows its hash order, which changes with
    ``PYTHONHASHSEED``) and object addresses are removed (a category without a
    stable ``repr`` would make every reopening look like a different space).
    """
    desc = space.to_dict()
    for entry, dim in zip(desc["dimensions"], space.dimensions):
        if "categories" in entry:
            entry["categories"] = [_canonical_repr(c) for c in dim.categories]
    return desc


def _legacy_space_description(space: Space) -> dict:
    """The description studies were stored with before categories were canonical: the
    same text for every category but a set (whose elements it has in hash order)."""
    desc = space.to_dict()
    for dim in desc["dimensions"]:
        if "categories" in dim:
            dim["categories"] = [_stable_repr(c) for c in dim["categories"]]
    return desc


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def _stable_repr(text: str) -> str:
    return _ADDRESS.sub("", text)


def _canonical_repr(value: Any) -> str:
    """``repr(value)`` that is the same in every process for equal values.

    Sets and frozensets list their elements sorted by their canonical reprs,
    dicts their items sorted by key; tuples and lists are written element by
    element; anything else is its ``repr`` without object addresses. For
    values without sets or dicts this is their plain ``repr``.

    Parameters
    ----------
    value : object

    Returns
    -------
    str
    """
    if type(value) in (set, frozenset):
        items = ", ".join(sorted(_canonical_repr(v) for v in value))
        if type(value) is set:
            return f"{{{items}}}" if items else "set()"
        return f"frozenset({{{items}}})" if items else "frozenset()"
    if type(value) is dict:
        pairs = sorted((_canonical_repr(k), _canonical_repr(v)) for k, v in value.items())
        return "{" + ", ".join(f"{k}: {v}" for k, v in pairs) + "}"
    if type(value) is tuple:
        items = [_canonical_repr(v) for v in value]
        return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"
    if type(value) is list:
        return f"[{', '.join(_canonical_repr(v) for v in value)}]"
    return _stable_repr(repr(value))


def stable_params(params: dict) -> dict:
    """Estimator parameters as JSON-safe, address-free reprs (for comparison)."""
    out = {}
    for key in sorted(params):
        value = params[key]
        if isinstance(value, (bool, int, str)) or value is None:
            out[key] = value
        elif isinstance(value, float) and math.isfinite(value):
            out[key] = value
        else:
            out[key] = _stable_repr(repr(value))
    return out


def check_same_study(path: Any, meta: dict, space: dict, settings: dict,
                     seed: int | None) -> None:
    """Raise :class:`StorageMismatchError` naming what differs from the stored study."""
    if meta.get("format_version") != FORMAT_VERSION:
        raise StorageMismatchError(
            f"storage {str(path)!r} has format version {meta.get('format_version')!r}; this "
            f"treebo writes version {FORMAT_VERSION}")
    if meta.get("space") != space:
        stored, given = _describe_space(meta.get("space")), _describe_space(space)
        if stored == given:  # a difference the summary does not show: show the entries
            stored, given = (json.dumps(meta.get("space"), sort_keys=True),
                             json.dumps(space, sort_keys=True))
        raise StorageMismatchError(
            f"storage {str(path)!r} holds a study of a different search space:\n"
            f"  stored: {stored}\n"
            f"  given:  {given}\n"
            "use another storage file to start a new study")
    stored = meta.get("settings", {})
    differ = [key for key in sorted(set(stored) | set(settings))
              if stored.get(key) != settings.get(key)]
    if differ:
        lines = "\n".join(f"  {key}: stored {stored.get(key)!r}, given {settings.get(key)!r}"
                          for key in differ)
        raise StorageMismatchError(
            f"storage {str(path)!r} holds a study run with other settings:\n{lines}\n"
            "pass the stored settings to resume it, or use another storage file")
    if seed is not None and meta.get("seed") is not None and seed != meta["seed"]:
        raise StorageMismatchError(
            f"storage {str(path)!r} holds a study with random_state={meta['seed']!r}, given "
            f"random_state={seed!r}; pass the same seed or random_state=None to resume it")


def _describe_space(desc: dict | None) -> str:
    if not desc:
        return "nothing"
    parts = []
    for dim in desc["dimensions"]:
        if dim["type"] in (Real.__name__, Integer.__name__):
            extra = f"({dim['low']}, {dim['high']}, {dim['prior']})"
        elif "categories" in dim:
            extra = f"({', '.join(dim['categories'])})"
        else:
            extra = ""
        condition = ""
        if dim.get("active_if"):
            condition = " if " + " and ".join(f"{parent} in {codes}" for parent, codes
                                              in sorted(dim["active_if"].items()))
        parts.append(f"{dim['name']}={dim['type']}{extra}{condition}")
    form = "dicts" if desc.get("points_are_dicts") else "lists"
    return f"{', '.join(parts)}; points as {form}"
