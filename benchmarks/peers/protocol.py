"""The protocol every peer run follows, and the mapping of treebo's spaces to the libraries'.

Every run of seed ``r`` first evaluates the ``n0`` points of treebo's
initial design for that seed (:func:`initial_design`: the points
``minimize(..., n_initial_points=n0, random_state=r)`` evaluates first;
``n0`` is treebo's ``default_n_initial(problem)``: 5, 10 for the
model-selection problems), fed through each library's own way of taking
given points (skopt ``x0`` with ``n_initial_points=0``; SMAC's initial design
with ``additional_configs`` and ``n_configs=0``; Optuna ``enqueue_trial``;
hyperopt ``points_to_evaluate``); the library's model takes over from
evaluation ``n0 + 1`` (Optuna's and hyperopt's ``n_startup_trials`` /
``n_startup_jobs`` set to ``n0``), for ``n_calls - n0`` proposals. Each
library is seeded with ``r``. :class:`PeerRun` checks that the first points a
library proposes are the given ones and evaluates the design's own points, so
every peer's first values are treebo's to the last bit.

Space mapping: ``Real`` -> the library's float (log scale for a log-uniform
prior), ``Integer`` -> its integer, ``Binary`` -> a categorical over
``[0, 1]``, ``Categorical`` -> a categorical over the category indices.
Conditional spaces (``active_if``): every point given to the objective holds
its active dimensions only, and a library's point with an inactive or a
missing active value is an error, never evaluated
(:meth:`PeerRun.active_point`). :func:`library_conditions` lists each
dimension's conditions, parents first, in the libraries' values; a peer that
cannot represent a space refuses it before evaluating anything
(:class:`UnsupportedSpace`, :func:`refuse_conditions`,
:func:`refuse_non_numeric`).

Times: ``acq_time`` of a proposal is the time from the end of the previous
evaluation to the start of this one (the library's fit, acquisition and
bookkeeping; 0 for the given points), ``fit_time`` is 0 (the libraries do
not report the fit apart), ``eval_time`` the objective's time.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from treebo.bench import N_INITIAL
from treebo.problems import Problem
from treebo.space import Binary, Categorical, Dimension, Integer, Real, Space


class UnsupportedSpace(ValueError):
    """A peer asked to run on a space it cannot represent (conditions, or a kind of dimension)."""


def initial_design(problem: Problem, seed: int, n_initial: int = N_INITIAL) -> list:
    """treebo's initial design of seed ``seed``: the points ``minimize`` evaluates first.

    The ``n_initial`` points of ``minimize(..., n_initial_points=n_initial,
    random_state=seed)``, the default preset's (points without their
    inactive dimensions in a conditional space).
    """
    from treebo import Optimizer

    return Optimizer(problem.space, n_initial_points=int(n_initial), random_state=int(seed)).ask(
        int(n_initial)
    )


def _dim_values(space: Space, point: Any) -> list:
    """A user-facing point as one value per dimension, in order."""
    if isinstance(point, dict):
        return [point[name] for name in space.names]
    return list(point)


def _to_library(dim: Any, value: Any) -> Any:
    """A treebo value as the peers' spaces hold it (categoricals by index)."""
    if isinstance(dim, Real):
        return float(value)
    if isinstance(dim, (Integer, Binary)):
        return int(value)
    if isinstance(dim, Categorical):
        return dim.categories.index(value)
    raise TypeError(f"unsupported dimension {dim!r}")


def _from_library(dim: Any, value: Any) -> Any:
    if isinstance(dim, Real):
        return min(max(float(value), dim.low), dim.high)
    if isinstance(dim, (Integer, Binary)):
        return int(round(float(value)))
    if isinstance(dim, Categorical):
        return dim.categories[int(value)]
    raise TypeError(f"unsupported dimension {dim!r}")


def library_conditions(space: Space) -> list[tuple[Dimension, list[tuple[str, list]]]]:
    """Every dimension, parents first, with its conditions in the libraries' values.

    A dimension comes after all of its parents (Kahn's algorithm, ties in the
    space's order, as :class:`~treebo.space.Space` visits them), with a list
    of ``(parent, allowed values)``, each value as :func:`_to_library` maps
    the parent's (a category's index, an int), in the parent's order; empty
    for an unconditional dimension. A dimension is active when every parent
    is active and takes one of its allowed values.
    """
    dims = {dim.name: dim for dim in space.dimensions}
    parents = {name: list(dim.active_if or {}) for name, dim in dims.items()}
    order: list[str] = []
    while len(order) < len(dims):
        ready = next(
            name
            for name in space.names
            if name not in order and all(p in order for p in parents[name])
        )
        order.append(ready)
    return [
        (
            dims[name],
            [
                (parent, [_to_library(dims[parent], v) for v in allowed])
                for parent, allowed in (dims[name].active_if or {}).items()
            ],
        )
        for name in order
    ]


def is_active(conditions: list[tuple[str, list]], values: dict) -> bool:
    """Whether a dimension with ``conditions`` is active given its parents' ``values``.

    ``values`` holds the library values of the active dimensions decided so
    far (an inactive parent is absent, so its children are inactive too).
    """
    return all(parent in values and values[parent] in allowed for parent, allowed in conditions)


class PeerRun:
    """The evaluations of one peer run: points, values and times, as the record needs them.

    The first ``len(x0)`` points a library proposes must be the given initial
    design (checked to 1e-9 on the encoded scale); the design's own points are
    evaluated, so every peer's first values are treebo's to the last bit.
    """

    def __init__(self, problem: Problem, x0: list, n_calls: int):
        self.problem, self.space, self.x0, self.n_calls = problem, problem.space, x0, n_calls
        self.n_initial = len(x0)
        self.dicts = bool(x0) and isinstance(x0[0], dict)
        self.x: list = []
        self.values: list[float] = []
        self.acq_time: list[float] = []
        self.eval_time: list[float] = []
        self._since = time.perf_counter()

    def point(self, values: Sequence[Any]) -> Any:
        """A treebo point from one library value per dimension (in order)."""
        point = [_from_library(d, v) for d, v in zip(self.space.dimensions, values)]
        return dict(zip(self.space.names, point)) if self.dicts else point

    def active_point(self, values: dict) -> dict:
        """A treebo point of a conditional space from a library's ``{name: value}``.

        ``values`` must hold the active dimensions and only them; anything
        else is a mapping error (RuntimeError), never passed on to the objective.
        """
        point = {
            d.name: _from_library(d, values[d.name])
            for d in self.space.dimensions
            if d.name in values
        }
        unknown = set(values) - set(self.space.names)
        try:
            canonical = self.space.drop_inactive(point)
        except ValueError as error:  # an active dimension is missing
            raise RuntimeError(
                f"the library's point {values!r} is not feasible: {error}"
            ) from error
        if unknown or canonical != point:
            extra = sorted(unknown | (set(point) - set(canonical)))
            raise RuntimeError(
                f"the library's point {values!r} has values for {extra}, which are inactive there"
            )
        return point

    def library_point(self, point: Any) -> list:
        """One library value per dimension of a treebo point."""
        return [
            _to_library(d, v) for d, v in zip(self.space.dimensions, _dim_values(self.space, point))
        ]

    def library_dict(self, point: Any) -> dict:
        """``{name: library value}`` of a treebo point (its active dimensions only)."""
        if self.space.conditional:
            point = self.space.drop_inactive(point)
            return {
                d.name: _to_library(d, point[d.name])
                for d in self.space.dimensions
                if d.name in point
            }
        return dict(zip(self.space.names, self.library_point(point)))

    def __call__(self, point: Any) -> float:
        """Evaluate a proposal; its acquisition time is the time since the last evaluation."""
        proposal = time.perf_counter() - self._since
        i = len(self.x)
        if i >= self.n_calls:
            raise RuntimeError(f"the peer asked for more than n_calls={self.n_calls} evaluations")
        if i < len(self.x0):
            given = self.space.encode([self.x0[i]])
            # Within 1e-6 encoded units: ConfigSpace keeps about 8 significant digits
            # of a log-scaled float it is given (3.418335543e-06 comes back as
            # 3.4183355e-06), a change far below any other point's distance.
            if not np.allclose(self.space.encode([point]), given, rtol=0.0, atol=1e-6):
                raise RuntimeError(
                    f"evaluation {i} is {point!r}, not the initial point {self.x0[i]!r}"
                )
            point, proposal = self.x0[i], 0.0
        start = time.perf_counter()
        value = float(self.problem(point))
        self.eval_time.append(time.perf_counter() - start)
        self.x.append(point)
        self.values.append(value)
        self.acq_time.append(proposal)
        self._since = time.perf_counter()
        return value


def refuse_conditions(space: Space, why: str) -> None:
    """Refuse a conditional space: the library would be fed values of inactive dimensions."""
    if space.conditional:
        raise UnsupportedSpace(
            f"conditional search spaces are not supported: {why} (this "
            f"space's {[d.name for d in space.dimensions if d.active_if]} "
            "have active_if conditions)"
        )


def refuse_non_numeric(space: Space, why: str) -> None:
    """Refuse a space with binary or categorical dimensions (or conditions)."""
    refuse_conditions(space, why)
    others = [d.name for d in space.dimensions if not isinstance(d, (Real, Integer))]
    if others:
        raise UnsupportedSpace(
            f"binary and categorical dimensions are not supported: {why} "
            f"(this space's {others} are neither real nor integer)"
        )
