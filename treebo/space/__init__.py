"""Search spaces: dimensions, encoding to the unit cube, snapping and sampling.

Surrogates only ever see *encoded* points: rows of an array in ``[0, 1]^C``,
where ``C`` is the number of encoded columns (one per real, integer or binary
dimension, ``k`` one-hot columns per categorical dimension with ``k`` values).
Objectives only ever see *user-facing* points: lists (or dicts, when the space
was built from a dict) of Python values.

``snap(X)`` maps any point of the unit cube to the encoding of the feasible
point it decodes to: it equals ``encode(decode(X))`` exactly in discrete
columns and up to floating-point rounding in real ones (which it only clips).

A dimension made with ``active_if={parent: values}`` exists only where its
parents take those values; every column of an inactive dimension is encoded
as :data:`INACTIVE` (see :class:`Space`, "Conditional dimensions").

Modules
-------
coercion
    Checking and converting the numbers users give.
dimension
    :class:`Dimension`, the base class: name, condition, description.
numeric
    :class:`Real` and :class:`Integer` (bounds, prior, encodings).
categorical
    :class:`Categorical` and :class:`Binary`.
conditions
    ``active_if`` checked against a space, parents-first order, counting points.
description
    Dimensions from descriptions: :meth:`Space.to_dict`'s form, a space file's,
    the shorthand ``(low, high)`` and ``[values]``, the list or dict a
    :class:`Space` is built from.
points
    The form of user-facing points (lists, or dicts by name): their values in
    the space's order, and points made from decoded values.
space
    :class:`Space` and :class:`SpaceExhausted`.
"""

from .categorical import Binary, Categorical
from .conditions import INACTIVE
from .dimension import Dimension
from .numeric import Integer, Real
from .space import Space, SpaceExhausted

__all__ = [
    "Real",
    "Integer",
    "Categorical",
    "Binary",
    "Space",
    "Dimension",
    "SpaceExhausted",
    "INACTIVE",
]
