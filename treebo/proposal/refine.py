"""The refinement step: the surrogate's prediction, plus an exploration variance."""

from __future__ import annotations

import numpy as np

from .._checks import check_auto_or, check_real
from ..acquisition.distance import distance_variance
from ..surrogates import Prediction
from ..surrogates.base import PredictiveModel
from .base import ModelStep, StepData

__all__ = ["RefineStep"]


class RefineStep(ModelStep):
    """Score the ask's candidate pool by the surrogate fitted on every point.

    Parameters
    ----------
    distance_variance : "auto" or float, default "auto"
        Weight of an exploration variance added to the surrogate's predictive
        variance: the weight times :func:`~treebo.acquisition.distance_variance`,
        which grows from 0 at an evaluated or pending point to 1 (the
        standardized targets' variance) a few data spacings away. A tree
        ensemble's own variance does not grow away from the data, so without
        it the acquisition keeps refining the first basin found (see
        docs/design.md, "Exploration"). ``"auto"`` is 1.0 for every surrogate
        but smooth ones (the GP, whose posterior variance already grows away
        from the data), where it is 0; 0 turns it off.
    """

    name = "refine"

    def __init__(self, distance_variance: str | float = "auto"):
        self.distance_variance = check_auto_or(
            distance_variance, "distance_variance", check_real, "a finite number >= 0"
        )

    def variance_weight(self, smooth: bool) -> float:
        """``distance_variance`` with ``"auto"`` resolved for a smooth or a tree model.

        Parameters
        ----------
        smooth : bool
            Whether the model is smooth (``model.smooth``, the GP).

        Returns
        -------
        float
        """
        if self.distance_variance == "auto":
            return 0.0 if smooth else 1.0
        return float(self.distance_variance)

    def adjust(
        self, prediction: Prediction, candidates: np.ndarray, data: StepData, model: PredictiveModel
    ) -> Prediction:
        weight = self.variance_weight(model.smooth)
        if not weight > 0:
            return prediction
        extra = weight * distance_variance(candidates, data.X)
        return Prediction(
            mean=prediction.mean,
            variance=prediction.variance + extra,
            epistemic=prediction.epistemic + extra,
            aleatoric=prediction.aleatoric,
        )
