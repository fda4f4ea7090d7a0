"""The search space: an ordered collection of named dimensions, and its encoded points.

:class:`Space` turns user-facing points (lists, or dicts by name) into rows of
the unit cube and back, snaps any row onto the feasible points, samples, and
enumerates a discrete space. What a single dimension does is left to the
dimension classes; what conditions do, to :mod:`treebo.space.conditions`; the
form of user-facing points, to :mod:`treebo.space.points`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from ..untrusted import shorten_reprs
from .conditions import (
    INACTIVE,
    activity,
    conditional_cardinality,
    conditional_grid,
    parents_allow,
    resolve_conditions,
)
from .description import named_dimensions, read_description
from .dimension import Dimension
from .points import ABSENT, check_point_sequence, make_points, point_values


class SpaceExhausted(RuntimeError):
    """Raised by :meth:`~treebo.Optimizer.ask` when every feasible point has been evaluated."""


class Space:
    """A search space: an ordered collection of named dimensions.

    Parameters
    ----------
    dimensions : list of Dimension, or dict of name -> Dimension
        Built from a list, points are lists in the same order; built from a
        dict, points are dicts keyed by name. A ``(low, high)`` tuple of two
        ints or two floats is accepted as shorthand for ``Integer`` or ``Real``,
        and a list of values as shorthand for ``Categorical``.

    Attributes
    ----------
    dimensions : list of Dimension
        The dimensions, each with a name (``"x0"``, ``"x1"``, ... by default).
    names : list of str
        Dimension names in order.
    n_dims : int
        Number of dimensions.
    n_columns : int
        Width of the encoded arrays.
    cardinality : float
        Number of distinct feasible points (``math.inf`` if any dimension that
        can be active is real).

    Notes
    -----
    **Conditional dimensions.** A dimension made with ``active_if={parent:
    values, ...}`` is *active* only when every parent is active and takes one
    of its listed values (several parents mean AND; a parent may itself be
    conditional, so conditions nest). Parents must be discrete (Categorical,
    Integer or Binary) and may come before or after their children in the
    dict; ``names``, ``dimensions`` and the encoded columns keep the order
    given. Such a space must be built from a dict: its points are dicts
    that leave the inactive dimensions out. :meth:`encode` accepts points
    without their inactive dimensions and ignores any value given for one;
    every column of an inactive dimension is encoded as :data:`INACTIVE`
    (outside ``[0, 1]``, so one tree split separates inactive from active
    points), which makes points that differ only in inactive values the
    same encoded point. :meth:`snap` writes :data:`INACTIVE` wherever the
    snapped parents make a dimension inactive, so everything snapped
    (samples, candidates) respects the conditions. Bad conditions (unknown
    or real parent, a value the parent cannot take, a cycle) raise a
    ``ValueError`` naming the dimension and the parent.
    """

    def __init__(self, dimensions: Sequence[Any] | Mapping[str, Any]):
        if isinstance(dimensions, Space):
            dimensions = dimensions._as_given()
        dims, names, self._points_are_dicts = named_dimensions(dimensions)
        self._conditional = any(d.active_if for d in dims)
        if self._conditional:
            if not self._points_are_dicts:
                name = next(n for n, d in zip(names, dims) if d.active_if)
                raise ValueError(
                    f"dimension {name!r} has active_if, which needs a space built "
                    "from a dict of name -> dimension (its points are dicts, so "
                    "an inactive dimension can be left out); got a list"
                )
            dims, self._conditions, self._order = resolve_conditions(dims, names)
        else:
            self._conditions = [()] * len(dims)
            self._order = list(range(len(dims)))
        self.dimensions: list[Dimension] = dims
        self.names: list[str] = names
        self.n_dims = len(dims)
        widths = [d.n_columns for d in dims]
        offsets = np.concatenate([[0], np.cumsum(widths)])
        self._slices = [slice(int(a), int(b)) for a, b in zip(offsets[:-1], offsets[1:])]
        self.n_columns = int(offsets[-1])

    def _as_given(self) -> list[Dimension] | dict[str, Dimension]:
        if self._points_are_dicts:
            return dict(zip(self.names, self.dimensions))
        return list(self.dimensions)

    # -- introspection ------------------------------------------------------
    def __repr__(self) -> str:
        if self._points_are_dicts:
            body = ", ".join(f"{n!r}: {d!r}" for n, d in zip(self.names, self.dimensions))
            return f"Space({{{body}}})"
        return f"Space([{', '.join(repr(d) for d in self.dimensions)}])"

    def __len__(self) -> int:
        return self.n_dims

    def __iter__(self) -> Iterator[Dimension]:
        return iter(self.dimensions)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Space)
            and self.dimensions == other.dimensions
            and self._points_are_dicts == other._points_are_dicts
        )

    def __hash__(self) -> int:
        return hash((tuple(self.dimensions), self._points_are_dicts))

    @property
    def conditional(self) -> bool:
        """True when some dimension has an ``active_if`` condition."""
        return self._conditional

    @property
    def cardinality(self) -> float:
        if self._conditional:
            return conditional_cardinality(
                [d.cardinality for d in self.dimensions], self._conditions, self._order
            )
        total: float = 1
        for dim in self.dimensions:
            total *= dim.cardinality
        return total

    @property
    def is_discrete(self) -> bool:
        """True when every dimension has finitely many values."""
        return all(d.is_discrete for d in self.dimensions)

    def columns_of(self, name_or_index: str | int) -> slice:
        """The encoded columns that belong to one dimension.

        Parameters
        ----------
        name_or_index : str or int
            The dimension's name, or its position in :attr:`names`.

        Returns
        -------
        slice
        """
        return self._slices[self._index_of(name_or_index)]

    def _index_of(self, name_or_index: str | int) -> int:
        if isinstance(name_or_index, str):
            if name_or_index not in self.names:
                raise ValueError(f"unknown dimension {name_or_index!r}; known: {self.names}")
            return self.names.index(name_or_index)
        return name_or_index

    # -- conditions -----------------------------------------------------------
    def active_mask(self, X: np.ndarray) -> np.ndarray:
        """Which dimensions are active in each encoded row.

        Activity is read from the parents' columns, decoded as :meth:`decode`
        decodes them, so ``active_mask(X)`` equals ``active_mask(snap(X))``.
        Vectorized over rows.

        Parameters
        ----------
        X : array-like of shape (n_points, n_columns)
            Encoded points (any points of the unit cube, snapped or not).

        Returns
        -------
        ndarray of bool, shape (n_points, n_dims)
            ``True`` where the dimension (in the order of :attr:`names`) is
            active; all ``True`` for a space without conditions.
        """
        X = self._check_array(X, "X")
        return self._activity(X)

    def is_active(self, point: Any, name: str) -> bool:
        """Whether the dimension ``name`` is active at ``point``.

        Parameters
        ----------
        point : list or dict
            A feasible point (inactive dimensions may be left out).
        name : str
            A dimension of the space.

        Returns
        -------
        bool

        Raises
        ------
        ValueError
            If ``name`` is not a dimension or ``point`` is not feasible.
        """
        if not isinstance(name, str):
            raise ValueError(f"name must be the name of a dimension, got {name!r}")
        j = self._index_of(name)
        _, active = self._encode_with_activity([point])
        return bool(active[0, j])

    def drop_inactive(self, point: Any) -> Any:
        """The point without the values of its inactive dimensions.

        Two points that differ only in inactive values give equal results;
        this is the form :meth:`decode` gives points in.

        Parameters
        ----------
        point : list or dict
            A feasible point.

        Returns
        -------
        dict or list
            A new dict with the active dimensions in the space's order (a
            new list, unchanged, for a space built from a list).

        Raises
        ------
        ValueError
            If ``point`` is not feasible.
        """
        _, active = self._encode_with_activity([point])
        if not self._points_are_dicts:
            return list(point)
        return {n: point[n] for n, on in zip(self.names, active[0]) if on}

    def fill_inactive(self, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Replace the columns of inactive dimensions with uniform draws from ``[0, 1)``.

        For neighbours of encoded points (local steps, one-dimension jumps):
        a neighbour whose parent changes value may activate a child, which
        would otherwise keep :data:`INACTIVE` and snap to its lowest value
        (the low bound, the first category). Filled rows decode and snap to
        the same points as before, since the parents are unchanged.

        Parameters
        ----------
        X : array-like of shape (n_points, n_columns)
            Encoded points.
        rng : numpy.random.Generator
            Draws ``n_points * n_columns`` uniforms whatever the activity, so
            the stream does not depend on the data.

        Returns
        -------
        ndarray of shape (n_points, n_columns)
            A new array; equal to ``X`` for a space without conditions.
        """
        X = self._check_array(X, "X").copy()
        draws = rng.random(X.shape)
        active = self._activity(X)
        for j, cols in enumerate(self._slices):
            inactive = ~active[:, j]
            X[inactive, cols] = draws[inactive, cols]
        return X

    def _activity(self, X: np.ndarray, write_inactive: bool = False) -> np.ndarray:
        """Active mask of shape (n_points, n_dims); see :func:`.conditions.activity`."""
        if not self._conditional:
            return np.ones((len(X), self.n_dims), dtype=bool)
        return activity(
            self.dimensions, self._slices, self._conditions, self._order, X, write_inactive
        )

    # -- points <-> arrays ---------------------------------------------------
    def _point_values(self, point: Any) -> list:
        # In a conditional space, absent dimensions are ABSENT: whether they may be
        # absent depends on the parents' values, which _encode_with_activity checks.
        return point_values(point, self.names, self._points_are_dicts, self._conditional)

    def encode(self, points: Sequence[Any]) -> np.ndarray:
        """Encode user-facing points.

        Parameters
        ----------
        points : sequence of points
            Each a list (or dict) of values, one per dimension. In a
            conditional space, a dict may leave out its inactive dimensions;
            a value given for an inactive dimension is ignored.

        Returns
        -------
        X : ndarray of shape (n_points, n_columns)
            Encoded points in ``[0, 1]``; the columns of inactive dimensions
            hold :data:`INACTIVE`.
        """
        return self._encode_with_activity(points)[0]

    def _encode_with_activity(self, points: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`encode`, and the active mask of shape (n_points, n_dims)."""
        check_point_sequence(points, self._points_are_dicts)
        rows = [self._point_values(p) for p in points]
        X = np.empty((len(rows), self.n_columns))
        active = np.ones((len(rows), self.n_dims), dtype=bool)
        if not self._conditional:
            for j, (dim, cols) in enumerate(zip(self.dimensions, self._slices)):
                X[:, cols] = dim.encode([row[j] for row in rows]).reshape(len(rows), -1)
            return X, active
        # Parents first: a dimension's activity depends on its parents' encodings.
        for j in self._order:
            dim, cols = self.dimensions[j], self._slices[j]
            if self._conditions[j]:
                active[:, j] = parents_allow(
                    self.dimensions, self._slices, self._conditions[j], X, active
                )
            X[~active[:, j], cols] = INACTIVE
            which = np.flatnonzero(active[:, j])
            values = [rows[i][j] for i in which]
            absent = [int(i) for i, value in zip(which, values) if value is ABSENT]
            if absent:
                raise ValueError(
                    f"point {points[absent[0]]!r} is missing dimension(s) "
                    f"{[dim.name]}, which is active there"
                    f"{self._why_active(j, points[absent[0]])}"
                )
            if len(which):
                X[which, cols] = dim.encode(values).reshape(len(which), -1)
        return X, active

    def _why_active(self, j: int, point: Mapping) -> str:
        """`` (because kernel = 'poly')``, for error messages."""
        reasons = [f"{self.names[p]} = {point[self.names[p]]!r}" for p, _ in self._conditions[j]]
        return f" (because {' and '.join(reasons)})" if reasons else ""

    def decode(self, X: np.ndarray) -> list:
        """Decode encoded rows into user-facing points.

        Parameters
        ----------
        X : array-like of shape (n_points, n_columns)

        Returns
        -------
        points : list of lists (or dicts)
            In a conditional space, dicts without the inactive dimensions
            (whatever their columns hold).
        """
        X = self._check_array(X, "X")
        columns = [dim.decode(X[:, cols]) for dim, cols in zip(self.dimensions, self._slices)]
        active = self._activity(X) if self._conditional else None
        return make_points(columns, self.names, self._points_are_dicts, active)

    def snap(self, X: np.ndarray) -> np.ndarray:
        """Move encoded rows onto the encodings of feasible points.

        Parameters
        ----------
        X : array-like of shape (n_points, n_columns)
            Any points of the unit cube.

        Returns
        -------
        X_snapped : ndarray of shape (n_points, n_columns)
            ``encode(decode(X))`` (up to rounding in real columns, which are
            only clipped to [0, 1]); vectorized per dimension. In a
            conditional space, the columns of the dimensions that the
            snapped parents make inactive hold :data:`INACTIVE`.
        """
        X = self._check_array(X, "X")
        out = np.empty_like(X)
        for dim, cols in zip(self.dimensions, self._slices):
            out[:, cols] = dim.snap(X[:, cols])
        if self._conditional:
            self._activity(out, write_inactive=True)
        return out

    def sample(self, n_points: int, random_state: Any = None) -> list:
        """Draw points uniformly under each dimension's prior.

        In a conditional space each dimension is drawn under its prior and
        then dropped where its drawn parents make it inactive.

        Parameters
        ----------
        n_points : int
        random_state : int, numpy.random.Generator or None

        Returns
        -------
        points : list of n_points points
        """
        rng = np.random.default_rng(random_state)
        return self.decode(self.sample_encoded(n_points, rng))

    def sample_encoded(self, n_points: int, rng: np.random.Generator) -> np.ndarray:
        """Encoded version of :meth:`sample`: an array of shape (n_points, n_columns).

        Parameters
        ----------
        n_points : int
            Points to draw, ``>= 0``.
        rng : numpy.random.Generator
            Draws ``n_points * n_columns`` uniforms.

        Returns
        -------
        ndarray of shape (n_points, n_columns)
            Snapped draws.
        """
        if (
            isinstance(n_points, bool)
            or not isinstance(n_points, (int, np.integer))
            or n_points < 0
        ):
            raise ValueError(f"n_points must be a non-negative integer, got {n_points!r}")
        return self.snap(rng.random((int(n_points), self.n_columns)))

    def grid(self) -> np.ndarray:
        """Every feasible point of a discrete space, encoded.

        In a conditional space, each distinct feasible point appears once: an
        inactive dimension does not multiply the points.

        Returns
        -------
        X : ndarray of shape (cardinality, n_columns)
        """
        if not self.is_discrete:
            raise ValueError("grid() needs a space without Real dimensions")
        if self._conditional:
            return conditional_grid(
                self.dimensions, self._slices, self._conditions, self._order, self.n_columns
            )
        parts = [dim.encode(dim.values()).reshape(-1, dim.n_columns) for dim in self.dimensions]
        index = np.indices([len(p) for p in parts]).reshape(len(parts), -1)
        return np.hstack([p[i] for p, i in zip(parts, index)])

    def _check_array(self, X: Any, argname: str) -> np.ndarray:
        X = np.asarray(X, dtype=float)
        if X.ndim == 1 and X.shape[0] == self.n_columns:
            X = X[None, :]
        if X.ndim != 2 or X.shape[1] != self.n_columns:
            raise ValueError(
                f"{argname} must have shape (n_points, {self.n_columns}), got {X.shape}"
            )
        return X

    def point_to_json(self, point: Any) -> list:
        """The values of a point, one per dimension, as JSON-safe numbers.

        Reals become floats (JSON keeps every bit of a float), integers and
        binaries ints, categorical values their index in the categories, so
        any hashable category (a class, a tuple, None) round-trips exactly.
        An inactive dimension is ``None`` (JSON ``null``), whatever value the
        point gives it.

        Parameters
        ----------
        point : list or dict
            A point of the space.

        Returns
        -------
        list
            One number (or ``None``) per dimension, in the space's order.
        """
        if self._conditional:
            _, active = self._encode_with_activity([point])
            flags = active[0]
        else:
            flags = [True] * self.n_dims
        return [
            dim.to_number(value) if on else None
            for dim, value, on in zip(self.dimensions, self._point_values(point), flags)
        ]

    def point_from_json(self, values: Sequence[Any]) -> Any:
        """Inverse of :meth:`point_to_json`: a list, or a dict for a space built from a dict.

        Parameters
        ----------
        values : sequence
            One number per dimension, as :meth:`point_to_json` gives them;
            ``None`` for an inactive dimension.

        Returns
        -------
        list or dict
            The dimensions given as ``None`` are left out of the dict.
        """
        if self._conditional:
            # Test the stored value, not the decoded one: None is also a category.
            return {
                dim.name: dim.from_number(v)
                for dim, v in zip(self.dimensions, values)
                if v is not None
            }
        decoded = [dim.from_number(v) for dim, v in zip(self.dimensions, values)]
        if self._points_are_dicts:
            return dict(zip(self.names, decoded))
        return decoded

    def to_dict(self) -> dict:
        """A JSON-friendly description; equal spaces give equal descriptions.

        A conditional dimension's entry has an ``"active_if"`` key: parent
        name -> list of allowed values as :meth:`point_to_json` stores them
        (a category's index, an int), in the parent's order. Dimensions
        without a condition have no such key.
        """
        dims = []
        for dim, pairs in zip(self.dimensions, self._conditions):
            entry = dim.to_dict()
            if pairs:
                entry["active_if"] = {
                    self.names[p]: [int(number) for number in numbers] for p, numbers in pairs
                }
            dims.append(entry)
        return {"dimensions": dims, "points_are_dicts": self._points_are_dicts}

    @classmethod
    def from_dict(
        cls, description: Mapping[str, Any], *, object_categories: str = "raise"
    ) -> Space:
        """The space a description describes: the inverse of :meth:`to_dict`.

        Two forms are read. The one :meth:`to_dict` writes has a
        ``points_are_dicts`` key; its categories are Python reprs and its
        ``active_if`` values are category indexes and ints, and both are read
        back exactly. Without that key (a hand-written space file), categories
        and ``active_if`` values are written as themselves, and points are
        dicts. Each entry of ``dimensions`` has ``name`` and ``type``
        (``Real``, ``Integer``, ``Categorical`` or ``Binary``), ``low`` and
        ``high`` (and optionally ``prior``) for a number range,
        ``categories`` for a categorical, and optionally ``active_if``.

        Parameters
        ----------
        description : mapping
            ``{"dimensions": [...]}``, optionally with ``points_are_dicts``.
        object_categories : {"raise", "repr"}, default "raise"
            For a category written by :meth:`to_dict` whose repr is not a
            Python literal (an object, a class): ``"raise"`` a ``ValueError``
            (for a space that must equal the described one), or ``"repr"`` to
            give the category as its repr string (for reading results).

        Returns
        -------
        Space

        Raises
        ------
        ValueError
            Naming the entry that is not a valid dimension.
        """
        dimensions = read_description(description, object_categories)
        try:
            return cls(dimensions)
        except ValueError as error:
            # Its messages (a condition's parent, a cycle) name dimensions by their
            # whole repr; a description read from a file may give any name.
            dims = dimensions.values() if isinstance(dimensions, dict) else dimensions
            raise ValueError(shorten_reprs(str(error), [d.name for d in dims])) from None
