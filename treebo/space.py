"""Search spaces: dimensions, encoding to the unit cube, snapping and sampling.

Surrogates only ever see *encoded* points: rows of an array in ``[0, 1]^C``,
where ``C`` is the number of encoded columns (one per real, integer or binary
dimension, ``k`` one-hot columns per categorical dimension with ``k`` values).
Objectives only ever see *user-facing* points: lists (or dicts, when the space
was built from a dict) of Python values.

Encodings
---------
Real
    ``(x - low) / (high - low)``, or the same on ``log(x)`` for a log-uniform
    prior.
Integer
    The integer ``k`` owns the interval ``[k - 0.5, k + 0.5)`` of an underlying
    real line (log-scaled for a log-uniform prior), and that line is mapped
    onto ``[0, 1]``. Every integer therefore gets an equal share of the unit
    interval under a uniform prior, a uniformly drawn encoded value decodes to
    a uniformly drawn integer, and ``k`` is encoded at the centre of its share.
Categorical
    One-hot over the ``k`` categories; decoding takes the arg-max column.
Binary
    ``0`` or ``1``; decoding thresholds at 0.5.

``snap(X)`` maps any point of the unit cube to the encoding of the feasible
point it decodes to: it equals ``encode(decode(X))`` exactly in discrete
columns and up to floating-point rounding in real ones (which it only clips).

Conditional dimensions
----------------------
A dimension made with ``active_if={parent: values}`` exists only where its
parents take those values (see :class:`Space`). Every column of an inactive
dimension is encoded as :data:`INACTIVE` (-1, outside the unit cube), and
user-facing points leave inactive dimensions out.
"""

from __future__ import annotations

import heapq
import math
import numbers
import sys
from collections.abc import Hashable, Iterable, Mapping, Sequence
from decimal import Decimal
from typing import Any

import numpy as np

__all__ = ["Real", "Integer", "Categorical", "Binary", "Space", "Dimension", "SpaceExhausted",
           "INACTIVE"]

#: The encoded value of every column of an inactive dimension (see
#: :class:`Space`, "Conditional dimensions"). Outside ``[0, 1]``, where every
#: active encoding lies, so that a tree separates inactive from active points
#: with one split on any of the dimension's columns (thresholds fall between
#: -1 and the smallest active value), as SMAC imputes inactive hyperparameters.
INACTIVE = -1.0

# Markers that can equal no user value: a dimension absent from a point, and
# (when counting points) a parent that is inactive or takes a value no
# condition names.
_ABSENT = object()
_INACTIVE_STATE = object()
_OTHER_VALUE = object()

_PRIORS = ("uniform", "log-uniform")

# A real interval must hold at least this many float64 values (on the scale
# it is encoded on): encoded values about a millionth of the range apart then
# still decode to different reals, so candidates that the acquisition tells
# apart are not all the same point to the objective.
_MIN_REAL_VALUES = 2**20

# Integer bounds within +-2**49 keep every integer, the edges of its share
# (k +- 0.5) and the encode/decode arithmetic exact to well under 0.5 in
# float64, so decode(encode(k)) == k for every k. The log-uniform encoding
# loses more bits in log/exp, hence its lower limit.
_MAX_INTEGER_BOUND = 2**49
_MAX_LOG_INTEGER_BOUND = 2**40

# Exact types whose lists numpy converts to float without surprises (bool is
# not among them: bool is not a number for Real and Integer dimensions).
_PLAIN_NUMBER_TYPES = frozenset({int, float, np.float64, np.float32, np.int64, np.int32})

_NUMBER_KINDS = "an int or float (numpy numbers, Decimal, Fraction and 0-d arrays too)"


class SpaceExhausted(RuntimeError):
    """Raised by :meth:`~treebo.Optimizer.ask` when every feasible point has been evaluated."""


def _label(name: str | None) -> str:
    return f"dimension {name!r}" if name is not None else "dimension"


def _shown(value: Any, limit: int = 60) -> str:
    """``repr(value)``, shortened so that a 400-digit integer stays readable."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit - 3]}..."


def _unwrap(value: Any) -> Any:
    """The scalar held by a 0-d array, so that it is judged like that scalar."""
    while isinstance(value, np.ndarray) and value.ndim == 0:
        value = value.item()
    return value


def _why_not_a_number(value: Any, allow_bool: bool = False) -> str | None:
    """Why ``value`` (already unwrapped) is not one real number, or None if it is.

    Accepted: ``numbers.Real`` (which covers numpy integers and floats),
    ``Decimal``, and anything ``float()`` converts that is neither a string
    nor a sequence (scalars of other array libraries). Bools only with
    ``allow_bool``.
    """
    if isinstance(value, (bool, np.bool_)):
        return None if allow_bool else "is a bool, not a number"
    if isinstance(value, (str, bytes)):  # np.str_ and np.bytes_ too
        return "is a string, not a number"
    if isinstance(value, (numbers.Real, Decimal)):
        return None
    if isinstance(value, np.ndarray):
        return f"is an array of shape {value.shape}, not a single number"
    if isinstance(value, Sequence) or np.ndim(value) > 0:
        return f"is a {type(value).__name__}, not a single number"
    if isinstance(value, numbers.Number):
        return "is not a real number"
    try:
        float(value)
    except (TypeError, ValueError, OverflowError):
        return "is not a number"
    return None


def _to_float(value: Any) -> float:
    """``float(value)`` for an accepted number, saturating instead of raising."""
    try:
        return float(value)
    except OverflowError:  # an int or Fraction beyond the float64 range
        return math.inf if value > 0 else -math.inf
    except ValueError:  # Decimal('sNaN')
        return math.nan


def _allowed_values(allowed: Any) -> list:
    """The values of one ``active_if`` entry: a collection, or one value as shorthand."""
    allowed = _unwrap(allowed)
    if isinstance(allowed, np.ndarray):
        return [v.item() if isinstance(v, np.generic) else v for v in allowed.reshape(-1)]
    # A tuple counts as several values, as users write ("rbf", "poly"); a tuple
    # category is named inside a list: [("a", 1)].
    if isinstance(allowed, (list, tuple, set, frozenset, range)):
        return list(allowed)
    return [allowed]


def _check_active_if(active_if: Any, name: str | None) -> tuple[tuple[str, tuple], ...]:
    """Validate the form of ``active_if`` (the parents are checked by :class:`Space`).

    Returns
    -------
    tuple of (str, tuple) pairs
        Parent name and its allowed values (duplicates dropped, order kept);
        empty when there is no condition.
    """
    if active_if is None:
        return ()
    if not isinstance(active_if, Mapping):
        raise ValueError(f"{_label(name)}: active_if must be a dict of parent dimension name -> "
                         f"allowed value or list of values (or None), got {_shown(active_if)}")
    entries = []
    for parent, allowed in active_if.items():
        if not isinstance(parent, str):
            raise ValueError(f"{_label(name)}: active_if keys must be names of parent "
                             f"dimensions (strings), got {parent!r}")
        values = _allowed_values(allowed)
        if not values:
            raise ValueError(f"{_label(name)}: active_if[{parent!r}] is empty; give at least "
                             f"one value of {parent!r} for which the dimension is active")
        for value in values:
            try:
                hash(value)
            except TypeError:
                raise ValueError(f"{_label(name)}: active_if[{parent!r}] value {_shown(value)} "
                                 "is not hashable; a parent's values are numbers or "
                                 "categories") from None
        entries.append((parent, tuple(dict.fromkeys(values))))
    return tuple(entries)


class Dimension:
    """Base class of a search-space dimension.

    Subclasses define how user-facing values map to encoded columns in
    ``[0, 1]``. ``n_columns`` is the number of encoded columns.

    Parameters
    ----------
    name : str, optional
        Name of the dimension.
    active_if : dict of str -> value or list of values, optional
        The condition under which the dimension is active (see
        :attr:`active_if`).
    """

    n_columns: int = 1
    # Unconditional unless __init__ says otherwise (also for a subclass that
    # does not call it, and for a dimension pickled before conditions existed).
    _active_if: tuple[tuple[str, tuple], ...] = ()

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
        its listed values. Inside a :class:`Space` the values are the
        parent's own (a category, or an int) in the parent's order.
        """
        if not self._active_if:
            return None
        return {parent: list(values) for parent, values in self._active_if}

    def _active_if_repr(self) -> str:
        return f", active_if={self.active_if!r}" if self._active_if else ""

    def _active_key(self) -> tuple:
        # Order-free, as the condition is: AND over parents, OR over values.
        return tuple(sorted((parent, frozenset(values)) for parent, values in self._active_if))

    # -- to be provided by subclasses -------------------------------------
    def encode(self, values: Sequence[Any]) -> np.ndarray:
        """Encode ``n`` values into an array of shape ``(n, n_columns)``."""
        raise NotImplementedError

    def decode(self, columns: np.ndarray) -> list:
        """Decode an array of shape ``(n, n_columns)`` into ``n`` values."""
        raise NotImplementedError

    @property
    def cardinality(self) -> float:
        """Number of distinct feasible values (``math.inf`` for reals)."""
        raise NotImplementedError

    def values(self) -> list:
        """All feasible values, for discrete dimensions."""
        raise TypeError(f"{_label(self.name)} is continuous and has no finite list of values")

    # -- shared -----------------------------------------------------------
    def snap(self, columns: np.ndarray) -> np.ndarray:
        """Map encoded columns onto the encodings of feasible values."""
        return self.encode(self.decode(columns))

    def replace(self, *, name: str | None = None,
                active_if: Mapping[str, Any] | None | str = "unchanged") -> Dimension:
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
        clone = self._with_name(self.name if name is None else name)
        if not (isinstance(active_if, str) and active_if == "unchanged"):
            clone._active_if = _check_active_if(active_if, clone.name)
        return clone

    def _with_name(self, name: str) -> Dimension:
        clone = object.__new__(type(self))
        clone.__dict__.update(self.__dict__)
        clone.name = name
        return clone

    def _with_active_if(self, active_if: tuple[tuple[str, tuple], ...]) -> Dimension:
        clone = self._with_name(self.name)
        clone._active_if = active_if
        return clone

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._key()))

    def _key(self) -> tuple:
        raise NotImplementedError


def _check_bounds(low: Any, high: Any, name: str | None, integer: bool) -> tuple:
    """Validate and convert the bounds of a Real (to floats) or an Integer (to ints)."""
    kind = "integers" if integer else "real numbers"
    converted = []
    for which, value in (("low", low), ("high", high)):
        value = _unwrap(value)
        if _why_not_a_number(value) is not None:
            raise ValueError(f"{_label(name)}: {which} must be a number: {_NUMBER_KINDS}, "
                             f"not a bool, string or sequence; got {_shown(value)}")
        as_float = _to_float(value)
        if not math.isfinite(as_float):
            raise ValueError(f"{_label(name)}: {which} must be finite and within the float64 "
                             f"range (magnitude at most {sys.float_info.max:.4g}), "
                             f"got {_shown(value)}")
        if not integer:
            converted.append(as_float)
            continue
        # Exact for ints of any size; floor() is exact for floats, Decimal and Fraction.
        exact = int(value) if isinstance(value, numbers.Integral) else math.floor(value)
        if exact != value:
            raise ValueError(f"{_label(name)}: {which} must be an integer, got {_shown(value)}")
        if abs(exact) > _MAX_INTEGER_BOUND:
            raise ValueError(f"{_label(name)}: {which} must lie within +-2**49 = "
                             f"+-{_MAX_INTEGER_BOUND} so that every integer of the range is "
                             f"encoded exactly in float64, got {_shown(value)}")
        converted.append(exact)
    low, high = converted
    if not low < high:
        raise ValueError(f"{_label(name)}: low must be smaller than high ({kind}), "
                         f"got low={low!r}, high={high!r}")
    return low, high


def _check_prior(prior: str | None, log: bool, name: str | None) -> str:
    if not isinstance(log, (bool, np.bool_)):
        # Only a real boolean: a truthy typo (log="no") must not change the prior.
        raise ValueError(f"{_label(name)}: log must be True or False, got {_shown(log)}")
    if prior is None:
        return "log-uniform" if log else "uniform"
    if not isinstance(prior, str) or prior not in _PRIORS:
        raise ValueError(f"{_label(name)}: prior must be one of {_PRIORS}, got {prior!r}")
    if log and prior != "log-uniform":
        raise ValueError(f"{_label(name)}: log=True contradicts prior={prior!r}")
    return prior


def _float_ordinal(x: float) -> int:
    """Position of ``x`` among the float64 values: neighbours differ by 1, -0.0 is 0.0."""
    bits = int(np.float64(x).view(np.int64))
    return bits if bits >= 0 else -(bits & 0x7FFF_FFFF_FFFF_FFFF)


def _check_resolution(lo: float, hi: float, name: str | None, scale: str) -> None:
    """Refuse an encoded interval ``[lo, hi]`` too wide or too narrow for float64.

    Parameters
    ----------
    lo, hi : float
        The interval on the scale the dimension is encoded on.
    name : str or None
        Name of the dimension, for messages.
    scale : str
        How messages call the interval: ``"[low, high]"`` or
        ``"[log(low), log(high)]"``.
    """
    if not math.isfinite(hi - lo):
        raise ValueError(f"{_label(name)}: high - low overflows float64; low and high must be "
                         f"less than {sys.float_info.max:.4g} apart (rescale the parameter), "
                         f"got low={lo!r}, high={hi!r}")
    count = _float_ordinal(hi) - _float_ordinal(lo) + 1
    if count < _MIN_REAL_VALUES:
        raise ValueError(f"{_label(name)}: {scale} = [{lo!r}, {hi!r}] holds only {count} "
                         f"float64 values; a Real needs at least 2**20 = {_MIN_REAL_VALUES} so "
                         "that distinct candidates decode to distinct values (widen the "
                         "interval, or shift or rescale the parameter)")


def _first(values: Sequence[Any], bad: np.ndarray) -> Any:
    """The first offending value as the user gave it (for error messages)."""
    flat = values.reshape(-1) if isinstance(values, np.ndarray) else list(values)
    value = flat[int(np.flatnonzero(bad)[0])]
    return value.item() if isinstance(value, np.generic) else value


def _number_column(values: Sequence[Any], dim: Dimension, takes: str,
                   allow_bool: bool = False) -> np.ndarray:
    """The values of one dimension as a float array, refusing anything but single numbers.

    Parameters
    ----------
    values : sequence
        One value per point.
    dim : Dimension
        The dimension (named in error messages).
    takes : str
        What the dimension takes, for error messages.
    allow_bool : bool, default False
        Accept ``True``/``False`` (as 1 and 0).

    Returns
    -------
    ndarray of shape (n,)
        Out-of-range values (including ints too large for a float, as
        +-inf) are left to the caller's range check.
    """
    if isinstance(values, np.ndarray):
        if values.dtype.kind in ("iufb" if allow_bool else "iuf"):
            return values.astype(float).reshape(-1)
        values = list(values.reshape(-1))
    values = values if isinstance(values, list) else list(values)
    plain = _PLAIN_NUMBER_TYPES | {bool} if allow_bool else _PLAIN_NUMBER_TYPES
    if plain.issuperset(map(type, values)):
        try:
            return np.array(values, dtype=float).reshape(-1)
        except OverflowError:  # an int beyond float64; saturated one by one below
            pass
    column = np.empty(len(values))
    for i, value in enumerate(values):
        scalar = _unwrap(value)
        why = _why_not_a_number(scalar, allow_bool)
        if why is not None:
            raise ValueError(f"{_label(dim.name)}: value {_shown(value)} {why}; {takes}")
        column[i] = _to_float(scalar)
    return column


class Real(Dimension):
    """A real-valued dimension on the closed interval ``[low, high]``.

    Parameters
    ----------
    low, high : float
        Bounds, ``low < high``, both finite: any real number (int, float,
        numpy number, ``Decimal``, ``Fraction`` or 0-d array, not a bool),
        stored as floats. The interval must hold at least ``2**20`` float64
        values on the encoded scale (so about ``2.3e-10 * max(|low|, |high|)``
        wide for a uniform prior), and ``high - low`` must not overflow.
    prior : {"uniform", "log-uniform"}, default "uniform"
        ``"log-uniform"`` encodes ``log(x)``, so candidates are spread evenly
        over orders of magnitude; it needs ``low > 0``.
    log : bool, default False
        Shorthand for ``prior="log-uniform"``.
    name : str, optional
        Name of the dimension, used in points given as dicts and in errors.
    active_if : dict of str -> value or list of values, optional
        Make the dimension conditional: it is active only when every named
        parent dimension is active and takes one of the given values (see
        :class:`Space`, "Conditional dimensions"). Needs a space built from
        a dict.

    Notes
    -----
    Values given to :meth:`encode` must be single numbers as above; strings,
    bools and sequences are refused with a ``ValueError``.
    """

    def __init__(self, low: float, high: float, prior: str | None = None, *, log: bool = False,
                 name: str | None = None, active_if: Mapping[str, Any] | None = None):
        super().__init__(name, active_if)
        self.low, self.high = _check_bounds(low, high, name, integer=False)
        self.prior = _check_prior(prior, log, name)
        if self.prior == "log-uniform" and self.low <= 0:
            raise ValueError(f"{_label(name)}: a log-uniform prior needs low > 0, got low={low!r}")
        _check_resolution(self.low, self.high, name, "[low, high]")
        if self.prior == "log-uniform":
            self._lo, self._hi = math.log(self.low), math.log(self.high)
            _check_resolution(self._lo, self._hi, name, "[log(low), log(high)]")
        else:
            self._lo, self._hi = self.low, self.high

    def __repr__(self) -> str:
        extra = ", prior='log-uniform'" if self.prior == "log-uniform" else ""
        named = f", name={self.name!r}" if self.name is not None else ""
        return f"Real({self.low!r}, {self.high!r}{extra}{named}{self._active_if_repr()})"

    def _key(self) -> tuple:
        return (self.low, self.high, self.prior, self.name, self._active_key())

    @property
    def cardinality(self) -> float:
        return math.inf

    def encode(self, values: Sequence[Any]) -> np.ndarray:
        # A tiny relative tolerance lets values that went through a decode
        # round trip (or a float32 copy) back in without a spurious error.
        tol = 1e-9 * (self.high - self.low)
        if self.prior == "uniform" and len(values) == 1 and type(values[0]) in (float, np.float64):
            # One told value: the same IEEE operations as below without the
            # array overhead (min/max keep x on ties, as np.clip does).
            x = values[0]
            if self.low - tol <= x <= self.high + tol:
                u = (min(max(x, self.low), self.high) - self._lo) / (self._hi - self._lo)
                return np.array([[min(max(u, 0.0), 1.0)]])
        x = _number_column(values, self, f"a Real dimension takes {_NUMBER_KINDS}")
        bad = ~((x >= self.low - tol) & (x <= self.high + tol))
        if bad.any():
            raise ValueError(f"{_label(self.name)}: value {_shown(_first(values, bad))} is "
                             f"outside [{self.low!r}, {self.high!r}]")
        x = np.clip(x, self.low, self.high)
        if self.prior == "log-uniform":
            x = np.log(x)
        u = (x - self._lo) / (self._hi - self._lo)
        return np.clip(u, 0.0, 1.0)[:, None]

    def decode(self, columns: np.ndarray) -> list:
        u = np.clip(np.asarray(columns, dtype=float).reshape(-1), 0.0, 1.0)
        x = self._lo + u * (self._hi - self._lo)
        if self.prior == "log-uniform":
            x = np.exp(x)
        x = np.clip(x, self.low, self.high)
        return [float(v) for v in x]

    def snap(self, columns: np.ndarray) -> np.ndarray:
        # Every point of [0, 1] is feasible for a real dimension.
        return np.clip(np.asarray(columns, dtype=float).reshape(-1, 1), 0.0, 1.0) + 0.0


class Integer(Dimension):
    """An integer dimension taking the values ``low, low + 1, ..., high``.

    Parameters
    ----------
    low, high : int
        Inclusive bounds, ``low < high``, within ``+-2**49`` so that every
        integer of the range is encoded exactly. Integral floats, numpy
        numbers, ``Decimal``, ``Fraction`` and 0-d arrays are accepted and
        stored as ints; bools are not.
    prior : {"uniform", "log-uniform"}, default "uniform"
        ``"log-uniform"`` spreads candidates evenly over orders of magnitude;
        it needs ``1 <= low`` and ``high <= 2**40`` (log and exp lose more
        bits).
    log : bool, default False
        Shorthand for ``prior="log-uniform"``.
    name : str, optional
        Name of the dimension.
    active_if : dict of str -> value or list of values, optional
        Make the dimension conditional: it is active only when every named
        parent dimension is active and takes one of the given values (see
        :class:`Space`, "Conditional dimensions"). Needs a space built from
        a dict.
    """

    def __init__(self, low: int, high: int, prior: str | None = None, *, log: bool = False,
                 name: str | None = None, active_if: Mapping[str, Any] | None = None):
        super().__init__(name, active_if)
        self.low, self.high = _check_bounds(low, high, name, integer=True)
        self.prior = _check_prior(prior, log, name)
        if self.prior == "log-uniform" and self.low < 1:
            raise ValueError(f"{_label(name)}: a log-uniform prior needs low >= 1, got low={low!r}")
        if self.prior == "log-uniform" and self.high > _MAX_LOG_INTEGER_BOUND:
            raise ValueError(f"{_label(name)}: a log-uniform prior needs high <= 2**40 = "
                             f"{_MAX_LOG_INTEGER_BOUND} so that every integer of the range is "
                             f"encoded exactly in float64, got high={self.high!r}")
        if self.prior == "log-uniform":
            self._lo, self._hi = math.log(self.low - 0.5), math.log(self.high + 0.5)
        else:
            self._lo, self._hi = self.low - 0.5, self.high + 0.5

    def __repr__(self) -> str:
        extra = ", prior='log-uniform'" if self.prior == "log-uniform" else ""
        named = f", name={self.name!r}" if self.name is not None else ""
        return f"Integer({self.low!r}, {self.high!r}{extra}{named}{self._active_if_repr()})"

    def _key(self) -> tuple:
        return (self.low, self.high, self.prior, self.name, self._active_key())

    @property
    def cardinality(self) -> float:
        return self.high - self.low + 1

    def values(self) -> list:
        return list(range(self.low, self.high + 1))

    def encode(self, values: Sequence[Any]) -> np.ndarray:
        x = _number_column(values, self, "an Integer dimension takes an int (or an integral "
                           "float, numpy number, Decimal, Fraction or 0-d array)")
        bad = ~((x >= self.low) & (x <= self.high) & (x == np.round(x)))
        if bad.any():
            raise ValueError(f"{_label(self.name)}: value {_shown(_first(values, bad))} is not "
                             f"an integer in [{self.low}, {self.high}]")
        return self._encode_floats(x)

    def decode(self, columns: np.ndarray) -> list:
        return [int(v) for v in self._nearest(columns)]

    def _nearest(self, columns: np.ndarray) -> np.ndarray:
        """The integers (as floats) that encoded columns decode to, shape (n,)."""
        u = np.clip(np.asarray(columns, dtype=float).reshape(-1), 0.0, 1.0)
        t = self._lo + u * (self._hi - self._lo)
        x = np.exp(t) if self.prior == "log-uniform" else t
        return np.clip(np.floor(x + 0.5), self.low, self.high)

    def _encode_floats(self, x: np.ndarray) -> np.ndarray:
        t = np.log(x) if self.prior == "log-uniform" else x
        return ((t - self._lo) / (self._hi - self._lo))[:, None]

    def snap(self, columns: np.ndarray) -> np.ndarray:
        # encode(decode(columns)) without the round trip through Python ints.
        return self._encode_floats(self._nearest(columns))


class Categorical(Dimension):
    """A categorical dimension over a finite list of values.

    Values may be of any hashable type (strings, numbers, ``None``, tuples,
    classes, ...). Points are always given back as these values, never as
    indices. Encoded as one one-hot column per category.

    Parameters
    ----------
    categories : sequence of hashable
        The distinct values, at least one.
    name : str, optional
        Name of the dimension.
    active_if : dict of str -> value or list of values, optional
        Make the dimension conditional: it is active only when every named
        parent dimension is active and takes one of the given values (see
        :class:`Space`, "Conditional dimensions"). Needs a space built from
        a dict.
    """

    def __init__(self, categories: Iterable[Hashable], *, name: str | None = None,
                 active_if: Mapping[str, Any] | None = None):
        super().__init__(name, active_if)
        if isinstance(categories, (str, bytes)) or not isinstance(categories, Iterable):
            raise ValueError(f"{_label(name)}: categories must be a list of values, "
                             f"got {categories!r}")
        categories = list(categories)
        if not categories:
            raise ValueError(f"{_label(name)}: categories must not be empty")
        index: dict = {}
        for position, value in enumerate(categories):
            try:
                hash(value)
            except TypeError:
                raise ValueError(f"{_label(name)}: category {value!r} is not hashable") from None
            if value in index:
                raise ValueError(f"{_label(name)}: category {value!r} appears twice (note that "
                                 "1, 1.0 and True count as the same value)")
            index[value] = position
        self.categories = tuple(categories)
        self._index = index
        self.n_columns = len(categories)

    def __repr__(self) -> str:
        named = f", name={self.name!r}" if self.name is not None else ""
        return f"Categorical({list(self.categories)!r}{named}{self._active_if_repr()})"

    def _key(self) -> tuple:
        return (self.categories, self.name, self._active_key())

    @property
    def cardinality(self) -> float:
        return len(self.categories)

    def values(self) -> list:
        return list(self.categories)

    def encode(self, values: Sequence[Any]) -> np.ndarray:
        positions = np.empty(len(values), dtype=np.intp)
        for i, value in enumerate(values):
            try:
                positions[i] = self._index[value]
            except (KeyError, TypeError):
                raise ValueError(f"{_label(self.name)}: {value!r} is not one of the categories "
                                 f"{list(self.categories)!r}") from None
        onehot = np.zeros((len(values), self.n_columns))
        onehot[np.arange(len(values)), positions] = 1.0
        return onehot

    def decode(self, columns: np.ndarray) -> list:
        columns = np.asarray(columns, dtype=float).reshape(-1, self.n_columns)
        return [self.categories[i] for i in np.argmax(columns, axis=1)]

    def snap(self, columns: np.ndarray) -> np.ndarray:
        columns = np.asarray(columns, dtype=float).reshape(-1, self.n_columns)
        onehot = np.zeros_like(columns)
        onehot[np.arange(len(columns)), np.argmax(columns, axis=1)] = 1.0
        return onehot


class Binary(Dimension):
    """A binary dimension with values ``0`` and ``1`` (``False``/``True`` accepted).

    Parameters
    ----------
    name : str, optional
        Name of the dimension.
    active_if : dict of str -> value or list of values, optional
        Make the dimension conditional: it is active only when every named
        parent dimension is active and takes one of the given values (see
        :class:`Space`, "Conditional dimensions"). Needs a space built from
        a dict.
    """

    def __init__(self, *, name: str | None = None, active_if: Mapping[str, Any] | None = None):
        super().__init__(name, active_if)

    def __repr__(self) -> str:
        args = [f"name={self.name!r}"] if self.name is not None else []
        if self._active_if:
            args.append(f"active_if={self.active_if!r}")
        return f"Binary({', '.join(args)})"

    def _key(self) -> tuple:
        return (self.name, self._active_key())

    @property
    def cardinality(self) -> float:
        return 2

    def values(self) -> list:
        return [0, 1]

    def encode(self, values: Sequence[Any]) -> np.ndarray:
        x = _number_column(values, self, "a Binary dimension takes 0, 1, False or True",
                           allow_bool=True)
        bad = ~((x == 0) | (x == 1))
        if bad.any():
            raise ValueError(f"{_label(self.name)}: value {_first(values, bad)!r} is not 0 or 1")
        return x[:, None] + 0.0

    def decode(self, columns: np.ndarray) -> list:
        u = np.asarray(columns, dtype=float).reshape(-1)
        return [int(v) for v in (u >= 0.5)]

    def snap(self, columns: np.ndarray) -> np.ndarray:
        # encode(decode(columns)) without the round trip through Python ints.
        return (np.asarray(columns, dtype=float).reshape(-1, 1) >= 0.5) + 0.0


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
        if isinstance(dimensions, Mapping):
            self._points_are_dicts = True
            dims = []
            for key, dim in dimensions.items():
                if not isinstance(key, str):
                    raise ValueError(f"dimension names must be strings, got {key!r}")
                dim = _as_dimension(dim, key)
                if dim.name is not None and dim.name != key:
                    raise ValueError(f"dimension {key!r} is named {dim.name!r} inside; the "
                                     "names must agree")
                dims.append(dim._with_name(key))
        elif isinstance(dimensions, Sequence) and not isinstance(dimensions, (str, bytes)):
            self._points_are_dicts = False
            dims = []
            for i, dim in enumerate(dimensions):
                dim = _as_dimension(dim, f"x{i}")
                dims.append(dim if dim.name is not None else dim._with_name(f"x{i}"))
        else:
            raise ValueError("dimensions must be a list of dimensions or a dict of name -> "
                             f"dimension, got {type(dimensions).__name__}")
        if not dims:
            raise ValueError("dimensions must not be empty")
        names = [d.name for d in dims]
        duplicated = sorted({n for n in names if names.count(n) > 1})
        if duplicated:
            raise ValueError(f"dimension names must be unique; repeated: {duplicated}")
        self._conditional = any(d._active_if for d in dims)
        if self._conditional:
            if not self._points_are_dicts:
                name = next(d.name for d in dims if d._active_if)
                raise ValueError(f"dimension {name!r} has active_if, which needs a space built "
                                 "from a dict of name -> dimension (its points are dicts, so "
                                 "an inactive dimension can be left out); got a list")
            dims, self._conditions, self._order = _resolve_conditions(dims)
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

    def _as_given(self):
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

    def __iter__(self):
        return iter(self.dimensions)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Space) and self.dimensions == other.dimensions
                and self._points_are_dicts == other._points_are_dicts)

    def __hash__(self) -> int:
        return hash((tuple(self.dimensions), self._points_are_dicts))

    @property
    def conditional(self) -> bool:
        """True when some dimension has an ``active_if`` condition."""
        return self._conditional

    @property
    def cardinality(self) -> float:
        if self._conditional:
            return _conditional_cardinality(self)
        total = 1
        for dim in self.dimensions:
            total *= dim.cardinality
        return total

    @property
    def is_discrete(self) -> bool:
        """True when every dimension has finitely many values."""
        return all(not isinstance(d, Real) for d in self.dimensions)

    def columns_of(self, name_or_index: str | int) -> slice:
        """The encoded columns that belong to one dimension."""
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
        """Active mask of shape (n_points, n_dims) for encoded rows ``X``.

        With ``write_inactive``, also sets every column of an inactive
        dimension to :data:`INACTIVE` in ``X`` (in place). Dimensions are
        visited parents first, so a child reads its parents' final activity.
        """
        active = np.ones((len(X), self.n_dims), dtype=bool)
        if not self._conditional:
            return active
        for j in self._order:
            if not self._conditions[j]:
                continue
            on = self._parents_allow(j, X, active)
            active[:, j] = on
            if write_inactive:
                X[~on, self._slices[j]] = INACTIVE
        return active

    def _parents_allow(self, j: int, X: np.ndarray, active: np.ndarray) -> np.ndarray:
        """Rows of ``X`` whose parents make dimension ``j`` active, shape (n,).

        ``active`` must already hold the activity of ``j``'s parents. A
        parent's value is read from its columns whatever they hold: where the
        parent is inactive, ``active`` masks it.
        """
        on = np.ones(len(X), dtype=bool)
        for p, allowed in self._conditions[j]:
            on &= active[:, p]
            on &= np.isin(_codes(self.dimensions[p], X[:, self._slices[p]]), allowed)
        return on

    # -- points <-> arrays ---------------------------------------------------
    def _point_values(self, point: Any) -> list:
        if self._points_are_dicts:
            if not isinstance(point, Mapping):
                raise ValueError(f"points of this space are dicts with keys {self.names}, "
                                 f"got {point!r}")
            unknown = [k for k in point if k not in self.names]
            if unknown:
                raise ValueError(f"unknown dimension(s) {unknown}; known: {self.names}")
            if self._conditional:
                # Which absent dimensions are allowed to be absent depends on the
                # parents' values; _encode_with_activity checks that.
                return [point.get(n, _ABSENT) for n in self.names]
            missing = [n for n in self.names if n not in point]
            if missing:
                raise ValueError(f"point {point!r} is missing dimension(s) {missing}")
            return [point[n] for n in self.names]
        if isinstance(point, Mapping) or isinstance(point, (str, bytes)) or not isinstance(
                point, Sequence | np.ndarray):
            raise ValueError(f"points of this space are lists of {self.n_dims} values, "
                             f"got {point!r}")
        if len(point) != self.n_dims:
            raise ValueError(f"point {list(point)!r} has {len(point)} values; the space has "
                             f"{self.n_dims} dimensions {self.names}")
        return list(point)

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
        if isinstance(points, Mapping) or (len(points) > 0 and self._is_single_point(points)):
            raise ValueError("encode expects a sequence of points; wrap a single point in a list")
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
                active[:, j] = self._parents_allow(j, X, active)
            X[~active[:, j], cols] = INACTIVE
            which = np.flatnonzero(active[:, j])
            values = [rows[i][j] for i in which]
            absent = [i for i, value in zip(which, values) if value is _ABSENT]
            if absent:
                raise ValueError(f"point {points[absent[0]]!r} is missing dimension(s) "
                                 f"{[dim.name]}, which is active there"
                                 f"{self._why_active(j, points[absent[0]])}")
            if len(which):
                X[which, cols] = dim.encode(values).reshape(len(which), -1)
        return X, active

    def _why_active(self, j: int, point: Mapping) -> str:
        """`` (because kernel = 'poly')``, for error messages."""
        reasons = [f"{self.names[p]} = {point[self.names[p]]!r}" for p, _ in self._conditions[j]]
        return f" (because {' and '.join(reasons)})" if reasons else ""

    def _is_single_point(self, points: Sequence[Any]) -> bool:
        first = points[0]
        if self._points_are_dicts:
            return isinstance(first, str)
        # A list of scalars is one point, not a list of points.
        return not isinstance(first, (Sequence, np.ndarray, Mapping)) or isinstance(
            first, (str, bytes))

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
        if self._conditional:
            active = self._activity(X)
            return [{n: values[i] for n, values, on in zip(self.names, columns, active[i]) if on}
                    for i in range(len(X))]
        if self._points_are_dicts:
            return [dict(zip(self.names, values)) for values in zip(*columns)]
        return [list(values) for values in zip(*columns)]

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
        """Encoded version of :meth:`sample`: an array of shape (n_points, n_columns)."""
        if (isinstance(n_points, bool) or not isinstance(n_points, (int, np.integer))
                or n_points < 0):
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
            return self._conditional_grid()
        parts = [dim.encode(dim.values()).reshape(-1, dim.n_columns) for dim in self.dimensions]
        index = np.indices([len(p) for p in parts]).reshape(len(parts), -1)
        return np.hstack([p[i] for p, i in zip(parts, index)])

    def _conditional_grid(self) -> np.ndarray:
        # Grow the grid one dimension at a time, parents first: a row where the
        # dimension is active becomes one row per value, a row where it is
        # inactive stays one row. The array never exceeds the final count.
        X = np.zeros((1, self.n_columns))
        active = np.ones((1, self.n_dims), dtype=bool)
        for j in self._order:
            dim, cols = self.dimensions[j], self._slices[j]
            values = dim.encode(dim.values()).reshape(-1, dim.n_columns)
            on = self._parents_allow(j, X, active) if self._conditions[j] else active[:, j]
            counts = np.where(on, len(values), 1)
            X = np.repeat(X, counts, axis=0)
            active = np.repeat(active, counts, axis=0)
            on = np.repeat(on, counts)
            position = np.arange(len(X)) - np.repeat(np.cumsum(counts) - counts, counts)
            X[on, cols] = values[position[on]]
            X[~on, cols] = INACTIVE
            active[:, j] = on
        return X

    def _check_array(self, X: Any, argname: str) -> np.ndarray:
        X = np.asarray(X, dtype=float)
        if X.ndim == 1 and X.shape[0] == self.n_columns:
            X = X[None, :]
        if X.ndim != 2 or X.shape[1] != self.n_columns:
            raise ValueError(f"{argname} must have shape (n_points, {self.n_columns}), got "
                             f"{X.shape}")
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
        out = []
        for dim, value, on in zip(self.dimensions, self._point_values(point), flags):
            if not on:
                out.append(None)
            elif isinstance(dim, Categorical):
                out.append(int(np.argmax(dim.encode([value])[0])))
            elif isinstance(dim, Real):
                out.append(float(value))
            else:
                out.append(int(value))
        return out

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
            return {dim.name: dim.categories[v] if isinstance(dim, Categorical) else v
                    for dim, v in zip(self.dimensions, values) if v is not None}
        decoded = [dim.categories[v] if isinstance(dim, Categorical) else v
                   for dim, v in zip(self.dimensions, values)]
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
        for dim in self.dimensions:
            entry = {"type": type(dim).__name__, "name": dim.name}
            if isinstance(dim, (Real, Integer)):
                entry.update(low=dim.low, high=dim.high, prior=dim.prior)
            elif isinstance(dim, Categorical):
                entry["categories"] = [repr(c) for c in dim.categories]
            if dim._active_if:
                entry["active_if"] = {
                    parent: [int(code) for code in self._conditions_of(dim.name, parent)]
                    for parent, _ in dim._active_if}
            dims.append(entry)
        return {"dimensions": dims, "points_are_dicts": self._points_are_dicts}

    def _conditions_of(self, name: str, parent: str) -> np.ndarray:
        """The allowed codes of ``parent`` in the condition of dimension ``name``."""
        p = self.names.index(parent)
        return next(codes for q, codes in self._conditions[self.names.index(name)] if q == p)


# -- conditions ----------------------------------------------------------------------------

def _codes(dim: Dimension, columns: np.ndarray) -> np.ndarray:
    """The value of a discrete dimension in each encoded row, as a float code, shape (n,).

    The category's index for a Categorical, the integer for an Integer, 0 or
    1 for a Binary: what conditions compare with their allowed values. Rows
    are read as :meth:`Dimension.decode` reads them, so snapped and unsnapped
    rows give the same codes.
    """
    if isinstance(dim, Categorical):
        return np.argmax(columns, axis=1).astype(float)
    if isinstance(dim, Integer):
        return dim._nearest(columns)
    return (np.asarray(columns, dtype=float).reshape(-1) >= 0.5) + 0.0


def _what_it_takes(dim: Dimension) -> str:
    if isinstance(dim, Categorical):
        return f"one of {list(dim.categories)!r}"
    if isinstance(dim, Integer):
        return f"an integer in [{dim.low}, {dim.high}]"
    return "0 or 1"


def _resolve_conditions(dims: list[Dimension]) -> tuple[list, list, list]:
    """Check every ``active_if`` against the space and put it in canonical form.

    Parameters
    ----------
    dims : list of Dimension
        The named dimensions of a space built from a dict.

    Returns
    -------
    dims : list of Dimension
        The same dimensions, with each condition's values converted to the
        parent's own values (a category, an int), without duplicates, in the
        parent's order, and the parents in the space's order, so that equal
        conditions compare, print and describe equally.
    conditions : list of tuple of (int, ndarray) pairs
        Per dimension: (parent index, allowed codes as floats, see
        :func:`_codes`); empty for an unconditional dimension.
    order : list of int
        The dimensions, each after its parents (ties in the space's order).
    """
    index = {d.name: j for j, d in enumerate(dims)}
    conditions: list = []
    resolved = []
    for dim in dims:
        pairs, canonical = [], []
        for parent, values in dim._active_if:
            where = f"dimension {dim.name!r}: active_if[{parent!r}]"
            if parent == dim.name:
                raise ValueError(f"{where} names the dimension itself; a dimension cannot be "
                                 "a condition of its own (a cycle)")
            if parent not in index:
                raise ValueError(f"{where} names no dimension of the space; the parent must be "
                                 f"one of {[d.name for d in dims if d is not dim]}")
            p = index[parent]
            parent_dim = dims[p]
            if isinstance(parent_dim, Real):
                raise ValueError(f"{where}: parent {parent!r} is a Real; conditions take "
                                 "discrete parents (Categorical, Integer or Binary)")
            codes = set()
            for value in values:
                try:
                    encoded = parent_dim.encode([value])
                except (ValueError, TypeError):
                    hint = ""
                    if isinstance(parent_dim, Categorical) and any(
                            isinstance(c, tuple) for c in parent_dim.categories):
                        hint = ("; a tuple gives several values, so name a tuple category "
                                "inside a list: [(...)]")
                    raise ValueError(f"{where}: {parent!r} cannot take the value "
                                     f"{_shown(value)} (allowed: {_what_it_takes(parent_dim)})"
                                     f"{hint}") from None
                codes.add(float(_codes(parent_dim, encoded)[0]))
            codes = sorted(codes)
            pairs.append((p, np.array(codes)))
            if isinstance(parent_dim, Categorical):
                own = tuple(parent_dim.categories[int(c)] for c in codes)
            else:
                own = tuple(int(c) for c in codes)
            canonical.append((p, (parent, own)))
        pairs.sort(key=lambda pair: pair[0])
        canonical.sort(key=lambda pair: pair[0])
        conditions.append(tuple(pairs))
        resolved.append(dim._with_active_if(tuple(entry for _, entry in canonical))
                        if canonical else dim)
    return resolved, conditions, _topological_order(conditions, [d.name for d in dims])


def _topological_order(conditions: list, names: list[str]) -> list[int]:
    """Dimensions ordered parents first, ties in the given order (Kahn's algorithm).

    Raises
    ------
    ValueError
        Naming the dimensions of a cycle of conditions.
    """
    n = len(names)
    waiting = [len(pairs) for pairs in conditions]   # parents not yet placed
    children: list[list[int]] = [[] for _ in range(n)]
    for j, pairs in enumerate(conditions):
        for p, _ in pairs:
            children[p].append(j)
    ready = [j for j in range(n) if waiting[j] == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        j = heapq.heappop(ready)
        order.append(j)
        for child in children[j]:
            waiting[child] -= 1
            if waiting[child] == 0:
                heapq.heappush(ready, child)
    if len(order) == n:
        return order
    # Every dimension left waits for another one left: walk up from the first
    # until a dimension repeats, and name that cycle.
    placed = set(order)
    path = [min(j for j in range(n) if j not in placed)]
    while True:
        parent = next(p for p, _ in conditions[path[-1]] if p not in placed)
        if parent in path:
            cycle = path[path.index(parent):] + [parent]
            break
        path.append(parent)
    chain = " -> ".join(repr(names[j]) for j in cycle)
    raise ValueError(f"dimension {names[cycle[0]]!r}: active_if conditions form a cycle "
                     f"({chain}, each active only if the next is); a parent cannot depend on "
                     "its own child")


def _conditional_cardinality(space: Space) -> float:
    """Number of distinct feasible points of a conditional space.

    Conditions connect dimensions into groups that are independent of each
    other, so the count is a product over the groups. A group whose
    dimensions have at most one parent each is a tree, counted by recursion
    from its root. A group with a dimension of several parents is counted by
    enumerating its parents' states: for each parent, each value some child
    names, plus one state standing for all its other values, weighted by
    their number (the children cannot tell those apart).
    """
    n = space.n_dims
    allowed = [{p: set(codes.tolist()) for p, codes in pairs} for pairs in space._conditions]
    children: list[list[int]] = [[] for _ in range(n)]
    for j in range(n):
        for p in allowed[j]:
            children[p].append(j)
    cards = [d.cardinality for d in space.dimensions]
    group = list(range(n))   # union-find over the condition edges

    def root(j: int) -> int:
        while group[j] != j:
            group[j] = group[group[j]]
            j = group[j]
        return j

    for j in range(n):
        for p in allowed[j]:
            group[root(j)] = root(p)
    members: dict[int, list[int]] = {}
    for j in space._order:
        members.setdefault(root(j), []).append(j)

    def named(p: int) -> list[float]:
        """The codes of ``p`` that some child's condition names."""
        return sorted(set().union(*(allowed[c][p] for c in children[p])))

    def subtree(d: int) -> float:
        # Points of d and its descendants, given that d is active.
        if not children[d]:
            return cards[d]
        below = {c: subtree(c) for c in children[d]}
        codes = named(d)
        total = cards[d] - len(codes)   # values no child names: every child inactive
        for code in codes:
            count = 1
            for c in children[d]:
                if code in allowed[c][d]:
                    count *= below[c]
            total += count
        return total

    def enumerate_states(dims: list[int]) -> float:
        parents = [j for j in dims if children[j]]
        leaves = [j for j in dims if not children[j]]
        state: dict[int, Any] = {}

        def is_active(j: int) -> bool:
            return all(state[p] is not _INACTIVE_STATE and state[p] in codes
                       for p, codes in allowed[j].items())

        def count(k: int) -> float:
            if k == len(parents):
                total = 1
                for leaf in leaves:
                    if is_active(leaf):
                        total *= cards[leaf]
                return total
            p = parents[k]
            if not is_active(p):
                state[p] = _INACTIVE_STATE
                return count(k + 1)
            codes = named(p)
            total = 0
            for code in codes:
                state[p] = code
                total += count(k + 1)
            if cards[p] > len(codes):
                state[p] = _OTHER_VALUE
                total += (cards[p] - len(codes)) * count(k + 1)
            return total

        return count(0)

    total = 1
    for dims in members.values():
        if all(len(allowed[j]) <= 1 for j in dims):
            total *= subtree(dims[0])   # dims[0] comes first in topological order: the root
        else:
            total *= enumerate_states(dims)
    return total


def _as_dimension(spec: Any, name: str) -> Dimension:
    if isinstance(spec, Dimension):
        return spec
    if isinstance(spec, tuple) and len(spec) == 2:
        low, high = (_unwrap(v) for v in spec)
        if all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in (low, high)):
            return Integer(low, high, name=name)
        if all(_why_not_a_number(v) is None for v in (low, high)):
            return Real(low, high, name=name)
    if isinstance(spec, list):
        return Categorical(spec, name=name)
    raise ValueError(f"dimension {name!r}: cannot make a dimension from {spec!r}; use Real, "
                     "Integer, Categorical or Binary")
