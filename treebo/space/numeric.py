"""Number ranges: :class:`Real` and :class:`Integer`, with a uniform or log-uniform prior.

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
"""

from __future__ import annotations

import math
import numbers
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from .coercion import (
    NUMBER_KINDS,
    dimension_label,
    first_offending,
    number_column,
    short_repr,
    to_float,
    unwrap_scalar,
    why_not_a_number,
)
from .dimension import Dimension

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


def _check_bounds(low: Any, high: Any, name: str | None, integer: bool) -> tuple:
    """Validate and convert the bounds of a Real (to floats) or an Integer (to ints)."""
    kind = "integers" if integer else "real numbers"
    label = dimension_label(name)
    converted = []
    for which, value in (("low", low), ("high", high)):
        value = unwrap_scalar(value)
        if why_not_a_number(value) is not None:
            raise ValueError(
                f"{label}: {which} must be a number: {NUMBER_KINDS}, "
                f"not a bool, string or sequence; got {short_repr(value)}"
            )
        as_float = to_float(value)
        if not math.isfinite(as_float):
            raise ValueError(
                f"{label}: {which} must be finite and within the float64 "
                f"range (magnitude at most {sys.float_info.max:.4g}), "
                f"got {short_repr(value)}"
            )
        if not integer:
            converted.append(as_float)
            continue
        # Exact for ints of any size; floor() is exact for floats, Decimal and Fraction.
        exact = int(value) if isinstance(value, numbers.Integral) else math.floor(value)
        if exact != value:
            raise ValueError(f"{label}: {which} must be an integer, got {short_repr(value)}")
        if abs(exact) > _MAX_INTEGER_BOUND:
            raise ValueError(
                f"{label}: {which} must lie within +-2**49 = "
                f"+-{_MAX_INTEGER_BOUND} so that every integer of the range is "
                f"encoded exactly in float64, got {short_repr(value)}"
            )
        converted.append(exact)
    low, high = converted
    if not low < high:
        raise ValueError(
            f"{label}: low must be smaller than high ({kind}), got low={low!r}, high={high!r}"
        )
    return low, high


def _check_prior(prior: str | None, log: bool, name: str | None) -> str:
    if not isinstance(log, (bool, np.bool_)):
        # Only a real boolean: a truthy typo (log="no") must not change the prior.
        raise ValueError(
            f"{dimension_label(name)}: log must be True or False, got {short_repr(log)}"
        )
    if prior is None:
        return "log-uniform" if log else "uniform"
    if not isinstance(prior, str) or prior not in _PRIORS:
        raise ValueError(f"{dimension_label(name)}: prior must be one of {_PRIORS}, got {prior!r}")
    if log and prior != "log-uniform":
        raise ValueError(f"{dimension_label(name)}: log=True contradicts prior={prior!r}")
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
        raise ValueError(
            f"{dimension_label(name)}: high - low overflows float64; low and high "
            f"must be less than {sys.float_info.max:.4g} apart (rescale the "
            f"parameter), got low={lo!r}, high={hi!r}"
        )
    count = _float_ordinal(hi) - _float_ordinal(lo) + 1
    if count < _MIN_REAL_VALUES:
        raise ValueError(
            f"{dimension_label(name)}: {scale} = [{lo!r}, {hi!r}] holds only "
            f"{count} float64 values; a Real needs at least 2**20 = "
            f"{_MIN_REAL_VALUES} so that distinct candidates decode to distinct "
            "values (widen the interval, or shift or rescale the parameter)"
        )


def _is_json_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_json_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class _NumberRange(Dimension):
    """What :class:`Real` and :class:`Integer` share: bounds, a prior, their description."""

    is_numeric = True
    description_keys = frozenset({"low", "high", "prior"})
    #: Integer bounds (ints) rather than real ones (floats).
    _integer_bounds: ClassVar[bool]
    low: Any
    high: Any
    prior: str

    def __init__(
        self,
        low: Any,
        high: Any,
        prior: str | None = None,
        *,
        log: bool = False,
        name: str | None = None,
        active_if: Mapping[str, Any] | None = None,
    ):
        super().__init__(name, active_if)
        self.low, self.high = _check_bounds(low, high, name, integer=self._integer_bounds)
        self.prior = _check_prior(prior, log, name)
        self._lo, self._hi = self._encoded_interval(low)

    def _encoded_interval(self, low: Any) -> tuple[float, float]:
        """The interval that the encoding maps onto ``[0, 1]``, once the kind has checked
        that the bounds suit the prior (``low`` as given, for messages)."""
        raise NotImplementedError

    def _key(self) -> tuple:
        return (self.low, self.high, self.prior, self.name, self._active_key())

    def __repr__(self) -> str:
        extra = ", prior='log-uniform'" if self.prior == "log-uniform" else ""
        named = f", name={self.name!r}" if self.name is not None else ""
        return (
            f"{type(self).__name__}({self.low!r}, {self.high!r}{extra}{named}"
            f"{self._active_if_repr()})"
        )

    def _fields(self) -> dict:
        return {"low": self.low, "high": self.high, "prior": self.prior}

    @classmethod
    def _arguments(cls, entry: Mapping[str, Any], read_categories: Callable[[list], list]) -> dict:
        missing = [key for key in ("low", "high") if key not in entry]
        if missing:
            article = "an" if cls.__name__[0] in "AEIOU" else "a"
            raise ValueError(f"{article} {cls.__name__} needs {' and '.join(missing)}")
        return {"low": entry["low"], "high": entry["high"], "prior": entry.get("prior")}

    def redraw(self, columns: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        out = np.array(columns, dtype=float).reshape(-1, 1)
        out[:, 0] = rng.random(len(out))
        return out


class Real(_NumberRange):
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
        The condition under which the dimension is active (see
        :attr:`active_if`).

    Notes
    -----
    Values given to :meth:`encode` must be single numbers as above; strings,
    bools and sequences are refused with a ``ValueError``.
    """

    is_discrete = False
    _integer_bounds = False

    def _encoded_interval(self, low: Any) -> tuple[float, float]:
        if self.prior == "log-uniform" and self.low <= 0:
            raise ValueError(
                f"{dimension_label(self.name)}: a log-uniform prior needs low > 0, got low={low!r}"
            )
        _check_resolution(self.low, self.high, self.name, "[low, high]")
        if self.prior != "log-uniform":
            return self.low, self.high
        lo, hi = math.log(self.low), math.log(self.high)
        _check_resolution(lo, hi, self.name, "[log(low), log(high)]")
        return lo, hi

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
        x = number_column(values, self.name, f"a Real dimension takes {NUMBER_KINDS}")
        bad = ~((x >= self.low - tol) & (x <= self.high + tol))
        if bad.any():
            raise ValueError(
                f"{dimension_label(self.name)}: value "
                f"{short_repr(first_offending(values, bad))} is outside "
                f"[{self.low!r}, {self.high!r}]"
            )
        x = np.clip(x, self.low, self.high)
        if self.prior == "log-uniform":
            x = np.log(x)
        u = (x - self._lo) / (self._hi - self._lo)
        return np.clip(u, 0.0, 1.0)[:, None]

    def decode(self, columns: np.ndarray) -> list:
        return [float(v) for v in self.decode_numbers(columns)]

    def decode_numbers(self, columns: np.ndarray) -> np.ndarray:
        u = np.clip(np.asarray(columns, dtype=float).reshape(-1), 0.0, 1.0)
        x = self._lo + u * (self._hi - self._lo)
        if self.prior == "log-uniform":
            x = np.exp(x)
        return np.clip(x, self.low, self.high)

    def snap(self, columns: np.ndarray) -> np.ndarray:
        # Every point of [0, 1] is feasible for a real dimension.
        return np.clip(np.asarray(columns, dtype=float).reshape(-1, 1), 0.0, 1.0) + 0.0

    def evenly_spaced(self, n_points: int) -> np.ndarray:
        return np.linspace(0.0, 1.0, n_points)[:, None]

    def step(self, columns: np.ndarray, sizes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        column = np.asarray(columns, dtype=float).reshape(-1)
        column = column + sizes * rng.standard_normal(len(column))
        return np.clip(column, 0.0, 1.0)[:, None]

    def to_number(self, value: Any) -> float:
        return float(value)

    def number_problem(self, number: Any) -> str | None:
        # The range is checked by the encoding (with its tolerance).
        if not (_is_json_number(number) and math.isfinite(number)):
            return f"{number!r} (allowed: {self.describe_values()})"
        return None

    def describe_values(self) -> str:
        return f"a number in [{self.low!r}, {self.high!r}]"


class Integer(_NumberRange):
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
        The condition under which the dimension is active (see
        :attr:`active_if`).
    """

    _integer_bounds = True

    def _encoded_interval(self, low: Any) -> tuple[float, float]:
        # The integers' shares [k - 0.5, k + 0.5) tile the interval.
        if self.prior != "log-uniform":
            return self.low - 0.5, self.high + 0.5
        label = dimension_label(self.name)
        if self.low < 1:
            raise ValueError(f"{label}: a log-uniform prior needs low >= 1, got low={low!r}")
        if self.high > _MAX_LOG_INTEGER_BOUND:
            raise ValueError(
                f"{label}: a log-uniform prior needs high <= 2**40 = "
                f"{_MAX_LOG_INTEGER_BOUND} so that every integer of the range is "
                f"encoded exactly in float64, got high={self.high!r}"
            )
        return math.log(self.low - 0.5), math.log(self.high + 0.5)

    @property
    def cardinality(self) -> float:
        return self.high - self.low + 1

    def values(self) -> list:
        return list(range(self.low, self.high + 1))

    def encode(self, values: Sequence[Any]) -> np.ndarray:
        x = number_column(
            values,
            self.name,
            "an Integer dimension takes an int (or an "
            "integral float, numpy number, Decimal, Fraction or 0-d array)",
        )
        bad = ~((x >= self.low) & (x <= self.high) & (x == np.round(x)))
        if bad.any():
            raise ValueError(
                f"{dimension_label(self.name)}: value "
                f"{short_repr(first_offending(values, bad))} is not "
                f"{self.describe_values()}"
            )
        return self._encode_floats(x)

    def decode(self, columns: np.ndarray) -> list:
        return [int(v) for v in self.decode_numbers(columns)]

    def decode_numbers(self, columns: np.ndarray) -> np.ndarray:
        u = np.clip(np.asarray(columns, dtype=float).reshape(-1), 0.0, 1.0)
        t = self._lo + u * (self._hi - self._lo)
        x = np.exp(t) if self.prior == "log-uniform" else t
        return np.clip(np.floor(x + 0.5), self.low, self.high)

    def _encode_floats(self, x: np.ndarray) -> np.ndarray:
        t = np.log(x) if self.prior == "log-uniform" else x
        return ((t - self._lo) / (self._hi - self._lo))[:, None]

    def snap(self, columns: np.ndarray) -> np.ndarray:
        # encode(decode(columns)) without the round trip through Python ints.
        return self._encode_floats(self.decode_numbers(columns))

    def evenly_spaced(self, n_points: int) -> np.ndarray:
        if self.cardinality <= n_points:
            return self.encode(self.values()).reshape(-1, 1)
        return np.unique(self.snap(np.linspace(0.0, 1.0, n_points)[:, None]), axis=0)

    def step(self, columns: np.ndarray, sizes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        # Move by at least one value, so the step survives snapping; the
        # Gaussian step size is taken relative to the number of values.
        current = np.array(self.decode(columns))
        size = np.abs(rng.standard_normal(len(current))) * sizes * self.cardinality
        shift = np.maximum(1, np.rint(size)).astype(int)
        shift *= rng.choice([-1, 1], size=len(current))
        outside = (current + shift < self.low) | (current + shift > self.high)
        shift[outside] *= -1
        return self.encode(np.clip(current + shift, self.low, self.high))

    def to_number(self, value: Any) -> int:
        return int(value)

    def number_problem(self, number: Any) -> str | None:
        if not (_is_json_int(number) and self.low <= number <= self.high):
            return f"{number!r} (allowed: {self.describe_values()})"
        return None

    def describe_values(self) -> str:
        return f"an integer in [{self.low}, {self.high}]"
