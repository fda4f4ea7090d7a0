"""Candidate points for the acquisition maximizer, and exact row bookkeeping.

Candidates are scrambled Sobol points from qmcpy (a fresh scramble every
call), optionally joined by local neighbours of the best points so far
(Gaussian steps and one-dimension jumps around well-spaced centres), and
snapped onto the feasible set by the :class:`~treebo.space.Space`.

qmcpy's Sobol generator prefers sample sizes that are powers of two. treebo
draws the points in Gray-code order and keeps the first ``n_candidates`` of
them (50,000 by default, as in Kim & Choi 2022): any prefix of a Gray-code
ordered net is still a low-discrepancy point set, just slightly less balanced
than a full ``2^m`` net. Pass ``n_candidates=2**16`` for a complete net.

On very wide spaces the number of candidates is bounded by memory:
:func:`rows_within_memory` is how many encoded rows fit in
:data:`CANDIDATE_MEMORY` (256 MiB of float64), and an ask holds no candidate
array, nor a copy of one, with more rows than that
(:class:`~treebo.proposal.CandidatePool` says how the pool shrinks).
"""

from __future__ import annotations

import warnings

import numpy as np
import qmcpy

from ..space import Space

__all__ = [
    "CANDIDATE_MEMORY",
    "rows_within_memory",
    "sobol_candidates",
    "local_centers",
    "local_candidates",
    "jump_candidates",
    "unique_rows",
    "rows_in",
]


#: Bytes that one array of encoded candidates (float64) may take in an ask:
#: the pool, the local step's box candidates and model data, the rows of one
#: L-BFGS-B gradient. 256 MiB leaves every default untouched up to 588 encoded
#: columns (the pool's 57,000 rows), and keeps an ask on 10,000 columns under
#: 1.5 GiB (docs/design.md, "Very wide spaces").
CANDIDATE_MEMORY = 2**28


def rows_within_memory(n_columns: int) -> int:
    """How many encoded rows of ``n_columns`` float64 fit in :data:`CANDIDATE_MEMORY`.

    Parameters
    ----------
    n_columns : int
        Encoded columns of the space (:attr:`~treebo.space.Space.n_columns`).

    Returns
    -------
    int
        ``CANDIDATE_MEMORY // (8 * n_columns)``, at least 1: 57,065 rows of
        588 columns (the default pool's 57,000 fit), 3,355 rows of 10,000.
    """
    return max(1, CANDIDATE_MEMORY // (8 * max(1, n_columns)))


def sobol_candidates(n_points: int, n_columns: int, rng: np.random.Generator) -> np.ndarray:
    """Scrambled Sobol points in ``[0, 1)^n_columns``.

    Parameters
    ----------
    n_points : int
        Number of points; the first ``n_points`` of a Gray-code ordered net
        (see the module docstring about powers of two).
    n_columns : int
    rng : numpy.random.Generator
        Seeds the scrambling, so each call gives a new randomized net.

    Returns
    -------
    ndarray of shape (n_points, n_columns)
    """
    seed = int(rng.integers(np.iinfo(np.int32).max))
    net = qmcpy.DigitalNetB2(n_columns, seed=seed, order="GRAY")
    with warnings.catch_warnings():
        # The power-of-two advice is handled as described in the module docstring.
        warnings.simplefilter("ignore")
        points = net.gen_samples(n_points, warn=False)
    return np.asarray(points, dtype=float).reshape(n_points, n_columns)


def local_centers(
    X: np.ndarray, values: np.ndarray, n_centers: int, min_spacing: float = 0.0
) -> np.ndarray:
    """Indices of the best points that are at least ``min_spacing`` apart.

    Walks the points from the best value up and keeps a point when its
    largest coordinate difference to every point kept so far is at least
    ``min_spacing``, so the local search refines several basins instead of
    piling every centre into the incumbent's.

    Parameters
    ----------
    X : ndarray of shape (n_points, n_columns)
        Encoded points.
    values : ndarray of shape (n_points,)
        Their (transformed) values; lower is better.
    n_centers : int
        At most this many indices are returned.
    min_spacing : float, default 0.0
        Minimum Chebyshev distance between two centres, in encoded units;
        0 takes the ``n_centers`` best points.

    Returns
    -------
    ndarray of int
        Indices into ``X``, best first; fewer than ``n_centers`` when not
        enough points are that far apart.
    """
    order = np.argsort(values, kind="stable")
    if min_spacing <= 0:
        return order[:n_centers]
    kept: list[int] = []
    for i in order:
        if not kept or np.min(np.max(np.abs(X[kept] - X[i]), axis=1)) >= min_spacing:
            kept.append(int(i))
            if len(kept) == n_centers:
                break
    return np.array(kept, dtype=int)


def jump_candidates(
    space: Space, centers: np.ndarray, n_per_center: int, rng: np.random.Generator
) -> np.ndarray:
    """Neighbours that redraw one dimension of their centre over its whole range.

    Each neighbour keeps every dimension of its centre but one, chosen at
    random, which takes a uniformly random value of the dimension (another
    category for a categorical, the other value for a binary). A Gaussian
    step (:func:`local_candidates`) cannot carry one coordinate from its
    well into a distant one while the others stay put; a jump can, which is
    what an objective that is a sum of one-dimensional terms needs when one
    coordinate sits in the wrong well.

    Parameters
    ----------
    space : Space
    centers : ndarray of shape (n_centers, n_columns)
        Encoded points.
    n_per_center : int
    rng : numpy.random.Generator

    Returns
    -------
    ndarray of shape (n_centers * n_per_center, n_columns)
        Snapped, not de-duplicated.
    """
    X = _neighbour_start(space, centers, n_per_center, rng)
    n = len(X)
    if n == 0:
        return X
    redrawn = _random_active_dims(space, X, rng)
    for j, dim in enumerate(space.dimensions):
        cols = space.columns_of(j)
        rows = np.flatnonzero(redrawn == j)
        if rows.size == 0:
            continue
        X[rows, cols] = dim.redraw(X[rows, cols], rng)
    return space.snap(X)


def local_candidates(
    space: Space,
    centers: np.ndarray,
    n_per_center: int,
    rng: np.random.Generator,
    step_range: tuple[float, float] = (1e-3, 0.2),
) -> np.ndarray:
    """Random neighbours of encoded points, in the spirit of SMAC's local search.

    Each neighbour changes a random subset of dimensions of its center (at
    least one; on average about three): real dimensions take a Gaussian step
    whose standard deviation is drawn log-uniformly in ``step_range`` (encoded
    units), integer dimensions move by the same relative amount but at least
    one value, binary dimensions flip, categorical ones switch to another
    category.

    Parameters
    ----------
    space : Space
    centers : ndarray of shape (n_centers, n_columns)
        Encoded points to move away from.
    n_per_center : int
    rng : numpy.random.Generator
    step_range : (float, float)

    Returns
    -------
    ndarray of shape (n_centers * n_per_center, n_columns)
        Snapped, not de-duplicated.
    """
    X = _neighbour_start(space, centers, n_per_center, rng)
    n = len(X)
    if n == 0:
        return X
    n_dims = space.n_dims
    change = rng.random((n, n_dims)) < min(1.0, 3.0 / n_dims)
    change[np.arange(n), _random_active_dims(space, X, rng)] = True
    log_lo, log_hi = np.log(step_range[0]), np.log(step_range[1])
    steps = np.exp(rng.uniform(log_lo, log_hi, size=n))
    for j, dim in enumerate(space.dimensions):
        cols = space.columns_of(j)
        rows = np.flatnonzero(change[:, j])
        if rows.size == 0:
            continue
        X[rows, cols] = dim.step(X[rows, cols], steps[rows], rng)
    return space.snap(X)


def _neighbour_start(
    space: Space, centers: np.ndarray, n_per_center: int, rng: np.random.Generator
) -> np.ndarray:
    """Each centre ``n_per_center`` times, as a new array (n_centers * n_per_center, C).

    In a conditional space the inactive columns are filled with uniform
    values, so a child that a changed parent activates starts at a random
    value instead of its lowest one (they snap back where it stays inactive).
    """
    centers = np.atleast_2d(np.asarray(centers, dtype=float))
    if centers.shape[0] * n_per_center == 0:
        return np.empty((0, space.n_columns))
    X = np.repeat(centers, n_per_center, axis=0)
    return space.fill_inactive(X, rng) if space.conditional else X


def _random_active_dims(space: Space, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One dimension per row of ``X``, drawn uniformly among the row's active ones.

    Changing an inactive dimension would be undone by snapping. An
    unconditional space draws from ``rng`` exactly as it always did.
    """
    if not space.conditional:
        return rng.integers(space.n_dims, size=len(X))
    active = space.active_mask(X)
    return np.argmax(np.where(active, rng.random(active.shape), -1.0), axis=1)


# -- exact row bookkeeping -------------------------------------------------------


def _row_hash(X: np.ndarray, weights: np.ndarray) -> np.ndarray:
    # Identical rows must get identical hashes, so no BLAS here: a matrix
    # product may round differently for different batch sizes. Column-wise
    # ufuncs apply the same operations in the same order to every row.
    # Distinct rows collide only by accident, and every use below confirms a
    # hash match exactly.
    h = np.zeros(X.shape[0])
    for j in range(X.shape[1]):
        h += X[:, j] * weights[j]
    return h


def unique_rows(X: np.ndarray, rng_weights: np.ndarray) -> np.ndarray:
    """Indices of the first occurrence of every distinct row of X, in order.

    Parameters
    ----------
    X : ndarray of shape (n_rows, n_columns)
    rng_weights : ndarray of shape (n_columns,)
        Weights of the row hash that brings equal rows together: a random
        draw (e.g. standard normal) kept fixed for a study. A hash match is
        confirmed by comparing the rows.

    Returns
    -------
    ndarray of int, shape (n_distinct,)
        Increasing row indices into ``X``.
    """
    if len(X) <= 1:
        return np.arange(len(X))
    h = _row_hash(X, rng_weights)
    order = np.argsort(h)  # equal rows have equal hashes, so they end up adjacent
    hs = h[order]
    # Only rows whose hash equals the previous one's are compared.
    pairs = np.flatnonzero(hs[1:] == hs[:-1])
    repeats = np.zeros(len(X), dtype=bool)
    repeats[pairs[np.all(X[order[pairs + 1]] == X[order[pairs]], axis=1)] + 1] = True
    # Each run of equal rows in the sorted order keeps its smallest index.
    keep = np.zeros(len(X), dtype=bool)
    keep[np.minimum.reduceat(order, np.flatnonzero(~repeats))] = True
    return np.flatnonzero(keep)


def rows_in(X: np.ndarray, Y: np.ndarray, rng_weights: np.ndarray) -> np.ndarray:
    """Boolean mask of the rows of X that equal some row of Y.

    Parameters
    ----------
    X : ndarray of shape (n_rows, n_columns)
    Y : ndarray of shape (n_other, n_columns)
    rng_weights : ndarray of shape (n_columns,)
        As for :func:`unique_rows`.

    Returns
    -------
    ndarray of bool, shape (n_rows,)
    """
    mask = np.zeros(len(X), dtype=bool)
    if len(X) == 0 or len(Y) == 0:
        return mask
    suspects = np.flatnonzero(np.isin(_row_hash(X, rng_weights), _row_hash(Y, rng_weights)))
    for i in suspects:
        mask[i] = bool(np.any(np.all(Y == X[i], axis=1)))
    return mask
