"""A dependency-free text progress bar for long runs (minimize, benchmark grids)."""

from __future__ import annotations

import sys
import time
from typing import IO, Any


class ProgressBar:
    """One line of progress: ``label [#####.....] 12/100 best=0.398 4.1s``.

    On a terminal the line is redrawn in place; elsewhere (log files, CI) a
    line is printed at most every ``interval`` seconds and at the end, so logs
    stay short.

    Parameters
    ----------
    total : int
        Number of steps.
    label : str, default ""
        Printed before the bar.
    stream : file-like, default sys.stderr
    width : int, default 30
        Characters of the bar itself.
    interval : float, default 5.0
        Seconds between lines when the stream is not a terminal.
    """

    def __init__(
        self,
        total: int,
        label: str = "",
        stream: IO[str] | None = None,
        width: int = 30,
        interval: float = 5.0,
    ):
        self.total = max(int(total), 1)
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.width = width
        self.interval = interval
        self.count = 0
        self._start = time.perf_counter()
        self._last_print = -float("inf")
        self._tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._postfix = ""

    def update(self, steps: int = 1, **postfix: Any) -> None:
        """Advance by ``steps`` and show ``key=value`` pairs after the bar."""
        self.count = min(self.count + steps, self.total)
        if postfix:
            self._postfix = " ".join(f"{k}={_short(v)}" for k, v in postfix.items())
        now = time.perf_counter()
        if self._tty or self.count == self.total or now - self._last_print >= self.interval:
            self._draw(final=self.count == self.total)
            self._last_print = now

    def close(self) -> None:
        """Finish the line (if the bar did not reach its total)."""
        if self.count < self.total:
            self._draw(final=True)

    def _draw(self, final: bool) -> None:
        filled = int(self.width * self.count / self.total)
        bar = "#" * filled + "." * (self.width - filled)
        elapsed = time.perf_counter() - self._start
        left = ""
        if 0 < self.count < self.total:
            # The average pace so far; evaluations that slow down as the
            # history grows make this an underestimate early on.
            left = f" (about {_duration(elapsed / self.count * (self.total - self.count))} left)"
        text = (
            f"{self.label} [{bar}] {self.count}/{self.total} {self._postfix} {elapsed:.1f}s{left}"
        ).strip()
        if self._tty:
            self.stream.write("\r" + text + ("\n" if final else ""))
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f}s"
    if seconds < 7200:
        return f"{seconds / 60:.0f}min"
    return f"{seconds / 3600:.1f}h"


def _short(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)
