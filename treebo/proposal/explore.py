"""The exploration step: far candidates count as average and unknown."""

from __future__ import annotations

import math

import numpy as np

from .._checks import check_real
from ..acquisition.distance import distance_variance
from ..surrogates import Prediction
from ..surrogates.base import PredictiveModel
from .base import ModelStep, StepData

__all__ = ["ExploreStep"]


class ExploreStep(ModelStep):
    """Blend the prediction with the targets' prior by the distance to the data.

    The surrogate is fitted on plainly standardized targets, and its
    prediction at a candidate is blended with the prior (mean 0, variance 1)
    by the weight ``distance_variance(candidates, X, length=explore_length *
    sqrt(C))`` (``C`` encoded columns), as a stationary GP's posterior reverts
    to its prior away from the data. Far regions then count as "average and
    unknown" instead of "like the nearest evaluated point", which is what lets
    the search leave a basin whose surroundings look worse.

    Parameters
    ----------
    explore_length : float, default 0.1
        Length scale of the prior's reach, in encoded units per square root
        of the number of encoded columns (a length scale that grows as
        ``sqrt(D)``, as GP length-scale priors do in many dimensions).
    """

    name = "explore"

    def __init__(self, explore_length: float = 0.1):
        self.explore_length = check_real(explore_length, "explore_length", strict=True)

    def target_kind(self, data: StepData) -> str:
        return "standardize"

    def adjust(
        self, prediction: Prediction, candidates: np.ndarray, data: StepData, model: PredictiveModel
    ) -> Prediction:
        length = self.explore_length * math.sqrt(data.X.shape[1])
        far = distance_variance(candidates, data.X, length=length)
        return Prediction(
            mean=(1.0 - far) * prediction.mean,
            variance=prediction.variance + far,
            epistemic=prediction.epistemic + far,
            aleatoric=prediction.aleatoric,
        )
