"""Reading text that treebo did not write in this process: bounded in size and depth.

A space file, the values a study file stores (its space description, its
settings, its trials' points) and the category and setting reprs inside them
can come from anyone. Each is parsed here, with bounds on its size and on its
nesting checked *before* the parser sees it, so that crafted input is one
``ValueError`` naming what was read and why, never a ``RecursionError``, a
``MemoryError`` or minutes of work:

==================================================  =========================
what                                                at most
==================================================  =========================
a space file (JSON or TOML)                         :data:`MAX_FILE_BYTES`
a value stored in a study file (JSON)               :data:`MAX_STORED_CHARS`
a stored category or setting repr (Python literal)  :data:`MAX_REPR_CHARS`
nesting of any of them                              :data:`MAX_DEPTH` levels
==================================================  =========================

Messages show untrusted text only as an :func:`excerpt`.
"""

from __future__ import annotations

import ast
import io
import json
import os
import re
import reprlib
import tokenize
from typing import Any

__all__ = [
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "MAX_STORED_CHARS",
    "MAX_REPR_CHARS",
    "EXCERPT_CHARS",
    "BoundExceededError",
    "excerpt",
    "shorten_reprs",
    "read_file",
    "load_json",
    "load_toml",
    "literal",
    "check_literal_bounds",
]

#: Levels of nesting read: lists, tables and objects in JSON and TOML (a dotted
#: TOML key counts a level per part), brackets and operators in a repr.
MAX_DEPTH = 100
#: Bytes of a space file.
MAX_FILE_BYTES = 4 * 2**20
#: Characters of one value a study file stores (its space, its settings, a point...).
MAX_STORED_CHARS = 16 * 2**20
#: Characters of one stored category or setting repr.
MAX_REPR_CHARS = 65_536
#: Characters of untrusted text a message shows.
EXCERPT_CHARS = 80


class BoundExceededError(ValueError):
    """Untrusted text is larger, or nested deeper, than it may be; the message names it."""


def _amount(limit: int, unit: str) -> str:
    if limit % 2**20 == 0:
        return f"{limit // 2**20} MiB"
    return f"{limit:,} {unit}"


def _check_size(size: int, limit: int, what: str, unit: str = "characters") -> None:
    if size > limit:
        verb = "larger" if unit == "bytes" else "longer"
        raise BoundExceededError(f"{what} is {verb} than {_amount(limit, unit)} ({size:,} {unit})")


def _too_deep(what: str, max_depth: int) -> BoundExceededError:
    return BoundExceededError(f"{what} is nested deeper than {max_depth} levels")


_EXCERPT = reprlib.Repr()
_EXCERPT.maxlevel = 3
_EXCERPT.maxstring = EXCERPT_CHARS
_EXCERPT.maxother = EXCERPT_CHARS
_EXCERPT.maxlist = _EXCERPT.maxtuple = _EXCERPT.maxset = _EXCERPT.maxdict = 6


def excerpt(value: Any, limit: int = EXCERPT_CHARS) -> str:
    """The ``repr`` of ``value``, cut to at most ``limit`` characters, for a message.

    Only the first levels and items of a container are written (so a value
    nested thousands deep costs no recursion); a string cut short ends in
    ``…`` inside its quotes, anything else cut short ends in ``…``.

    Parameters
    ----------
    value : object
        Untrusted text, or a value parsed from it.
    limit : int, default ``EXCERPT_CHARS``
        Characters at most (at least 8).

    Returns
    -------
    str
    """
    limit = max(limit, 8)
    if isinstance(value, str):
        text = repr(value[: limit + 1])
        if len(value) <= limit and len(text) <= limit:
            return text
        return text[: limit - 2] + "…" + text[-1]
    try:
        text = _EXCERPT.repr(value)
    except Exception:  # a repr that fails (an int too long to write) still names the type
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def shorten_reprs(
    message: str, values: Any, limit: int = EXCERPT_CHARS, max_chars: int = 400
) -> str:
    """``message`` with the long ``repr`` of each of ``values`` replaced by its excerpt.

    For the messages of code that names a value by its whole ``repr`` (a
    dimension's name, a bound), raised while reading untrusted text.

    Parameters
    ----------
    message : str
    values : iterable of object
        Values whose reprs may appear in ``message``; those longer than
        ``limit`` are replaced by their :func:`excerpt`.
    limit : int, default ``EXCERPT_CHARS``
    max_chars : int, default 400
        What is left is cut to this many characters (ending in ``…``).

    Returns
    -------
    str
    """
    for value in values:
        try:
            text = repr(value)
        except Exception:  # a repr that cannot be written is not in the message either
            continue
        if len(text) > limit:
            message = message.replace(text, excerpt(value, limit))
    return message if len(message) <= max_chars else message[: max_chars - 1] + "…"


def read_file(path: str | os.PathLike, *, what: str, max_bytes: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of the file ``path``, read only if it holds at most ``max_bytes``.

    Parameters
    ----------
    path : str or os.PathLike
    what : str
        The file as messages name it (``"space file 'space.toml'"``).
    max_bytes : int, default ``MAX_FILE_BYTES``

    Returns
    -------
    bytes

    Raises
    ------
    BoundExceededError
        If the file holds more than ``max_bytes``.
    OSError
        If it cannot be read.
    """
    with open(path, "rb") as handle:
        data = handle.read(max_bytes + 1)
        if len(data) > max_bytes:
            size = os.fstat(handle.fileno()).st_size
            _check_size(max(size, len(data)), max_bytes, what, "bytes")
    return data


# A JSON string (its end optional, so that a missing quote cannot make the scan
# go back) or a bracket. The unrolled loops never backtrack: the scan is linear.
_JSON_TOKENS = re.compile(r'"[^"\\]*+(?:\\[\s\S][^"\\]*+)*+"?|[\[\]{}]')
# TOML's strings (a multi-line one may end in up to five quotes, two of them
# its own) and comments, brackets, and what separates the parts of a dotted key
# (each part nests a table) from the next key or value.
_TOML_TOKENS = re.compile(
    r'"""[^"\\]*+(?:(?:\\[\s\S]|"(?!""))[^"\\]*+)*+(?:"{3,5}|\Z)'
    r"|'''[\s\S]*?(?:'{3,5}|\Z)"
    r'|"[^"\\\n]*+(?:\\.[^"\\\n]*+)*+"?'
    r"|'[^'\n]*+'?"
    r"|#[^\n]*+"
    r"|[\[\]{}.=,\n]"
)


def _check_json_depth(text: str, what: str, max_depth: int) -> None:
    depth = 0
    for match in _JSON_TOKENS.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > max_depth:
                raise _too_deep(what, max_depth)
        elif token in "]}":
            depth -= 1


def _check_toml_depth(text: str, what: str, max_depth: int) -> None:
    # Levels: the document, each open bracket, and each dot of the key or value
    # being read (a float's dot counts too: an overestimate by one at most).
    depth, dots = 1, [0]
    for match in _TOML_TOKENS.finditer(text):
        token = match.group()
        if token == ".":
            dots[-1] += 1
            depth += 1
        elif token in ("[", "{"):
            dots.append(0)
            depth += 1
        elif token in ("]", "}"):
            if len(dots) > 1:
                depth -= 1 + dots.pop()
        elif token in ("=", ",", "\n"):
            depth -= dots[-1]
            dots[-1] = 0
        if depth > max_depth:
            raise _too_deep(what, max_depth)


def _check_parsed_depth(value: Any, what: str, max_depth: int) -> None:
    """The exact nesting of a parsed document, walked without recursion."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item
        if depth > max_depth:
            raise _too_deep(what, max_depth)
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))


def _as_text(text: str | bytes) -> str:
    if isinstance(text, bytes):
        return text.decode("utf-8")  # a UnicodeDecodeError is a ValueError
    if not isinstance(text, str):
        raise ValueError(f"not text but {type(text).__name__}")
    return text


def load_json(
    text: str | bytes,
    *,
    what: str,
    max_depth: int = MAX_DEPTH,
    max_chars: int = MAX_STORED_CHARS,
) -> Any:
    """The value the JSON ``text`` holds, if it is at most ``max_chars`` long and
    ``max_depth`` deep.

    Parameters
    ----------
    text : str or bytes
        JSON; bytes are UTF-8.
    what : str
        The text as messages name it (``"stored 'space'"``).
    max_depth : int, default ``MAX_DEPTH``
        Arrays and objects nested at most this deep.
    max_chars : int, default ``MAX_STORED_CHARS``

    Returns
    -------
    object

    Raises
    ------
    BoundExceededError
        ``"<what> is nested deeper than 100 levels"``, or longer than
        ``max_chars``; checked before the text is parsed.
    ValueError
        If it is not UTF-8 (a ``json.JSONDecodeError`` if it is not JSON).
    """
    _check_size(len(text), max_chars, what)
    text = _as_text(text)
    _check_json_depth(text, what, max_depth)
    return json.loads(text)


def load_toml(
    text: str | bytes,
    *,
    what: str,
    max_depth: int = MAX_DEPTH,
    max_chars: int = MAX_FILE_BYTES,
) -> dict[str, Any]:
    """The table the TOML ``text`` holds, if it is at most ``max_chars`` long and
    ``max_depth`` deep.

    Parameters
    ----------
    text : str or bytes
        TOML; bytes are UTF-8.
    what : str
        The text as messages name it (``"space file 'space.toml'"``).
    max_depth : int, default ``MAX_DEPTH``
        Arrays, tables and the parts of dotted keys nested at most this deep
        (the document itself is the first level).
    max_chars : int, default ``MAX_FILE_BYTES``

    Returns
    -------
    dict

    Raises
    ------
    BoundExceededError
        ``"<what> is nested deeper than 100 levels"``, or longer than
        ``max_chars``; checked before the text is parsed (and the nesting of
        what was parsed once more, exactly).
    ValueError
        If it is not UTF-8 (a ``tomllib.TOMLDecodeError`` if it is not TOML).
    """
    import tomllib

    _check_size(len(text), max_chars, what)
    text = _as_text(text)
    _check_toml_depth(text, what, max_depth)
    try:
        table = tomllib.loads(text)
    except RecursionError:  # the scan above keeps it out; kept as a last guard
        raise _too_deep(what, max_depth) from None
    _check_parsed_depth(table, what, max_depth)
    return table


_OPENING, _CLOSING, _SEPARATORS = "([{", ")]}", (",", ":")
_NOT_COUNTED = {
    tokenize.NUMBER,
    tokenize.STRING,
    tokenize.NEWLINE,
    tokenize.NL,
    tokenize.COMMENT,
    tokenize.INDENT,
    tokenize.DEDENT,
    tokenize.ENDMARKER,
    tokenize.ERRORTOKEN,
}


def _literal_tokens(text: str, what: str, max_depth: int) -> None:
    """Check the nesting of ``text`` as Python; a tokenize error propagates.

    Python's parser nests a node for each bracket and for each operator or
    name between two items (``---1`` is three nested negations), so the
    depth counted is the open brackets plus the operators and names since the
    last bracket or separator, at every level.
    """
    if len(text) <= max_depth:
        return  # every level takes a character at least
    counts = [0]
    depth = 0
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.OP and token.string in _OPENING:
            counts.append(0)
            depth += 1
        elif token.type == tokenize.OP and token.string in _CLOSING:
            if len(counts) > 1:
                depth -= 1 + counts.pop()
        elif token.type == tokenize.OP and token.string in _SEPARATORS:
            depth -= counts[-1]
            counts[-1] = 0
        elif token.type not in _NOT_COUNTED:
            counts[-1] += 1
            depth += 1
        if depth > max_depth:
            raise _too_deep(what, max_depth)


def check_literal_bounds(
    text: str, *, what: str, max_depth: int = MAX_DEPTH, max_chars: int = MAX_REPR_CHARS
) -> None:
    """Raise if :func:`literal` would refuse ``text`` for its size or its depth.

    For writers, so that what they store can be read back.

    Parameters
    ----------
    text : str
        A repr.
    what, max_depth, max_chars
        As for :func:`literal`.

    Raises
    ------
    BoundExceededError
    """
    _check_size(len(text), max_chars, what)
    try:
        _literal_tokens(text, what, max_depth)
    except (tokenize.TokenError, SyntaxError):
        pass  # not Python: never parsed, so its nesting does not matter


def literal(
    text: str, *, what: str, max_depth: int = MAX_DEPTH, max_chars: int = MAX_REPR_CHARS
) -> Any:
    """The value whose ``repr`` is ``text``, a Python literal, read with bounded size and depth.

    Like :func:`ast.literal_eval` (strings, bytes, numbers, booleans,
    ``None``, and tuples, lists, sets and dicts of them), after checking the
    size and the nesting without parsing.

    Parameters
    ----------
    text : str
        The repr.
    what : str
        The text as messages name it (``"category '<x>'"``).
    max_depth : int, default ``MAX_DEPTH``
        Brackets and operators nested at most this deep.
    max_chars : int, default ``MAX_REPR_CHARS``

    Returns
    -------
    object

    Raises
    ------
    BoundExceededError
        ``"<what> is nested deeper than 100 levels"`` or is longer than
        ``max_chars``.
    ValueError
        ``"<what> is not the repr of a plain value"``, if it is not a literal.
    """
    if not isinstance(text, str):
        raise ValueError(f"{what} is not the repr of a plain value: it is not text")
    _check_size(len(text), max_chars, what)
    try:
        _literal_tokens(text, what, max_depth)
        return ast.literal_eval(text)
    except BoundExceededError:
        raise
    # RecursionError and MemoryError cannot come from text within the bounds;
    # caught all the same, as the parse is the last place they could.
    except (tokenize.TokenError, ValueError, SyntaxError, TypeError, RecursionError, MemoryError):
        raise ValueError(f"{what} is not the repr of a plain value") from None
