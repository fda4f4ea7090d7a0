"""Dimensions from descriptions: a space's dict form, a space file, a shorthand.

:func:`dimension_from_spec` reads the shorthand :class:`~treebo.space.Space`
accepts for one dimension, :func:`named_dimensions` the list or dict of them
it is built from. :func:`read_description` reads a whole space; two
forms are read (see :meth:`Space.from_dict <treebo.space.Space.from_dict>`):

- *dumped*, as :meth:`Space.to_dict <treebo.space.Space.to_dict>` writes it
  (it has a ``points_are_dicts`` key): categories are Python reprs and
  ``active_if`` values are the numbers :meth:`Dimension.to_number
  <treebo.space.Dimension.to_number>` gives (a category's index, an int);
- *hand-written*, as in a space file: categories and ``active_if`` values are
  written as themselves (strings, numbers, booleans), and points are dicts.

A description may come from a file anyone could have written: a dumped
category is read with :func:`treebo.untrusted.literal` (at most
:data:`~treebo.untrusted.MAX_REPR_CHARS` characters and
:data:`~treebo.untrusted.MAX_DEPTH` levels), and messages show what they quote
as a short excerpt.
"""

from __future__ import annotations

import numbers
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..untrusted import BoundExceededError, excerpt, literal, shorten_reprs
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


def named_dimensions(
    dimensions: Sequence[Any] | Mapping[str, Any],
) -> tuple[list[Dimension], list[str], bool]:
    """The named dimensions of :class:`~treebo.space.Space`'s ``dimensions`` argument.

    Parameters
    ----------
    dimensions : list or dict of name -> dimension
        Dimensions or shorthands (see :func:`dimension_from_spec`). In a
        list, an unnamed one is named ``"x<i>"``; in a dict, by its key,
        which must agree with a name given inside.

    Returns
    -------
    dims : list of Dimension
        Each with its name.
    names : list of str
    points_are_dicts : bool
        Whether ``dimensions`` was a dict.

    Raises
    ------
    ValueError
        For an empty or repeated name, or anything that is not a dimension.
    """
    dims: list[Dimension] = []
    names: list[str] = []
    if isinstance(dimensions, Mapping):
        points_are_dicts = True
        for key, spec in dimensions.items():
            if not isinstance(key, str):
                raise ValueError(f"dimension names must be strings, got {key!r}")
            dim = dimension_from_spec(spec, key)
            if dim.name is not None and dim.name != key:
                raise ValueError(
                    f"dimension {key!r} is named {dim.name!r} inside; the names must agree"
                )
            dims.append(dim.replace(name=key))
            names.append(key)
    elif isinstance(dimensions, Sequence) and not isinstance(dimensions, (str, bytes)):
        points_are_dicts = False
        for i, spec in enumerate(dimensions):
            dim = dimension_from_spec(spec, f"x{i}")
            dims.append(dim if dim.name is not None else dim.replace(name=f"x{i}"))
            names.append(dim.name if dim.name is not None else f"x{i}")
    else:
        raise ValueError(
            "dimensions must be a list of dimensions or a dict of name -> "
            f"dimension, got {type(dimensions).__name__}"
        )
    if not dims:
        raise ValueError("dimensions must not be empty")
    duplicated = sorted({n for n in names if names.count(n) > 1})
    if duplicated:
        raise ValueError(f"dimension names must be unique; repeated: {duplicated}")
    return dims, names, points_are_dicts


def _exact_categories(reprs: list, where: str) -> list:
    """The categories whose reprs are ``reprs``, or a ValueError naming the one that is
    not a literal (a :class:`~treebo.untrusted.BoundExceededError` for one too long or
    too deep to read)."""
    values = []
    for text in reprs:
        try:
            values.append(literal(text, what=f"category {excerpt(text)}"))
        except BoundExceededError as error:
            raise BoundExceededError(f"{where}: {error}") from None
        except ValueError as error:
            raise ValueError(
                f"{where}: {error} (a string, number, boolean, None or tuple), so the space "
                "cannot be rebuilt from its description; give the space itself"
            ) from None
    return values


def _categories_or_reprs(reprs: list, where: str) -> list:
    """The categories whose reprs are ``reprs``: literals as values, anything else as text."""
    values = []
    for text in reprs:
        try:
            value = literal(text, what=f"category {excerpt(text)}")
            hash(value)
        except BoundExceededError as error:
            raise BoundExceededError(f"{where}: {error}") from None
        except (ValueError, TypeError):
            value = text
        values.append(value if repr(value) == text else text)
    # A text standing for an object could equal a literal category; then keep every repr.
    return values if len(set(values)) == len(values) else list(reprs)


def _read_entry(
    entry: Any, i: int, dumped: bool, read_categories: Callable[[list, str], list] | None
) -> tuple[str, Dimension]:
    """The name of entry ``i`` and its dimension."""
    if not isinstance(entry, Mapping):
        raise ValueError(f"dimension {i} must be a table with name and type, got {excerpt(entry)}")
    name = entry.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError(f"dimension {i} needs a name (a string), got {excerpt(name)}")
    # A dumped condition holds numbers, read once every dimension exists.
    active_if = None if dumped else entry.get("active_if")
    categories = entry.get("categories")
    if read_categories is not None and isinstance(categories, list):
        # Read here rather than by Dimension.from_dict, whose message would not
        # keep a BoundExceededError apart from other errors.
        entry = {**entry, "categories": read_categories(categories, f"dimension {excerpt(name)}")}
    try:
        return name, Dimension.from_dict(entry, active_if=active_if)
    except ValueError as error:
        # Its messages name the dimension with its whole repr.
        raise ValueError(shorten_reprs(str(error), [name, *entry, *entry.values()])) from None


def _conditions_from_numbers(dims: list[Dimension], entries: list) -> list[Dimension]:
    """The dimensions with the ``active_if`` of a dumped description, whose values are numbers."""
    by_name = {dim.name: dim for dim in dims}
    out = []
    for dim, entry in zip(dims, entries):
        numbers = entry.get("active_if")
        if not numbers:
            out.append(dim)
            continue
        where = f"dimension {excerpt(dim.name)}: active_if"
        if not isinstance(numbers, Mapping):
            raise ValueError(f"{where} must be a table of parent -> values, got {excerpt(numbers)}")
        condition = {}
        for parent, values in numbers.items():
            if parent not in by_name:
                raise ValueError(f"{where} names {excerpt(parent)}, which is not a dimension")
            if not isinstance(values, list):
                raise ValueError(
                    f"{where}[{excerpt(parent)}] must be a list, got {excerpt(values)}"
                )
            for value in values:
                problem = by_name[parent].number_problem(value)
                if problem is not None:
                    raise ValueError(
                        f"{where}[{excerpt(parent)}]: {shorten_reprs(problem, [value])}"
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
        two entries share; a :class:`~treebo.untrusted.BoundExceededError`
        for a dumped category too long or nested too deep to be read.
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
            f"unknown keys {excerpt(sorted(unknown, key=str))}; allowed: 'dimensions', "
            "'points_are_dicts'"
        )
    dumped = "points_are_dicts" in description
    read_categories: Callable[[list, str], list] | None = None
    if dumped:
        read_categories = (
            _exact_categories if object_categories == "raise" else _categories_or_reprs
        )
    entries = description["dimensions"]
    named = [_read_entry(entry, i, dumped, read_categories) for i, entry in enumerate(entries)]
    names = [name for name, _ in named]
    duplicated = sorted(name for name, count in Counter(names).items() if count > 1)
    if duplicated:
        raise ValueError(f"dimension names must be unique; repeated: {excerpt(duplicated)}")
    dims = [dim for _, dim in named]
    if dumped:
        dims = _conditions_from_numbers(dims, entries)
        if not description["points_are_dicts"]:
            return dims
    return dict(zip(names, dims))
