"""What the ``treebo`` subcommands share: the usage error, the parsing of common values and
the options of the optimizer's settings."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..untrusted import BoundExceededError, excerpt, load_json

if TYPE_CHECKING:
    from ..settings import Allowed, Setting

__all__ = [
    "UsageError",
    "parse_params",
    "check_surrogates",
    "add_setting_arguments",
    "given_settings",
    "setting_dest",
    "format_table",
]


class UsageError(ValueError):
    """Bad arguments on the command line: ``treebo`` prints the message and exits with 2."""


def _parse_value(key: str, text: str) -> Any:
    try:
        return load_json(text, what=f"--param {key}")
    except BoundExceededError as error:
        raise UsageError(str(error)) from None
    except json.JSONDecodeError:
        return text


def parse_params(items: Sequence[str] | None, per_problem: bool) -> dict:
    """``KEY=VALUE`` (or ``PROBLEM:KEY=VALUE``) strings -> dict; values parsed as JSON."""
    out: dict = {}
    for item in items or []:
        if "=" not in item:
            raise UsageError(f"--param expects KEY=VALUE, got {item!r}")
        key, value = item.split("=", 1)
        if per_problem:
            if ":" not in key:
                raise UsageError(f"--param expects PROBLEM:KEY=VALUE, got {item!r}")
            problem, key = key.split(":", 1)
            out.setdefault(problem, {})[key] = _parse_value(key, value)
        else:
            out[key] = _parse_value(key, value)
    return out


def check_surrogates(names: Sequence[str]) -> list[str]:
    """``names`` if every one is a registered surrogate; a usage error listing them otherwise."""
    from ..surrogates import available_surrogates

    unknown = [n for n in names if n not in available_surrogates()]
    if unknown:
        raise UsageError(f"unknown surrogate(s) {unknown}; choose from {available_surrogates()}")
    return list(names)


def add_setting_arguments(
    p: argparse.ArgumentParser,
    *,
    exclude: Sequence[str] = (),
    helps: Mapping[str, str] | None = None,
    defaults: Mapping[str, Any] | None = None,
    description: str | None = None,
) -> None:
    """An option for each setting of :data:`treebo.settings.SETTINGS`, in a group of ``p``.

    The option is the setting's :attr:`~treebo.settings.Setting.flag`: a
    yes/no setting is ``--name`` and ``--no-name``, a setting with a
    ``switch`` an option without a value (``--maximize``), any other an
    option with a value read by the setting's
    :attr:`~treebo.settings.Allowed.read` (a word argparse cannot read is a
    usage error naming the option). An option not given is None, so that
    :func:`given_settings` leaves its setting out.

    Parameters
    ----------
    p : argparse.ArgumentParser
    exclude : sequence of str, default ()
        Settings the command sets itself (``treebo ask``'s storage).
    helps : mapping of str to str, optional
        Help by setting name, where the command says more than the
        setting's one line (what ``--seed`` means for a benchmark problem).
    defaults : mapping, optional
        Option defaults by setting name, for options whose value other code
        reads even when not given (``--surrogate``).
    description : str, optional
        Of the group, in the help.
    """
    from ..settings import SETTINGS

    group = p.add_argument_group("optimizer settings", description)
    names = []
    for s in SETTINGS:
        if s.name in exclude:
            continue
        text = (helps or {}).get(s.name) or _help(s)
        if s.switch is not None:
            group.add_argument(s.flag, action="store_true", help=text)
        elif s.allowed.read is None:
            group.add_argument(s.flag, action=argparse.BooleanOptionalAction, help=text)
        elif s.repeat:
            group.add_argument(
                s.flag,
                type=_reader(s.allowed),
                metavar=s.allowed.metavar,
                action="append",
                help=text,
            )
        else:
            group.add_argument(
                s.flag,
                type=_reader(s.allowed),
                metavar=s.allowed.metavar,
                default=(defaults or {}).get(s.name),
                help=text,
            )
        names.append(s.name)
    p.set_defaults(setting_options=tuple(names))


def given_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The settings whose options :func:`add_setting_arguments` added and that were given.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed by a parser with the options of :func:`add_setting_arguments`.

    Returns
    -------
    dict
        By setting name, in the order of :data:`~treebo.settings.SETTINGS`:
        the values the options gave (a switch its ``switch``), and those of
        options with a ``defaults`` entry. Not checked yet: the optimizer
        (or the benchmark preset) checks them.
    """
    from ..settings import setting

    out = {}
    for name in getattr(args, "setting_options", ()):
        s = setting(name)
        value = getattr(args, setting_dest(s))
        if s.switch is not None:
            value = s.switch if value else None
        if s.repeat and value and all(isinstance(item, Mapping) for item in value):
            value = {k: v for item in value for k, v in item.items()}
        if value is not None:
            out[name] = value
    return out


def format_table(header: Sequence[str], body: Sequence[Sequence[str]]) -> str:
    """Rows of cells as aligned text columns, two spaces apart, the header first.

    Parameters
    ----------
    header : sequence of str
    body : sequence of sequences of str
        One per row, as many cells as ``header``.

    Returns
    -------
    str
        Lines without trailing spaces.
    """
    widths = [max(len(cells[i]) for cells in [header, *body]) for i in range(len(header))]
    return "\n".join(
        "  ".join(cell.ljust(w) for cell, w in zip(cells, widths)).rstrip()
        for cells in [header, *body]
    )


def setting_dest(s: Setting) -> str:
    """The attribute of the parsed arguments that holds the option of setting ``s``.

    Parameters
    ----------
    s : Setting

    Returns
    -------
    str
        argparse's name for the option: ``"seed"`` for ``--seed``.
    """
    return s.flag.lstrip("-").replace("-", "_")


def _help(s: Setting) -> str:
    if s.switch is not None:
        return s.doc
    if isinstance(s.default, bool):
        return f"{s.doc} (default: {'yes' if s.default else 'no'})"
    return f"{s.doc} (default: {'none' if s.default is None else s.default})"


def _reader(allowed: Allowed) -> Callable[[str], Any]:
    """argparse's ``type`` for a setting: its ``read``, with a message naming what is allowed."""
    read = allowed.read
    assert read is not None  # a yes/no setting has no value to read
    if read in (int, float, str):
        return read  # argparse says "invalid int value: 'x'"

    def read_word(word: str) -> Any:
        try:
            return read(word)
        except BoundExceededError as error:
            raise argparse.ArgumentTypeError(str(error)) from None
        except ValueError:
            raise argparse.ArgumentTypeError(f"{excerpt(word)} is not {allowed.text}") from None

    return read_word
