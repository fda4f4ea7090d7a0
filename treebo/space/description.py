"""Dimensions from descriptions: a space's dict form, a space file, a shorthand.

:func:`dimension_from_spec` reads the shorthand :class:`~treebo.space.Space`
accepts for one dimension. :func:`read_description` reads a whole space; two
forms are read (see :meth:`Space.from_dict <treebo.space.Space.from_dict>`):

- *dumped*, as :meth:`Space.to_dict <treebo.space.Space.to_dict>` writes it
  (it has a ``points_are_dicts`` key): categories are Python reprs and
  ``active_if`` values are the numbers :meth:`Dimension.to_number
  <treebo.space.Dimension.to_number>` gives (a category's index, an int);
- *hand-written*, as in a space file: categories and ``active_if`` values are
  written as themselves (strings, numbers, booleans), and points are dicts.
"""

from __future__ import annotations

import ast
import numbers
from collections.abc import Callable, Mapping
from typing import Any

from .categorical import Categorical
from .coercion import unwrap_scalar, why_not_a_number
from .dimension import Dimension
from .numeric import Integer, Real

#: What :func:`read_description` does with a dumped category that is not a literal.
OBJECT_CATEGORIES = ("raise", "repr")


def dimension_from_spec(spec: Any, name: str) -> Dimension:
    """A dimension, or the one a shorthand describes.

    Parameters
    ----------
    spec : Dimension, tuple or list
        A dimension (returned as it is); a ``(low, high)`` tuple of two ints
        (an :class:`~treebo.space.Integer`) or of two numbers (a
        :class:`~treebo.space.Real`); a list of values (a
        :class:`~treebo.space.Categorical`).
    name : str
        The name a shorthand's dimension gets.

    Returns
    -------
    Dimension

    Raises
    ------
    ValueError
        Naming the dimension, for anything else.
    """
    if isinstance(spec, Dimension):
        return spec
    if isinstance(spec, tuple) and len(spec) == 2:
        low, high = (unwrap_scalar(v) for v in spec)
        if all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in (low, high)):
            return Integer(low, high, name=name)
        if all(why_not_a_number(v) is None for v in (low, high)):
            return Real(low, high, name=name)
    if isinstance(spec, list):
        return Categorical(spec, name=name)
    raise ValueError(
        f"dimension {name!r}: cannot make a dimension from {spec!r}; use Real, "
        "Integer, Categorical or Binary"
    )


def _from_repr(text: Any) -> Any:
    """A category from the repr :meth:`Space.to_dict` stores, or a ValueError."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError):
        raise ValueError(
            f"category {text!r} is not the repr of a plain value (a string, "
            "number, boolean, None or tuple), so the space cannot be rebuilt "
            "from its description; give the space itself"
        ) from None


def _exact_categories(reprs: list) -> list:
    return [_from_repr(text) for text in reprs]


def _categories_or_reprs(reprs: list) -> list:
    """The categories whose reprs are ``reprs``: literals as values, anything else as text."""
    values = []
    for text in reprs:
        try:
            value = ast.literal_eval(text)
            hash(value)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            value = text
        values.append(value if repr(value) == text else text)
    # A text standing for an object could equal a literal category; then keep every repr.
    return values if len(set(values)) == len(values) else list(reprs)


def _read_entry(
    entry: Any, i: int, dumped: bool, read_categories: Callable[[list], list]
) -> tuple[str, Dimension]:
    """The name of entry ``i`` and its dimension."""
    if not isinstance(entry, Mapping):
        raise ValueError(f"dimension {i} must be a table with name and type, got {entry!r}")
    name = entry.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError(f"dimension {i} needs a name (a string), got {name!r}")
    # A dumped condition holds numbers, read once every dimension exists.
    active_if = None if dumped else entry.get("active_if")
    return name, Dimension.from_dict(entry, active_if=active_if, read_categories=read_categories)


def _conditions_from_numbers(dims: list[Dimension], entries: list) -> list[Dimension]:
    """The dimensions with the ``active_if`` of a dumped description, whose values are numbers."""
    by_name = {dim.name: dim for dim in dims}
    out = []
    for dim, entry in zip(dims, entries):
        numbers = entry.get("active_if")
        if not numbers:
            out.append(dim)
            continue
        condition = {}
        for parent, values in numbers.items():
            if parent not in by_name:
                raise ValueError(
                    f"dimension {dim.name!r}: active_if names {parent!r}, which is not a dimension"
                )
            condition[parent] = [by_name[parent].from_number(v) for v in values]
        out.append(dim.replace(active_if=condition))
    return out


def read_description(
    description: Mapping[str, Any], object_categories: str = "raise"
) -> list[Dimension] | dict[str, Dimension]:
    """The dimensions a space description gives, as :class:`~treebo.space.Space` takes them.

    Parameters
    ----------
    description : mapping
        ``{"dimensions": [...]}``, with ``points_are_dicts`` in the dumped
        form (see the module documentation).
    object_categories : {"raise", "repr"}, default "raise"
        For a dumped category whose repr is not a Python literal (an object,
        a class): ``"raise"`` a ``ValueError``, or ``"repr"`` to give the
        category as its repr string (every category of that dimension as
        its repr when a repr string would equal another category).

    Returns
    -------
    dict of str -> Dimension, or list of Dimension
        The named dimensions with their conditions: a dict by name when the
        space's points are dicts, else a list.

    Raises
    ------
    ValueError
        Naming the entry that is not a valid dimension, or the names that
        two entries share.
    """
    if object_categories not in OBJECT_CATEGORIES:
        raise ValueError(
            f"object_categories must be one of {OBJECT_CATEGORIES}, got {object_categories!r}"
        )
    if (
        not isinstance(description, Mapping)
        or not isinstance(description.get("dimensions"), list)
        or not description["dimensions"]
    ):
        raise ValueError(
            "a space must have a non-empty list 'dimensions' of tables with name and type"
        )
    unknown = set(description) - {"dimensions", "points_are_dicts"}
    if unknown:
        raise ValueError(
            f"unknown keys {sorted(unknown)}; allowed: 'dimensions', 'points_are_dicts'"
        )
    dumped = "points_are_dicts" in description
    if not dumped:
        read_categories: Callable[[list], list] = list
    elif object_categories == "raise":
        read_categories = _exact_categories
    else:
        read_categories = _categories_or_reprs
    entries = description["dimensions"]
    named = [_read_entry(entry, i, dumped, read_categories) for i, entry in enumerate(entries)]
    names = [name for name, _ in named]
    duplicated = sorted({name for name in names if names.count(name) > 1})
    if duplicated:
        raise ValueError(f"dimension names must be unique; repeated: {duplicated}")
    dims = [dim for _, dim in named]
    if dumped:
        dims = _conditions_from_numbers(dims, entries)
        if not description["points_are_dicts"]:
            return dims
    return dict(zip(names, dims))
