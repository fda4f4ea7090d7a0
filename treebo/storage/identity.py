"""Which study a storage holds, and whether its stored rows can be trusted.

:func:`open_study` creates a study or checks that the stored one is this
study (same space, settings and seed: :func:`check_same_study`) and loads it;
:func:`trial_row_problem` checks each stored trial row before a resume uses
it. The space is compared through :func:`space_description`, which writes
every category canonically, so that equal spaces compare equal in every
process.
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
from typing import Any

import numpy as np

from ..history import Trial
from ..random_streams import RandomStreams
from ..space import Integer, Real, Space
from ..untrusted import excerpt, shorten_reprs
from .base import Storage, StorageMismatchError

__all__ = [
    "FORMAT_VERSION",
    "open_study",
    "check_same_study",
    "space_description",
    "stable_params",
    "trial_row_problem",
]

logger = logging.getLogger("treebo")

#: Bumped when the schema changes incompatibly.
FORMAT_VERSION = 1

_STATUSES = ("pending", "complete", "failed")
_ORIGINS = ("initial", "model", "random", "user")
_TIME_COLUMNS = ("fit_time", "acq_time", "eval_time", "asked_at", "told_at")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def trial_row_problem(space: Space, row: dict[str, Any]) -> str | None:
    """What is wrong with a stored trial row for ``space``, or ``None``.

    A resume trusts nothing in the file it did not check: a point is shown to
    the objective and told to the surrogate, so each stored value must be one
    of its dimension's values, the encoded point must be that point's
    encoding, and status, value, error, seed and timings must have their
    types.

    Parameters
    ----------
    space : Space
    row : dict
        One row of :meth:`SQLiteStorage.load_trials`.

    Returns
    -------
    str or None
        A description of the first problem found.
    """
    status = row["status"]
    if status not in _STATUSES:
        return f"status {excerpt(status)} (allowed: {', '.join(_STATUSES)})"
    if row["origin"] not in _ORIGINS:
        return f"origin {excerpt(row['origin'])} (allowed: {', '.join(_ORIGINS)})"
    point = row["point"]
    if not isinstance(point, list) or len(point) != len(space.dimensions):
        return f"point {excerpt(point)} (allowed: a list of {len(space.dimensions)} values)"
    for dim, value in zip(space.dimensions, point):
        if value is None and dim.active_if is not None:
            continue  # an inactive dimension of a conditional space; checked below
        problem = dim.number_problem(value)
        if problem is not None:
            return f"{dim.name!r} = {shorten_reprs(problem, [value])}"
    try:
        expected = space.encode([space.point_from_json(point)])[0]
        # Nulls exactly where a dimension is inactive, and nowhere else.
        if space.conditional and space.point_to_json(space.point_from_json(point)) != point:
            return (
                f"point {excerpt(point)} (allowed: null exactly for the inactive dimensions, "
                f"as in {space.point_to_json(space.point_from_json(point))!r})"
            )
    except ValueError as error:
        return f"point {excerpt(point)}: {shorten_reprs(str(error), point)}"
    encoded = row["x_encoded"]
    # Proposed points are stored as the snapped candidate the point was decoded
    # from, which equals its re-encoding up to rounding in real columns.
    if encoded.shape != expected.shape or not np.allclose(encoded, expected, rtol=0, atol=1e-9):
        return (
            f"encoded point {excerpt(encoded.tolist())} is not the encoding of point "
            f"{excerpt(point)}"
        )
    value = row["value"]
    if status == "complete":
        if not (_is_number(value) and math.isfinite(value)):
            return f"value {excerpt(value)} of a complete trial (allowed: a finite number)"
    elif value is not None:
        return f"value {excerpt(value)} of a {status} trial (allowed: none)"
    if row["error"] is not None and not isinstance(row["error"], str):
        return f"error {excerpt(row['error'])} (allowed: text or none)"
    if row["seed"] is not None and not (
        isinstance(row["seed"], int) and not isinstance(row["seed"], bool) and row["seed"] >= 0
    ):
        return f"seed {excerpt(row['seed'])} (allowed: an integer >= 0 or none)"
    for column in _TIME_COLUMNS:
        if row[column] is not None and not (_is_number(row[column]) and math.isfinite(row[column])):
            return f"{column} {excerpt(row[column])} (allowed: a finite number or none)"
    metrics = row.get("metrics")
    if metrics is not None and not (
        status == "complete"
        and isinstance(metrics, dict)
        and all(
            isinstance(k, str) and _is_number(v) and math.isfinite(v) for k, v in metrics.items()
        )
    ):
        return (
            f"metrics {excerpt(metrics)} of a {status} trial (allowed: a table of names to "
            "finite numbers for a complete trial, or none)"
        )
    return None


def open_study(
    storage: Storage, space: Space, settings: dict, streams: RandomStreams, *, seed_given: bool
) -> tuple[list[Trial], dict[str, int]]:
    """Create a new study in ``storage``, or check the stored one is this study and load it.

    Parameters
    ----------
    storage : Storage
    space : Space
    settings : dict
        Everything besides the space and the seed that shapes the proposals;
        a stored study must have been run with the same.
    streams : RandomStreams
        Saved into a new study; set to the stored states when resuming.
    seed_given : bool
        Whether the user gave the seed (then it must match the stored one).

    Returns
    -------
    trials : list of Trial
        The stored trials (none for a new study).
    resume_offers : dict
        How often each pending trial (by number, as a string) was offered again.

    Raises
    ------
    StorageMismatchError
        If the stored study has another space, other settings or another seed.
    ValueError
        If the stored study is damaged.
    """
    meta = storage.open_study(space)
    description = space_description(space)
    if not meta:
        storage.create(
            {
                "format_version": FORMAT_VERSION,
                "space": description,
                "settings": settings,
                **streams.to_meta(),
            }
        )
        return [], {}
    # JSON turns tuples into lists; compare like with like.
    settings = json.loads(json.dumps(settings))
    if meta.get("space") == _plain_space_description(space):
        description = meta["space"]  # a study described with the plain reprs
    check_same_study(
        storage.name, meta, description, settings, streams.seed if seed_given else None
    )
    try:
        streams.load_meta(meta)
    except ValueError as error:
        # Its message names a stored bit generator by its whole repr.
        names = [s.get("bit_generator") for s in meta.values() if isinstance(s, dict)]
        raise ValueError(
            f"storage {storage.name!r} is damaged: {shorten_reprs(str(error), names)}"
        ) from None
    offers = meta.get("resume_offers", {})
    if not (
        isinstance(offers, dict)
        and all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in offers.values())
    ):
        raise ValueError(
            f"storage {storage.name!r} is damaged: resume_offers {excerpt(offers)} "
            "(allowed: trial numbers with counts >= 0)"
        )
    trials = storage.study_trials()
    n_pending = sum(t.status == "pending" for t in trials)
    logger.info(
        "resuming %s: %d trials told, %d pending", storage.name, len(trials) - n_pending, n_pending
    )
    return trials, dict(offers)


def space_description(space: Space) -> dict:
    """:meth:`Space.to_dict` with each category written canonically (see :func:`_canonical_repr`).

    Equal spaces get equal descriptions in every process: set elements are
    sorted (a set's ``repr`` follows its hash order, which changes with
    ``PYTHONHASHSEED``) and object addresses are removed (a category without a
    stable ``repr`` would make every reopening look like a different space).

    Parameters
    ----------
    space : Space
        The space to describe.

    Returns
    -------
    dict
        :meth:`Space.to_dict`'s form.
    """
    desc = space.to_dict()
    for entry, dim in zip(desc["dimensions"], space.dimensions):
        if "categories" in entry:
            entry["categories"] = [_canonical_repr(c) for c in dim.values()]
    return desc


def _plain_space_description(space: Space) -> dict:
    """:meth:`Space.to_dict` with each category as its ``repr`` without addresses.

    It differs from :func:`space_description` where a category holds a set
    (its elements in hash order) or a dict (its items in insertion order): a
    study stored with it resumes in a process whose reprs come out the same.
    """
    desc = space.to_dict()
    for dim in desc["dimensions"]:
        if "categories" in dim:
            dim["categories"] = [_stable_repr(c) for c in dim["categories"]]
    return desc


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def _stable_repr(text: str) -> str:
    return _ADDRESS.sub("", text)


def _canonical_repr(value: Any) -> str:
    """``repr(value)`` that is the same in every process for equal values.

    Sets and frozensets list their elements sorted by their canonical reprs,
    dicts their items sorted by key; tuples and lists are written element by
    element; anything else is its ``repr`` without object addresses. For
    values without sets or dicts this is their plain ``repr``.

    Parameters
    ----------
    value : object

    Returns
    -------
    str
    """
    if type(value) in (set, frozenset):
        items = ", ".join(sorted(_canonical_repr(v) for v in value))
        if type(value) is set:
            return f"{{{items}}}" if items else "set()"
        return f"frozenset({{{items}}})" if items else "frozenset()"
    if type(value) is dict:
        pairs = sorted((_canonical_repr(k), _canonical_repr(v)) for k, v in value.items())
        return "{" + ", ".join(f"{k}: {v}" for k, v in pairs) + "}"
    if type(value) is tuple:
        parts = [_canonical_repr(v) for v in value]
        return f"({parts[0]},)" if len(parts) == 1 else f"({', '.join(parts)})"
    if type(value) is list:
        return f"[{', '.join(_canonical_repr(v) for v in value)}]"
    return _stable_repr(repr(value))


def stable_params(params: dict) -> dict:
    """Estimator parameters as JSON-safe, address-free reprs (for comparison).

    Parameters
    ----------
    params : dict
        Parameter name -> value.

    Returns
    -------
    dict
        By name, in sorted order: bools, ints, strings, None and finite floats
        as they are, anything else as its ``repr`` without object addresses.
    """
    out: dict[str, int | float | str | None] = {}
    for key in sorted(params):
        value = params[key]
        if isinstance(value, (bool, int, str)) or value is None:
            out[key] = value
        elif isinstance(value, float) and math.isfinite(value):
            out[key] = value
        else:
            out[key] = _stable_repr(repr(value))
    return out


def check_same_study(
    path: str | os.PathLike[str], meta: dict, space: dict, settings: dict, seed: int | None
) -> None:
    """Raise :class:`StorageMismatchError` naming what differs from the stored study.

    Parameters
    ----------
    path : str or path-like
        The storage, for messages.
    meta : dict
        The stored study's ``meta``.
    space : dict
        The given space's description (:func:`space_description`).
    settings : dict
        The given settings, as they are stored.
    seed : int or None
        The given seed; None when none was given (the stored one is adopted).

    Raises
    ------
    StorageMismatchError
        If the format version, the space, the settings or the seed differ.
    """
    if meta.get("format_version") != FORMAT_VERSION:
        raise StorageMismatchError(
            f"storage {str(path)!r} has format version {excerpt(meta.get('format_version'))}; "
            f"this treebo writes version {FORMAT_VERSION}"
        )
    if meta.get("space") != space:
        stored_parts, given_parts = _space_parts(meta.get("space")), _space_parts(space)
        if stored_parts == given_parts:  # a difference the summary does not show: the entries
            stored, given = _around_difference(
                json.dumps(meta.get("space"), sort_keys=True), json.dumps(space, sort_keys=True)
            )
        else:
            stored = _summary(stored_parts, given_parts)
            given = _summary(given_parts, stored_parts)
        raise StorageMismatchError(
            f"storage {str(path)!r} holds a study of a different search space:\n"
            f"  stored: {stored}\n"
            f"  given:  {given}\n"
            "use another storage file to start a new study"
        )
    stored = meta.get("settings", {})
    if not isinstance(stored, dict):
        raise ValueError(
            f"storage {str(path)!r} is damaged: its settings are {excerpt(stored)}, not a table"
        )
    differ = _differences(stored, settings)
    if differ:
        lines = [
            f"  {name}: stored {excerpt(a)}, given {excerpt(b)}"
            for name, a, b in differ[:_SHOWN_DIFFERENCES]
        ]
        if len(differ) > _SHOWN_DIFFERENCES:
            lines.append(f"  ... and {len(differ) - _SHOWN_DIFFERENCES:,} more")
        text = "\n".join(lines)
        raise StorageMismatchError(
            f"storage {str(path)!r} holds a study run with other settings:\n{text}\n"
            "pass the stored settings to resume it, or use another storage file"
        )
    if seed is not None and meta.get("seed") is not None and seed != meta["seed"]:
        raise StorageMismatchError(
            f"storage {str(path)!r} holds a study with random_state={excerpt(meta['seed'])}, "
            f"given random_state={seed!r}; pass the same seed or random_state=None to resume it"
        )


#: Settings that differ shown in a mismatch message, at most.
_SHOWN_DIFFERENCES = 10
#: Characters of a space's summary in a mismatch message, at most.
_SUMMARY_CHARS = 600
#: Categories of a dimension shown in a space's summary, at most.
_SHOWN_CATEGORIES = 10


def _differences(stored: dict, given: dict) -> list[tuple[str, Any, Any]]:
    """``(name, stored value, given value)`` of each setting that differs, by name.

    In a setting that is a table on both sides (the surrogate's parameters),
    each entry that differs is named (``surrogate_params['max_depth']``).
    """
    out = []
    for key in sorted(set(stored) | set(given), key=str):
        a, b = stored.get(key), given.get(key)
        if a == b:
            continue
        if isinstance(a, dict) and isinstance(b, dict):
            out += [
                (f"{key}[{excerpt(sub)}]", a.get(sub), b.get(sub))
                for sub in sorted(set(a) | set(b), key=str)
                if a.get(sub) != b.get(sub)
            ]
        else:
            out.append((excerpt(key) if not isinstance(key, str) or len(key) > 80 else key, a, b))
    return out


def _summary(parts: tuple[list[str], str], other: tuple[list[str], str]) -> str:
    """A space's dimensions and the form of its points, in one line of at most about
    ``_SUMMARY_CHARS`` characters: when they take more, only those not in ``other``."""
    dims, form = parts
    text = ", ".join(dims)
    if len(text) > _SUMMARY_CHARS:
        theirs = set(other[0])
        text = f"{len(dims):,} dimensions, these not given on the other side: " + ", ".join(
            dim for dim in dims if dim not in theirs
        )
        if len(text) > _SUMMARY_CHARS:
            text = text[: _SUMMARY_CHARS - 1] + "…"
    return f"{text}; {form}" if text else form


def _around_difference(a: str, b: str, width: int = 120) -> tuple[str, str]:
    """The parts of ``a`` and ``b`` around the first character where they differ."""
    # The longest common prefix by bisection: slices compare in C, texts may be megabytes.
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    start = max(0, low - width // 3)

    def window(text: str) -> str:
        part = text[start : start + width]
        return ("…" if start else "") + part + ("…" if start + width < len(text) else "")

    return window(a), window(b)


def _describe_dimension(dim: Any) -> str:
    if not isinstance(dim, dict):
        return excerpt(dim, 40)
    kind = dim.get("type")
    extra = ""
    if kind in (Real.__name__, Integer.__name__):
        extra = f"({', '.join(_text(dim.get(key)) for key in ('low', 'high', 'prior'))})"
    elif isinstance(dim.get("categories"), list):
        categories = dim["categories"]
        shown = [_text(c) for c in categories[:_SHOWN_CATEGORIES]]
        if len(categories) > _SHOWN_CATEGORIES:
            shown.append(f"... {len(categories):,} categories")
        extra = f"({', '.join(shown)})"
    condition = ""
    active_if = dim.get("active_if")
    if isinstance(active_if, dict) and active_if:
        condition = " if " + " and ".join(
            f"{_text(parent)} in {excerpt(codes, 40)}"
            for parent, codes in sorted(active_if.items())[:_SHOWN_CATEGORIES]
        )
    return f"{_text(dim.get('name'))}={_text(kind)}{extra}{condition}"


def _text(value: Any) -> str:
    """A stored string as it is (a category's repr, a name), anything else as its repr;
    cut to 40 characters."""
    if isinstance(value, str):
        return value if len(value) <= 40 else value[:39] + "…"
    return excerpt(value, 40)


def _space_parts(desc: Any) -> tuple[list[str], str]:
    """A stored or given description as one short text per dimension, and the form of
    its points; a damaged description as a short excerpt."""
    if not desc:
        return [], "nothing"
    dims = desc.get("dimensions") if isinstance(desc, dict) else None
    if not isinstance(dims, list):
        return [], f"a damaged description: {excerpt(desc)}"
    form = "dicts" if desc.get("points_are_dicts") else "lists"
    return [_describe_dimension(dim) for dim in dims], f"points as {form}"
