"""What the ``treebo`` subcommands share: the usage error and the parsing of common values."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..untrusted import BoundExceededError, load_json

__all__ = ["UsageError", "parse_params", "check_surrogates"]


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
