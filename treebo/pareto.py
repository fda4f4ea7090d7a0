"""Pareto dominance and hypervolume of objective vectors that are minimized.

A point dominates another when it is no worse in every objective and better
in at least one. The hypervolume of a set of points is the measure of the
region they dominate inside the box bounded by a reference point; it grows
when the front moves toward lower values or spreads, and is the usual single
number by which fronts are compared (Zitzler & Thiele 1998).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["non_dominated", "hypervolume"]


def non_dominated(Y: ArrayLike) -> np.ndarray:
    """Which rows of ``Y`` no other row dominates (lower is better in every column).

    Of rows that are equal, only the first is kept.

    Parameters
    ----------
    Y : array-like of shape (n_points, n_objectives)
        Finite objective values.

    Returns
    -------
    ndarray of bool, shape (n_points,)

    Examples
    --------
    >>> non_dominated([[1, 2], [2, 1], [2, 2], [1, 2]]).tolist()
    [True, True, False, False]
    """
    Y = _as_matrix(Y)
    n = len(Y)
    keep = np.ones(n, dtype=bool)
    # Chunks of rows against every row: O(n^2 m) work in numpy, O(chunk n m) memory.
    chunk = max(1, 2_000_000 // max(1, n * Y.shape[1]))
    for start in range(0, n, chunk):
        rows = Y[start : start + chunk]
        no_worse = np.all(Y[None, :, :] <= rows[:, None, :], axis=2)
        better = np.any(Y[None, :, :] < rows[:, None, :], axis=2)
        dominated = np.any(no_worse & better, axis=1)
        # An equal row earlier in Y wins the tie.
        equal = np.all(Y[None, :, :] == rows[:, None, :], axis=2)
        earlier = np.arange(n)[None, :] < np.arange(start, start + len(rows))[:, None]
        keep[start : start + len(rows)] = ~dominated & ~np.any(equal & earlier, axis=1)
    return keep


def hypervolume(Y: ArrayLike, reference: ArrayLike) -> float:
    """The hypervolume that the rows of ``Y`` dominate, bounded by ``reference``.

    Exact: a sweep over the sorted front for two objectives, and slices
    along the last objective for more (each slice a hypervolume in one
    dimension fewer), which is fast for fronts of a few hundred points in
    three or four objectives. Rows not strictly below the reference in
    every objective add nothing.

    Parameters
    ----------
    Y : array-like of shape (n_points, n_objectives)
        Finite objective values, minimized.
    reference : array-like of shape (n_objectives,)
        The upper corner of the measured box.

    Returns
    -------
    float
        0.0 when no row is below the reference.

    Examples
    --------
    >>> hypervolume([[1.0, 2.0], [2.0, 1.0]], [3.0, 3.0])
    3.0
    """
    Y = _as_matrix(Y)
    reference = np.asarray(reference, dtype=float)
    if reference.shape != (Y.shape[1],) or not np.all(np.isfinite(reference)):
        raise ValueError(
            f"reference must be {Y.shape[1]} finite numbers, one per objective, "
            f"got {reference.tolist()}"
        )
    Y = Y[np.all(Y < reference, axis=1)]
    if not len(Y):
        return 0.0
    return float(_volume(Y[non_dominated(Y)], reference))


def _volume(Y: np.ndarray, reference: np.ndarray) -> float:
    """Hypervolume of mutually non-dominated rows, all strictly below ``reference``."""
    if Y.shape[1] == 1:
        return float(reference[0] - Y[:, 0].min())
    if Y.shape[1] == 2:
        order = np.argsort(Y[:, 0], kind="stable")
        x, y = Y[order, 0], Y[order, 1]
        # Sorted by the first objective, a non-dominated front falls in the second.
        widths = np.diff(np.append(x, reference[0]))
        return float(np.sum(widths * (reference[1] - y)))
    order = np.argsort(Y[:, -1], kind="stable")
    Y = Y[order]
    depths = np.diff(np.append(Y[:, -1], reference[-1]))
    total = 0.0
    for i in range(len(Y)):
        if depths[i] > 0:
            front = Y[: i + 1, :-1]
            total += depths[i] * _volume(front[non_dominated(front)], reference[:-1])
    return total


def _as_matrix(Y: ArrayLike) -> np.ndarray:
    Y = np.asarray(Y, dtype=float)
    if Y.ndim != 2 or Y.shape[1] < 1:
        raise ValueError(
            f"Y must be an array of shape (n_points, n_objectives), got shape {Y.shape}"
        )
    if not np.all(np.isfinite(Y)):
        raise ValueError("Y must hold finite values only")
    return Y
