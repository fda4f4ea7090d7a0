"""A ``/bin/sh`` script around placeholders, whose values reach the shell as data.

:func:`shell_script` turns a template such as ``echo '{c}' "{d}" {e}`` into a
script that refers to each value as a positional parameter, quoted for where
its placeholder stands (``"${N}"`` bare, ``${N}`` inside double quotes,
``'"${N}"'`` inside single quotes): the script runs as ``/bin/sh -c SCRIPT
treebo VALUE1 VALUE2 ...``, so the shell never parses a value, whatever it
holds. A small scanner follows the template's quoting (quotes, backslashes,
comments, and the extent of ``$(...)``, backquotes, ``${...}`` and
``$((...))``); a placeholder whose quoting it cannot tell is refused.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["shell_script", "Placeholder"]

#: A placeholder: the dimension's name, its conversion (``"r"`` for ``!r``, or
#: None) and its format spec.
Placeholder = tuple[str, str | None, str]

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


def shell_script(
    pieces: list[tuple[str, Placeholder | None]], command: Any
) -> tuple[str, list[Placeholder]]:
    """The script with each placeholder replaced by a reference to its positional parameter.

    Parameters
    ----------
    pieces : list of (str, Placeholder or None)
        The template as literal text, each piece followed by its placeholder
        (None after the last), as :class:`string.Formatter` parses it.
    command : object
        The template as the user gave it, for messages.

    Returns
    -------
    script : str
        The script for ``/bin/sh -c``: each placeholder is ``"${N}"``,
        ``${N}`` or ``'"${N}"'`` by the quoting it stands in.
    placeholders : list of Placeholder
        The placeholders in the order of their parameters ``1, 2, ...``.

    Raises
    ------
    ValueError
        For a placeholder whose quoting cannot be told (inside ``$(...)``,
        backquotes, ``${...}``, a here-document...), naming it and showing
        the safe form.
    """
    quoting = _ShellQuoting()
    script: list[str] = []
    fields: list[Placeholder] = []
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
