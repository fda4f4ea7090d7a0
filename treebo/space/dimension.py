"""The base class of every dimension: its name, its condition, and what each kind provides.

A dimension maps user-facing values to encoded columns in ``[0, 1]`` and
back, and describes itself: :meth:`Dimension.to_dict` writes it as JSON,
:meth:`Dimension.from_dict` reads it back (whatever its kind), and
:meth:`Dimension.to_number` / :meth:`Dimension.from_number` give the JSON
number that stands for one value. Code outside the dimension classes calls
these methods instead of asking which kind a dimension is.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from .coercion import dimension_label, short_repr, unwrap_scalar

#: The dimension classes by the ``"type"`` their descriptions carry.
_KINDS: dict[str, type[Dimension]] = {}

# The default of ``replace(active_if=...)``: keep the current condition.
_UNCHANGED = "unchanged"


def _allowed_values(allowed: Any) -> list:
    """The values of one ``active_if`` entry: a collection, or one value as shorthand."""
    allowed = unwrap_scalar(allowed)
    if isinstance(allowed, np.ndarray):
        return [v.item() if isinstance(v, np.generic) else v for v in allowed.reshape(-1)]
    # A tuple counts as several values, as users write ("rbf", "poly"); a tuple
    # category is named inside a list: [("a", 1)].
    if isinstance(allowed, (list, tuple, set, frozenset, range)):
        return list(allowed)
    return [allowed]


def _check_active_if(active_if: Any, name: str | None) -> tuple[tuple[str, tuple], ...]:
    """Validate the form of ``active_if`` (the parents are checked by the space).

    Returns
    -------
    tuple of (str, tuple) pairs
        Parent name and its allowed values (duplicates dropped, order kept);
        empty when there is no condition.
    """
    if active_if is None:
        return ()
    label = dimension_label(name)
    if not isinstance(active_if, Mapping):
        raise ValueError(
            f"{label}: active_if must be a dict of parent dimension name -> "
            f"allowed value or list of values (or None), got {short_repr(active_if)}"
        )
    entries = []
    for parent, allowed in active_if.items():
        if not isinstance(parent, str):
            raise ValueError(
                f"{label}: active_if keys must be names of parent "
                f"dimensions (strings), got {parent!r}"
            )
        values = _allowed_values(allowed)
        if not values:
            raise ValueError(
                f"{label}: active_if[{parent!r}] is empty; give at least "
                f"one value of {parent!r} for which the dimension is active"
            )
        for value in values:
            try:
                hash(value)
            except TypeError:
                raise ValueError(
                    f"{label}: active_if[{parent!r}] value {short_repr(value)} "
                    "is not hashable; a parent's values are numbers or "
                    "categories"
                ) from None
        entries.append((parent, tuple(dict.fromkeys(values))))
    return tuple(entries)


class Dimension:
    """Base class of a search-space dimension.

    Subclasses define how user-facing values map to encoded columns in
    ``[0, 1]``, how a value is written as a JSON number, and how the
    dimension describes itself. ``n_columns`` is the number of encoded
    columns. A subclass is registered under its class name, the ``"type"``
    of its description.

    Parameters
    ----------
    name : str, optional
        Name of the dimension.
    active_if : dict of str -> value or list of values, optional
        The condition under which the dimension is active (see
        :attr:`active_if`).
    """

    n_columns: int = 1
    #: True when the dimension has finitely many values (all but :class:`Real`).
    is_discrete: ClassVar[bool] = True
    #: True for a bounded range of numbers with a prior (``low``, ``high`` and
    #: ``prior`` attributes: :class:`Real`, :class:`Integer`); False for labels
    #: without a scale (:class:`Categorical`, :class:`Binary`), which plots show
    #: as one tick per value and neighbours change to another value.
    is_numeric: ClassVar[bool] = False
    #: The keys of :meth:`to_dict` besides ``"type"`` and ``"name"``.
    description_keys: ClassVar[frozenset[str]] = frozenset()
    # Unconditional unless __init__ says otherwise (also for a subclass that
    # does not call it).
    _active_if: tuple[tuple[str, tuple], ...] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if not cls.__name__.startswith("_"):  # a shared private base is no kind of its own
            _KINDS[cls.__name__] = cls

    def __init__(self, name: str | None = None, active_if: Mapping[str, Any] | None = None):
        if name is not None and not isinstance(name, str):
            raise ValueError(f"name must be a string or None, got {name!r}")
        self.name = name
        # A tuple of (parent name, tuple of allowed values) pairs, empty for an
        # unconditional dimension: immutable, so a dimension shared by two
        # spaces cannot be changed through one of them, and picklable.
        self._active_if = _check_active_if(active_if, name)

    @property
    def active_if(self) -> dict[str, list] | None:
        """The condition under which the dimension is active, or None (always active).

        A new dict of parent name -> list of allowed values at each access.
        The dimension is active when every parent is active and takes one of
        its listed values; a condition needs a space built from a dict (see
        :class:`~treebo.space.Space`, "Conditional dimensions"). Inside a
        :class:`~treebo.space.Space` the values are the parent's own (a
        category, or an int) in the parent's order.
        """
        if not self._active_if:
            return None
        return {parent: list(values) for parent, values in self._active_if}

    def _active_if_repr(self) -> str:
        return f", active_if={self.active_if!r}" if self._active_if else ""

    def _active_key(self) -> tuple:
        # Order-free, as the condition is: AND over parents, OR over values.
        return tuple(sorted((parent, frozenset(values)) for parent, values in self._active_if))

    # -- provided by each kind --------------------------------------------------------------
    def encode(self, values: Sequence[Any]) -> np.ndarray:
        """Encode ``n`` values into an array of shape ``(n, n_columns)``.

        Parameters
        ----------
        values : sequence
            ``n`` user-facing values of the dimension.

        Returns
        -------
        ndarray of shape (n, n_columns)
            In ``[0, 1]``.

        Raises
        ------
        ValueError
            Naming the dimension and the first value it does not take.
        """
        raise NotImplementedError

    def decode(self, columns: np.ndarray) -> list:
        """Decode an array of shape ``(n, n_columns)`` into ``n`` values.

        Parameters
        ----------
        columns : ndarray of shape (n, n_columns)
            Encoded rows of this dimension (any points of the unit cube).

        Returns
        -------
        list
            ``n`` user-facing values.
        """
        raise NotImplementedError

    def decode_numbers(self, columns: np.ndarray) -> np.ndarray:
        """The value each encoded row decodes to, as the float :meth:`to_number` gives it.

        Vectorized :meth:`decode` followed by :meth:`to_number`: rows are read
        as :meth:`decode` reads them, so snapped and unsnapped rows give the
        same numbers (what conditions compare with their allowed values).

        Parameters
        ----------
        columns : ndarray of shape (n, n_columns)

        Returns
        -------
        ndarray of float, shape (n,)
        """
        raise NotImplementedError

    @property
    def cardinality(self) -> float:
        """Number of distinct feasible values (``math.inf`` for reals)."""
        raise NotImplementedError

    def values(self) -> list:
        """All feasible values, for discrete dimensions."""
        raise TypeError(
            f"{dimension_label(self.name)} is continuous and has no finite list of values"
        )

    def to_number(self, value: Any) -> int | float:
        """The JSON number that stands for ``value``.

        A float for a real, an int for an integer or binary, the category's
        index for a categorical: what :meth:`Space.point_to_json
        <treebo.space.Space.point_to_json>` stores and conditions compare.

        Parameters
        ----------
        value : object
            A value of the dimension.

        Returns
        -------
        int or float
        """
        raise NotImplementedError

    def from_number(self, number: Any) -> Any:
        """The value that :meth:`to_number` wrote as ``number`` (not checked; see
        :meth:`number_problem`).

        Parameters
        ----------
        number : int or float
            A number as :meth:`to_number` gives it.

        Returns
        -------
        object
        """
        return number

    def number_problem(self, number: Any) -> str | None:
        """What is wrong with a stored number for this dimension, or None if it is one of
        the numbers :meth:`to_number` writes.

        Parameters
        ----------
        number : object
            A number as it was read from storage.

        Returns
        -------
        str or None
            ``"<number> (allowed: ...)"``, to follow a description of where the
            number was found.
        """
        raise NotImplementedError

    def describe_values(self) -> str:
        """What the dimension takes, for error messages: ``"one of ['a', 'b']"``."""
        raise NotImplementedError

    def _fields(self) -> dict:
        """The entries of :meth:`to_dict` besides type and name."""
        return {}

    @classmethod
    def _arguments(cls, entry: Mapping[str, Any], read_categories: Callable[[list], list]) -> dict:
        """The constructor's keyword arguments besides name and active_if that an entry of
        :meth:`to_dict`'s form gives (its keys already checked): none, unless the kind has
        fields of its own."""
        return {}

    # -- shared -----------------------------------------------------------------------------
    def snap(self, columns: np.ndarray) -> np.ndarray:
        """Map encoded columns onto the encodings of feasible values.

        Parameters
        ----------
        columns : ndarray of shape (n, n_columns)
            Encoded rows of this dimension (any points of the unit cube).

        Returns
        -------
        ndarray of shape (n, n_columns)
            ``encode(decode(columns))``.
        """
        return self.encode(self.decode(columns))

    def evenly_spaced(self, n_points: int) -> np.ndarray:
        """Encoded values evenly spaced over the dimension, for plots and partial dependence.

        Every value of a dimension with at most ``n_points`` of them (and
        every category and binary value whatever ``n_points``), else
        ``n_points`` values evenly spaced on the encoded scale, so evenly
        spaced under the prior.

        Parameters
        ----------
        n_points : int

        Returns
        -------
        ndarray of shape (n_values, n_columns)
        """
        return self.encode(self.values()).reshape(-1, self.n_columns)

    def redraw(self, columns: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The encoded rows with this dimension's value redrawn (a one-dimension jump).

        A numeric dimension draws uniformly on the encoded scale; a label
        dimension takes another of its values. Not snapped.

        Parameters
        ----------
        columns : ndarray of shape (n, n_columns)
        rng : numpy.random.Generator

        Returns
        -------
        ndarray of shape (n, n_columns)
        """
        raise NotImplementedError

    def step(self, columns: np.ndarray, sizes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The encoded rows moved to a random neighbouring value (a local step).

        A real takes a Gaussian step of standard deviation ``sizes`` (encoded
        units); an integer moves by the same relative amount but at least one
        value; a label dimension takes another of its values. Not snapped.

        Parameters
        ----------
        columns : ndarray of shape (n, n_columns)
        sizes : ndarray of shape (n,)
            Step sizes in encoded units.
        rng : numpy.random.Generator

        Returns
        -------
        ndarray of shape (n, n_columns)
        """
        raise NotImplementedError

    def to_dict(self) -> dict:
        """A JSON-friendly description: ``type``, ``name`` and the kind's own fields.

        ``low``, ``high`` and ``prior`` for a number range, ``categories`` (as
        their ``repr``) for a categorical. The condition is not part of it:
        its values depend on the space (see :meth:`Space.to_dict
        <treebo.space.Space.to_dict>`).
        """
        return {"type": type(self).__name__, "name": self.name, **self._fields()}

    @classmethod
    def from_dict(
        cls,
        entry: Mapping[str, Any],
        *,
        active_if: Any = None,
        read_categories: Callable[[list], list] = list,
    ) -> Dimension:
        """The dimension that a :meth:`to_dict`-form entry describes, of any registered kind.

        Parameters
        ----------
        entry : mapping
            With ``"type"``, ``"name"`` and the kind's own keys
            (:attr:`description_keys`; ``"active_if"`` is allowed and ignored).
        active_if : mapping, optional
            The condition of the dimension.
        read_categories : callable, default list
            Turns the ``categories`` list as written into the categories (for
            instance, reprs into values).

        Returns
        -------
        Dimension

        Raises
        ------
        ValueError
            Naming the dimension and what is wrong with the entry.
        """
        name, kind = entry.get("name"), entry.get("type")
        where = dimension_label(name)
        if kind not in _KINDS:
            raise ValueError(f"{where}: type must be one of {sorted(_KINDS)}, got {kind!r}")
        dimension_class = _KINDS[kind]
        allowed = dimension_class.description_keys | {"name", "type", "active_if"}
        unknown = set(entry) - allowed
        if unknown:
            raise ValueError(
                f"{where}: unknown keys {sorted(unknown)} for a {kind}; allowed: {sorted(allowed)}"
            )
        try:
            arguments = dimension_class._arguments(entry, read_categories)
            return dimension_class(**arguments, name=name, active_if=active_if)
        except ValueError as error:
            text = str(error)
            raise ValueError(text if text.startswith(where) else f"{where}: {text}") from None

    def replace(
        self, *, name: str | None = None, active_if: Mapping[str, Any] | None | str = _UNCHANGED
    ) -> Dimension:
        """A copy with another name and/or another condition.

        Parameters
        ----------
        name : str, optional
            The new name; the current one when omitted.
        active_if : mapping or None, optional
            The new condition (``None`` for none); the current one when omitted.

        Returns
        -------
        Dimension
        """
        clone = object.__new__(type(self))
        clone.__dict__.update(self.__dict__)
        clone.name = self.name if name is None else name
        if not (isinstance(active_if, str) and active_if == _UNCHANGED):
            clone._active_if = _check_active_if(active_if, clone.name)
        return clone

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._key()))

    def _key(self) -> tuple:
        raise NotImplementedError
