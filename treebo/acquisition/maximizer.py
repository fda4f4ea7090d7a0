"""The acquisition maximizer: candidate pool -> scores -> flat fallback -> argmax -> polish.

Given a fitted surrogate, :class:`AcquisitionMaximizer` builds the candidate
pool of one ``ask`` (Sobol points plus local neighbours of the best points,
or the whole grid of a small discrete space), scores it by the acquisition
on the surrogate's mean and variance (plus the exploration variance of
:func:`distance_variance`), and returns the best candidate, polished by
L-BFGS-B for smooth surrogates. When every candidate scores the same, or none
is left, it falls back to a uniformly random unseen point.

It holds settings only: the history (which points are taken), the random
stream and the fitted model are passed in by the optimizer, so the same
maximizer serves every ``ask``.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.optimize import minimize as _scipy_minimize

from .._checks import check_auto_or, check_choice, check_int, check_real
from ..space import Real, Space, SpaceExhausted
from .candidates import jump_candidates, local_candidates, local_centers, sobol_candidates
from .functions import acquisition_score, check_acquisition

__all__ = ["AcquisitionMaximizer", "distance_variance", "step_kind"]

logger = logging.getLogger("treebo")

#: Values of ``acq_optimizer``.
ACQ_OPTIMIZERS = ("auto", "sampling", "lbfgs")

#: ``unseen(X)`` keeps the rows of ``X`` that are distinct and neither evaluated nor pending.
UnseenFilter = Callable[[np.ndarray], np.ndarray]


class AcquisitionMaximizer:
    """Choose the next point: the candidate with the best acquisition score.

    :class:`~treebo.optimizer.Optimizer` (and :func:`~treebo.minimize`) take
    these settings and pass them here.

    Parameters
    ----------
    acquisition : {"ei", "pi", "lcb"}, default "ei"
        Expected improvement (ranked by log-EI), probability of improvement,
        or lower confidence bound.
    acquisition_params : dict, optional
        ``{"xi": 0.0}`` for EI and PI, ``{"kappa": 1.96}`` for LCB.
    n_candidates : int, default 50_000
        Sobol candidates scored per iteration. Discrete spaces with at most
        this many points are scored exhaustively instead.
    local_search : bool, default True
        Add neighbours of the best evaluated points to the candidates:
        ``n_local_candidates`` Gaussian steps
        (:func:`~treebo.acquisition.local_candidates`) and
        ``n_jump_candidates`` one-dimension jumps
        (:func:`~treebo.acquisition.jump_candidates`), spread over up to
        ``n_local_centers`` centres: the best points that are at least
        ``local_center_spacing`` apart (:func:`~treebo.acquisition.local_centers`).
    n_local_candidates : int, default 5_000
    n_jump_candidates : int, default 2_000
    n_local_centers : int, default 5
    local_center_spacing : float, default 0.1
        Minimum largest-coordinate difference between two local-search
        centres, in encoded units (the unit cube); 0 takes the
        ``n_local_centers`` best points, however close together.
    distance_variance : "auto" or float, default "auto"
        Weight of an exploration variance added to the surrogate's predictive
        variance before the acquisition: the weight times
        :func:`~treebo.acquisition.distance_variance`, which grows from 0 at
        an evaluated or pending point to 1 (the standardized targets'
        variance) a few data spacings away. A tree ensemble's own variance
        does not grow away from the data, so without it the acquisition
        keeps refining the first basin found (see docs/design.md,
        "Exploration"). ``"auto"`` is 1.0 for every surrogate but smooth ones
        (the GP, whose posterior variance already grows away from the data),
        where it is 0; 0 turns it off.
    explore_every : "auto" or int, default "auto"
        Every ``explore_every``-th model-based proposal is an exploration
        step: the surrogate is fitted on plainly standardized targets, and its
        prediction at a candidate is blended with the targets' prior (mean 0,
        variance 1) by the weight
        ``distance_variance(candidates, X, length=explore_length * sqrt(C))``
        (``C`` encoded columns), as a stationary GP's posterior reverts to its
        prior away from the data. Far regions then count as "average and
        unknown" instead of "like the nearest evaluated point", which is what
        lets the search leave a basin whose surroundings look worse. The
        other proposals refine on the log-scaled targets. ``"auto"`` is 8 for
        every surrogate but smooth ones (0 there); 0 turns exploration steps
        off.
    explore_length : float, default 0.1
        Length scale of the exploration steps' prior, in encoded units per
        square root of the number of encoded columns (a length scale that
        grows as ``sqrt(D)``, as GP length-scale priors do in many dimensions).
    jump_every : "auto" or int, default "auto"
        Every ``jump_every``-th model-based proposal is a jump step: the
        candidates are ``n_jump_candidates`` copies of the incumbent (the best
        evaluated point), each with one dimension redrawn over its whole
        range, of which only those that moved at least ``jump_distance`` are
        kept (:meth:`jump_pool`); they are scored as usual. This is the
        perturbation of an iterated local search: it leaves a basin in one
        coordinate, which a refinement step, drawn to the incumbent's
        neighbourhood by the acquisition, does not (see docs/design.md,
        "Exploration"). ``"auto"`` is 4 for every surrogate but smooth ones
        (0 there); 0 turns jump steps off. With the defaults the cycle of
        eight proposals is refine, jump, refine, refine, refine, jump,
        refine, explore (:func:`step_kind`).
    jump_distance : float, default 0.25
        Smallest move of a jump step's candidates in the redrawn dimension, in
        encoded units (the largest coordinate difference; a binary flip or a
        category switch moves 1).
    acq_optimizer : {"auto", "sampling", "lbfgs"}, default "auto"
        ``"sampling"`` takes the best candidate; ``"lbfgs"`` also polishes the
        best candidates' real-valued coordinates with L-BFGS-B (useful only
        for smooth surrogates); ``"auto"`` uses ``"lbfgs"`` for the GP and
        ``"sampling"`` for tree models.
    """

    def __init__(self, acquisition: str = "ei", acquisition_params: dict | None = None, *,
                 n_candidates: int = 50_000, local_search: bool = True,
                 n_local_candidates: int = 5_000, n_jump_candidates: int = 2_000,
                 n_local_centers: int = 5, local_center_spacing: float = 0.1,
                 distance_variance: str | float = "auto", explore_every: str | int = "auto",
                 explore_length: float = 0.1, jump_every: str | int = "auto",
                 jump_distance: float = 0.25, acq_optimizer: str = "auto"):
        self.acquisition = acquisition
        self.acquisition_params = check_acquisition(acquisition, acquisition_params)
        self.n_candidates = check_int(n_candidates, "n_candidates")
        self.local_search = bool(local_search)
        self.n_local_candidates = check_int(n_local_candidates, "n_local_candidates", 0)
        self.n_jump_candidates = check_int(n_jump_candidates, "n_jump_candidates", 0)
        self.n_local_centers = check_int(n_local_centers, "n_local_centers")
        self.local_center_spacing = check_real(local_center_spacing, "local_center_spacing")
        self.distance_variance = check_auto_or(distance_variance, "distance_variance",
                                               check_real, "a finite number >= 0")
        self.explore_every = check_auto_or(explore_every, "explore_every",
                                           lambda v, name: check_int(v, name, 0),
                                           "an integer >= 0")
        self.explore_length = check_real(explore_length, "explore_length", strict=True)
        self.jump_every = check_auto_or(jump_every, "jump_every",
                                        lambda v, name: check_int(v, name, 0),
                                        "an integer >= 0")
        self.jump_distance = check_real(jump_distance, "jump_distance")
        self.acq_optimizer = check_choice(acq_optimizer, "acq_optimizer", ACQ_OPTIMIZERS)

    def settings(self) -> dict:
        """The settings as given (``"auto"`` unresolved), for storing with a study."""
        return {"acquisition": self.acquisition,
                "acquisition_params": self.acquisition_params,
                "n_candidates": self.n_candidates, "local_search": self.local_search,
                "n_local_candidates": self.n_local_candidates,
                "n_local_centers": self.n_local_centers,
                "n_jump_candidates": self.n_jump_candidates,
                "local_center_spacing": self.local_center_spacing,
                "distance_variance": self.distance_variance,
                "explore_every": self.explore_every, "explore_length": self.explore_length,
                "jump_every": self.jump_every, "jump_distance": self.jump_distance,
                "acq_optimizer": self.acq_optimizer}

    def exploration(self, smooth: bool) -> tuple[float, int, int]:
        """``distance_variance``, ``explore_every`` and ``jump_every`` with ``"auto"`` resolved.

        All are off for smooth surrogates (the GP), whose posterior already
        grows uncertain and reverts to its prior away from the data, and
        whose acquisition is polished by L-BFGS-B rather than sampled.
        """
        weight, every, jump = self.distance_variance, self.explore_every, self.jump_every
        if weight == "auto":
            weight = 0.0 if smooth else 1.0
        if every == "auto":
            every = 0 if smooth else 8
        if jump == "auto":
            jump = 0 if smooth else 4
        return float(weight), int(every), int(jump)

    def step_kind(self, n_model: int, smooth: bool) -> str:
        """What the proposal after ``n_model`` model-based ones is (:func:`step_kind`)."""
        _, every, jump = self.exploration(smooth)
        return step_kind(n_model, every, jump)

    def jump_pool(self, space: Space, incumbent: np.ndarray,
                  rng: np.random.Generator) -> np.ndarray:
        """The candidates of a jump step: far one-dimension jumps from the incumbent.

        Parameters
        ----------
        space : Space
        incumbent : ndarray of shape (n_columns,)
            The encoded best evaluated point.
        rng : numpy.random.Generator

        Returns
        -------
        ndarray of shape (n_jumps, n_columns)
            At most ``n_jump_candidates`` rows (none when it is 0), each
            differing from ``incumbent`` by at least ``jump_distance`` in some
            column. Rows may repeat or be taken already.
        """
        jumps = jump_candidates(space, incumbent[None, :], self.n_jump_candidates, rng)
        return jumps[np.abs(jumps - incumbent).max(axis=1) >= self.jump_distance]

    def candidates(self, space: Space, X_complete: np.ndarray, z_complete: np.ndarray,
                   rng: np.random.Generator) -> np.ndarray:
        """The candidate pool of one ``ask``.

        Parameters
        ----------
        space : Space
        X_complete : ndarray of shape (n_complete, n_columns)
            Encoded points with a complete evaluation.
        z_complete : ndarray of shape (n_complete,)
            Their targets; the lowest ones become local-search centres.
        rng : numpy.random.Generator

        Returns
        -------
        ndarray of shape (n_pool, n_columns)
            Every point of a discrete space with at most ``n_candidates``
            points; otherwise snapped Sobol points, then local and jump
            neighbours of the centres. Rows may repeat or be taken already.
        """
        if space.cardinality <= self.n_candidates:
            return space.grid()
        parts = [space.snap(sobol_candidates(self.n_candidates, space.n_columns, rng))]
        if self.local_search:
            centers = X_complete[local_centers(X_complete, z_complete, self.n_local_centers,
                                               self.local_center_spacing)]
            if self.n_local_candidates > 0:
                per_center = max(1, self.n_local_candidates // len(centers))
                parts.append(local_candidates(space, centers, per_center, rng))
            if self.n_jump_candidates > 0:
                per_center = max(1, self.n_jump_candidates // len(centers))
                parts.append(jump_candidates(space, centers, per_center, rng))
        return np.vstack(parts)

    def score(self, model: Any, candidates: np.ndarray, X: np.ndarray, best: float,
              explore: bool = False) -> np.ndarray:
        """Acquisition scores of ``candidates`` (higher is better; NaN becomes -inf).

        Parameters
        ----------
        model : Surrogate
            Fitted on the standardized targets.
        candidates : ndarray of shape (n_candidates, n_columns)
        X : ndarray of shape (n_points, n_columns)
            The encoded points the model was fitted on (told and pending);
            the exploration variance grows with the distance to them.
        best : float
            The incumbent's target.
        explore : bool, default False
            An exploration step: the prediction also reverts to the targets'
            prior (mean 0, variance 1) with the distance, at ``explore_length``.

        Returns
        -------
        ndarray of shape (n_candidates,)
        """
        prediction = model.predict_dist(candidates)
        mean, variance = prediction.mean, prediction.variance
        if explore:
            length = self.explore_length * math.sqrt(X.shape[1])
            far = distance_variance(candidates, X, length=length)
            mean = (1.0 - far) * mean
            variance = variance + far
        else:
            weight = self.exploration(model.smooth)[0]
            if weight > 0:
                variance = variance + weight * distance_variance(candidates, X)
        scores = acquisition_score(self.acquisition, mean, np.sqrt(variance),
                                   best, **self.acquisition_params)
        return np.where(np.isnan(scores), -np.inf, scores)

    def maximize(self, model: Any, pool: np.ndarray, X: np.ndarray, best: float, *,
                 explore: bool, space: Space, unseen: UnseenFilter,
                 rng: np.random.Generator) -> tuple[np.ndarray, str]:
        """The best unseen candidate, or a random unseen point when the scores cannot tell.

        Parameters
        ----------
        model : Surrogate
            Fitted on ``X`` and the standardized targets.
        pool : ndarray of shape (n_pool, n_columns)
            Unseen candidates.
        X : ndarray of shape (n_points, n_columns)
            The encoded points the model was fitted on.
        best : float
            The incumbent's target.
        explore : bool
            Whether this is an exploration step (see :meth:`score`).
        space : Space
        unseen : callable
            Keeps the rows of an array that are neither evaluated nor pending.
        rng : numpy.random.Generator
            Breaks ties and draws the random fallback.

        Returns
        -------
        point : ndarray of shape (n_columns,)
            Encoded; a row of ``pool`` unless polished or random.
        origin : {"model", "random"}

        Raises
        ------
        SpaceExhausted
            If the random fallback finds no unseen point.
        """
        if len(pool) == 0:
            logger.info("every candidate has been evaluated or is pending; proposing a random "
                        "unseen point")
            return self.random_point(space, unseen, rng), "random"
        scores = self.score(model, pool, X, best, explore)
        top = scores.max()
        if top == -np.inf or (len(scores) > 1 and top == scores.min()):
            logger.info("the acquisition is flat (%s = %g on all %d candidates); proposing a "
                        "random unseen point", self.acquisition, top, len(scores))
            return self.random_point(space, unseen, rng), "random"
        ties = np.flatnonzero(scores == top)
        chosen = pool[int(ties[rng.integers(len(ties))]) if len(ties) > 1 else int(ties[0])]
        if self.uses_lbfgs(model, space):
            chosen = self.polish(model, space, pool, scores, best, X, unseen, explore)
        return chosen, "model"

    def random_point(self, space: Space, unseen: UnseenFilter,
                     rng: np.random.Generator) -> np.ndarray:
        """A uniformly random unseen point (encoded); SpaceExhausted when there is none."""
        if space.cardinality <= self.n_candidates:
            pool = unseen(space.grid())
        else:
            pool = unseen(space.sample_encoded(1024, rng))
        if len(pool) == 0:
            raise SpaceExhausted(f"all {int(space.cardinality)} points of the search space have "
                                 "been evaluated or proposed")
        return pool[rng.integers(len(pool))]

    def uses_lbfgs(self, model: Any, space: Space) -> bool:
        """Whether :meth:`maximize` polishes with L-BFGS-B (``acq_optimizer``)."""
        has_real = any(isinstance(d, Real) for d in space.dimensions)
        if self.acq_optimizer == "sampling" or not has_real:
            return False
        return self.acq_optimizer == "lbfgs" or model.smooth

    def polish(self, model: Any, space: Space, candidates: np.ndarray, scores: np.ndarray,
               best: float, X: np.ndarray, unseen: UnseenFilter, explore: bool = False,
               n_starts: int = 5) -> np.ndarray:
        """Refine the best candidates' real coordinates with L-BFGS-B on the score.

        Parameters
        ----------
        model, best, X, explore
            As for :meth:`score`.
        space : Space
        candidates : ndarray of shape (n_candidates, n_columns)
        scores : ndarray of shape (n_candidates,)
            Their scores; the ``n_starts`` best are the starting points.
        unseen : callable
            As for :meth:`maximize`: a polished point must be unseen.
        n_starts : int, default 5

        Returns
        -------
        ndarray of shape (n_columns,)
            The best of the polished points and the best candidate.
        """
        real_dims = [j for j, d in enumerate(space.dimensions) if isinstance(d, Real)]
        starts = candidates[np.argsort(-scores, kind="stable")[:n_starts]]
        # Only a start's active real columns move: an inactive column holds a
        # fixed value outside [0, 1], and moving it would leave the feasible set.
        active = space.active_mask(starts)[:, real_dims]
        step = 1e-6

        def score(points: np.ndarray) -> np.ndarray:
            return self.score(model, points, X, best, explore)

        def objective(u: np.ndarray, base: np.ndarray,
                      real_cols: np.ndarray) -> tuple[float, np.ndarray]:
            # One batched prediction gives the value and a forward-difference gradient.
            points = np.repeat(base[None, :], len(u) + 1, axis=0)
            points[:, real_cols] = u
            direction = np.where(u + step <= 1.0, step, -step)
            points[np.arange(1, len(u) + 1), real_cols] = u + direction
            s = score(points)
            s = np.where(np.isfinite(s), s, -1e300)
            return -s[0], -(s[1:] - s[0]) / direction

        best_x, best_score = starts[0], score(starts[:1])[0]
        for base, on in zip(starts, active):
            real_cols = np.array([space.columns_of(j).start for j, o in zip(real_dims, on) if o],
                                 dtype=int)
            if real_cols.size == 0:
                continue
            result = _scipy_minimize(objective, base[real_cols], args=(base, real_cols), jac=True,
                                     method="L-BFGS-B", bounds=[(0.0, 1.0)] * len(real_cols),
                                     options={"maxiter": 50})
            x = base.copy()
            x[real_cols] = np.clip(result.x, 0.0, 1.0)
            x = space.snap(x[None, :])[0]
            value = score(x[None, :])[0]
            if value > best_score and len(unseen(x[None, :])):
                best_x, best_score = x, value
        return best_x


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
    distance = _nearest_distance(candidates, X, tree)
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




def _is_zero_one(A: np.ndarray) -> bool:
    return bool(((A == 0.0) | (A == 1.0)).all())


def _nearest_distance(candidates: np.ndarray, X: np.ndarray, tree: Any) -> np.ndarray:
    """Euclidean distance from each candidate to its nearest row of ``X`` (``tree`` indexes ``X``).

    A k-d tree prunes little in many dimensions: in the 24 columns of a
    binary space its query takes about five times as long as comparing every
    candidate with every row. On 0/1 rows (binary dimensions, one-hot
    categories) the squared distances ``|c|^2 + |x|^2 - 2 c.x`` are small
    integers, exact in float32 whatever the summation order, so the
    matrix product gives the k-d tree's distances bit for bit.
    """
    if not (_is_zero_one(candidates) and _is_zero_one(X)):
        return tree.query(candidates, k=1)[0]
    C32, X32 = candidates.astype(np.float32), X.astype(np.float32)
    x_norms = (X32 * X32).sum(axis=1)
    squared = np.empty(len(C32), dtype=np.float32)
    rows = max(1, 2**22 // len(X32))  # about 16 MB of distances at a time
    for start in range(0, len(C32), rows):
        chunk = C32[start:start + rows]
        block = (chunk * chunk).sum(axis=1)[:, None] + x_norms[None, :] - 2.0 * (chunk @ X32.T)
        squared[start:start + rows] = block.min(axis=1)
    return np.sqrt(squared.astype(np.float64))


def step_kind(n_model: int, explore_every: int, jump_every: int) -> str:
    """The kind of the proposal that follows ``n_model`` model-based ones.

    ``"explore"`` when ``n_model % explore_every == explore_every - 1`` (the
    ``explore_every``-th, ``2 * explore_every``-th, ... proposal); ``"jump"``
    when ``n_model % jump_every == (jump_every // 2 - 1) % jump_every`` (the
    2nd, 6th, 10th, ... proposal for ``jump_every=4``; every proposal for 1),
    which takes precedence if both fall on one proposal; ``"refine"``
    otherwise. 0 turns a kind off. With ``explore_every=8`` and
    ``jump_every=4`` (the defaults for tree surrogates) the cycle is refine,
    jump, refine, refine, refine, jump, refine, explore.

    Parameters
    ----------
    n_model : int
        Model-based proposals made so far.
    explore_every, jump_every : int
        Resolved ``explore_every`` and ``jump_every`` (no ``"auto"``).

    Returns
    -------
    {"refine", "explore", "jump"}
    """
    if jump_every > 0 and n_model % jump_every == (jump_every // 2 - 1) % jump_every:
        return "jump"
    if explore_every > 0 and n_model % explore_every == explore_every - 1:
        return "explore"
    return "refine"
