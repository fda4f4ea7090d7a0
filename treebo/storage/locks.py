"""The exclusive locks that keep a study to one live optimizer at a time (POSIX ``flock``).

Why the locks are keyed and kept as they are: the user guide's storage page,
"How a study is locked".
"""

from __future__ import annotations

import errno
import os
import re
import stat
import tempfile
import time
from pathlib import Path

from .base import StorageLockedError

try:  # POSIX only; elsewhere the lock is skipped (documented).
    import fcntl

    _HAVE_FLOCK = True
except ImportError:  # pragma: no cover - Windows
    _HAVE_FLOCK = False

__all__ = ["StudyLock"]

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
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o022:
        raise OSError(
            f"the treebo lock directory {str(path)!r} is not a directory owned by "
            "this user and writable only by it; remove it"
        )
    return path


def _not_a_lock_file(path: Path, kind: str) -> OSError:
    return OSError(
        errno.EINVAL,
        f"the lock file {str(path)!r} is {kind}, not a regular file; "
        "refusing to use it (remove it, a lock file is recreated when needed)",
    )


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
    if (
        not stat.S_ISREG(info.st_mode)
        or info.st_nlink != 1
        or info.st_uid != os.geteuid()
        or info.st_size > _OWNER_MAX
        or not _OWNER_LINE.match(os.pread(fd, _OWNER_MAX + 1, 0))
    ):
        return  # locked as it is, never rewritten
    line = f"pid {os.getpid()} since {time.strftime('%Y-%m-%d %H:%M:%S')}".encode("ascii")
    os.ftruncate(fd, 0)
    os.pwrite(fd, line, 0)


class StudyLock:
    """The locks of one study database: a path lock and an identity lock.

    The path lock is ``<real path>-lock``, next to the file every symlink
    resolves to; the identity lock is
    ``/tmp/treebo-locks-<uid>/<st_dev>-<st_ino>.lock``, shared by the file's
    hard links. The kernel releases both when the process ends, however it
    ends, so holding them proves that whoever asked the study's pending
    trials is gone.

    Parameters
    ----------
    path : pathlib.Path
        The database file, as the user named it (error messages use this name).
    """

    def __init__(self, path: Path):
        self.path = path
        self._fds: list[int] = []

    def acquire(self) -> None:
        """Take both locks, creating the database file (empty) if it is missing.

        Raises
        ------
        StorageLockedError
            If another process, or another storage of this process, holds
            either lock.
        OSError
            If a lock file is a symbolic link or not a regular file, or the
            lock directory is not private to this user.
        """
        if not _HAVE_FLOCK:  # pragma: no cover - Windows
            return
        real = Path(os.path.realpath(self.path))
        real.parent.mkdir(parents=True, exist_ok=True)
        fds: list[int] = []
        try:
            fds.append(self._lock_one(real.with_name(real.name + "-lock")))
            # The database itself is never flocked: closing any other descriptor
            # of it would drop the POSIX locks SQLite holds in this process.
            try:  # create the database under the path lock, so that it has an identity
                os.close(os.open(real, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_CLOEXEC, 0o644))
            except FileExistsError:
                pass
            for _ in range(5):
                before = os.stat(real)
                # Hard links share no directory: their common lock lives in one place.
                fds.append(
                    self._lock_one(_identity_lock_dir() / f"{before.st_dev}-{before.st_ino}.lock")
                )
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
        self._fds = fds

    def release(self) -> None:
        """Release the locks (idempotent). The lock files stay: removing one while
        another process opens it would let two holders coexist."""
        fds, self._fds = self._fds, []
        for fd in fds:
            os.close(fd)  # closing the descriptor releases the flock

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
                "close it (Optimizer.close()) or wait for that process to end"
            ) from None
        except BaseException:
            os.close(fd)
            raise
        if writable:
            _write_owner(fd)
        return fd
