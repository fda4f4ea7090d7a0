"""The surrogate contract shared by every model, and the ensemble-moment helper.

Every surrogate is a scikit-learn regressor that, besides ``predict``, returns
a :class:`Prediction`: the mean and the total predictive variance split, by the
law of total variance, into an epistemic part (disagreement between the
members of an ensemble, or the posterior variance of the latent function) and
an aleatoric part (the members' own predictive variance, or the noise).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted, validate_data

__all__ = ["Prediction", "Surrogate", "MixtureMoments", "mixture_moments"]


@dataclass(frozen=True)
class Prediction:
    """A predictive Normal per point, with its variance split in two.

    Attributes
    ----------
    mean : ndarray of shape (n_points,)
        Predictive mean, in the units of ``y``.
    variance : ndarray of shape (n_points,)
        Total predictive variance, ``epistemic + aleatoric``, in squared units
        of ``y``; never negative.
    epistemic : ndarray of shape (n_points,)
        Variance from not knowing the function (between ensemble members).
    aleatoric : ndarray of shape (n_points,)
        Variance the model attributes to noise (within ensemble members).
    """

    mean: np.ndarray
    variance: np.ndarray
    epistemic: np.ndarray
    aleatoric: np.ndarray

    @property
    def std(self) -> np.ndarray:
        """Total predictive standard deviation, shape (n_points,)."""
        return np.sqrt(self.variance)

    def __len__(self) -> int:
        return len(self.mean)


class MixtureMoments:
    """Streaming mean and variance of an equally weighted mixture of Normals.

    Members are added one at a time (Welford's update), so memory does not
    grow with the number of members and no catastrophic cancellation happens
    when ``|mean| >> std``. Two accumulators over disjoint sets of members can
    be merged (Chan et al.'s pairwise update), which lets threads each fold a
    share of the trees.

    Parameters
    ----------
    n_points : int
        Number of points every member predicts.
    """

    def __init__(self, n_points: int):
        self.count = 0
        self._mean = np.zeros(n_points)
        self._sum_sq_dev = np.zeros(n_points)
        self._sum_var = np.zeros(n_points)

    def add(self, member_mean: np.ndarray, member_variance: np.ndarray | float = 0.0) -> None:
        """Fold in one member's predictive mean and variance, each (n_points,)."""
        self.count += 1
        delta = member_mean - self._mean
        self._mean += delta / self.count
        # delta * (x - new mean) is the Welford increment of the sum of squares.
        delta *= member_mean - self._mean
        self._sum_sq_dev += delta
        self._sum_var += member_variance

    def merge(self, other: MixtureMoments) -> None:
        """Fold in the members accumulated by another instance."""
        if other.count == 0:
            return
        if self.count == 0:
            self.count = other.count
            self._mean = other._mean.copy()
            self._sum_sq_dev = other._sum_sq_dev.copy()
            self._sum_var = other._sum_var.copy()
            return
        total = self.count + other.count
        delta = other._mean - self._mean
        self._sum_sq_dev += other._sum_sq_dev + delta**2 * (self.count * other.count / total)
        self._mean += delta * (other.count / total)
        self._sum_var += other._sum_var
        self.count = total

    def result(self) -> Prediction:
        """The mixture's moments as a :class:`Prediction`."""
        if self.count == 0:
            raise ValueError("no members were added")
        epistemic = np.maximum(self._sum_sq_dev / self.count, 0.0)
        aleatoric = np.maximum(self._sum_var / self.count, 0.0)
        return Prediction(mean=self._mean.copy(), variance=epistemic + aleatoric,
                          epistemic=epistemic, aleatoric=aleatoric)


def mixture_moments(member_means: np.ndarray, member_variances: np.ndarray | None = None
                    ) -> Prediction:
    """Moments of an equally weighted mixture of Normals, from all members at once.

    Two-pass form of the law of total variance: ``mean = avg(mu_m)``,
    ``epistemic = avg((mu_m - mean)^2)``, ``aleatoric = avg(sigma2_m)``.

    Parameters
    ----------
    member_means : array-like of shape (n_members, n_points)
    member_variances : array-like of shape (n_members, n_points), optional
        Zero when omitted.

    Returns
    -------
    Prediction
    """
    means = np.asarray(member_means, dtype=float)
    if means.ndim != 2 or means.shape[0] == 0:
        raise ValueError(f"member_means must have shape (n_members, n_points), got {means.shape}")
    mean = means.mean(axis=0)
    epistemic = ((means - mean) ** 2).mean(axis=0)
    if member_variances is None:
        aleatoric = np.zeros_like(mean)
    else:
        variances = np.asarray(member_variances, dtype=float)
        if variances.shape != means.shape:
            raise ValueError("member_variances must have the shape of member_means, "
                             f"{means.shape}, got {variances.shape}")
        aleatoric = np.maximum(variances.mean(axis=0), 0.0)
    return Prediction(mean=mean, variance=epistemic + aleatoric, epistemic=epistemic,
                      aleatoric=aleatoric)


class Surrogate(RegressorMixin, BaseEstimator):
    """Base class of treebo's surrogates.

    Subclasses implement ``_fit(X, y)`` and ``_predict_dist(X)`` on validated
    float arrays; this class does the input checking and gives ``fit``,
    ``predict`` and ``predict_dist``. ``__init__`` of subclasses only stores
    parameters, as scikit-learn requires, so ``sklearn.base.clone`` works.

    Inputs are encoded points, rows of ``[0, 1]^D``; any real inputs work,
    but space-filling choices (candidate sets, default length scales) assume
    the unit cube.
    """

    #: Capability tag: True for models whose mean and variance are smooth in x
    #: and revert to a prior away from the data (the GP). The optimizer then
    #: standardizes their targets, polishes their acquisition maximum with
    #: gradients, and adds none of the exploration terms trees need.
    smooth: bool = False

    def fit(self, X: Any, y: Any) -> Surrogate:
        """Fit the surrogate.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True)
        self._fit(X, y)
        return self

    def predict_dist(self, X: Any) -> Prediction:
        """Predictive mean and variance, split into epistemic and aleatoric parts.

        Parameters
        ----------
        X : array-like of shape (n_points, n_features)

        Returns
        -------
        Prediction
            Each field of shape (n_points,).
        """
        check_is_fitted(self, "n_features_in_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return self._predict_dist(X)

    def predict(self, X: Any, return_std: bool = False):
        """Predictive mean, and optionally the total predictive standard deviation.

        Parameters
        ----------
        X : array-like of shape (n_points, n_features)
        return_std : bool, default False

        Returns
        -------
        mean : ndarray of shape (n_points,)
        std : ndarray of shape (n_points,)
            Only when ``return_std`` is true.
        """
        prediction = self.predict_dist(X)
        if return_std:
            return prediction.mean, prediction.std
        return prediction.mean

    def _fit(self, X: np.ndarray, y: np.ndarray) -> None:
        raise NotImplementedError

    def _predict_dist(self, X: np.ndarray) -> Prediction:
        raise NotImplementedError
