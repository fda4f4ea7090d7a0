"""Dimensions of labels: :class:`Categorical` (any hashable values) and :class:`Binary` (0/1).

Encodings
---------
Categorical
    One-hot over the ``k`` categories; decoding takes the arg-max column.
Binary
    ``0`` or ``1``; decoding thresholds at 0.5.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from .coercion import dimension_label, first_offending, number_column
from .dimension import Dimension


def _is_json_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class _Label(Dimension):
    """What :class:`Categorical` and :class:`Binary` share: values without a scale."""

    def step(self, columns: np.ndarray, sizes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        # Every other value is one step away, so a step is a redraw whatever its size.
        return self.redraw(columns, rng)


class Categorical(_Label):
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
        The condition under which the dimension is active (see
        :attr:`active_if`).
    """

    description_keys = frozenset({"categories"})

    def __init__(
        self,
        categories: Iterable[Hashable],
        *,
        name: str | None = None,
        active_if: Mapping[str, Any] | None = None,
    ):
        super().__init__(name, active_if)
        label = dimension_label(name)
        if isinstance(categories, (str, bytes)) or not isinstance(categories, Iterable):
            raise ValueError(f"{label}: categories must be a list of values, got {categories!r}")
        categories = list(categories)
        if not categories:
            raise ValueError(f"{label}: categories must not be empty")
        index: dict = {}
        for position, value in enumerate(categories):
            try:
                hash(value)
            except TypeError:
                raise ValueError(f"{label}: category {value!r} is not hashable") from None
            if value in index:
                raise ValueError(
                    f"{label}: category {value!r} appears twice (note that "
                    "1, 1.0 and True count as the same value)"
                )
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
                raise ValueError(
                    f"{dimension_label(self.name)}: {value!r} is not one of the "
                    f"categories {list(self.categories)!r}"
                ) from None
        onehot = np.zeros((len(values), self.n_columns))
        onehot[np.arange(len(values)), positions] = 1.0
        return onehot

    def decode(self, columns: np.ndarray) -> list:
        columns = np.asarray(columns, dtype=float).reshape(-1, self.n_columns)
        return [self.categories[i] for i in np.argmax(columns, axis=1)]

    def decode_numbers(self, columns: np.ndarray) -> np.ndarray:
        return np.argmax(columns, axis=1).astype(float)

    def snap(self, columns: np.ndarray) -> np.ndarray:
        columns = np.asarray(columns, dtype=float).reshape(-1, self.n_columns)
        onehot = np.zeros_like(columns)
        onehot[np.arange(len(columns)), np.argmax(columns, axis=1)] = 1.0
        return onehot

    def redraw(self, columns: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        # Another category drawn uniformly; unchanged when there is only one.
        out = np.array(columns, dtype=float).reshape(-1, self.n_columns)
        if self.n_columns > 1:
            current = np.argmax(out, axis=1)
            shift = rng.integers(1, self.n_columns, size=len(out))
            out[:] = 0.0
            out[np.arange(len(out)), (current + shift) % self.n_columns] = 1.0
        return out

    def to_number(self, value: Any) -> int:
        return int(np.argmax(self.encode([value])[0]))

    def from_number(self, number: Any) -> Any:
        return self.categories[number]

    def number_problem(self, number: Any) -> str | None:
        if not (_is_json_int(number) and 0 <= number < len(self.categories)):
            return (
                f"category index {number!r} (allowed: an integer from 0 to "
                f"{len(self.categories) - 1})"
            )
        return None

    def describe_values(self) -> str:
        return f"one of {list(self.categories)!r}"

    def _fields(self) -> dict:
        return {"categories": [repr(c) for c in self.categories]}

    @classmethod
    def _arguments(cls, entry: Mapping[str, Any], read_categories: Callable[[list], list]) -> dict:
        categories = entry.get("categories")
        if not isinstance(categories, list):
            raise ValueError(f"a Categorical needs a list of categories, got {categories!r}")
        return {"categories": read_categories(categories)}


class Binary(_Label):
    """A binary dimension with values ``0`` and ``1`` (``False``/``True`` accepted).

    Parameters
    ----------
    name : str, optional
        Name of the dimension.
    active_if : dict of str -> value or list of values, optional
        The condition under which the dimension is active (see
        :attr:`active_if`).
    """

    def __init__(self, *, name: str | None = None, active_if: Mapping[str, Any] | None = None):
        super().__init__(name, active_if)

    def __repr__(self) -> str:
        args = [f"name={self.name!r}"] if self.name is not None else []
        if self.active_if:
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
        x = number_column(
            values, self.name, "a Binary dimension takes 0, 1, False or True", allow_bool=True
        )
        bad = ~((x == 0) | (x == 1))
        if bad.any():
            raise ValueError(
                f"{dimension_label(self.name)}: value "
                f"{first_offending(values, bad)!r} is not 0 or 1"
            )
        return x[:, None] + 0.0

    def decode(self, columns: np.ndarray) -> list:
        return [int(v) for v in self.decode_numbers(columns)]

    def decode_numbers(self, columns: np.ndarray) -> np.ndarray:
        return (np.asarray(columns, dtype=float).reshape(-1) >= 0.5) + 0.0

    def snap(self, columns: np.ndarray) -> np.ndarray:
        # encode(decode(columns)) without the round trip through Python ints.
        return (np.asarray(columns, dtype=float).reshape(-1, 1) >= 0.5) + 0.0

    def redraw(self, columns: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        # The one other value: rng is not needed.
        return 1.0 - np.asarray(columns, dtype=float).reshape(-1, 1)

    def to_number(self, value: Any) -> int:
        return int(value)

    def number_problem(self, number: Any) -> str | None:
        if not (_is_json_int(number) and 0 <= number <= 1):
            return f"{number!r} (allowed: an integer in [0, 1])"
        return None

    def describe_values(self) -> str:
        return "0 or 1"
