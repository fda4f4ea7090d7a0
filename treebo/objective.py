"""A user's objective and search space, named on the command line.

``treebo minimize path/to/file.py:function`` and ``treebo minimize
package.module:function`` load the function with :func:`load_function`; its
space comes from a ``--space`` file (:func:`load_space_file`) or from the
function's ``space`` attribute (:func:`function_space`).

A space file is TOML or JSON in the form :meth:`Space.from_dict
<treebo.space.Space.from_dict>` reads: a list ``dimensions`` of tables, each
with ``name`` and ``type`` (``Real``, ``Integer``, ``Categorical`` or
``Binary``), ``low`` and ``high`` (and optionally ``prior``, ``"uniform"`` or
``"log-uniform"``) for numbers, ``categories`` for a categorical, and
optionally ``active_if`` (parent name -> allowed values) for a conditional
dimension::

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

import importlib
import importlib.util
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .space import Space
from .untrusted import MAX_FILE_BYTES, BoundExceededError, load_json, load_toml, read_file

__all__ = ["load_function", "load_space_file", "function_space"]


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
            raise ValueError(
                f"objective {target!r}: cannot import module {where!r}: {error}"
            ) from error
        except Exception as error:
            raise ValueError(
                f"objective {target!r}: module {where!r} raised "
                f"{type(error).__name__} when imported: {error}"
            ) from error
    value: Any = module
    for part in name.split("."):
        if not hasattr(value, part):
            found = sorted(
                n for n in vars(module) if callable(getattr(module, n)) and not n.startswith("_")
            )
            raise ValueError(
                f"objective {target!r}: {where!r} has no {name!r}; its functions: {found}"
            )
        value = getattr(value, part)
    if not callable(value):
        raise ValueError(
            f"objective {target!r}: {name!r} is a {type(value).__name__}, not a function"
        )
    return value


def _load_file(path: Path) -> Any:
    if not path.is_file():
        raise ValueError(f"objective file {str(path)!r} does not exist")
    name = path.stem if path.stem.isidentifier() else "treebo_objective"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ValueError(
            f"objective file {str(path)!r} is not a Python module: its name must end in .py"
        )
    module = importlib.util.module_from_spec(spec)
    directory = str(path.resolve().parent)
    if directory not in sys.path:
        sys.path.insert(0, directory)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as error:
        del sys.modules[name]
        raise ValueError(
            f"objective file {str(path)!r} raised {type(error).__name__} when loaded: {error}"
        ) from error
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
        raise ValueError(
            f"the objective's space attribute is not a search space: {error}"
        ) from error


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
    what = f"space file {str(path)!r}"
    try:
        data = read_file(path, what=what, max_bytes=MAX_FILE_BYTES)
        if path.suffix.lower() == ".toml":
            description = load_toml(data, what=what, max_chars=MAX_FILE_BYTES)
        else:
            description = load_json(data, what=what, max_chars=MAX_FILE_BYTES)
    except FileNotFoundError:
        raise ValueError(f"{what} does not exist") from None
    except BoundExceededError as error:
        raise ValueError(str(error)) from None
    except (OSError, ValueError) as error:  # tomllib.TOMLDecodeError is a ValueError
        raise ValueError(f"cannot read {what}: {error}") from None
    try:
        return Space.from_dict(description)
    except ValueError as error:
        raise ValueError(f"space file {str(path)!r}: {error}") from None
