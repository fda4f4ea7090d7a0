"""The values a setting of :mod:`treebo.settings` allows.

:class:`Allowed` checks a value and reads one from a word of the command
line; the functions below make the usual kinds (an integer above a floor, a
finite number, one of some words, ``"auto"`` or a number), and the
constants are the kinds of the declared settings, checked with the same
helpers as the parts they configure so that the messages are the same.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._checks import check_auto_or, check_choice, check_int, check_real
from .acquisition import ACQUISITIONS, check_acquisition
from .acquisition.maximizer import ACQ_OPTIMIZERS
from .initial_design import INITIAL_DESIGNS
from .resume import RESUME_PENDING as _RESUME_CHOICES
from .surrogates import Surrogate
from .targets import Y_TRANSFORMS, check_failure_value
from .untrusted import excerpt, load_json


@dataclass(frozen=True)
class Allowed:
    """The values a setting allows.

    Parameters
    ----------
    text : str
        What is allowed, for people: ``"an integer >= 1"``.
    check : callable
        ``check(value, name)`` returns the value as the optimizer keeps it
        (an integer as an ``int``, a real as a ``float``) and raises a
        ``ValueError`` naming ``name`` for any other value.
    read : callable or None
        ``read(word)`` gives the value a word of the command line stands
        for (before ``check``), raising ``ValueError`` if it stands for none;
        ``None`` for a yes/no setting, which is an option without a value.
    metavar : str, default "VALUE"
        The word in the command line's help (``N``, ``{auto,log,standardize}``).
    """

    text: str
    check: Callable[[Any, str], Any]
    read: Callable[[str], Any] | None
    metavar: str = "VALUE"


def words(mapping: Mapping[str, Any], what: str) -> Callable[[str], Any]:
    def read(word: str) -> Any:
        if word not in mapping:
            raise ValueError(f"{word!r} is not {what}")
        return mapping[word]

    return read


def auto_or(read: Callable[[str], Any]) -> Callable[[str], Any]:
    def read_auto(word: str) -> Any:
        return "auto" if word == "auto" else read(word)

    return read_auto


def integer(low: int) -> Allowed:
    return Allowed(f"an integer >= {low}", lambda v, n: check_int(v, n, low), int, "N")


def number(strict: bool = False) -> Allowed:
    text = "a finite number > 0" if strict else "a finite number >= 0"
    return Allowed(text, lambda v, n: check_real(v, n, strict=strict), float, "X")


def choice(values: tuple[str, ...]) -> Allowed:
    return Allowed(
        f"one of {values}",
        lambda v, n: check_choice(v, n, values),
        words(dict(zip(values, values)), f"one of {', '.join(values)}"),
        "{" + ",".join(values) + "}",
    )


def auto_or_integer() -> Allowed:
    def check(value: Any, name: str) -> Any:
        return check_auto_or(value, name, lambda v, n: check_int(v, n, 0), "an integer >= 0")

    return Allowed("'auto' or an integer >= 0", check, auto_or(int), "{auto,N}")


def auto_or_number() -> Allowed:
    def check(value: Any, name: str) -> Any:
        return check_auto_or(value, name, check_real, "a finite number >= 0")

    return Allowed("'auto' or a finite number >= 0", check, auto_or(float), "{auto,X}")


def check_local_steps(value: Any, name: str) -> Any:
    if not (value == "auto" or isinstance(value, bool)):
        raise ValueError(f"{name} must be 'auto', True or False, got {value!r}")
    return value


def check_table(value: Any, name: str) -> Any:
    if value is not None and not isinstance(value, Mapping):
        raise ValueError(f"{name} must be a dict or None, got {value!r}")
    return value


def read_table(word: str) -> dict:
    value = load_json(word, what="the value")  # bounded; not JSON is a ValueError
    if not isinstance(value, dict):
        raise ValueError(f"{excerpt(word)} is not a JSON object")
    return value


def check_surrogate(value: Any, name: str) -> Any:
    if not isinstance(value, (str, Surrogate)):
        raise ValueError(f"{name} must be a registered name or a Surrogate instance, got {value!r}")
    return value


def check_surrogate_name(value: Any, name: str) -> Any:
    if not isinstance(value, str):
        raise ValueError(f"{name} must be a registered surrogate name, got {value!r}")
    return value


def check_seed(value: Any, name: str) -> Any:
    # What RandomStreams accepts; checked here without drawing from a RandomState.
    if value is None or isinstance(
        value,
        (
            np.random.Generator,
            np.random.RandomState,
            np.random.SeedSequence,
            np.random.BitGenerator,
        ),
    ):
        return value
    if isinstance(value, numbers.Integral) and not isinstance(value, bool) and int(value) >= 0:
        return int(value)
    raise ValueError(
        f"{name} must be None, an int >= 0, a numpy.random.Generator or a "
        f"numpy.random.RandomState, got {value!r}"
    )


def check_acquisition_name(value: Any, name: str) -> Any:
    check_acquisition(value, None)  # its parameters are checked with them
    return value


def check_storage(value: Any, name: str) -> Any:
    # Which paths can hold a study is the storage's to say (SQLiteStorage names it).
    return value


def read_objective(word: str) -> dict[str, str]:
    name, _, direction = word.rpartition(":")
    if not name or direction not in ("min", "max", "minimize", "maximize"):
        raise ValueError(f"{excerpt(word)} is not NAME:min or NAME:max")
    return {name: direction}


def read_failure_value(word: str) -> Any:
    return "worst" if word == "worst" else float(word)


ACQUISITION_ALLOWED = Allowed(
    f"one of {tuple(ACQUISITIONS)}",
    check_acquisition_name,
    words({a: a for a in ACQUISITIONS}, f"one of {', '.join(ACQUISITIONS)}"),
    "{" + ",".join(ACQUISITIONS) + "}",
)
LOCAL_STEPS_ALLOWED = Allowed(
    "'auto', True or False",
    check_local_steps,
    words({"auto": "auto", "true": True, "false": False}, "one of auto, true, false"),
    "{auto,true,false}",
)
FAILURE_ALLOWED = Allowed(
    "'worst' or a finite number",
    lambda v, n: check_failure_value(v),
    read_failure_value,
    "{worst,X}",
)
YES_NO_ALLOWED = Allowed("True or False", lambda v, n: bool(v), None)
AUTO_INTEGER_ALLOWED = auto_or_integer()
INITIAL_DESIGN_ALLOWED, ACQ_OPTIMIZER_ALLOWED = choice(INITIAL_DESIGNS), choice(ACQ_OPTIMIZERS)
Y_TRANSFORM_ALLOWED, RESUME_PENDING_ALLOWED = choice(Y_TRANSFORMS), choice(_RESUME_CHOICES)
AUTO_NUMBER_ALLOWED = auto_or_number()
TABLE_ALLOWED = Allowed(
    "a table (a dict; a JSON object on the command line)", check_table, read_table, "JSON"
)
