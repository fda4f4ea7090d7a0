"""Acquisition functions and candidate generation.

Acquisition functions are written for *minimization* and evaluated on the
standardized target scale. :func:`acquisition_score` turns any of them into a
"higher is better" score used to rank candidates; expected improvement is
ranked by its logarithm (:func:`log_expected_improvement`), which stays finite
and ordered far from the data where EI itself underflows to 0.

Candidates are scrambled Sobol points from qmcpy (a fresh scramble every
call), optionally joined by local neighbours of the best points so far, and
snapped onto the feasible set by the :class:`~treebo.space.Space`.

qmcpy's Sobol generator prefers sample sizes that are powers of two. treebo
draws the points in Gray-code order and keeps the first ``n_candidates`` of
them (50,000 by default, as in Kim & Choi 2022): any prefix of a Gray-code
ordered net is still a low-discrepancy point set, just slightly less balanced
than a full ``2^m`` net. Pass ``n_candidates=2**16`` for a complete net.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import qmcpy
from scipy.special import erfcx, log_ndtr, ndtr

from .space import Binary, Categorical, Integer, Real, Space

__all__ = [
    "expected_improvement",
    "log_expected_improvement",
    "probability_of_improvement",
    "lower_confidence_bound",
    "acquisition_score",
    "ACQUISITIONS",
    "sobol_candidates",
    "local_centers",
    "local_candidates",
    "jump_candidates",
    "distance_variance",
]

#: Standard deviations at or below this (standardized units) count as zero:
#: the acquisition takes its sigma -> 0 limit instead of dividing by sigma.
MIN_STD = 1e-12

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_LOG_SQRT_PI_OVER_2 = 0.5 * math.log(math.pi / 2.0)
# Below this z, h(z) = phi(z) + z Phi(z) equals phi(z) / z^2 within a relative
# 3 / z^2 = 3e-12, while w below still carries enough significant digits.
_Z_ASYMPTOTIC = -1e6


def _log_h(z: np.ndarray) -> np.ndarray:
    """log(phi(z) + z * Phi(z)) without cancellation, for any real z."""
    z = np.asarray(z, dtype=float)
    out = np.empty_like(z)
    upper = z > -1.0
    zu = z[upper]
    out[upper] = np.log(np.exp(-0.5 * zu**2 - _LOG_SQRT_2PI) + zu * ndtr(zu))
    middle = (z <= -1.0) & (z > _Z_ASYMPTOTIC)
    zm = z[middle]
    # h = phi * (1 - |z| Phi/phi) and Phi/phi = sqrt(pi/2) erfcx(-z/sqrt 2).
    w = np.log(erfcx(-zm / math.sqrt(2.0)) * np.abs(zm)) + _LOG_SQRT_PI_OVER_2
    w = np.minimum(w, -1e-300)  # w < 0 in exact arithmetic; keep rounding from crossing 0
    out[middle] = -0.5 * zm**2 - _LOG_SQRT_2PI + _log1mexp(w)
    lower = z <= _Z_ASYMPTOTIC
    zl = z[lower]
    out[lower] = -0.5 * zl**2 - _LOG_SQRT_2PI - 2.0 * np.log(np.abs(zl))
    return out


def _log1mexp(w: np.ndarray) -> np.ndarray:
    """log(1 - exp(w)) for w < 0, accurate on both sides of -log 2 (Maechler 2012)."""
    out = np.empty_like(w)
    near_zero = w > -math.log(2.0)
    out[near_zero] = np.log(-np.expm1(w[near_zero]))
    out[~near_zero] = np.log1p(-np.exp(w[~near_zero]))
    return out


def _prepare(mean: Any, std: Any) -> tuple[np.ndarray, np.ndarray]:
    mean = np.asarray(mean, dtype=float)
    std = np.asarray(std, dtype=float)
    if mean.shape != std.shape:
        raise ValueError(f"mean and std must have the same shape, got {mean.shape} and "
                         f"{std.shape}")
    if np.any(std < 0):
        raise ValueError("std must be non-negative")
    return mean, std


def log_expected_improvement(mean: Any, std: Any, best: float, xi: float = 0.0) -> np.ndarray:
    """Logarithm of the expected improvement below ``best - xi``.

    ``EI = sigma * h(z)`` with ``z = (best - xi - mean) / sigma`` and
    ``h(z) = phi(z) + z Phi(z)``; ``log h`` is evaluated in three branches
    (direct, ``erfcx`` with ``log1mexp``, and the asymptote ``phi(z)/z^2``) so
    the result is finite and decreasing even at ``z = -1e7`` (Ament et al. 2023).
    Where ``std <= MIN_STD`` the limit ``log(max(best - xi - mean, 0))`` is used,
    which is ``-inf`` when no improvement is possible.

    Parameters
    ----------
    mean, std : array-like of shape (n_points,)
        Predictive mean and standard deviation.
    best : float
        Incumbent (best observed value), same units as ``mean``.
    xi : float, default 0.0
        Required improvement margin, ``>= 0``.

    Returns
    -------
    ndarray of shape (n_points,)
    """
    mean, std = _prepare(mean, std)
    gap = best - xi - mean
    out = np.full(mean.shape, -np.inf)
    positive = std > MIN_STD
    out[positive] = np.log(std[positive]) + _log_h(gap[positive] / std[positive])
    flat = ~positive & (gap > 0)
    out[flat] = np.log(gap[flat])
    return out


def expected_improvement(mean: Any, std: Any, best: float, xi: float = 0.0) -> np.ndarray:
    """Expected improvement ``E[max(best - xi - Y, 0)]`` for ``Y ~ N(mean, std^2)``.

    Parameters
    ----------
    mean, std : array-like of shape (n_points,)
    best : float
        Incumbent value.
    xi : float, default 0.0

    Returns
    -------
    ndarray of shape (n_points,)
        Non-negative; it underflows to 0 far from the data, which is why
        candidates are ranked by :func:`log_expected_improvement` instead.
    """
    return np.exp(log_expected_improvement(mean, std, best, xi))


def probability_of_improvement(mean: Any, std: Any, best: float, xi: float = 0.0) -> np.ndarray:
    """Probability that ``Y < best - xi`` for ``Y ~ N(mean, std^2)``.

    Parameters
    ----------
    mean, std : array-like of shape (n_points,)
    best : float
    xi : float, default 0.0

    Returns
    -------
    ndarray of shape (n_points,)
    """
    return np.exp(_log_pi(mean, std, best, xi))


def _log_pi(mean: Any, std: Any, best: float, xi: float) -> np.ndarray:
    mean, std = _prepare(mean, std)
    gap = best - xi - mean
    out = np.where(gap > 0, 0.0, -np.inf)
    positive = std > MIN_STD
    out[positive] = log_ndtr(gap[positive] / std[positive])
    return out


def lower_confidence_bound(mean: Any, std: Any, kappa: float = 1.96) -> np.ndarray:
    """Lower confidence bound ``mean - kappa * std`` (smaller is more promising).

    Parameters
    ----------
    mean, std : array-like of shape (n_points,)
    kappa : float, default 1.96

    Returns
    -------
    ndarray of shape (n_points,)
    """
    mean, std = _prepare(mean, std)
    return mean - kappa * std


#: Acquisition names and the parameters each accepts (with defaults).
ACQUISITIONS: dict[str, dict[str, float]] = {
    "ei": {"xi": 0.0},
    "pi": {"xi": 0.0},
    "lcb": {"kappa": 1.96},
}


def check_acquisition(name: str, params: dict | None) -> dict[str, float]:
    """Validate an acquisition name and its parameters; return the full parameter set."""
    if name not in ACQUISITIONS:
        raise ValueError(f"unknown acquisition {name!r}; choose one of {list(ACQUISITIONS)}")
    params = dict(params or {})
    unknown = sorted(set(params) - set(ACQUISITIONS[name]))
    if unknown:
        raise ValueError(f"acquisition {name!r} takes parameters {list(ACQUISITIONS[name])}, "
                         f"got unknown {unknown}")
    full = {**ACQUISITIONS[name], **params}
    for key, value in full.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
                math.isfinite(value) and value >= 0):
            raise ValueError(f"acquisition parameter {key!r} must be a finite number >= 0, "
                             f"got {value!r}")
    return full


def acquisition_score(name: str, mean: np.ndarray, std: np.ndarray, best: float,
                      **params: float) -> np.ndarray:
    """Score candidates so that higher is better.

    Parameters
    ----------
    name : {"ei", "pi", "lcb"}
        ``"ei"`` scores by log-EI, ``"pi"`` by log-PI, ``"lcb"`` by
        ``-(mean - kappa * std)``.
    mean, std : ndarray of shape (n_points,)
    best : float
        Incumbent, used by ``"ei"`` and ``"pi"``.
    **params
        ``xi`` for ``"ei"``/``"pi"``, ``kappa`` for ``"lcb"``.

    Returns
    -------
    ndarray of shape (n_points,)
    """
    params = check_acquisition(name, params)
    if name == "ei":
        return log_expected_improvement(mean, std, best, params["xi"])
    if name == "pi":
        return _log_pi(mean, std, best, params["xi"])
    return -lower_confidence_bound(mean, std, params["kappa"])


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


def local_centers(X: np.ndarray, values: np.ndarray, n_centers: int,
                  min_spacing: float = 0.0) -> np.ndarray:
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


def jump_candidates(space: Space, centers: np.ndarray, n_per_center: int,
                    rng: np.random.Generator) -> np.ndarray:
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
    X = _repeated(space, centers, n_per_center)
    n = len(X)
    if n == 0:
        return X
    redrawn = rng.integers(space.n_dims, size=n)
    for j, dim in enumerate(space.dimensions):
        cols = space.columns_of(j)
        rows = np.flatnonzero(redrawn == j)
        if rows.size == 0:
            continue
        if isinstance(dim, (Binary, Categorical)):
            _switch_value(X, rows, cols, dim, rng)
        elif isinstance(dim, (Real, Integer)):
            X[rows, cols.start] = rng.random(rows.size)
    return space.snap(X)


def distance_variance(candidates: np.ndarray, X: np.ndarray,
                      length: float | None = None) -> np.ndarray:
    """Exploration variance that grows with the distance to the nearest data point.

    ``1 - exp(-d^2 / (2 l^2))``, with ``d`` the Euclidean distance (encoded
    units) from a candidate to its nearest row of ``X``: 0 at a data point,
    about 0.4 at distance ``l``, close to 1 beyond a few ``l``. By default
    ``l`` is the median distance from a row of ``X`` to its nearest other
    row (the data's typical spacing). The optimizer adds it to a tree
    surrogate's predictive variance (on the standardized targets), whose own
    variance does not grow away from the data.

    When ``X`` has fewer than two distinct rows, the default ``l`` is the
    mean nearest-neighbour distance of ``len(X)`` uniformly random points in
    the unit cube of the same dimension.

    Parameters
    ----------
    candidates : ndarray of shape (n_candidates, n_columns)
    X : ndarray of shape (n_points, n_columns)
        Evaluated (and pending) encoded points, ``n_points >= 1``.
    length : float, optional
        A fixed ``l`` (encoded units) instead of the data's spacing.

    Returns
    -------
    ndarray of shape (n_candidates,)
        Values in ``[0, 1)``.
    """
    from scipy.spatial import cKDTree

    tree = cKDTree(X)
    distance, _ = tree.query(candidates, k=1)
    if length is not None:
        return -np.expm1(-0.5 * (distance / length) ** 2)
    spacing = 0.0
    if len(X) > 1:
        neighbour, _ = tree.query(X, k=2)
        spacing = float(np.median(neighbour[:, 1]))
    if not spacing > 0:
        n, dim = X.shape
        ball = math.pi ** (dim / 2) / math.gamma(dim / 2 + 1)
        spacing = math.gamma(1 + 1 / dim) / (n * ball) ** (1 / dim)
    return -np.expm1(-0.5 * (distance / spacing) ** 2)


def local_candidates(space: Space, centers: np.ndarray, n_per_center: int,
                     rng: np.random.Generator, step_range: tuple[float, float] = (1e-3, 0.2)
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
    X = _repeated(space, centers, n_per_center)
    n = len(X)
    if n == 0:
        return X
    n_dims = space.n_dims
    change = rng.random((n, n_dims)) < min(1.0, 3.0 / n_dims)
    forced = rng.integers(n_dims, size=n)
    change[np.arange(n), forced] = True
    log_lo, log_hi = np.log(step_range[0]), np.log(step_range[1])
    steps = np.exp(rng.uniform(log_lo, log_hi, size=n))
    for j, dim in enumerate(space.dimensions):
        cols = space.columns_of(j)
        rows = np.flatnonzero(change[:, j])
        if rows.size == 0:
            continue
        if isinstance(dim, Real):
            column = X[rows, cols.start] + steps[rows] * rng.standard_normal(rows.size)
            X[rows, cols.start] = np.clip(column, 0.0, 1.0)
        elif isinstance(dim, Integer):
            # Move by at least one value, so the step survives snapping; the
            # Gaussian step size is taken relative to the number of values.
            current = np.array(dim.decode(X[rows, cols]))
            size = np.abs(rng.standard_normal(rows.size)) * steps[rows] * dim.cardinality
            shift = np.maximum(1, np.rint(size)).astype(int)
            shift *= rng.choice([-1, 1], size=rows.size)
            outside = (current + shift < dim.low) | (current + shift > dim.high)
            shift[outside] *= -1
            X[rows, cols.start] = dim.encode(np.clip(current + shift, dim.low, dim.high))[:, 0]
        elif isinstance(dim, (Binary, Categorical)):
            _switch_value(X, rows, cols, dim, rng)
    return space.snap(X)


def _repeated(space: Space, centers: np.ndarray, n_per_center: int) -> np.ndarray:
    """Each centre ``n_per_center`` times, as a new float array (n_centers * n_per_center, C)."""
    centers = np.atleast_2d(np.asarray(centers, dtype=float))
    if centers.shape[0] * n_per_center == 0:
        return np.empty((0, space.n_columns))
    return np.repeat(centers, n_per_center, axis=0)


def _switch_value(X: np.ndarray, rows: np.ndarray, cols: slice, dim: Binary | Categorical,
                  rng: np.random.Generator) -> None:
    """Give ``rows`` of a binary or categorical dimension another value, in place."""
    if isinstance(dim, Binary):
        X[rows, cols.start] = 1.0 - X[rows, cols.start]
    elif dim.n_columns > 1:
        current = np.argmax(X[rows, cols], axis=1)
        shift = rng.integers(1, dim.n_columns, size=rows.size)
        block = np.zeros((rows.size, dim.n_columns))
        block[np.arange(rows.size), (current + shift) % dim.n_columns] = 1.0
        X[rows, cols] = block


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
    """Indices of the first occurrence of every distinct row of X, in order."""
    if len(X) <= 1:
        return np.arange(len(X))
    h = _row_hash(X, rng_weights)
    order = np.argsort(h, kind="stable")
    Xs = X[order]
    same = (h[order][1:] == h[order][:-1]) & np.all(Xs[1:] == Xs[:-1], axis=1)
    keep = np.ones(len(X), dtype=bool)
    keep[order[1:][same]] = False
    return np.flatnonzero(keep)


def rows_in(X: np.ndarray, Y: np.ndarray, rng_weights: np.ndarray) -> np.ndarray:
    """Boolean mask of the rows of X that equal some row of Y."""
    mask = np.zeros(len(X), dtype=bool)
    if len(X) == 0 or len(Y) == 0:
        return mask
    suspects = np.flatnonzero(np.isin(_row_hash(X, rng_weights), _row_hash(Y, rng_weights)))
    for i in suspects:
        mask[i] = bool(np.any(np.all(Y == X[i], axis=1)))
    return mask
