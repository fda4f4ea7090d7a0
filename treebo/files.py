"""The files treebo writes for you, and the paths they go to.

:func:`write_atomically` writes every file treebo makes for a user (the
report page, figures, :func:`treebo.dump` files, the checkpoints of the
bundled problems): the data goes to a temporary file in the same directory,
is flushed to the disk, and only then renamed over the target. A write that
fails (a full disk, a quota, a file-size limit, an error while the data is
produced) leaves the previous file as it was, byte for byte, and removes the
temporary file; it raises :class:`WriteError`, which names the file.

:func:`check_output_file` and :func:`check_directory` check a path before a
run starts, so a path that cannot be used is one error about the argument
that names it rather than a failure after the work is done.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

__all__ = ["WriteError", "write_atomically", "check_output_file", "check_directory"]


class WriteError(OSError):
    """A file could not be written; the previous file, if there was one, is unchanged.

    An :class:`OSError` with ``errno``, ``strerror`` and ``filename`` (the
    path as it was given); its message reads ``cannot write report.html:
    File too large``.
    """

    def __str__(self) -> str:
        return f"cannot write {self.filename}: {self.strerror}"


def write_atomically(
    path: str | os.PathLike,
    data: bytes | str | Callable[[BinaryIO], object],
    *,
    encoding: str = "utf-8",
) -> Path:
    """Write ``data`` to ``path`` whole, or leave ``path`` as it was.

    The data is written to a temporary file next to ``path`` (a hidden
    ``.NAME.XXXXXXXX.tmp``), flushed and synced to the disk, given the mode
    the file should have, and renamed over ``path`` (``os.replace``, atomic
    on POSIX and Windows). On any failure the temporary file is removed and
    ``path`` keeps its previous content. A process killed while writing can
    leave its temporary file behind, never a partial ``path``.

    Parameters
    ----------
    path : str or os.PathLike
        The file to write; its directory must exist. A symbolic link is
        followed: the file it points to is replaced and the link kept.
    data : bytes, str or callable
        The content: bytes, a string (encoded with ``encoding``), or a
        function called with a binary file object to write into (such as
        ``lambda f: fig.savefig(f, format="png")``).
    encoding : str, default "utf-8"
        The encoding of a string ``data``.

    Returns
    -------
    pathlib.Path
        ``path``.

    Raises
    ------
    WriteError
        When the file system refuses the write (no space, a quota or
        file-size limit, no permission, ``path`` is a directory); it names
        ``path`` and the cause.
    Exception
        Whatever a callable ``data`` raises, after the temporary file is
        removed.

    Notes
    -----
    A new file gets the permissions a file made with :func:`open` would get
    (``0o666`` less the umask); a replaced file keeps its mode, and its owner
    and group where this user may give them. A file this user may not write
    is refused (``Permission denied``), although the rename alone would be
    allowed.
    """
    given = Path(path)
    target = Path(os.path.realpath(given))
    if target.is_dir():
        raise WriteError(errno.EISDIR, os.strerror(errno.EISDIR), str(given))
    try:
        previous: os.stat_result | None = os.stat(target)
    except FileNotFoundError:
        previous = None
    except OSError as error:
        raise WriteError(error.errno, error.strerror or str(error), str(given)) from error
    # Replacing needs only the directory's permission; a file its owner made read-only
    # is refused, as writing into it would be.
    if previous is not None and not os.access(target, os.W_OK):
        raise WriteError(errno.EACCES, os.strerror(errno.EACCES), str(given))
    try:
        fd, temporary = _create_temporary(target)
    except OSError as error:
        raise WriteError(error.errno, error.strerror or str(error), str(given)) from error
    try:
        with os.fdopen(fd, "wb") as handle:
            if callable(data):
                data(handle)
            else:
                handle.write(data.encode(encoding) if isinstance(data, str) else data)
            handle.flush()
            if previous is not None:
                _keep_owner(handle.fileno(), previous)
                # After the owner: a change of owner clears the set-user-ID bit.
                os.fchmod(handle.fileno(), stat.S_IMODE(previous.st_mode))
            os.fsync(handle.fileno())
        os.replace(temporary, target)
    except BaseException as error:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        if isinstance(error, OSError) and not isinstance(error, WriteError):
            raise WriteError(error.errno, error.strerror or str(error), str(given)) from error
        raise
    # The rename is in the directory: sync it too, so the new file survives a power cut.
    # Some file systems cannot sync a directory; the file itself is written either way.
    with contextlib.suppress(OSError):
        directory = os.open(target.parent, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)
    return given


def _keep_owner(fd: int, previous: os.stat_result) -> None:
    """Give the new file the old one's owner and group, as far as this user may.

    Root may give both; another user only a group of its own. Otherwise the new
    file is this user's, as any file it creates.
    """
    if (previous.st_uid, previous.st_gid) == (os.fstat(fd).st_uid, os.fstat(fd).st_gid):
        return
    try:
        os.fchown(fd, previous.st_uid, previous.st_gid)
    except OSError:
        with contextlib.suppress(OSError):
            os.fchown(fd, -1, previous.st_gid)


def _create_temporary(target: Path) -> tuple[int, Path]:
    """A new file next to ``target``, opened for writing, with ``open``'s default mode.

    ``tempfile.mkstemp`` would make it ``0o600`` whatever the umask; ``os.open`` with
    ``0o666`` lets the umask decide, as for any file a program creates.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    # Long enough that a name taken by another writer is rare; O_EXCL catches it anyway.
    for _ in range(100):
        temporary = target.with_name(f".{target.name[:200]}.{secrets.token_hex(4)}.tmp")
        try:
            return os.open(temporary, flags, 0o666), temporary
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary name", str(target.parent))


def check_output_file(path: str | os.PathLike, name: str) -> Path:
    """``path`` as a Path if a file can be written there; a ValueError otherwise.

    A file can be written when ``path`` is not a directory and its folder
    exists and is writable, or can be made (its nearest existing parent is
    a writable directory).

    Parameters
    ----------
    path : str or os.PathLike
        The file a command or function will write.
    name : str
        The argument or option that names it (``"--output"``), for the
        message.

    Returns
    -------
    pathlib.Path

    Raises
    ------
    ValueError
        ``"{name} {path}: ..."`` with the cause.
    """
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{name} {path}: is a directory, not a file")
    real = Path(os.path.realpath(path)) if path.is_symlink() else path
    _check_writable_folder(real.parent, path, name)
    return path


def check_directory(path: str | os.PathLike, name: str) -> Path:
    """``path`` as a Path if it is a writable directory or can be made; a ValueError otherwise.

    Parameters
    ----------
    path : str or os.PathLike
        A directory that files will be written into.
    name : str
        The argument or option that names it (``"--checkpoint-dir"``,
        ``"checkpoint_dir"``), for the message.

    Returns
    -------
    pathlib.Path

    Raises
    ------
    ValueError
        ``"{name} {path}: ..."`` with the cause, such as ``is a file, not a
        directory``.
    """
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise ValueError(f"{name} {path}: {_not_a_directory(path)}")
    _check_writable_folder(path, path, name)
    return path


def _check_writable_folder(folder: Path, given: Path, name: str) -> None:
    """A ValueError unless ``folder`` is, or can be made as, a directory this user writes in."""
    if os.path.lexists(folder) and not folder.exists():
        raise ValueError(f"{name} {given}: {folder} is a symbolic link to nothing")
    existing = next(p for p in (folder, *folder.parents) if p.exists() or p == p.parent)
    if not existing.is_dir():
        where = "" if existing == given else f"{existing} "
        raise ValueError(f"{name} {given}: {where}{_not_a_directory(existing)}")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise ValueError(f"{name} {given}: {existing} is not writable by this user")


def _not_a_directory(path: Path) -> str:
    return "is a file, not a directory" if path.is_file() else "is not a directory"
