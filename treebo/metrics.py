"""The metrics of a study: which are objectives, which are limited, and what an evaluation gave.

A study made with ``objectives=`` evaluates a function that returns a dict
of named numbers. :class:`Metrics` reads such a dict into a trial (its
value, its metrics, or why it failed), gives the surrogates their arrays
(every objective as a column to minimize, every constraint as a violation
that is at most 0 where it holds), and completes a result with the
feasible points and the Pareto front. A study without ``objectives=`` has no
:class:`Metrics` and its function returns one number.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .pareto import non_dominated
from .targets import as_value
from .untrusted import excerpt

__all__ = ["Constraint", "Metrics", "check_objectives", "check_constraints"]

#: How an objective may be named in ``objectives=`` (a word and its short form).
_DIRECTION_WORDS = {
    "minimize": "minimize",
    "min": "minimize",
    "maximize": "maximize",
    "max": "maximize",
}

#: At most this many metrics are recorded per trial, and names are at most this long:
#: a stored study holds what it can read back (see :mod:`treebo.untrusted`).
MAX_METRICS = 256
MAX_NAME_LENGTH = 200

_CONSTRAINT = re.compile(r"^\s*(?P<name>[^\s<>=!]+)\s*(?P<op><=|>=)\s*(?P<bound>\S+)\s*$")


@dataclass(frozen=True)
class Constraint:
    """A limit on one metric: ``metric <= bound`` or ``metric >= bound``.

    Parameters
    ----------
    metric : str
        A name in the dicts the objective returns.
    op : {"<=", ">="}
    bound : float
        Finite, in the metric's units.
    """

    metric: str
    op: str
    bound: float

    @classmethod
    def parse(cls, text: str) -> Constraint:
        """Read ``"name <= bound"`` or ``"name >= bound"``.

        Parameters
        ----------
        text : str
            The metric's name, ``<=`` or ``>=``, and a finite number.

        Returns
        -------
        Constraint

        Raises
        ------
        ValueError
            Naming the text and the form allowed.
        """
        match = _CONSTRAINT.match(text) if isinstance(text, str) else None
        bound = _finite(match.group("bound")) if match else None
        if match is None or bound is None:
            raise ValueError(
                f"constraints must be strings 'name <= bound' or 'name >= bound' with a "
                f"finite number as bound, got {excerpt(text)}"
            )
        return cls(match.group("name"), match.group("op"), bound)

    def __str__(self) -> str:
        return f"{self.metric} {self.op} {self.bound!r}"

    def violation(self, values: np.ndarray) -> np.ndarray:
        """How far values of the metric are outside the limit: at most 0 where it holds.

        Parameters
        ----------
        values : ndarray
            Values of the metric.

        Returns
        -------
        ndarray
            Of the shape of ``values``.
        """
        return values - self.bound if self.op == "<=" else self.bound - values


def _finite(word: str) -> float | None:
    try:
        value = float(word)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def check_objectives(value: Any, name: str = "objectives") -> dict[str, str] | None:
    """``objectives=`` as the study keeps it: metric name -> "minimize" or "maximize".

    Parameters
    ----------
    value : None, dict or list of str
        A dict of metric names to ``"minimize"``/``"maximize"`` (or
        ``"min"``/``"max"``), or a list of names, all minimized.
    name : str
        The argument's name, for messages.

    Returns
    -------
    dict or None

    Raises
    ------
    ValueError
        Naming the argument and what it allows.
    """
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        value = dict.fromkeys(value, "minimize") if len(set(value)) == len(value) else None
    allowed = (
        f"{name} must be None, a non-empty dict of metric names to 'minimize' or "
        f"'maximize', or a list of distinct metric names"
    )
    if not isinstance(value, Mapping) or not value:
        raise ValueError(f"{allowed}, got {excerpt(value)}")
    out: dict[str, str] = {}
    for key, direction in value.items():
        if not _is_name(key):
            raise ValueError(f"{allowed}; {excerpt(key)} is not a name (a non-empty string)")
        if direction not in _DIRECTION_WORDS:
            raise ValueError(f"{allowed}; {key!r} has the direction {excerpt(direction)}")
        out[key] = _DIRECTION_WORDS[direction]
    return out


def check_constraints(value: Any, name: str = "constraints") -> list[str] | None:
    """``constraints=`` as the study keeps it: each limit written as ``"name <= bound"``.

    Parameters
    ----------
    value : None or list of str
    name : str
        The argument's name, for messages.

    Returns
    -------
    list of str or None
        Each constraint in one spelling (:meth:`Constraint.__str__`), so
        that a resumed study compares them as written by this function.

    Raises
    ------
    ValueError
        Naming the argument and what it allows.
    """
    if value is None:
        return None
    if isinstance(value, str) or not isinstance(value, Sequence) or not value:
        raise ValueError(
            f"{name} must be None or a non-empty list of strings such as "
            f"'latency <= 0.05', got {excerpt(value)}"
        )
    parsed = [Constraint.parse(text) for text in value]
    if any(not _is_name(c.metric) for c in parsed):
        raise ValueError(f"{name}: metric names are at most {MAX_NAME_LENGTH} characters")
    return [str(c) for c in parsed]


def _is_name(key: Any) -> bool:
    return isinstance(key, str) and 0 < len(key) <= MAX_NAME_LENGTH


class Metrics:
    """The objectives and constraints of a study, and what its evaluations returned.

    Parameters
    ----------
    objectives : dict
        Metric name -> ``"minimize"`` or ``"maximize"``
        (:func:`check_objectives`), in order; at least one.
    constraints : list of str, optional
        Limits ``"name <= bound"`` / ``"name >= bound"`` on any metric
        (:func:`check_constraints`). A point is feasible when all hold.

    Attributes
    ----------
    names : tuple of str
        The objectives, in order.
    signs : ndarray of shape (n_objectives,)
        1 for a minimized objective, -1 for a maximized one: the study
        minimizes ``signs * values``.
    constraints : tuple of Constraint
    needed : tuple of str
        The metrics every evaluation must return: the objectives, then the
        other constrained metrics.
    """

    def __init__(self, objectives: Mapping[str, str], constraints: Sequence[str] | None = None):
        objectives = check_objectives(objectives) or {}
        self.names = tuple(objectives)
        self.signs = np.array([1.0 if d == "minimize" else -1.0 for d in objectives.values()])
        self.constraints = tuple(Constraint.parse(c) for c in check_constraints(constraints) or ())
        self.needed = tuple(dict.fromkeys([*self.names, *(c.metric for c in self.constraints)]))

    def __repr__(self) -> str:
        return f"Metrics({self.directions}, constraints={[str(c) for c in self.constraints]})"

    @property
    def directions(self) -> dict[str, str]:
        """Objective name -> ``"minimize"`` or ``"maximize"``."""
        return {n: "minimize" if s > 0 else "maximize" for n, s in zip(self.names, self.signs)}

    @property
    def n_objectives(self) -> int:
        return len(self.names)

    # -- one evaluation -----------------------------------------------------------------
    def read(self, y: Any) -> tuple[float | None, dict[str, float] | None, str | None]:
        """What an evaluation returned, as a trial records it.

        Parameters
        ----------
        y : object
            The objective's return: a dict holding a finite number for every
            objective and constrained metric; its other entries that are
            finite numbers are recorded too (up to :data:`MAX_METRICS`).

        Returns
        -------
        value : float or None
            The first objective, negated if maximized (what the study
            minimizes); None for a failure.
        metrics : dict or None
            Every recorded metric in the user's units; None for a failure.
        error : str or None
            Why the evaluation failed: not a dict, or a needed metric
            missing or not a finite number.
        """
        if not isinstance(y, Mapping):
            return (
                None,
                None,
                (
                    f"objective returned {type(y).__name__} {excerpt(y)}, not a dict of "
                    f"metrics holding {list(self.needed)}"
                ),
            )
        metrics: dict[str, float] = {}
        for name in self.needed:
            if name not in y:
                return None, None, f"objective's dict has no metric {name!r}"
            value, problem = as_value(y[name])
            if value is None:
                return None, None, f"metric {name!r}: {problem}"
            metrics[name] = value
        for name, entry in y.items():
            if len(metrics) >= MAX_METRICS:
                break
            if name not in metrics and _is_name(name):
                value, _ = as_value(entry)
                if value is not None:
                    metrics[name] = value
        return float(self.signs[0] * metrics[self.names[0]]), metrics, None

    # -- arrays for the models -----------------------------------------------------------
    def objective_matrix(self, metrics: Sequence[Mapping[str, float] | None]) -> np.ndarray:
        """The objectives of each trial, every column minimized; NaN rows for failures.

        Parameters
        ----------
        metrics : list of dict or None
            Each trial's metrics (None for a failed one).

        Returns
        -------
        ndarray of shape (n_trials, n_objectives)
        """
        return self._columns(metrics, self.names) * self.signs

    def violations(self, metrics: Sequence[Mapping[str, float] | None]) -> np.ndarray:
        """Each constraint's violation per trial (at most 0 where it holds); NaN for failures.

        Parameters
        ----------
        metrics : list of dict or None
            Each trial's metrics (None for a failed one).

        Returns
        -------
        ndarray of shape (n_trials, n_constraints)
        """
        values = self._columns(metrics, [c.metric for c in self.constraints])
        out = np.empty_like(values)
        for j, constraint in enumerate(self.constraints):
            out[:, j] = constraint.violation(values[:, j])
        return out

    def _columns(
        self, metrics: Sequence[Mapping[str, float] | None], names: Sequence[str]
    ) -> np.ndarray:
        out = np.full((len(metrics), len(names)), np.nan)
        for i, row in enumerate(metrics):
            if row is not None:
                out[i] = [row[name] for name in names]
        return out

    # -- the result ------------------------------------------------------------------------
    def result_fields(
        self, metrics: Sequence[Mapping[str, float] | None], x: Sequence[Any]
    ) -> dict:
        """The fields a result of this study adds, over its evaluated trials in order.

        Parameters
        ----------
        metrics : list of dict or None
            Each evaluated trial's metrics (None for a failed one).
        x : list
            Their points.

        Returns
        -------
        dict
            ``objectives`` (names), ``directions``, ``constraints``
            (strings), ``metrics``, ``feasible`` (bool array), ``n_feasible``,
            ``pareto_front`` (n_front x n_objectives, in the user's
            directions and units, sorted by the first objective),
            ``pareto_x``, ``pareto_index`` (positions in ``x``), and ``x``,
            ``fun`` and ``message``: for one objective the best feasible
            point and its value; with several, the point of the front that
            is best in the first objective; when no point is feasible, the
            point of least total violation and a message that says so.
        """
        Y = self.objective_matrix(metrics)
        complete = np.all(np.isfinite(Y), axis=1)
        violation = np.clip(self.violations(metrics), 0.0, None).sum(axis=1)
        feasible = complete & (violation <= 0)
        index = np.flatnonzero(feasible)
        front = index[non_dominated(Y[index])] if len(index) else index
        front = front[np.argsort(Y[front, 0], kind="stable")]
        fields: dict[str, Any] = {
            "objectives": list(self.names),
            "directions": list(self.directions.values()),
            "constraints": [str(c) for c in self.constraints],
            "metrics": list(metrics),
            "feasible": feasible,
            "n_feasible": int(feasible.sum()),
            "pareto_front": (Y[front] * self.signs).reshape(-1, self.n_objectives),
            "pareto_x": [x[i] for i in front],
            "pareto_index": front,
        }
        if len(front):
            best = int(front[0])
        elif complete.any():
            candidates = np.flatnonzero(complete)
            best = int(candidates[np.argmin(violation[candidates])])
            fields["message"] = (
                "no feasible point was found: x is the evaluated point with the least total "
                "violation of the constraints"
            )
        else:
            fields.update(x=None, fun=math.nan)
            return fields
        fields["x"] = x[best]
        fields["fun"] = float(Y[best, 0] * self.signs[0])
        return fields
