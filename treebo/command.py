"""An external command as the objective: one process per evaluation.

``treebo minimize --command 'python train.py --lr {lr} --depth {depth}'``
runs the command once per point, with each ``{name}`` replaced by the value
of that dimension, and reads the value from what it prints:

* by default, the last number on standard output (``loss 0.231`` and
  ``0.231`` both give 0.231; ``nan`` and ``inf`` count as numbers and make
  the trial failed);
* with ``json_field``, a field of the last line of standard output that is a
  JSON object (``a.b`` for a nested field). That line may be at most
  :data:`JSON_LINE_CHARS` characters long and nested at most
  :data:`JSON_DEPTH` levels deep, and the field must hold a number;
* with ``metrics`` (a study with several objectives or constraints), a dict
  of named numbers: the last non-empty line of standard output must be a JSON
  object (``{"error": 0.12, "latency": 0.031}``), within the same bounds, that
  holds a number for each name in ``metrics``; its other entries that are
  numbers are returned too.

The command is split like a shell would (:func:`shlex.split`) and run
without a shell, so a value is always one argument and nothing in it is
interpreted. ``shell=True`` runs the text as a ``/bin/sh`` script whose values
are its positional parameters, never parsed by the shell, whatever the quoting
around a placeholder (:mod:`treebo.shell_script`). A program that itself runs
an argument as code (``eval``, ``sh -c``, ``python -c``) runs a value placed
there as code, with or without ``shell``.

A placeholder may carry a format spec (``{lr:.3g}``), and ``{{``/``}}`` stand
for literal braces. A dimension left out of a point (an inactive dimension
of a conditional space) is replaced by an empty string, whatever its spec.

An evaluation ends with every process it started, those that left its
process group included, and its output is read with bounded waits
(:mod:`treebo.processes`): a command that exits has its value read from what it
printed until then.

A command that exits with a non-zero status, prints no number (or not the
JSON field, or a last line that is not a JSON object of the metrics), or
runs past ``timeout`` raises :class:`CommandError`, which
:func:`~treebo.minimize` records as a failed trial; the message ends with the
last lines of the command's standard error.
"""

from __future__ import annotations

import json
import math
import os
import re
import shlex
import string
import subprocess
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from .processes import MARKER, OutputTail, collect_output, end_processes
from .shell_script import Placeholder, shell_script
from .untrusted import BoundExceededError, load_json

__all__ = ["CommandObjective", "CommandError", "last_number"]

#: Lines and characters of standard error kept in a failure's message.
STDERR_LINES = 10
STDERR_CHARS = 2000

#: Bytes at the end of standard output kept to read the value from.
STDOUT_BYTES = 4 << 20

#: Bytes at the end of standard error kept for a failure's message.
STDERR_BYTES = 64 << 10

#: The longest JSON line read with ``json_field``, in characters.
JSON_LINE_CHARS = 1 << 20

#: The deepest nesting of arrays and objects in that line.
JSON_DEPTH = 100

# A number standing on its own: not part of a word ("resnet50") or of a longer number.
_NUMBER = re.compile(
    r"(?<![\w.])[-+]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|nan|inf(?:inity)?)(?![\w])",
    re.IGNORECASE,
)

# Characters of something the command printed that a message may quote.
_EXCERPT_CHARS = 80


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


def _excerpt(text: str) -> str:
    return repr(text if len(text) <= _EXCERPT_CHARS else text[:_EXCERPT_CHARS] + "...")


def _parse(part: str, command: Any, names: list[str]) -> list[tuple[str, Placeholder | None]]:
    """``part`` as (literal text, placeholder or None) pieces, each placeholder checked."""
    try:
        pieces = list(string.Formatter().parse(part))
        nested = [f for _, _, spec, _ in pieces if spec for f in string.Formatter().parse(spec)]
    except ValueError as error:
        raise ValueError(
            f"command {command!r}: {error} (write {{{{ and }}}} for literal braces)"
        ) from None
    for _, field, _, conversion in pieces + nested:
        if field is not None and field not in names:
            raise ValueError(
                f"command {command!r}: placeholder {{{field}}} names no "
                f"dimension; the dimensions are {names}"
            )
        if conversion not in (None, "r", "s", "a"):
            raise ValueError(
                f"command {command!r}: placeholder {{{field}!{conversion}}} has an unknown "
                "conversion; the conversions are !r, !s and !a"
            )
    return [
        (literal, None if field is None else (field, conversion, spec or ""))
        for literal, field, spec, conversion in pieces
    ]


def _formatted(values: Mapping[str, Any], field: Placeholder) -> str:
    name, conversion, spec = field
    if name not in values:
        return ""
    value = values[name]
    if conversion == "r":
        value = repr(value)
    elif conversion == "s":
        value = str(value)
    elif conversion == "a":
        value = ascii(value)
    if "{" in spec:
        spec = spec.format_map(_Missing(values))
    return format(value, spec)


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
    metrics : sequence of str, optional
        Return a dict of metrics instead of a number: the last non-empty
        line of standard output is a JSON object that holds a number for each
        of these names (the objectives and the constrained metrics of a
        study with ``objectives=``); its other number entries are kept too.
        Not with ``json_field``.
    timeout : float, optional
        Seconds the command may run; then it and every process it started
        are killed and the trial fails.
    shell : bool, default False
        Run the text as a ``/bin/sh`` script; the values are its positional
        parameters, never parsed by the shell.
    cwd : str, optional
        Working directory of the command.

    Raises
    ------
    ValueError
        For an empty command, a placeholder that names no dimension (the
        dimensions are listed), a placeholder of a shell command whose quoting
        cannot be told (the message shows the safe form), an invalid
        ``timeout``, or both ``json_field`` and ``metrics``.
    """

    def __init__(
        self,
        command: str | Sequence[str],
        names: Sequence[str],
        *,
        json_field: str | None = None,
        metrics: Sequence[str] | None = None,
        timeout: float | None = None,
        shell: bool = False,
        cwd: str | None = None,
    ):
        if json_field is not None and metrics is not None:
            raise ValueError(
                "json_field reads one number; with metrics the command prints a JSON object "
                "of metrics as its last line: give one of them"
            )
        if isinstance(metrics, str):
            raise ValueError(f"metrics must be a sequence of names, got {metrics!r}")
        if isinstance(command, str):
            parts = [command] if shell else shlex.split(command)
        else:
            parts = [str(p) for p in command]
            if shell:
                parts = [" ".join(parts)]
        if not parts or not parts[0].strip():
            raise ValueError(f"command must not be empty, got {command!r}")
        names = list(names)
        self._pieces = [_parse(part, command, names) for part in parts]
        if shell:
            self._script, self._fields = shell_script(self._pieces[0], command)
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
        self.metrics = None if metrics is None else [str(m) for m in metrics]
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
            The arguments to run. With ``shell``, ``["/bin/sh", "-c",
            script, "treebo", value, ...]``: the script refers to the values,
            one per placeholder in order, as its positional parameters.
        """
        values = dict(x) if isinstance(x, Mapping) else dict(zip(self.names, x))
        if self.shell:
            filled = [_formatted(values, field) for field in self._fields]
            return ["/bin/sh", "-c", self._script, "treebo", *filled]
        return [
            "".join(text + ("" if f is None else _formatted(values, f)) for text, f in pieces)
            for pieces in self._pieces
        ]

    def __call__(self, x: Mapping[str, Any] | Sequence[Any]) -> float | dict[str, float]:
        """Run the command for point ``x`` and return its value (with ``metrics``, a dict).

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
        shown = shlex.join(argv)
        marker = f"{os.getpid()}-{uuid.uuid4().hex}"
        try:
            # A session of its own, so that its process group is everything it started
            # but what left it; the marker finds those.
            process = subprocess.Popen(
                argv,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                stdin=subprocess.DEVNULL,
                cwd=self.cwd,
                env={**os.environ, MARKER: marker},
                start_new_session=True,
            )
        except (OSError, ValueError) as error:  # ValueError: a value with a null byte
            raise CommandError(f"cannot run {shown}: {error}".replace("\0", "\\0")) from None
        stdout, stderr = OutputTail(STDOUT_BYTES), OutputTail(STDERR_BYTES)
        try:
            timed_out = collect_output(
                process, {process.stdout: stdout, process.stderr: stderr}, self.timeout
            )
        finally:  # also on Ctrl-C or a treebo timeout: leave no process behind
            end_processes(process, marker)
        if timed_out:
            raise CommandError(
                _with_stderr(f"timed out after {self.timeout:g} s: {shown}", stderr.text())
            )
        if process.returncode != 0:
            status = process.returncode
            how = (
                f"was killed by signal {-status}" if status < 0 else f"exited with status {status}"
            )
            raise CommandError(_with_stderr(f"command {how}: {shown}", stderr.text()))
        return self._value(stdout, stderr.text(), shown)

    def _value(self, stdout: OutputTail, stderr: str, shown: str) -> float | dict[str, float]:
        text = stdout.text()
        cut = f" (of which the last {STDOUT_BYTES} bytes are read)" if stdout.cut else ""
        if self.metrics is not None:
            return _metrics(text, self.metrics, shown, cut, stderr)
        if self.json_field is None:
            value = last_number(text)
            if value is None:
                raise CommandError(
                    _with_stderr(f"printed no number on standard output{cut}: {shown}", stderr)
                )
            return value
        for line in reversed(text.splitlines()):
            line = line.strip()
            if not line.startswith("{"):
                continue
            try:
                record = load_json(
                    line,
                    what=f"the last JSON line printed by {shown}",
                    max_depth=JSON_DEPTH,
                    max_chars=JSON_LINE_CHARS,
                )
            except BoundExceededError as error:
                raise CommandError(str(error)) from None
            except ValueError:  # not JSON, or an integer of too many digits
                continue
            return _field(record, self.json_field, shown)
        raise CommandError(
            _with_stderr(f"printed no JSON object line on standard output{cut}: {shown}", stderr)
        )


def _field(record: Any, field: str, shown: str) -> float:
    value = record
    for key in field.split("."):
        if not isinstance(value, Mapping) or key not in value:
            keys = sorted(value) if isinstance(value, Mapping) else []
            listed = ", ".join(_excerpt(k) for k in keys[:10])
            more = f", and {len(keys) - 10} more" if len(keys) > 10 else ""
            raise CommandError(
                f"the JSON printed by {shown} has no field {field!r} (at {key!r}; "
                f"keys there: [{listed}{more}])"
            )
        value = value[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        text = json.dumps(value)
        raise CommandError(
            f"the JSON field {field!r} printed by {shown} is {_excerpt(text)}, not a number"
        )
    return value


def _metrics(text: str, names: list[str], shown: str, cut: str, stderr: str) -> dict[str, float]:
    """The JSON object of metrics on the last non-empty line of ``text``."""
    lines = text.rstrip().splitlines()
    if not lines:
        raise CommandError(
            _with_stderr(
                f"printed nothing on standard output{cut}, not a JSON object of the metrics "
                f"{names}: {shown}",
                stderr,
            )
        )
    line = lines[-1].strip()
    what = f"the last line printed by {shown}"
    try:
        record = load_json(line, what=what, max_depth=JSON_DEPTH, max_chars=JSON_LINE_CHARS)
    except BoundExceededError as error:
        raise CommandError(str(error)) from None
    except ValueError:  # not JSON, or an integer of too many digits
        record = None
    if not isinstance(record, dict):
        raise CommandError(
            _with_stderr(
                f"{what} is {_excerpt(line)}, not a JSON object of the metrics {names} "
                '(such as {"' + (names[0] if names else "loss") + '": 0.25}) on one line',
                stderr,
            )
        )
    for name in names:
        if name not in record:
            keys = sorted(map(str, record))
            listed = ", ".join(_excerpt(k) for k in keys[:10])
            more = f", and {len(keys) - 10} more" if len(keys) > 10 else ""
            raise CommandError(
                f"the JSON object printed by {shown} has no metric {name!r} (its keys: "
                f"[{listed}{more}])"
            )
        if not _is_number(record[name]):
            raise CommandError(
                f"the metric {name!r} printed by {shown} is "
                f"{_excerpt(json.dumps(record[name]))}, not a number"
            )
    # Numbers only: what else the object holds (a model's name, a list) is not a metric.
    return {k: v for k, v in record.items() if _is_number(v)}


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _with_stderr(message: str, stderr: str | None) -> str:
    tail = _tail(stderr or "")
    return f"{message}\nstandard error ends with:\n{tail}" if tail else message


class _Missing(dict):
    """Placeholder values; an inactive dimension (not in the point) is an empty string."""

    def __missing__(self, key: str) -> str:
        return ""
