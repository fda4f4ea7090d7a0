"""Checks of a study's SQLite file: can this process write it, is it a treebo study.

A file that belongs to another application, or holds triggers or views, is
refused before anything is written to it; SQLite's and the OS's errors become
a :class:`~treebo.storage.StorageAccessError` that names the file and the cause.
"""

from __future__ import annotations

import errno
import os
import sqlite3
from pathlib import Path

from .base import StorageAccessError

__all__ = [
    "TRIAL_COLUMNS",
    "EARLIER_TRIAL_COLUMNS",
    "access_error",
    "check_trial_columns",
    "os_access_error",
    "precheck_existing",
    "refuse_code_objects",
    "refuse_foreign",
    "write_problem",
]

#: The columns of a study's trials table, in order.
TRIAL_COLUMNS = (
    "number",
    "status",
    "origin",
    "point",
    "x_encoded",
    "value",
    "error",
    "seed",
    "fit_time",
    "acq_time",
    "eval_time",
    "asked_at",
    "told_at",
    "metrics",
)

#: The columns of a trials table written before trials held several metrics; opening
#: such a study for writing adds the ``metrics`` column.
EARLIER_TRIAL_COLUMNS = TRIAL_COLUMNS[:-1]


# SQLite's primary result codes (the low byte of an extended code).
_SQLITE_BUSY, _SQLITE_READONLY, _SQLITE_IOERR, _SQLITE_CORRUPT = 5, 8, 10, 11
_SQLITE_FULL, _SQLITE_CANTOPEN, _SQLITE_NOTADB = 13, 14, 26

_DISK_ERRNOS = {
    errno.ENOSPC: "the disk is full (no space left on the device)",
    errno.EDQUOT: "the disk quota of this user is exceeded",
    errno.EFBIG: "the file size limit of this process (ulimit -f) is reached",
    errno.EROFS: "it is on a read-only file system",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
}


def _writable(path: Path) -> bool:
    if os.access in os.supports_effective_ids:
        return os.access(path, os.W_OK, effective_ids=True)
    return os.access(path, os.W_OK)  # pragma: no cover - platforms without effective ids


def write_problem(path: Path) -> str | None:
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
        return (
            "the file is read-only for this user (no write permission); "
            "read_study() can still read it"
        )
    if not _writable(directory):
        return (
            f"its directory {str(directory)!r} is not writable by this user (SQLite "
            "writes the study's -wal and -shm files there)"
        )
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


def access_error(path: Path, error: sqlite3.Error, *, writing: bool) -> StorageAccessError:
    """A :class:`StorageAccessError` naming ``path`` and the cause of SQLite's ``error``."""
    code = getattr(error, "sqlite_errorcode", None)
    primary = code & 0xFF if isinstance(code, int) else None
    name, text = str(path), str(error)
    if primary in (_SQLITE_NOTADB, _SQLITE_CORRUPT):
        return StorageAccessError(
            f"storage {name!r} is not a treebo study database: it is not "
            f"an SQLite database, or a damaged one ({text})"
        )
    action = "written" if writing else "read"
    if primary in (_SQLITE_READONLY, _SQLITE_CANTOPEN):
        cause = write_problem(path) or "SQLite could not open it for writing"
        return StorageAccessError(f"storage {name!r} cannot be {action}: {cause} ({text})")
    if primary in (_SQLITE_IOERR, _SQLITE_FULL):
        cause = _disk_problem(path) or "an input/output error of the disk or file system"
        return StorageAccessError(f"storage {name!r} cannot be {action}: {cause} ({text})")
    if primary == _SQLITE_BUSY:
        return StorageAccessError(f"storage {name!r} is locked by another program ({text})")
    return StorageAccessError(f"storage {name!r} cannot be {action}: {text}")


def os_access_error(path: Path, error: OSError) -> OSError | StorageAccessError:
    """``error`` as a :class:`StorageAccessError` naming the study and the file, if it is
    one of the access or disk errors; any other OSError unchanged."""
    cause = None if error.errno is None else _DISK_ERRNOS.get(error.errno)
    if cause is None:
        return error
    if error.errno in (errno.EACCES, errno.EPERM):
        cause = write_problem(path) or cause
    where = f" ({error.filename})" if error.filename else ""
    return StorageAccessError(
        f"storage {str(path)!r} cannot be opened for writing: {cause} "
        f"({error.strerror or error}{where})"
    )


def refuse_code_objects(conn: sqlite3.Connection, path: Path) -> None:
    """Refuse a file holding triggers or views: treebo creates neither, and a
    trigger would run on every write (it could delete or rewrite trials)."""
    found = conn.execute(
        "SELECT type, name FROM sqlite_master WHERE type IN ('trigger', 'view') ORDER BY name"
    ).fetchall()
    if found:
        listed = ", ".join(f"{kind} {name!r}" for kind, name in found)
        conn.close()
        raise ValueError(
            f"storage {str(path)!r} holds {listed}; a treebo study has no "
            "triggers or views, so the file was changed by something else "
            "and is not opened"
        )


def check_trial_columns(conn: sqlite3.Connection, path: Path) -> bool:
    """Refuse a trials table of unknown columns; True for this version's, False for the earlier."""
    columns = tuple(row[1] for row in conn.execute("PRAGMA table_info(trials)"))
    if columns == EARLIER_TRIAL_COLUMNS:
        return False
    if columns != TRIAL_COLUMNS:
        conn.close()
        raise ValueError(
            f"storage {str(path)!r} is damaged: its trials table has the "
            f"columns {list(columns)}, expected {list(TRIAL_COLUMNS)}"
        )
    return True


_STUDY_COLUMNS = ("key", "value")


def refuse_foreign(conn: sqlite3.Connection, path: Path) -> None:
    """Refuse, before anything is written, an SQLite file that is not a treebo study.

    A treebo study holds the tables ``study`` (``key``, ``value``) and
    ``trials`` (:data:`TRIAL_COLUMNS`), or some of them while it is being
    created, and nothing else; an empty database is a new study. Anything
    else belongs to another application and must be left as it is.
    """
    tables = sorted(
        row[0]
        for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' "
            "ESCAPE '\\'"
        )
    )
    problem = None
    others = [name for name in tables if name not in ("study", "trials")]
    if others:
        problem = f"it holds the table(s) {others}; a treebo study holds only 'study' and 'trials'"
    elif "study" in tables:
        columns = tuple(row[1] for row in conn.execute("PRAGMA table_info(study)"))
        if columns != _STUDY_COLUMNS:
            problem = (
                f"its study table has the columns {list(columns)}; a treebo study's "
                f"has {list(_STUDY_COLUMNS)}"
            )
    if problem is None:
        ids = (
            conn.execute("PRAGMA application_id").fetchone()[0],
            conn.execute("PRAGMA user_version").fetchone()[0],
        )
        if ids != (0, 0):
            problem = (
                f"it carries application_id {ids[0]} and user_version {ids[1]}, which "
                "treebo never sets"
            )
    if problem is not None:
        conn.close()
        raise StorageAccessError(
            f"storage {str(path)!r} is not a treebo study: it is the SQLite database of "
            f"another application ({problem}); it was left unchanged: give the study a file "
            "of its own"
        )


def precheck_existing(path: Path) -> None:
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
            refuse_code_objects(conn, path)
            refuse_foreign(conn, path)
        except sqlite3.Error:
            return
    finally:
        conn.close()
