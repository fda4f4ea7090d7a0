"""User-facing points: lists, or dicts by name, of one value per dimension.

A space built from a list takes and gives points as lists in its order; one
built from a dict takes and gives dicts keyed by name, which in a conditional
space leave the inactive dimensions out. What depends only on that form is
here: a point's values in the space's order (:func:`point_values`), telling a
sequence of points from a single point (:func:`check_point_sequence`), and
decoded values put back into points (:func:`make_points`). Encoding the
values is the dimensions' work, and activity the conditions'.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

#: Stands for a dimension absent from a point of a conditional space: no
#: user value is this object.
ABSENT = object()


def point_values(
    point: Any, names: list[str], points_are_dicts: bool, conditional: bool
) -> list[Any]:
    """The values of ``point``, one per dimension, in the space's order.

    Parameters
    ----------
    point : list or dict
        A user-facing point.
    names : list of str
        The space's dimension names, in order.
    points_are_dicts : bool
        Whether the space's points are dicts.
    conditional : bool
        Whether the space has conditions: then a dict may leave dimensions
        out, which come back as :data:`ABSENT` (whether they may be absent
        depends on the parents' values, which the caller checks).

    Returns
    -------
    list
        ``len(names)`` values.

    Raises
    ------
    ValueError
        If ``point`` is not of the space's form: a dict with unknown or
        (without conditions) missing names, or a list of the wrong length.
    """
    if points_are_dicts:
        if not isinstance(point, Mapping):
            raise ValueError(f"points of this space are dicts with keys {names}, got {point!r}")
        unknown = [k for k in point if k not in names]
        if unknown:
            raise ValueError(f"unknown dimension(s) {unknown}; known: {names}")
        if conditional:
            return [point.get(n, ABSENT) for n in names]
        missing = [n for n in names if n not in point]
        if missing:
            raise ValueError(f"point {point!r} is missing dimension(s) {missing}")
        return [point[n] for n in names]
    if (
        isinstance(point, Mapping)
        or isinstance(point, (str, bytes))
        or not isinstance(point, Sequence | np.ndarray)
    ):
        raise ValueError(f"points of this space are lists of {len(names)} values, got {point!r}")
    if len(point) != len(names):
        raise ValueError(
            f"point {list(point)!r} has {len(point)} values; the space has "
            f"{len(names)} dimensions {names}"
        )
    return list(point)


def check_point_sequence(points: Sequence[Any], points_are_dicts: bool) -> None:
    """Refuse a single point where a sequence of points is expected.

    Parameters
    ----------
    points : sequence
        What was given as a sequence of points.
    points_are_dicts : bool
        Whether the space's points are dicts.

    Raises
    ------
    ValueError
        If ``points`` is a dict, or a list whose first element is a value
        (a list of scalars is one point, not a list of points; for a space
        of dicts, a string is a key of one point).
    """
    if isinstance(points, Mapping) or (len(points) > 0 and _is_value(points[0], points_are_dicts)):
        raise ValueError("encode expects a sequence of points; wrap a single point in a list")


def _is_value(first: Any, points_are_dicts: bool) -> bool:
    if points_are_dicts:
        return isinstance(first, str)
    return not isinstance(first, (Sequence, np.ndarray, Mapping)) or isinstance(first, (str, bytes))


def make_points(
    columns: list[list[Any]],
    names: list[str],
    points_are_dicts: bool,
    active: np.ndarray | None = None,
) -> list[Any]:
    """Points in the space's form from the decoded values of each dimension.

    Parameters
    ----------
    columns : list of lists
        Per dimension, its value in each of the ``n_points`` points.
    names : list of str
        The space's dimension names, in order.
    points_are_dicts : bool
        Whether the space's points are dicts.
    active : ndarray of bool, shape (n_points, n_dims), optional
        For a conditional space: the dimensions each point keeps.

    Returns
    -------
    list
        ``n_points`` lists, or dicts (without their inactive dimensions).
    """
    if active is not None:
        return [
            {n: values[i] for n, values, on in zip(names, columns, active[i]) if on}
            for i in range(len(active))
        ]
    if points_are_dicts:
        return [dict(zip(names, values)) for values in zip(*columns)]
    return [list(values) for values in zip(*columns)]
