"""The front of a study with several objectives: its objective values and hypervolume.

The numbers behind :func:`~treebo.plotting.plot_pareto_front` and
:func:`~treebo.plotting.plot_hypervolume`. A result's own ``pareto_front``,
``feasible`` and ``metrics`` fields come from :class:`~treebo.metrics.Metrics`.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ..metrics import Metrics
from ..pareto import hypervolume
from ..result import OptimizeResult
from .io import as_result

__all__ = ["objective_values", "hypervolume_reference", "hypervolume_curve", "REFERENCE_MARGIN"]

#: The hypervolume's reference point lies this fraction of the observed range
#: beyond the worst feasible value of each objective.
REFERENCE_MARGIN = 0.1

Source = OptimizeResult | str | os.PathLike


def objective_values(result: Source) -> tuple[np.ndarray, np.ndarray]:
    """The objectives of every evaluation of a study with ``objectives=``, and feasibility.

    Parameters
    ----------
    result : OptimizeResult, str or os.PathLike
        A result of a study with ``objectives`` (its ``metrics`` field).

    Returns
    -------
    values : ndarray of shape (n_evaluated, n_objectives)
        In the objectives' own units and directions; NaN rows for failed
        evaluations.
    feasible : ndarray of bool, shape (n_evaluated,)
        Complete and meeting every constraint.

    Raises
    ------
    ValueError
        If the study has no ``objectives``.
    """
    result = as_result(result)
    if "objectives" not in result:
        raise ValueError("the result has no objectives: it is of a study made without objectives=")
    metrics = _metrics(result)
    values = metrics.objective_matrix(result["metrics"]) * metrics.signs
    return values, np.asarray(result["feasible"], dtype=bool)


def hypervolume_reference(result: Source) -> np.ndarray:
    """The reference point of a study's hypervolume, computed once from all its evaluations.

    For each objective, the worst value among the feasible evaluations moved
    further by :data:`REFERENCE_MARGIN` (10%) of the range of the feasible
    values (of the worst value's magnitude, or by 1, when every feasible
    value is the same): above the worst for a minimized objective, below it
    for a maximized one. Every feasible point then counts, the worst ones
    with a small volume.

    Parameters
    ----------
    result : OptimizeResult, str or os.PathLike
        A result of a study with ``objectives``.

    Returns
    -------
    ndarray of shape (n_objectives,)
        In the objectives' own units.

    Raises
    ------
    ValueError
        If the study has no objectives or no feasible evaluation.
    """
    result = as_result(result)
    values, feasible = objective_values(result)
    if not feasible.any():
        raise ValueError("no evaluation is feasible: the hypervolume has no reference point")
    signs = _signs(result)
    Y = values[feasible] * signs  # every column minimized
    worst, best = Y.max(axis=0), Y.min(axis=0)
    span = worst - best
    span = np.where(span > 0, span, np.where(worst != 0, np.abs(worst), 1.0))
    return (worst + REFERENCE_MARGIN * span) * signs


def hypervolume_curve(result: Source, reference: Any = None) -> np.ndarray:
    """The hypervolume of the feasible points evaluated so far, after each evaluation.

    Parameters
    ----------
    result : OptimizeResult, str or os.PathLike
        A result of a study with ``objectives``.
    reference : array-like of shape (n_objectives,), optional
        In the objectives' own units; by default
        :func:`hypervolume_reference`, from the whole study.

    Returns
    -------
    ndarray of shape (n_evaluated,)
        Non-decreasing; entry ``k`` counts the feasible evaluations among
        the first ``k + 1`` (failed and infeasible ones add nothing).
        :func:`treebo.pareto.hypervolume` with every objective minimized.
    """
    result = as_result(result)
    values, feasible = objective_values(result)
    signs = _signs(result)
    if reference is None:
        reference = hypervolume_reference(result)
    reference = np.asarray(reference, dtype=float) * signs
    Y = values * signs
    out = np.zeros(len(Y))
    front = np.empty((0, Y.shape[1]))
    volume = 0.0
    for k in range(len(Y)):
        if feasible[k] and not np.any(np.all(front <= Y[k], axis=1)):
            # Only a point that no earlier one dominates (or equals) changes the volume.
            front = np.vstack([front[~np.all(Y[k] <= front, axis=1)], Y[k]])
            volume = hypervolume(front, reference)
        out[k] = volume
    return out


def _metrics(result: OptimizeResult) -> Metrics:
    return Metrics(
        dict(zip(result["objectives"], result["directions"])), result["constraints"] or None
    )


def _signs(result: OptimizeResult) -> np.ndarray:
    return _metrics(result).signs
