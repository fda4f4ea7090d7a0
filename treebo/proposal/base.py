"""What every step kind shares: the data of one proposal and the step protocol.

A step kind is one object that turns the evaluations so far into one
proposal. A :class:`ModelStep` does it in four parts, each a method a kind
may override: the targets it fits (:meth:`~ModelStep.target_kind`), the
model it fits on them (:meth:`~ModelStep.fit`), the candidates it scores
(:meth:`~ModelStep.candidates`) and how it changes the model's prediction
before the acquisition scores it (:meth:`~ModelStep.adjust`, which returns a
:class:`~treebo.surrogates.Prediction`). The
:class:`~treebo.acquisition.AcquisitionMaximizer` then takes the argmax
(with its random fallback and, for smooth models, L-BFGS-B polishing).
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..acquisition import AcquisitionMaximizer
from ..acquisition.maximizer import UnseenFilter
from ..space import Space
from ..surrogates import Prediction, Surrogate, fitted_clone
from ..surrogates.base import PredictiveModel
from ..targets import transform_targets
from .outcomes import add_log_feasibility

__all__ = ["StepData", "Proposal", "Step", "ModelStep"]


@dataclass
class StepData:
    """Everything one proposal is made from.

    Made by :class:`~treebo.proposal.ProposalPipeline` for each proposal of
    an ``ask`` and read by the steps.

    Parameters
    ----------
    space : Space
    X : ndarray of shape (n_points, n_columns)
        Encoded points: the told ones first, then the pending ones.
    values : ndarray of shape (n_points,)
        Their values in objective units (lower is better): failed evaluations
        at the failure value, pending points at the constant lie.
    complete : ndarray of bool, shape (n_told,)
        Which told points have a complete evaluation.
    pool : ndarray of shape (n_pool, n_columns)
        The unseen candidates an ``ask`` shares between its proposals.
    surrogate : Surrogate
        The unfitted surrogate (cloned before each fit).
    seed : int or None
        The surrogate's seed for this ``ask``.
    target_kind : {"log", "standardize"}
        The surrogate's target transform (``y_transform`` resolved).
    unseen : callable
        ``unseen(X)`` keeps the rows of ``X`` that are distinct and neither
        evaluated nor pending.
    rng : numpy.random.Generator
        The acquisition stream: candidates, ties, random fallbacks.
    fallback : callable
        ``fallback()`` -> a uniformly random unseen encoded point, for when
        the acquisition cannot tell the candidates apart.
    log_feasibility : callable or None, default None
        ``log_feasibility(points)`` -> log-probability that every constraint
        holds at each point (:class:`~treebo.proposal.outcomes.FeasibilityModel`),
        added to the log-acquisition; None without constraints.
    objective_score : callable or None, default None
        ``objective_score(points)`` -> log-scores that replace the
        acquisition of the step's model (the expected hypervolume
        improvement of several objectives); None to score by the model.
    """

    space: Space
    X: np.ndarray
    values: np.ndarray
    complete: np.ndarray
    pool: np.ndarray
    surrogate: Surrogate
    seed: int | None
    target_kind: str
    unseen: UnseenFilter
    rng: np.random.Generator
    fallback: Callable[[], np.ndarray]
    log_feasibility: Callable[[np.ndarray], np.ndarray] | None = None
    objective_score: Callable[[np.ndarray], np.ndarray] | None = None

    def score(
        self,
        maximizer: AcquisitionMaximizer,
        prediction: Prediction,
        best: float,
        points: np.ndarray,
    ) -> np.ndarray:
        """Acquisition scores of ``points``, weighted by their probability of feasibility.

        Parameters
        ----------
        maximizer : AcquisitionMaximizer
        prediction : Prediction
            Of the ``n_points`` points, on the scale of the targets.
        best : float
            The incumbent's target.
        points : ndarray of shape (n_points, n_columns)
            Encoded.

        Returns
        -------
        ndarray of shape (n_points,)
            Higher is better.
        """
        if self.objective_score is not None:
            scores = self.objective_score(points)
        else:
            scores = maximizer.score(prediction, best)
        if self.log_feasibility is not None:
            scores = add_log_feasibility(scores, points, self.log_feasibility)
        return scores

    def incumbent(self, z: np.ndarray) -> int:
        """Row of the best complete point under targets ``z`` (the first of ties).

        Parameters
        ----------
        z : ndarray of shape (n_points,)
            Targets of the rows of ``X`` (lower is better), e.g. ``values``
            transformed by :func:`~treebo.targets.transform_targets`.

        Returns
        -------
        int
            A row of ``X`` whose evaluation is complete.
        """
        told = np.flatnonzero(self.complete)
        return int(told[np.argmin(z[told])])


@dataclass
class Proposal:
    """One proposed point and how it came about.

    Returned by :meth:`Step.propose`.

    Parameters
    ----------
    point : ndarray of shape (n_columns,)
        Encoded.
    origin : {"model", "random"}
        Chosen by the acquisition, or the maximizer's random fallback.
    fit_time, acq_time : float, default 0.0
        Seconds spent fitting the model and choosing the point.
    """

    point: np.ndarray
    origin: str
    fit_time: float = 0.0
    acq_time: float = 0.0


class Step:
    """One kind of proposal. Subclasses set ``name`` and implement :meth:`propose`."""

    name: str = ""

    def propose(self, data: StepData, maximizer: AcquisitionMaximizer) -> Proposal | None:
        """The point this step proposes, or None when it has nothing to propose here.

        Parameters
        ----------
        data : StepData
        maximizer : AcquisitionMaximizer

        Returns
        -------
        Proposal or None
            None defers to a refinement step.
        """
        raise NotImplementedError

    def get_params(self) -> dict[str, Any]:
        """The step's settings, as given to its constructor."""
        return {name: getattr(self, name) for name in self._param_names()}

    @classmethod
    def _param_names(cls) -> list[str]:
        return [p for p in inspect.signature(cls.__init__).parameters if p != "self"]

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({params})"


class ModelStep(Step):
    """A step that fits a model, scores candidates by the acquisition and takes the best."""

    def target_kind(self, data: StepData) -> str:
        """The target transform of this step's model (default: the surrogate's).

        Parameters
        ----------
        data : StepData

        Returns
        -------
        {"log", "standardize"}
            The ``kind`` of :func:`~treebo.targets.transform_targets` that
            turns ``data.values`` into the targets of :meth:`fit`.
        """
        return data.target_kind

    def fit(self, data: StepData, z: np.ndarray) -> PredictiveModel:
        """The model this step scores with (default: the surrogate, seeded, on all points).

        Parameters
        ----------
        data : StepData
        z : ndarray of shape (n_points,)
            Targets of ``data.X`` (lower is better), transformed as
            :meth:`target_kind` says.

        Returns
        -------
        PredictiveModel
            Fitted; it predicts on the scale of ``z``.
        """
        return fitted_clone(data.surrogate, data.X, z, data.seed)

    def candidates(self, data: StepData, incumbent: int) -> np.ndarray:
        """The unseen candidates this step scores (default: the ask's shared pool).

        Parameters
        ----------
        data : StepData
        incumbent : int
            Row of ``data.X`` of the best complete point
            (:meth:`StepData.incumbent`).

        Returns
        -------
        ndarray of shape (n_candidates, n_columns)
            Encoded points, none evaluated or pending.
        """
        return data.pool

    def adjust(
        self, prediction: Prediction, candidates: np.ndarray, data: StepData, model: PredictiveModel
    ) -> Prediction:
        """The prediction the acquisition scores (default: the model's own).

        Parameters
        ----------
        prediction : Prediction
            The model's prediction at ``candidates``, on the scale of the
            targets.
        candidates : ndarray of shape (n_points, n_columns)
            The encoded points predicted.
        data : StepData
        model : PredictiveModel
            The model of :meth:`fit`.

        Returns
        -------
        Prediction
            Of the ``n_points`` candidates.
        """
        return prediction

    def polish_bounds(self, data: StepData, incumbent: int) -> tuple[np.ndarray, np.ndarray]:
        """Bounds of L-BFGS-B polishing, per encoded column (default: the unit cube).

        Parameters
        ----------
        data : StepData
        incumbent : int
            As for :meth:`candidates`.

        Returns
        -------
        lower, upper : ndarray of shape (n_columns,)
        """
        n = data.space.n_columns
        return np.zeros(n), np.ones(n)

    def propose(self, data: StepData, maximizer: AcquisitionMaximizer) -> Proposal | None:
        z = transform_targets(data.values, self.target_kind(data))
        start = time.perf_counter()
        model = self.fit(data, z)
        fit_time = time.perf_counter() - start
        start = time.perf_counter()
        incumbent = data.incumbent(z)
        best = float(z[incumbent])

        def score(points: np.ndarray) -> np.ndarray:
            prediction = self.adjust(model.predict_dist(points), points, data, model)
            return data.score(maximizer, prediction, best, points)

        point, origin = maximizer.maximize(
            score,
            self.candidates(data, incumbent),
            space=data.space,
            unseen=data.unseen,
            rng=data.rng,
            fallback=data.fallback,
            polish=maximizer.uses_lbfgs(model, data.space),
            bounds=self.polish_bounds(data, incumbent),
        )
        return Proposal(point, origin, fit_time, time.perf_counter() - start)
