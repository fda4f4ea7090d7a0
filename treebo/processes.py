"""Running a command to its end: bounded waits, the tail of its output, nothing left behind.

:func:`collect_output` reads a command's output without ever waiting without
bound for its end (a process it left running may hold it open for ever);
:func:`end_processes` ends the command with every process it started, those
that left its process group included: each evaluation's environment carries a
marker (:data:`MARKER`), and every process of this user whose
``/proc/PID/environ`` holds it is killed. Without ``/proc`` only the process
group is ended; a process that clears its environment (``env -i``) escapes.
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import time
from typing import IO

__all__ = ["OutputTail", "collect_output", "end_processes", "EXIT_GRACE", "MARKER"]

#: Seconds the output of a command that exited is still read, while a
#: process it left running holds it open.
EXIT_GRACE = 0.5

#: The environment variable that marks the processes of one evaluation.
MARKER = "TREEBO_EVALUATION"

# Seconds between checks that the command exited while its output stays open.
_POLL = 0.1

# Rounds of killing the evaluation's processes: one may fork while the others are killed.
_KILL_ROUNDS = 20

# Seconds to wait for a killed command to be reaped.
_REAP_SECONDS = 5.0


class OutputTail:
    """The last ``limit`` bytes of a stream.

    Parameters
    ----------
    limit : int
        Bytes kept.
    """

    def __init__(self, limit: int):
        self.limit = limit
        self.data = bytearray()
        self.trimmed = False

    @property
    def cut(self) -> bool:
        """Whether bytes before the last ``limit`` were dropped."""
        return self.trimmed or len(self.data) > self.limit

    def add(self, chunk: bytes) -> None:
        self.data += chunk
        if len(self.data) > 2 * self.limit:  # trim in steps, not on every chunk
            del self.data[: -self.limit]
            self.trimmed = True

    def text(self) -> str:
        """The bytes kept, decoded, from the first whole line if some were dropped."""
        data = bytes(self.data[-self.limit :])
        if self.cut:
            data = data.partition(b"\n")[2]
        return data.decode("utf-8", errors="replace")


def collect_output(
    process: subprocess.Popen, sinks: dict[IO[bytes] | None, OutputTail], timeout: float | None
) -> bool:
    """Read the command's output until it is done; True if it ran past ``timeout``.

    Done is: it exited and its output ended, or it exited :data:`EXIT_GRACE`
    seconds ago while something it started holds the output open.

    Parameters
    ----------
    process : subprocess.Popen
        The command, its output pipes in binary mode.
    sinks : dict
        Each pipe and the :class:`OutputTail` that keeps what it gives.
    timeout : float or None
        Seconds the command may run.

    Returns
    -------
    bool
        Whether the command ran past ``timeout``.
    """
    deadline = None if timeout is None else time.monotonic() + timeout
    exited_at = None
    with selectors.DefaultSelector() as selector:
        for pipe in sinks:
            assert pipe is not None
            selector.register(pipe, selectors.EVENT_READ)
        while True:
            now = time.monotonic()
            if exited_at is None and process.poll() is not None:
                exited_at = now
            if not selector.get_map():
                if exited_at is not None:
                    return False
                try:  # it closed its output and runs on
                    process.wait(None if deadline is None else max(deadline - now, 0.0))
                except subprocess.TimeoutExpired:
                    return True
                return False
            if exited_at is not None:  # in time, whatever still holds its output
                if now >= exited_at + EXIT_GRACE:
                    return False
                wait = exited_at + EXIT_GRACE - now
            elif deadline is not None and now >= deadline:
                return True
            else:
                wait = _POLL if deadline is None else min(_POLL, deadline - now)
            for key, _ in selector.select(wait):
                chunk = os.read(key.fd, 1 << 16)
                if chunk:
                    sinks[key.fileobj].add(chunk)  # type: ignore[index]
                else:
                    selector.unregister(key.fileobj)


def end_processes(process: subprocess.Popen, marker: str) -> None:
    """Kill what the evaluation started, close its pipes and reap the command.

    Its process group, and every process of this user whose environment
    carries ``marker`` in :data:`MARKER` (those that left the group with
    ``setsid`` or a double fork), killed until none is left.

    Parameters
    ----------
    process : subprocess.Popen
        The command.
    marker : str
        The value of :data:`MARKER` in the command's environment.
    """
    for _ in range(_KILL_ROUNDS):
        _kill_group(process)
        if not _kill_marked(marker):
            break
        time.sleep(0.01)  # the killed may have forked before they died: look again
    for pipe in (process.stdout, process.stderr):
        if pipe is not None:
            pipe.close()
    try:
        process.wait(_REAP_SECONDS)
    except subprocess.TimeoutExpired:  # stuck in the kernel; nothing more can be done
        pass


def _kill_group(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _kill_marked(marker: str) -> bool:
    """Kill this user's processes whose environment carries ``marker``; True if any."""
    entry = f"\0{MARKER}={marker}\0".encode()
    try:
        pids = [name for name in os.listdir("/proc") if name.isdigit()]
    except OSError:  # no /proc: the process group is all that can be ended
        return False
    own = str(os.getpid())
    found = False
    for pid in pids:
        if pid == own:
            continue
        try:  # only this user's processes (all, for root) can be read
            with open(f"/proc/{pid}/environ", "rb") as file:
                environ = file.read()
        except OSError:  # gone, or another user's
            continue
        if entry in b"\0" + environ:
            try:
                os.kill(int(pid), signal.SIGKILL)
                found = True
            except OSError:
                pass
    return found
