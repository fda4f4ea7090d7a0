"""The acquisition maximizer: scores -> flat fallback -> argmax -> polish.

:class:`AcquisitionMaximizer` turns a step's adjusted prediction into
acquisition scores and returns the best candidate, polished by L-BFGS-B for
smooth models. When every candidate scores the same, or none is left, it
falls back to the point the caller's ``fallback`` draws (a uniformly random
unseen point). Which candidates, which model and which prediction are the
step's business (:mod:`treebo.proposal`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np
from scipy.optimize import minimize as _scipy_minimize

from .._checks import check_choice
from ..space import Space
from ..surrogates import Prediction
from ..surrogates.base import PredictiveModel
from .candidates import rows_within_memory
from .functions import acquisition_score, check_acquisition

__all__ = ["AcquisitionMaximizer"]

logger = logging.getLogger("treebo")

#: Values of ``acq_optimizer``.
ACQ_OPTIMIZERS = ("auto", "sampling", "lbfgs")

#: ``unseen(X)`` keeps the rows of ``X`` that are distinct and neither evaluated nor pending.
UnseenFilter = Callable[[np.ndarray], np.ndarray]

#: ``score(points)`` gives the acquisition scores of an array of encoded points.
ScoreFunction = Callable[[np.ndarray], np.ndarray]

# What a caller's fallback gives (an encoded point, or None to propose nothing).
_Fallback = TypeVar("_Fallback")


class AcquisitionMaximizer:
    """Choose the next point: the candidate with the best acquisition score.

    Parameters
    ----------
    acquisition : {"ei", "pi", "lcb"}, default "ei"
        Expected improvement (ranked by log-EI), probability of improvement,
        or lower confidence bound.
    acquisition_params : dict, optional
        ``{"xi": 0.0}`` for EI and PI, ``{"kappa": 1.96}`` for LCB.
    acq_optimizer : {"auto", "sampling", "lbfgs"}, default "auto"
        ``"sampling"`` takes the best candidate; ``"lbfgs"`` also polishes the
        best candidates' real-valued coordinates with L-BFGS-B (useful only
        for smooth models); ``"auto"`` uses ``"lbfgs"`` for smooth models (the
        GP, a local step's model) and ``"sampling"`` for tree models.
    """

    def __init__(
        self,
        acquisition: str = "ei",
        acquisition_params: dict | None = None,
        *,
        acq_optimizer: str = "auto",
    ):
        self.acquisition = acquisition
        self.acquisition_params = check_acquisition(acquisition, acquisition_params)
        self.acq_optimizer = check_choice(acq_optimizer, "acq_optimizer", ACQ_OPTIMIZERS)

    def get_params(self) -> dict[str, Any]:
        """The settings, as given (``acquisition_params`` with its defaults filled in)."""
        return {
            "acquisition": self.acquisition,
            "acquisition_params": self.acquisition_params,
            "acq_optimizer": self.acq_optimizer,
        }

    def score(self, prediction: Prediction, best: float) -> np.ndarray:
        """Acquisition scores of a prediction (higher is better; NaN becomes -inf).

        Parameters
        ----------
        prediction : Prediction
            Of ``n_points`` candidates, on the targets' scale.
        best : float
            The incumbent's target.

        Returns
        -------
        ndarray of shape (n_points,)
        """
        scores = acquisition_score(
            self.acquisition,
            prediction.mean,
            np.sqrt(prediction.variance),
            best,
            **self.acquisition_params,
        )
        return np.where(np.isnan(scores), -np.inf, scores)

    def maximize(
        self,
        score: ScoreFunction,
        pool: np.ndarray,
        *,
        space: Space,
        unseen: UnseenFilter,
        rng: np.random.Generator,
        fallback: Callable[[], _Fallback],
        polish: bool = False,
        bounds: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> tuple[np.ndarray | _Fallback, str]:
        """The best candidate, or ``fallback()`` when the scores cannot tell.

        Parameters
        ----------
        score : callable
            ``score(points)`` -> acquisition scores, shape (n_points,).
        pool : ndarray of shape (n_pool, n_columns)
            Unseen candidates.
        space : Space
        unseen : callable
            Keeps the rows of an array that are neither evaluated nor pending.
        rng : numpy.random.Generator
            Breaks ties.
        fallback : callable
            ``fallback()`` -> an unseen encoded point, for an empty pool or
            flat scores (it may raise :class:`~treebo.space.SpaceExhausted`).
        polish : bool, default False
            Refine the best candidates' real coordinates with L-BFGS-B
            (:meth:`polish`; see :meth:`uses_lbfgs`).
        bounds : (ndarray, ndarray), optional
            Lower and upper bounds of the polish per encoded column (default
            the unit cube).

        Returns
        -------
        point : ndarray of shape (n_columns,)
            Encoded; a row of ``pool`` unless polished, or what ``fallback``
            returned.
        origin : {"model", "random"}
        """
        if len(pool) == 0:
            logger.info(
                "every candidate has been evaluated or is pending; proposing a random unseen point"
            )
            return fallback(), "random"
        scores = score(pool)
        top = scores.max()
        if top == -np.inf or (len(scores) > 1 and top == scores.min()):
            logger.info(
                "the acquisition is flat (%s = %g on all %d candidates); proposing a "
                "random unseen point",
                self.acquisition,
                top,
                len(scores),
            )
            return fallback(), "random"
        ties = np.flatnonzero(scores == top)
        chosen = pool[int(ties[rng.integers(len(ties))]) if len(ties) > 1 else int(ties[0])]
        if polish:
            chosen = self.polish(score, space, pool, scores, unseen, bounds)
        return chosen, "model"

    def uses_lbfgs(self, model: PredictiveModel, space: Space) -> bool:
        """Whether to polish with L-BFGS-B (``acq_optimizer``) for this model and space.

        Parameters
        ----------
        model : PredictiveModel
            The fitted model whose prediction is scored; with
            ``acq_optimizer="auto"``, polishing is on when ``model.smooth``.
        space : Space
            Without a real dimension there is nothing to polish.

        Returns
        -------
        bool
        """
        has_real = any(not d.is_discrete for d in space.dimensions)
        if self.acq_optimizer == "sampling" or not has_real:
            return False
        return self.acq_optimizer == "lbfgs" or model.smooth

    def polish(
        self,
        score: ScoreFunction,
        space: Space,
        candidates: np.ndarray,
        scores: np.ndarray,
        unseen: UnseenFilter,
        bounds: tuple[np.ndarray, np.ndarray] | None = None,
        n_starts: int = 5,
    ) -> np.ndarray:
        """Refine the best candidates' real coordinates with L-BFGS-B on the score.

        Parameters
        ----------
        score : callable
            As for :meth:`maximize`.
        space : Space
        candidates : ndarray of shape (n_candidates, n_columns)
        scores : ndarray of shape (n_candidates,)
            Their scores; the ``n_starts`` best are the starting points.
        unseen : callable
            As for :meth:`maximize`: a polished point must be unseen.
        bounds : (ndarray, ndarray), optional
            Per encoded column; default the unit cube.
        n_starts : int, default 5

        Returns
        -------
        ndarray of shape (n_columns,)
            The best of the polished points and the best candidate.

        Notes
        -----
        A gradient is the score of a point and of one copy of it per real
        column, each moved a little in its column: on a very wide space they
        are scored in blocks of at most
        :func:`~treebo.acquisition.candidates.rows_within_memory` rows.
        """
        lower, upper = (
            bounds if bounds is not None else (np.zeros(space.n_columns), np.ones(space.n_columns))
        )
        real_dims = [j for j, d in enumerate(space.dimensions) if not d.is_discrete]
        starts = candidates[np.argsort(-scores, kind="stable")[:n_starts]]
        # Only a start's active real columns move: an inactive column holds a
        # fixed value outside [0, 1], and moving it would leave the feasible set.
        active = space.active_mask(starts)[:, real_dims]
        step = 1e-6

        # One point per real column plus one: on a very wide space they are
        # scored a memory-bounded block of rows at a time.
        rows = rows_within_memory(space.n_columns)

        def objective(
            u: np.ndarray, base: np.ndarray, real_cols: np.ndarray, high: np.ndarray
        ) -> tuple[float, np.ndarray]:
            # One batched prediction gives the value and a forward-difference gradient.
            direction = np.where(u + step <= high, step, -step)
            moved = u + direction
            s = np.empty(len(u) + 1)
            for start in range(0, len(u) + 1, rows):
                stop = min(start + rows, len(u) + 1)
                points = np.repeat(base[None, :], stop - start, axis=0)
                points[:, real_cols] = u
                # Row i > 0 moves column i - 1.
                i = np.arange(max(start, 1), stop)
                points[i - start, real_cols[i - 1]] = moved[i - 1]
                s[start:stop] = score(points)
            s = np.where(np.isfinite(s), s, -1e300)
            return -s[0], -(s[1:] - s[0]) / direction

        best_x, best_score = starts[0], score(starts[:1])[0]
        for base, on in zip(starts, active):
            real_cols = np.array(
                [space.columns_of(j).start for j, o in zip(real_dims, on) if o], dtype=int
            )
            if real_cols.size == 0:
                continue
            low, high = lower[real_cols], upper[real_cols]
            result = _scipy_minimize(
                objective,
                np.clip(base[real_cols], low, high),
                args=(base, real_cols, high),
                jac=True,
                method="L-BFGS-B",
                bounds=list(zip(low, high)),
                options={"maxiter": 50},
            )
            x = base.copy()
            x[real_cols] = np.clip(result.x, low, high)
            x = space.snap(x[None, :])[0]
            value = score(x[None, :])[0]
            if value > best_score and len(unseen(x[None, :])):
                best_x, best_score = x, value
        return best_x
