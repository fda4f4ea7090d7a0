"""Conditional dimensions: checking ``active_if`` against a space, ordering, counting points.

A dimension made with ``active_if={parent: values}`` exists only where its
parents take those values (see :class:`~treebo.space.Space`). Every column
of an inactive dimension is encoded as :data:`INACTIVE` (-1, outside the unit
cube), and user-facing points leave inactive dimensions out.

A condition is held in two forms: on the dimension, as the parent's own
values (a category, an int); in the space, as ``(parent index, allowed
numbers)`` pairs, the numbers being those :meth:`Dimension.to_number
<treebo.space.Dimension.to_number>` gives, so that activity is computed on
encoded rows with :meth:`Dimension.decode_numbers
<treebo.space.Dimension.decode_numbers>`.
"""

from __future__ import annotations

import heapq
from typing import Any

import numpy as np

from .coercion import short_repr
from .dimension import Dimension

#: The encoded value of every column of an inactive dimension (see
#: :class:`~treebo.space.Space`, "Conditional dimensions"). Outside ``[0, 1]``,
#: where every active encoding lies, so that a tree separates inactive from
#: active points with one split on any of the dimension's columns (thresholds
#: fall between -1 and the smallest active value), as SMAC imputes inactive
#: hyperparameters.
INACTIVE = -1.0

# Markers that can equal no parent state when counting points: a parent that
# is inactive, or that takes a value no condition names.
_INACTIVE_STATE = object()
_OTHER_VALUE = object()


def _allowed_numbers(
    dim: Dimension, parent: str, parent_dim: Dimension, values: list
) -> list[float]:
    """The sorted distinct numbers of ``values`` of ``parent``, checked against its values."""
    where = f"dimension {dim.name!r}: active_if[{parent!r}]"
    numbers = set()
    for value in values:
        try:
            encoded = parent_dim.encode([value])
        except (ValueError, TypeError):
            hint = ""
            # Only a categorical has tuple values, and only there can a tuple be
            # read as several values.
            if not parent_dim.is_numeric and any(isinstance(c, tuple) for c in parent_dim.values()):
                hint = (
                    "; a tuple gives several values, so name a tuple category "
                    "inside a list: [(...)]"
                )
            raise ValueError(
                f"{where}: {parent!r} cannot take the value "
                f"{short_repr(value)} (allowed: {parent_dim.describe_values()})"
                f"{hint}"
            ) from None
        numbers.add(float(parent_dim.decode_numbers(encoded)[0]))
    return sorted(numbers)


def resolve_conditions(
    dims: list[Dimension], names: list[str]
) -> tuple[list[Dimension], list, list[int]]:
    """Check every ``active_if`` against the space and put it in canonical form.

    Parameters
    ----------
    dims : list of Dimension
        The named dimensions of a space built from a dict.
    names : list of str
        Their names.

    Returns
    -------
    dims : list of Dimension
        The same dimensions, with each condition's values converted to the
        parent's own values (a category, an int), without duplicates, in the
        parent's order, and the parents in the space's order, so that equal
        conditions compare, print and describe equally.
    conditions : list of tuple of (int, ndarray) pairs
        Per dimension: (parent index, allowed numbers as floats, as
        :meth:`Dimension.decode_numbers` gives them); empty for an
        unconditional dimension.
    order : list of int
        The dimensions, each after its parents (ties in the space's order).

    Raises
    ------
    ValueError
        Naming the dimension and the parent of a bad condition: an unknown,
        real or own parent, a value the parent cannot take, a cycle.
    """
    index = {name: j for j, name in enumerate(names)}
    conditions: list = []
    resolved = []
    for dim in dims:
        pairs, canonical = [], []
        for parent, values in (dim.active_if or {}).items():
            where = f"dimension {dim.name!r}: active_if[{parent!r}]"
            if parent == dim.name:
                raise ValueError(
                    f"{where} names the dimension itself; a dimension cannot be "
                    "a condition of its own (a cycle)"
                )
            if parent not in index:
                raise ValueError(
                    f"{where} names no dimension of the space; the parent must be "
                    f"one of {[d.name for d in dims if d is not dim]}"
                )
            p = index[parent]
            parent_dim = dims[p]
            if not parent_dim.is_discrete:
                raise ValueError(
                    f"{where}: parent {parent!r} is a {type(parent_dim).__name__};"
                    " conditions take discrete parents (Categorical, Integer or "
                    "Binary)"
                )
            numbers = _allowed_numbers(dim, parent, parent_dim, values)
            pairs.append((p, np.array(numbers)))
            canonical.append((p, parent, [parent_dim.from_number(int(c)) for c in numbers]))
        pairs.sort(key=lambda pair: pair[0])
        canonical.sort(key=lambda entry: entry[0])
        conditions.append(tuple(pairs))
        resolved.append(
            dim.replace(active_if={parent: own for _, parent, own in canonical})
            if canonical
            else dim
        )
    return resolved, conditions, topological_order(conditions, names)


def topological_order(conditions: list, names: list[str]) -> list[int]:
    """Dimensions ordered parents first, ties in the given order (Kahn's algorithm).

    Parameters
    ----------
    conditions : list of tuple of (int, ndarray) pairs
        Per dimension, its parents' indices (as :func:`resolve_conditions`
        gives them).
    names : list of str
        The dimensions' names, for the error message.

    Returns
    -------
    list of int

    Raises
    ------
    ValueError
        Naming the dimensions of a cycle of conditions.
    """
    n = len(names)
    waiting = [len(pairs) for pairs in conditions]  # parents not yet placed
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
            cycle = path[path.index(parent) :] + [parent]
            break
        path.append(parent)
    chain = " -> ".join(repr(names[j]) for j in cycle)
    raise ValueError(
        f"dimension {names[cycle[0]]!r}: active_if conditions form a cycle "
        f"({chain}, each active only if the next is); a parent cannot depend on "
        "its own child"
    )


def parents_allow(
    dimensions: list[Dimension],
    slices: list[slice],
    pairs: tuple,
    X: np.ndarray,
    active: np.ndarray,
) -> np.ndarray:
    """Rows of ``X`` whose parents make a dimension active.

    Parameters
    ----------
    dimensions : list of Dimension
        The space's dimensions.
    slices : list of slice
        Each dimension's encoded columns.
    pairs : tuple of (int, ndarray) pairs
        The dimension's condition, as :func:`resolve_conditions` gives it.
    X : ndarray of shape (n, n_columns)
        Encoded rows.
    active : ndarray of bool, shape (n, n_dims)
        Must already hold the activity of the dimension's parents. A parent's
        value is read from its columns whatever they hold: where the parent
        is inactive, ``active`` masks it.

    Returns
    -------
    ndarray of bool, shape (n,)
    """
    on = np.ones(len(X), dtype=bool)
    for p, allowed in pairs:
        on &= active[:, p]
        on &= np.isin(dimensions[p].decode_numbers(X[:, slices[p]]), allowed)
    return on


def activity(
    dimensions: list[Dimension],
    slices: list[slice],
    conditions: list,
    order: list[int],
    X: np.ndarray,
    write_inactive: bool = False,
) -> np.ndarray:
    """Which dimensions are active in each encoded row.

    Dimensions are visited parents first, so a child reads its parents'
    final activity.

    Parameters
    ----------
    dimensions, slices
        As for :func:`parents_allow`.
    conditions : list of tuple of (int, ndarray) pairs
        Per dimension, as :func:`resolve_conditions` gives them.
    order : list of int
        Parents first, as :func:`topological_order` gives it.
    X : ndarray of shape (n, n_columns)
        Encoded rows.
    write_inactive : bool, default False
        Also set every column of an inactive dimension to :data:`INACTIVE` in
        ``X`` (in place).

    Returns
    -------
    ndarray of bool, shape (n, n_dims)
    """
    active = np.ones((len(X), len(dimensions)), dtype=bool)
    for j in order:
        if not conditions[j]:
            continue
        on = parents_allow(dimensions, slices, conditions[j], X, active)
        active[:, j] = on
        if write_inactive:
            X[~on, slices[j]] = INACTIVE
    return active


def conditional_grid(
    dimensions: list[Dimension],
    slices: list[slice],
    conditions: list,
    order: list[int],
    n_columns: int,
) -> np.ndarray:
    """Every distinct feasible point of a discrete conditional space, encoded, once each.

    The grid grows one dimension at a time, parents first: a row where the
    dimension is active becomes one row per value, a row where it is
    inactive stays one row, so the array never exceeds the final count.

    Parameters
    ----------
    dimensions, slices, conditions, order
        As for :func:`activity`.
    n_columns : int
        Width of the encoded rows.

    Returns
    -------
    ndarray of shape (cardinality, n_columns)
    """
    X = np.zeros((1, n_columns))
    active = np.ones((1, len(dimensions)), dtype=bool)
    for j in order:
        dim, cols = dimensions[j], slices[j]
        values = dim.encode(dim.values()).reshape(-1, dim.n_columns)
        on = (
            parents_allow(dimensions, slices, conditions[j], X, active)
            if conditions[j]
            else active[:, j]
        )
        counts = np.where(on, len(values), 1)
        X = np.repeat(X, counts, axis=0)
        active = np.repeat(active, counts, axis=0)
        on = np.repeat(on, counts)
        position = np.arange(len(X)) - np.repeat(np.cumsum(counts) - counts, counts)
        X[on, cols] = values[position[on]]
        X[~on, cols] = INACTIVE
        active[:, j] = on
    return X


def conditional_cardinality(
    cardinalities: list[float], conditions: list, order: list[int]
) -> float:
    """Number of distinct feasible points of a conditional space.

    Conditions connect dimensions into groups that are independent of each
    other, so the count is a product over the groups. A group whose
    dimensions have at most one parent each is a tree, counted by recursion
    from its root. A group with a dimension of several parents is counted by
    enumerating its parents' states: for each parent, each value some child
    names, plus one state standing for all its other values, weighted by
    their number (the children cannot tell those apart).

    Parameters
    ----------
    cardinalities : list of float
        Per dimension, its number of values (``math.inf`` for a real).
    conditions : list of tuple of (int, ndarray) pairs
        As :func:`resolve_conditions` gives them.
    order : list of int
        Parents first, as :func:`topological_order` gives it.

    Returns
    -------
    float
        An int when every dimension is discrete, ``math.inf`` when a real
        dimension can be active.
    """
    n = len(cardinalities)
    allowed = [{p: set(codes.tolist()) for p, codes in pairs} for pairs in conditions]
    children: list[list[int]] = [[] for _ in range(n)]
    for j in range(n):
        for p in allowed[j]:
            children[p].append(j)
    cards = cardinalities
    group = list(range(n))  # union-find over the condition edges

    def root(j: int) -> int:
        while group[j] != j:
            group[j] = group[group[j]]
            j = group[j]
        return j

    for j in range(n):
        for p in allowed[j]:
            group[root(j)] = root(p)
    members: dict[int, list[int]] = {}
    for j in order:
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
        total = cards[d] - len(codes)  # values no child names: every child inactive
        for code in codes:
            count: float = 1
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
            return all(
                state[p] is not _INACTIVE_STATE and state[p] in codes
                for p, codes in allowed[j].items()
            )

        def count(k: int) -> float:
            if k == len(parents):
                total: float = 1
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

    total: float = 1
    for dims in members.values():
        if all(len(allowed[j]) <= 1 for j in dims):
            total *= subtree(dims[0])  # dims[0] comes first in topological order: the root
        else:
            total *= enumerate_states(dims)
    return total
