"""The local step: a Gaussian process on the incumbent's nearest points, in a box around it.

A tree ensemble's mean is piecewise constant: inside the basin of the
optimum it cannot say in which direction the next decimal lies, so
refinement by the forest stalls one or two decades above the minimum. A
local step fits a small Gaussian process (Matérn 5/2, one length scale per
column; :class:`~treebo.surrogates.GaussianProcessSurrogate`) to the points
around the incumbent and maximizes its expected improvement inside a box
around the incumbent, moving the incumbent's active real and integer
columns only (binary and categorical columns, and inactive ones, keep the
incumbent's values).

The box needs no state: it is read off the evaluations. Its half-width
along each moving column is the largest distance, along that column, from
the incumbent to its ``max(4, 2 * n_moving)`` nearest points, so it shrinks
as evaluations gather around the optimum and is wide again when a jump or
exploration step moves the incumbent to an emptier region. It is also
halved after every ``max(4, n_moving)`` evaluations told since the
incumbent (that did not improve on it), as a TuRBO trust region shrinks
after failures; after ``max_halvings`` halvings the basin counts as
resolved and refinement steps of the forest take over, which weigh the
whole space again, until the incumbent improves. The model is fitted on every point
within twice the box (so that it knows each point of the box it could
propose) and at least the ``10 + 2 * n_columns`` nearest, in coordinates in
which the box is ``[-1, 1]``: whatever the box's size, the model sees a
problem of unit scale. The forest keeps choosing the basin: the incumbent,
and the jump and exploration steps, come from it.
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, cast

import numpy as np

from .._checks import check_int
from ..acquisition import AcquisitionMaximizer
from ..acquisition.candidates import jump_candidates, rows_within_memory, sobol_candidates
from ..space import Dimension, Space
from ..surrogates import Prediction
from ..surrogates.gp import GaussianProcessSurrogate
from ..targets import transform_targets
from .base import Proposal, Step, StepData

if TYPE_CHECKING:
    from ..space import Real

__all__ = ["LocalStep"]

#: Most points a local model is fitted on (a fit costs their number cubed). On
#: very wide spaces fewer: the fit's gradient is an array of shape (n, n,
#: n_columns), of which scikit-learn holds about three at once (752 MiB for 57
#: points in 10,000 columns), so ``n * n`` is at most ``rows_within_memory``.
_MAX_TRAINING_ROWS = 200

#: Integer dimensions with fewer values than this are left to the forest: a
#: smooth model's gradient says little about a handful of levels.
_MIN_INTEGER_LEVELS = 8

#: Bounds of the local model's length scales, in box coordinates (the box is
#: [-1, 1]). With a few dozen points in several dimensions, a marginal-likelihood
#: fit often sends a length scale to a far bound, and the model then sees the box
#: as flat along that column and stops moving it. Capped at 10 half-widths, a
#: column stays resolved across the box (10-D sphere, 200 evaluations: best value
#: 1.9e-3 and 2.7e-2 with the cap at 100, 2.7e-4 and 3.6e-4 at 10; docs/design.md).
_LENGTH_SCALE_BOUNDS = (1e-2, 10.0)


class LocalStep(Step):
    """Refine the incumbent with a Gaussian process fitted around it.

    Parameters
    ----------
    n_box_candidates : int, default 1024
        Sobol candidates scored in the box before the best five are
        polished by L-BFGS-B; on very wide spaces at most two thirds of
        :func:`~treebo.acquisition.candidates.rows_within_memory` (the
        category switches may add half as many again).
    max_halvings : int, default 3
        The box is halved after every ``max(4, n_moving)`` evaluations that
        did not improve on the incumbent (as TuRBO shrinks its trust region
        after failures). After this many halvings the incumbent's basin
        counts as resolved, and the step defers to a refinement step, which
        weighs the whole space again, until the incumbent improves (as TuRBO
        restarts once its trust region has collapsed).

    Notes
    -----
    It proposes nothing (and a refinement step is taken instead) when the
    incumbent has no active real or integer column of at least eight
    values, when its neighbours do not spread in any of them, or when every
    candidate in the box is taken or scores the same.
    """

    name = "local"

    def __init__(self, n_box_candidates: int = 1024, max_halvings: int = 3):
        self.n_box_candidates = check_int(n_box_candidates, "n_box_candidates")
        self.max_halvings = check_int(max_halvings, "max_halvings", 0)

    def propose(self, data: StepData, maximizer: AcquisitionMaximizer) -> Proposal | None:
        start = time.perf_counter()
        z = transform_targets(data.values, "standardize")
        incumbent = data.incumbent(z)
        failures = len(data.complete) - 1 - incumbent  # told after the incumbent
        region = _region(data.space, data.X, incumbent, failures)
        if region is None or region.halvings > self.max_halvings:
            return None
        model = _BoxModel(region, seed=data.seed or 0).fit(data.X[region.train], z[region.train])
        fit_time = time.perf_counter() - start
        start = time.perf_counter()
        n_box = min(
            self.n_box_candidates, max(1, 2 * rows_within_memory(data.space.n_columns) // 3)
        )
        pool = data.unseen(region.candidates(data.space, n_box, data.rng))
        best = float(z[incumbent])

        def score(points: np.ndarray) -> np.ndarray:
            return data.score(maximizer, model.predict_dist(points), best, points)

        lower, upper = np.zeros(data.space.n_columns), np.ones(data.space.n_columns)
        lower[region.moving], upper[region.moving] = region.lower, region.upper
        point, origin = maximizer.maximize(
            score,
            pool,
            space=data.space,
            unseen=data.unseen,
            rng=data.rng,
            fallback=lambda: None,
            polish=maximizer.uses_lbfgs(model, data.space),
            bounds=(lower, upper),
        )
        if origin != "model" or point is None:
            return None
        return Proposal(point, "model", fit_time, time.perf_counter() - start)


class _Region:
    """The incumbent's box: the columns it moves, its bounds, the rows a model learns from."""

    def __init__(
        self,
        center: np.ndarray,
        moving: np.ndarray,
        reach: np.ndarray,
        train: np.ndarray,
        halvings: int,
    ):
        self.halvings = halvings
        self.center = center
        self.moving = moving
        self.reach = reach
        self.lower = np.maximum(center[moving] - reach, 0.0)
        self.upper = np.minimum(center[moving] + reach, 1.0)
        self.train = train

    def to_local(self, X: np.ndarray) -> np.ndarray:
        """Encoded points in the box's coordinates (the box is [-1, 1] in moving columns)."""
        out = np.array(X, dtype=float, copy=True)
        out[:, self.moving] = (X[:, self.moving] - self.center[self.moving]) / self.reach
        return out

    def candidates(self, space: Space, n_points: int, rng: np.random.Generator) -> np.ndarray:
        """Sobol points in the box; the other columns keep the incumbent's values.

        In a space with other active dimensions (categorical, binary, short
        integer), copies of the incumbent with one of those redrawn are added
        (the jumps of :func:`~treebo.acquisition.jump_candidates` that left
        the box's columns alone: about ``n_points / 2`` times their share of
        the dimensions), so the local model can also weigh a switch of
        category, the neighbourhood a Hamming distance of one defines, instead
        of refining the box under the incumbent's categories only.
        """
        out = np.repeat(self.center[None, :], n_points, axis=0)
        unit = sobol_candidates(n_points, self.moving.size, rng)
        out[:, self.moving] = self.lower + unit * (self.upper - self.lower)
        if len(self.moving) < int(space.active_mask(self.center[None, :])[0].sum()):
            switches = jump_candidates(space, self.center[None, :], max(1, n_points // 2), rng)
            # Keep the jumps that moved a dimension the box does not.
            keep = (switches[:, self.moving] == self.center[self.moving]).all(axis=1) & (
                switches != self.center
            ).any(axis=1)
            out = np.vstack([out, switches[keep]])
        return space.snap(out)


class _BoxModel:
    """A Gaussian process fitted in a region's coordinates; predicts at encoded points."""

    smooth = True

    def __init__(self, region: _Region, seed: int):
        self.region = region
        self.gp = GaussianProcessSurrogate(
            n_restarts=0, random_state=seed, length_scale_bounds=_LENGTH_SCALE_BOUNDS
        )

    def fit(self, X: np.ndarray, z: np.ndarray) -> _BoxModel:
        self.gp.fit(self.region.to_local(X), z)
        return self

    def predict_dist(self, X: np.ndarray) -> Prediction:
        return self.gp.predict_dist(self.region.to_local(X))


def _region(space: Space, X: np.ndarray, incumbent: int, failures: int) -> _Region | None:
    center = X[incumbent]
    moving = _moving_columns(space, center)
    if moving.size == 0:
        return None
    distance = np.sqrt(((X - center) ** 2).sum(axis=1))
    order = np.argsort(distance, kind="stable")
    nearest = order[1 : 1 + max(4, 2 * moving.size)]
    offsets = np.abs(X[np.ix_(nearest, moving)] - center[moving])
    reach = offsets.max(axis=0) if len(nearest) else np.zeros(moving.size)
    if not (reach > 0).any():
        return None
    # A column in which every neighbour shares the incumbent's value gets the
    # widest reach of the others: the data say nothing about it, not that it is settled.
    reach = np.where(reach > 0, reach, reach.max())
    halvings = failures // max(4, moving.size)
    reach = reach * 0.5**halvings
    inside = np.flatnonzero((np.abs(X[:, moving] - center[moving]) <= 2.0 * reach).all(axis=1))
    train = np.union1d(inside, order[: 10 + 2 * X.shape[1]])
    most = min(_MAX_TRAINING_ROWS, math.isqrt(rows_within_memory(X.shape[1])))
    if len(train) > most:
        rank = np.empty(len(order), dtype=int)
        rank[order] = np.arange(len(order))
        train = train[np.argsort(rank[train], kind="stable")[:most]]
    return _Region(center, moving, reach, train, halvings)


def _moving_columns(space: Space, center: np.ndarray) -> np.ndarray:
    active = space.active_mask(center[None, :])[0]
    columns = [
        space.columns_of(j).start for j, d in enumerate(space.dimensions) if active[j] and _spans(d)
    ]
    return np.array(columns, dtype=int)


def _spans(dimension: Dimension) -> bool:
    if not dimension.is_numeric:
        return False
    if dimension.is_discrete:
        return dimension.cardinality >= _MIN_INTEGER_LEVELS
    real = cast("Real", dimension)  # numeric and not discrete
    return not math.isclose(real.low, real.high)
