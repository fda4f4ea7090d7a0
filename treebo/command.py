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
  :data:`JSON_DEPTH` levels deep, and the field must hold a number.

The command is split like a shell would (:func:`shlex.split`) and run
without a shell, so a value is always one argument and nothing in it is
interpreted. ``shell=True`` runs the text as a ``/bin/sh`` script instead, and
the values are still never read by the shell as code: they are the script's
positional parameters (``/bin/sh -c SCRIPT treebo VALUE1 VALUE2 ...``), and
each placeholder becomes a reference to its parameter quoted for where it
stands, so that the command receives exactly the value, unsplit and
unexpanded, whether the placeholder is bare (``--lr={lr}``), inside double
quotes or inside single quotes. Where the quoting cannot be told (inside
``$(...)``, backquotes, ``${...}``, ``$((...))``, after a here-document,
right after a backslash or a ``$``), the command is refused when the
objective is made. A program that itself runs an argument as code
(``eval``, ``sh -c``, ``python -c``) runs a value placed there as code, with
or without ``shell``.

A placeholder may carry a format spec (``{lr:.3g}``), and ``{{``/``}}`` stand
for literal braces. A dimension left out of a point (an inactive dimension
of a conditional space) is replaced by an empty string, whatever its spec.

Each evaluation runs in a session of its own, with the environment variable
:data:`MARKER` set to a value unique to it. When the evaluation ends, every
process it started is killed: its process group, and every process of this
user whose environment carries its marker (found in ``/proc``; where
``/proc`` cannot be read, the process group only), which reaches processes
that left the group with ``setsid`` or a double fork; a process that clears
its environment escapes. A command that exits has its value read from what
it printed until then; a process it left running may still hold its output
open, which is read for at most :data:`EXIT_GRACE` seconds more.

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
import selectors
import shlex
import signal
import string
import subprocess
import time
import uuid
from collections.abc import Mapping, Sequence
from typing import IO, Any

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

#: Seconds the output of a command that exited is still read, while a
#: process it left running holds it open.
EXIT_GRACE = 0.5

#: The environment variable that marks the processes of one evaluation.
MARKER = "TREEBO_EVALUATION"

# A number standing on its own: not part of a word ("resnet50") or of a longer number.
_NUMBER = re.compile(
    r"(?<![\w.])[-+]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|nan|inf(?:inity)?)(?![\w])",
    re.IGNORECASE,
)

# A JSON string, or a bracket outside strings.
_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')

# Seconds between checks that the command exited while its output stays open.
_POLL = 0.1

# Rounds of killing the evaluation's processes: one may fork while the others are killed.
_KILL_ROUNDS = 20

# Seconds to wait for a killed command to be reaped.
_REAP_SECONDS = 5.0

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


# A placeholder: the dimension's name, its conversion (``!r``) and its format spec.
_Field = tuple[str, str | None, str]


def _parse(part: str, command: Any, names: list[str]) -> list[tuple[str, _Field | None]]:
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


def _formatted(values: Mapping[str, Any], field: _Field) -> str:
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
        cannot be told (the message shows the safe form), or an invalid
        ``timeout``.
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
        self._pieces = [_parse(part, command, names) for part in parts]
        if shell:
            self._script, self._fields = _shell_script(self._pieces[0], command)
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
        stdout, stderr = _Kept(STDOUT_BYTES), _Kept(STDERR_BYTES)
        try:
            timed_out = _collect(
                process, {process.stdout: stdout, process.stderr: stderr}, self.timeout
            )
        finally:  # also on Ctrl-C or a treebo timeout: leave no process behind
            _end(process, marker)
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

    def _value(self, stdout: _Kept, stderr: str, shown: str) -> float:
        text = stdout.text()
        cut = f" (of which the last {STDOUT_BYTES} bytes are read)" if stdout.cut else ""
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
            if len(line) > JSON_LINE_CHARS:
                raise CommandError(
                    f"the last JSON line printed by {shown} is {len(line)} characters "
                    f"long, more than the {JSON_LINE_CHARS} read"
                )
            if _deeper_than(line, JSON_DEPTH):
                raise CommandError(
                    f"the last JSON line printed by {shown} is nested deeper than "
                    f"{JSON_DEPTH} levels"
                )
            try:
                record = json.loads(line)
            except ValueError:  # not JSON, or an integer of too many digits
                continue
            return _field(record, self.json_field, shown)
        raise CommandError(
            _with_stderr(f"printed no JSON object line on standard output{cut}: {shown}", stderr)
        )


def _deeper_than(line: str, limit: int) -> bool:
    depth = 0
    for token in _JSON_TOKEN.finditer(line):
        bracket = token.group()
        if bracket in "[{":
            depth += 1
            if depth > limit:
                return True
        elif bracket in "]}":
            depth -= 1
    return False


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


def _with_stderr(message: str, stderr: str | None) -> str:
    tail = _tail(stderr or "")
    return f"{message}\nstandard error ends with:\n{tail}" if tail else message


class _Kept:
    """The last ``limit`` bytes of a stream."""

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


def _collect(
    process: subprocess.Popen, sinks: dict[IO[bytes] | None, _Kept], timeout: float | None
) -> bool:
    """Read the command's output until it is done; True if it ran past ``timeout``.

    Done is: it exited and its output ended, or it exited :data:`EXIT_GRACE`
    seconds ago while something it started holds the output open.
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


def _end(process: subprocess.Popen, marker: str) -> None:
    """Kill what the evaluation started, close its pipes and reap the command."""
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


class _Missing(dict):
    """Placeholder values; an inactive dimension (not in the point) is an empty string."""

    def __missing__(self, key: str) -> str:
        return ""


# -- the quoting of a shell script around its placeholders ---------------------------------

# Constructs inside which a placeholder's quoting is not followed.
_REGIONS = {"cmd": "$(...)", "bq": "`...`", "brace": "${...}", "arith": "$((...))"}

# Characters after which a '#' starts a comment.
_WORD_BREAKS = " \t\n;&|()<>"

# The keyword whose patterns end in a ')' that does not close a '$('.
_CASE = re.compile(r"case\b")

# Characters that name a special parameter after '$'.
_SPECIAL = "$?#!-@*0123456789"


class _Unclear(Exception):
    """A placeholder whose quoting is not followed; the message says why and the fix."""


class _ShellQuoting:
    """Follows the quoting of a ``/bin/sh`` script fed in pieces, between its placeholders.

    It knows single and double quotes, backslashes and comments, and finds the
    end of ``$(...)``, backquotes, ``${...}`` and ``$((...))``; anything else
    it cannot follow (a here-document, ``$'...'``) makes every later
    placeholder unclear.
    """

    def __init__(self) -> None:
        self.stack = ["top"]  # top, sq, dq, comment, or one of _REGIONS
        self.depth = [0]  # open parentheses, per entry of the stack
        self.lost: str | None = None
        self.escaped = False  # the text so far ends with an active backslash
        self.dollar = False  # the text so far ends with an active '$'
        self.word_start = True

    def context(self) -> str:
        """Where a placeholder at this point stands: bare, double or single."""
        if self.lost is not None:
            raise _Unclear(f"stands after {self.lost}")
        for state in self.stack:
            if state in _REGIONS:
                raise _Unclear(f"stands inside {_REGIONS[state]}")
        top = self.stack[-1]
        if top != "sq":
            if self.escaped:
                raise _Unclear("backslash")
            if self.dollar:
                raise _Unclear("dollar")
        return {"sq": "single", "dq": "double"}.get(top, "bare")

    def placeholder(self) -> None:
        """Account for a placeholder's text: part of a word."""
        self.word_start = False

    def _push(self, state: str) -> None:
        self.stack.append(state)
        self.depth.append(0)

    def _pop(self) -> None:
        self.stack.pop()
        self.depth.pop()

    def feed(self, text: str) -> None:
        """Follow the literal text from the start or a placeholder to the next placeholder."""
        i, n = 0, len(text)
        while i < n and self.lost is None:
            i = self._step(text, i, n)

    def _step(self, text: str, i: int, n: int) -> int:
        """Follow the character at ``i``; the index of the next one to follow."""
        c, state = text[i], self.stack[-1]
        if state == "sq":
            if c == "'":
                self._pop()
            return i + 1
        if state == "comment":
            if c == "\n":
                self._pop()
                self.word_start = True
            return i + 1
        if c == "\\":
            if state in ("brace", "arith"):
                self.lost = f"a backslash inside {_REGIONS[state]}"
            elif i + 1 == n:
                self.escaped = True
            self.word_start = False
            return i + 2
        if state == "bq":  # it ends at the first unescaped backquote
            if c == "`":
                self._pop()
            return i + 1
        if c == "$":
            return self._dollar(text, i, n)
        if state in ("brace", "arith"):
            return self._inside_expansion(c, text, i, n)
        if c == "`":
            self._push("bq")
        elif c == '"':
            if state == "dq":
                self._pop()
            else:
                self._push("dq")
        elif state == "dq":
            pass
        elif c == "'":
            self._push("sq")
        elif c == "#" and self.word_start:
            self._push("comment")
        elif c == "<" and text.startswith("<<", i):
            self.lost = "a here-document (<<)"
        elif c == "(" and self.word_start and text.startswith("((", i):
            self.lost = "((...))"  # bash's arithmetic, dash's nested subshells
        elif state == "cmd" and c == "(":
            self.depth[-1] += 1
        elif state == "cmd" and c == ")":
            if self.depth[-1] == 0:
                self._pop()
            else:
                self.depth[-1] -= 1
        elif state == "cmd" and self.word_start and _CASE.match(text, i):
            self.lost = "'case' inside $(...)"
        self.word_start = c in _WORD_BREAKS and state != "dq"
        return i + 1

    def _inside_expansion(self, c: str, text: str, i: int, n: int) -> int:
        state = self.stack[-1]
        if c in "'\"`" or (state == "brace" and c == "{"):
            self.lost = f"quotes or braces inside {_REGIONS[state]}"
        elif state == "brace" and c == "}":
            self._pop()
        elif state == "arith" and c == "(":
            self.depth[-1] += 1
        elif state == "arith" and c == ")":
            if self.depth[-1] > 0:
                self.depth[-1] -= 1
            elif text.startswith("))", i):
                self._pop()
                return i + 2
            else:
                self.lost = "an unbalanced ')' inside $((...))"
        return i + 1

    def _dollar(self, text: str, i: int, n: int) -> int:
        self.word_start = False
        if i + 1 == n:
            self.dollar = True
            return i + 1
        after = text[i + 1]
        if after == "(":
            if text.startswith("((", i + 1):
                self._push("arith")
                return i + 3
            self._push("cmd")
            self.word_start = True
            return i + 2
        if after == "{":
            self._push("brace")
            return i + 2
        if after in "'\"" and self.stack[-1] != "dq":
            self.lost = f"${after}...{after}"  # quoting of bash, read otherwise by other shells
            return i + 2
        if after in _SPECIAL:
            return i + 2
        return i + 1


def _shell_script(
    pieces: list[tuple[str, _Field | None]], command: Any
) -> tuple[str, list[_Field]]:
    """The script with each placeholder replaced by a reference to its positional parameter.

    Returns the script and the placeholders in the order of their parameters.
    """
    quoting = _ShellQuoting()
    script: list[str] = []
    fields: list[_Field] = []
    literal = ""  # since the last placeholder: `{{` and `}}` split it into pieces
    for text, field in pieces:
        script.append(text)
        literal += text
        if field is None:
            continue
        quoting.feed(literal)
        literal = ""
        try:
            where = quoting.context()
        except _Unclear as unclear:
            raise ValueError(_unclear_message(command, field[0], str(unclear))) from None
        quoting.placeholder()
        fields.append(field)
        number = len(fields)
        # Inside double quotes the reference needs no quotes of its own; inside single
        # quotes it closes them, stands in double quotes, and opens them again.
        script.append(
            {
                "bare": f'"${{{number}}}"',
                "double": f"${{{number}}}",
                "single": f"'\"${{{number}}}\"'",
            }[where]
        )
    return "".join(script), fields


def _unclear_message(command: Any, name: str, why: str) -> str:
    placeholder = f"{{{name}}}"
    start = f"command {command!r} with shell: the placeholder {placeholder}"
    if why == "backslash":
        return f"{start} follows a backslash, which would escape it; remove the backslash"
    if why == "dollar":
        return (
            f"{start} follows '$'; write {placeholder} alone for its value, "
            f"or '$'{placeholder} for a '$' before it"
        )
    return (
        f"{start} {why}, where treebo cannot tell how /bin/sh quotes it; set a variable "
        f'before it and use that instead: v={placeholder}; ... "$v" ...'
    )
