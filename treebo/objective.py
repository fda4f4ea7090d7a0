"""A user's objective and search space, named on the command line.

``treebo minimize path/to/file.py:function`` and ``treebo minimize
package.module:function`` load the function with :func:`load_function`; its
space comes from a ``--space`` file (:func:`load_space_file`) or from the
function's ``space`` attribute (:func:`function_space`).

A space file is TOML or JSON holding what :meth:`Space.to_dict` writes: a
list ``dimensions`` of tables, each with ``name`` and ``type`` (``Real``,
``Integer``, ``Categorical`` or ``Binary``), ``low`` and ``high`` (and
optionally ``prior``, ``"uniform"`` or ``"log-uniform"``) for numbers,
``categories`` for a categorical, and optionally ``active_if`` (parent name
-> allowed values) for a conditional dimension::

    [[dimensions]]
    name = "lr"
    type = "Real"
    low = 1e-4
    high = 1.0
    prior = "log-uniform"

    [[dimensions]]
    name = "depth"
    type = "Integer"
    low = 2
    high = 12

Categories and ``active_if`` values are written as themselves (strings,
numbers, booleans). A file dumped from ``Space.to_dict()`` itself keeps its
``points_are_dicts`` key; in such a file, as ``to_dict`` writes them,
categories are Python reprs and ``active_if`` values are category indexes,
and both are read back exactly. The objective receives a dict of values by
name unless ``points_are_dicts`` is false.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import json
import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from .space import Binary, Categorical, Integer, Real, Space

__all__ = ["load_function", "load_space_file", "space_from_dict", "function_space"]

_TYPES = {"Real": Real, "Integer": Integer, "Categorical": Categorical, "Binary": Binary}
_KEYS = {"Real": {"low", "high", "prior"}, "Integer": {"low", "high", "prior"},
         "Categorical": {"categories"}, "Binary": set()}


def load_function(target: str) -> Callable:
    """The function named by ``"path/to/file.py:name"`` or ``"package.module:name"``.

    A file is run as a module named after it, with its directory first on
    ``sys.path`` (so it can import its neighbours); it is pickled by value,
    so that worker processes can run it without finding the file.

    Parameters
    ----------
    target : str
        ``FILE.py:FUNCTION`` or ``MODULE:FUNCTION``; ``FUNCTION`` may be
        dotted (``Class.method``).

    Returns
    -------
    callable

    Raises
    ------
    ValueError
        If ``target`` has no ``:``, the file or module cannot be loaded (the
        error it raised is named), or the name is missing or not callable.
    """
    where, sep, name = target.rpartition(":")
    if not sep or not where or not name:
        raise ValueError(f"objective {target!r} must be FILE.py:FUNCTION or MODULE:FUNCTION")
    if where.endswith(".py") or os.sep in where or "/" in where:
        module = _load_file(Path(where))
    else:
        try:
            module = importlib.import_module(where)
        except ImportError as error:
            raise ValueError(f"objective {target!r}: cannot import module {where!r}: "
                             f"{error}") from error
        except Exception as error:
            raise ValueError(f"objective {target!r}: module {where!r} raised "
                             f"{type(error).__name__} when imported: {error}") from error
    value: Any = module
    for part in name.split("."):
        if not hasattr(value, part):
            found = sorted(n for n in vars(module) if callable(getattr(module, n))
                           and not n.startswith("_"))
            raise ValueError(f"objective {target!r}: {where!r} has no {name!r}; its functions: "
                             f"{found}")
        value = getattr(value, part)
    if not callable(value):
        raise ValueError(f"objective {target!r}: {name!r} is a {type(value).__name__}, not a "
                         "function")
    return value


def _load_file(path: Path) -> Any:
    if not path.is_file():
        raise ValueError(f"objective file {str(path)!r} does not exist")
    name = path.stem if path.stem.isidentifier() else "treebo_objective"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    directory = str(path.resolve().parent)
    if directory not in sys.path:
        sys.path.insert(0, directory)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as error:
        del sys.modules[name]
        raise ValueError(f"objective file {str(path)!r} raised {type(error).__name__} when "
                         f"loaded: {error}") from error
    # Worker processes need not find the file: the functions travel by value.
    try:
        import cloudpickle  # what treebo's worker pool (loky, through joblib) pickles with
    except ImportError:  # pragma: no cover - joblib requires it
        return module
    cloudpickle.register_pickle_by_value(module)
    return module


def function_space(func: Callable) -> Space | None:
    """The space a function carries as its ``space`` attribute, or None.

    Parameters
    ----------
    func : callable

    Returns
    -------
    Space or None
        Built from the attribute (a :class:`Space`, or a list or dict of
        dimensions).
    """
    space = getattr(func, "space", None)
    if space is None:
        return None
    try:
        return space if isinstance(space, Space) else Space(space)
    except ValueError as error:
        raise ValueError(f"the objective's space attribute is not a search space: "
                         f"{error}") from error


def load_space_file(path: str | os.PathLike) -> Space:
    """Read a search space from a TOML (``.toml``) or JSON file (any other name).

    Parameters
    ----------
    path : str or os.PathLike

    Returns
    -------
    Space

    Raises
    ------
    ValueError
        If the file cannot be read or parsed, or describes no valid space;
        the message names the file and the entry.
    """
    path = Path(path)
    try:
        if path.suffix.lower() == ".toml":
            import tomllib

            with open(path, "rb") as handle:
                description = tomllib.load(handle)
        else:
            with open(path) as handle:
                description = json.load(handle)
    except FileNotFoundError:
        raise ValueError(f"space file {str(path)!r} does not exist") from None
    except (OSError, ValueError) as error:  # tomllib.TOMLDecodeError is a ValueError
        raise ValueError(f"cannot read space file {str(path)!r}: {error}") from None
    try:
        return space_from_dict(description)
    except ValueError as error:
        raise ValueError(f"space file {str(path)!r}: {error}") from None


def space_from_dict(description: Mapping[str, Any]) -> Space:
    """The space a description in the form of :meth:`Space.to_dict` describes.

    Parameters
    ----------
    description : mapping
        ``{"dimensions": [...]}``, optionally with ``points_are_dicts`` (see
        the module documentation for the two ways categories are written).

    Returns
    -------
    Space

    Raises
    ------
    ValueError
        Naming the entry that is not a valid dimension.
    """
    if not isinstance(description, Mapping) or not isinstance(
            description.get("dimensions"), list) or not description["dimensions"]:
        raise ValueError("a space must have a non-empty list 'dimensions' of tables with "
                         "name and type")
    unknown = set(description) - {"dimensions", "points_are_dicts"}
    if unknown:
        raise ValueError(f"unknown keys {sorted(unknown)}; allowed: 'dimensions', "
                         "'points_are_dicts'")
    dumped = "points_are_dicts" in description
    entries = description["dimensions"]
    dims = [_dimension(entry, i, dumped) for i, entry in enumerate(entries)]
    if dumped:
        dims = _conditions_from_codes(dims, entries)
    if dumped and not description["points_are_dicts"]:
        return Space(dims)
    return Space({dim.name: dim for dim in dims})


def _dimension(entry: Any, i: int, dumped: bool) -> Any:
    where = f"dimension {i}"
    if not isinstance(entry, Mapping):
        raise ValueError(f"{where} must be a table with name and type, got {entry!r}")
    name, kind = entry.get("name"), entry.get("type")
    if not isinstance(name, str) or not name:
        raise ValueError(f"{where} needs a name (a string), got {name!r}")
    where = f"dimension {name!r}"
    if kind not in _TYPES:
        raise ValueError(f"{where}: type must be one of {list(_TYPES)}, got {kind!r}")
    allowed = _KEYS[kind] | {"name", "type", "active_if"}
    unknown = set(entry) - allowed
    if unknown:
        raise ValueError(f"{where}: unknown keys {sorted(unknown)} for a {kind}; allowed: "
                         f"{sorted(allowed)}")
    active_if = None if dumped else entry.get("active_if")
    try:
        if kind in ("Real", "Integer"):
            missing = [key for key in ("low", "high") if key not in entry]
            if missing:
                raise ValueError(f"a {kind} needs {' and '.join(missing)}")
            return _TYPES[kind](entry["low"], entry["high"], entry.get("prior"), name=name,
                                active_if=active_if)
        if kind == "Categorical":
            categories = entry.get("categories")
            if not isinstance(categories, list):
                raise ValueError(f"a Categorical needs a list of categories, got {categories!r}")
            if dumped:
                categories = [_from_repr(c, name) for c in categories]
            return Categorical(categories, name=name, active_if=active_if)
        return Binary(name=name, active_if=active_if)
    except ValueError as error:
        text = str(error)
        raise ValueError(text if text.startswith(f"{where}") else f"{where}: {text}") from None


def _from_repr(text: Any, name: str) -> Any:
    """A category from the repr :meth:`Space.to_dict` stores."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError):
        raise ValueError(f"dimension {name!r}: category {text!r} is not the repr of a plain "
                         "value (a string, number, boolean, None or tuple), so the space "
                         "cannot be rebuilt from its description; give the space itself") from None


def _conditions_from_codes(dims: list, entries: list) -> list:
    """Dimensions with the ``active_if`` of a dumped description, whose values are codes."""
    by_name = {dim.name: dim for dim in dims}
    out = []
    for dim, entry in zip(dims, entries):
        codes = entry.get("active_if")
        if not codes:
            out.append(dim)
            continue
        condition = {}
        for parent, values in codes.items():
            if parent not in by_name:
                raise ValueError(f"dimension {dim.name!r}: active_if names {parent!r}, which is "
                                 "not a dimension")
            parent_dim = by_name[parent]
            condition[parent] = [parent_dim.categories[v] if isinstance(parent_dim, Categorical)
                                 else v for v in values]
        out.append(dim.replace(active_if=condition))
    return out
