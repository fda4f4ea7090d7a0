"""An external command as the objective: one process per evaluation.

``treebo minimize --command 'python train.py --lr {lr} --depth {depth}'``
runs the command once per point, with each ``{name}`` replaced by the value
of that dimension, and reads the value from what it prints:

* by default, the last number on standard output (``loss 0.231`` and
  ``0.231`` both give 0.231; ``nan`` and ``inf`` count as numbers and make
  the trial failed);
* with ``json_field``, a field of the last line of standard output that is a
  JSON object (``a.b`` for a nested field).

The command is split like a shell would (:func:`shlex.split`) and run
without a shell, so a value is always one argument and nothing in it is
interpreted; ``shell=True`` runs the text with ``/bin/sh -c`` instead, each
value quoted. A placeholder may carry a format spec (``{lr:.3g}``), and
``{{``/``}}`` stand for literal braces. A dimension left out of a point (an
inactive dimension of a conditional space) is replaced by an empty string.

A command that exits with a non-zero status, prints no number (or not the
JSON field), or runs past ``timeout`` raises :class:`CommandError`, which
:func:`~treebo.minimize` records as a failed trial; the message ends with the
last lines of the command's standard error.
"""

from __future__ import annotations

import json
import math
import os
import re
import shlex
import signal
import string
import subprocess
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["CommandObjective", "CommandError", "last_number"]

#: Lines and characters of standard error kept in a failure's message.
STDERR_LINES = 10
STDERR_CHARS = 2000

# A number standing on its own: not part of a word ("resnet50") or of a longer number.
_NUMBER = re.compile(
    r"(?<![\w.])[-+]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|nan|inf(?:inity)?)(?![\w])",
    re.IGNORECASE,
)


class CommandError(RuntimeError):
    """The command failed, timed out, or printed no value."""


def last_number(text: str) -> float | None:
    """The last number in ``text``, or None.

    Parameters
    ----------
    text : str

    Returns
    -------
    float or None
    """
    found = _NUMBER.findall(text)
    return float(found[-1]) if found else None


def _tail(text: str) -> str:
    lines = text.rstrip().splitlines()[-STDERR_LINES:]
    tail = "\n".join(lines)
    return tail[-STDERR_CHARS:]


class CommandObjective:
    """Evaluate a point by running a command (see the module documentation).

    Parameters
    ----------
    command : str or list of str
        The command with ``{name}`` placeholders; a string is split with
        :func:`shlex.split` (unless ``shell``).
    names : sequence of str
        The dimension names the placeholders may use.
    json_field : str, optional
        Read this field (dotted for a nested one) of the last JSON object line
        of standard output instead of the last number.
    timeout : float, optional
        Seconds the command may run; then it and every process it started
        (its process group) are killed and the trial fails.
    shell : bool, default False
        Run the text through ``/bin/sh -c``, each value quoted.
    cwd : str, optional
        Working directory of the command.

    Raises
    ------
    ValueError
        For an empty command, a placeholder that names no dimension (the
        dimensions are listed), or an invalid ``timeout``.
    """

    def __init__(
        self,
        command: str | Sequence[str],
        names: Sequence[str],
        *,
        json_field: str | None = None,
        timeout: float | None = None,
        shell: bool = False,
        cwd: str | None = None,
    ):
        if isinstance(command, str):
            parts = [command] if shell else shlex.split(command)
        else:
            parts = [str(p) for p in command]
            if shell:
                parts = [" ".join(parts)]
        if not parts or not parts[0].strip():
            raise ValueError(f"command must not be empty, got {command!r}")
        names = list(names)
        for part in parts:
            try:
                fields = [f for _, f, _, _ in string.Formatter().parse(part) if f is not None]
            except ValueError as error:
                raise ValueError(
                    f"command {command!r}: {error} (write {{{{ and }}}} for literal braces)"
                ) from None
            for field in fields:
                if field not in names:
                    raise ValueError(
                        f"command {command!r}: placeholder {{{field}}} names no "
                        f"dimension; the dimensions are {names}"
                    )
        if timeout is not None and not (
            isinstance(timeout, (int, float))
            and not isinstance(timeout, bool)
            and math.isfinite(timeout)
            and timeout > 0
        ):
            raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
        self.parts = parts
        self.names = names
        self.json_field = json_field
        self.timeout = timeout
        self.shell = bool(shell)
        self.cwd = cwd

    def __repr__(self) -> str:
        return f"CommandObjective({' '.join(self.parts)!r})"

    def arguments(self, x: Mapping[str, Any] | Sequence[Any]) -> list[str]:
        """The command line for point ``x``, with its values in the placeholders.

        Parameters
        ----------
        x : dict or sequence
            The point: a dict by dimension name, or a sequence in ``names``
            order. A dimension missing from it fills its placeholders with an
            empty string.

        Returns
        -------
        list of str
            The arguments to run (``["/bin/sh", "-c", text]`` with ``shell``).
        """
        values = dict(x) if isinstance(x, Mapping) else dict(zip(self.names, x))
        if self.shell:
            filled = _Missing({k: _Quoted(v) for k, v in values.items()})
            return ["/bin/sh", "-c", self.parts[0].format_map(filled)]
        return [part.format_map(_Missing(values)) for part in self.parts]

    def __call__(self, x: Mapping[str, Any] | Sequence[Any]) -> float:
        """Run the command for point ``x`` and return its value.

        Parameters
        ----------
        x : dict or sequence
            As for :meth:`arguments`.

        Raises
        ------
        CommandError
            On a non-zero exit status, a timeout, or output without the value.
        """
        argv = self.arguments(x)
        shown = argv[2] if self.shell else shlex.join(argv)
        try:
            # A session of its own, so that a timeout kills whatever it started too.
            process = subprocess.Popen(
                argv,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                stdin=subprocess.DEVNULL,
                text=True,
                cwd=self.cwd,
                start_new_session=True,
            )
        except OSError as error:
            raise CommandError(f"cannot run {shown}: {error}") from None
        try:
            stdout, stderr = process.communicate(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            _kill_group(process)
            _, stderr = process.communicate()
            raise CommandError(
                _with_stderr(f"timed out after {self.timeout:g} s: {shown}", stderr)
            ) from None
        except BaseException:  # Ctrl-C, a treebo timeout: leave no process behind
            _kill_group(process)
            process.wait()
            raise
        if process.returncode != 0:
            status = process.returncode
            how = (
                f"was killed by signal {-status}" if status < 0 else f"exited with status {status}"
            )
            raise CommandError(_with_stderr(f"command {how}: {shown}", stderr))
        return self._value(stdout, stderr, shown)

    def _value(self, stdout: str, stderr: str, shown: str) -> float:
        if self.json_field is None:
            value = last_number(stdout)
            if value is None:
                raise CommandError(
                    _with_stderr(f"printed no number on standard output: {shown}", stderr)
                )
            return value
        for line in reversed(stdout.splitlines()):
            line = line.strip()
            if not line.startswith("{"):
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            return _field(record, self.json_field, shown)
        raise CommandError(
            _with_stderr(f"printed no JSON object line on standard output: {shown}", stderr)
        )


def _field(record: Any, field: str, shown: str) -> Any:
    value = record
    for key in field.split("."):
        if not isinstance(value, Mapping) or key not in value:
            keys = sorted(value) if isinstance(value, Mapping) else []
            raise CommandError(
                f"the JSON printed by {shown} has no field {field!r} (at {key!r}; "
                f"keys there: {keys})"
            )
        value = value[key]
    return value


def _with_stderr(message: str, stderr: str | None) -> str:
    tail = _tail(stderr or "")
    return f"{message}\nstandard error ends with:\n{tail}" if tail else message


def _kill_group(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class _Missing(dict):
    """Placeholder values; an inactive dimension (not in the point) is an empty string."""

    def __missing__(self, key: str) -> str:
        return ""


class _Quoted:
    """A value that formats as itself, then quoted for ``/bin/sh``."""

    def __init__(self, value: Any):
        self.value = value

    def __format__(self, spec: str) -> str:
        return shlex.quote(format(self.value, spec))
