"""The surrogate contract shared by every model, and the helpers its ensembles share.

Every surrogate is a scikit-learn regressor that, besides ``predict``, returns
a :class:`Prediction`: the mean and the total predictive variance split, by the
law of total variance, into an epistemic part (disagreement between the
members of an ensemble, or the posterior variance of the latent function) and
an aleatoric part (the members' own predictive variance, or the noise).

:class:`Surrogate` checks inputs and parameters and, for the models fitted on
standardized targets, owns the standardization, the constant-target case and
the rescaling of the prediction. :class:`MixtureMoments` is the one place the
law of total variance is computed; :func:`threaded_mixture_moments` folds an
ensemble's members into it on threads. ``RANDOM_STATE`` and ``N_JOBS`` are the
parameter constraints the surrogates share.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from numbers import Integral
from typing import Any, Literal, Protocol, TypeVar, overload

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, RegressorMixin, _fit_context
from sklearn.utils._param_validation import Hidden, Interval
from sklearn.utils.validation import check_is_fitted, validate_data

__all__ = [
    "Prediction",
    "PredictiveModel",
    "Surrogate",
    "MixtureMoments",
    "mixture_moments",
    "threaded_mixture_moments",
    "RANDOM_STATE",
    "N_JOBS",
]

# What threaded_mixture_moments slices: a list of trees or an array of tree indices.
_Members = TypeVar("_Members", bound=Sequence[Any] | np.ndarray)

#: Constraint of ``random_state``: what ``numpy.random.default_rng`` accepts
#: (the rarer seeds are left out of error messages).
RANDOM_STATE = [
    None,
    Interval(Integral, 0, None, closed="left"),
    np.random.Generator,
    Hidden(np.random.BitGenerator),
    Hidden(np.random.SeedSequence),
    Hidden(np.random.RandomState),
    Hidden("array-like"),
]

#: Constraint of ``n_jobs``, joblib's convention: None, or a non-zero integer
#: (``-1`` for all cores, ``-2`` for all but one).
N_JOBS = [
    None,
    Interval(Integral, None, -1, closed="right"),
    Interval(Integral, 1, None, closed="left"),
]


@dataclass(frozen=True)
class Prediction:
    """A predictive Normal per point, with its variance split in two.

    Parameters
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


# A protocol is not instantiated: its signature is Protocol's (*args, **kwargs).
class PredictiveModel(Protocol):  # numpydoc ignore=PR01
    """What a proposal step scores candidates with: a fitted :class:`Surrogate`, or a
    step's own model (e.g. the local step's GP in the incumbent's box)."""

    #: Whether the mean and variance are smooth in x (see :attr:`Surrogate.smooth`).
    smooth: bool

    def predict_dist(self, X: np.ndarray) -> Prediction:
        """The predictive distribution at encoded points.

        Parameters
        ----------
        X : ndarray of shape (n_points, n_columns)
            Encoded points.

        Returns
        -------
        Prediction
            Each field of shape (n_points,).
        """
        ...


class MixtureMoments:
    """Mean and variance of an equally weighted mixture of Normals (law of total variance).

    ``mean = avg(mu_m)``, ``epistemic = avg((mu_m - mean)^2)``, ``aleatoric =
    avg(sigma2_m)``. Members are folded in one at a time with :meth:`add`
    (Welford's update), so memory does not grow with the number of members
    and no catastrophic cancellation happens when ``|mean| >> std``; or many
    at once with :meth:`add_members` (two-pass moments of the batch, merged
    in). Two accumulators over disjoint sets of members merge with
    :meth:`merge` (Chan et al.'s pairwise update), which lets threads each
    fold a share of the members.

    Parameters
    ----------
    n_points : int
        Number of points every member predicts.

    Attributes
    ----------
    count : int
        Number of members folded in so far.
    """

    def __init__(self, n_points: int):
        self.count = 0
        self._mean = np.zeros(n_points)
        self._sum_sq_dev = np.zeros(n_points)
        self._sum_var = np.zeros(n_points)

    def add(self, member_mean: np.ndarray, member_variance: np.ndarray | float = 0.0) -> None:
        """Fold in one member.

        Parameters
        ----------
        member_mean : ndarray of shape (n_points,)
        member_variance : ndarray of shape (n_points,) or float, default 0.0
        """
        self.count += 1
        delta = member_mean - self._mean
        self._mean += delta / self.count
        # delta * (x - new mean) is the Welford increment of the sum of squares.
        delta *= member_mean - self._mean
        self._sum_sq_dev += delta
        self._sum_var += member_variance

    def add_members(
        self, member_means: ArrayLike, member_variances: ArrayLike | None = None
    ) -> None:
        """Fold in many members at once.

        Parameters
        ----------
        member_means : array-like of shape (n_members, n_points)
        member_variances : array-like of shape (n_members, n_points), optional
            Zero when omitted.
        """
        means = np.asarray(member_means, dtype=float)
        if means.ndim != 2 or means.shape[0] == 0 or means.shape[1] != self._mean.size:
            raise ValueError(
                f"member_means must have shape (n_members, {self._mean.size}), got {means.shape}"
            )
        batch = MixtureMoments(means.shape[1])
        batch.count = means.shape[0]
        # Two passes: all members are in memory, and the deviations from the
        # batch mean do not cancel.
        batch._mean = means.mean(axis=0)
        batch._sum_sq_dev = ((means - batch._mean) ** 2).sum(axis=0)
        if member_variances is not None:
            variances = np.asarray(member_variances, dtype=float)
            if variances.shape != means.shape:
                raise ValueError(
                    "member_variances must have the shape of member_means, "
                    f"{means.shape}, got {variances.shape}"
                )
            batch._sum_var = variances.sum(axis=0)
        self.merge(batch)

    def merge(self, other: MixtureMoments) -> None:
        """Fold in the members accumulated by another instance.

        Parameters
        ----------
        other : MixtureMoments
            Over the same points and other members; it is left unchanged.
        """
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
        """The mixture's moments as a :class:`Prediction`, each field (n_points,)."""
        if self.count == 0:
            raise ValueError("no members were added")
        epistemic = np.maximum(self._sum_sq_dev / self.count, 0.0)
        aleatoric = np.maximum(self._sum_var / self.count, 0.0)
        return Prediction(
            mean=self._mean.copy(),
            variance=epistemic + aleatoric,
            epistemic=epistemic,
            aleatoric=aleatoric,
        )


def mixture_moments(
    member_means: ArrayLike, member_variances: ArrayLike | None = None
) -> Prediction:
    """Moments of an equally weighted mixture of Normals, from all members at once.

    Shorthand for :meth:`MixtureMoments.add_members` on a new accumulator.

    Parameters
    ----------
    member_means : array-like of shape (n_members, n_points)
    member_variances : array-like of shape (n_members, n_points), optional
        Zero when omitted.

    Returns
    -------
    Prediction
        Each field of shape (n_points,).
    """
    means = np.asarray(member_means, dtype=float)
    if means.ndim != 2:
        raise ValueError(f"member_means must have shape (n_members, n_points), got {means.shape}")
    moments = MixtureMoments(means.shape[1])
    moments.add_members(means, member_variances)
    return moments.result()


def threaded_mixture_moments(
    accumulate: Callable[[_Members], MixtureMoments], members: _Members, n_jobs: int | None
) -> Prediction:
    """Mixture moments of ``members``, folded by ``accumulate`` on threads.

    Each thread folds one contiguous share of the members (shares as
    ``numpy.array_split`` makes them); the shares are merged in order.

    Parameters
    ----------
    accumulate : callable
        Takes a slice of ``members`` and returns its :class:`MixtureMoments`.
        It should release the GIL for most of its work (NumPy, tree code).
    members : list or ndarray of shape (n_members,)
    n_jobs : int or None
        Threads, in joblib's convention.

    Returns
    -------
    Prediction
    """
    n_chunks = min(effective_n_jobs(n_jobs), len(members))
    if n_chunks <= 1:
        return accumulate(members).result()
    size, extra = divmod(len(members), n_chunks)
    bounds = np.cumsum([0] + [size + 1] * extra + [size] * (n_chunks - extra))
    parts = Parallel(n_jobs=n_chunks, prefer="threads")(
        delayed(accumulate)(members[a:b]) for a, b in zip(bounds[:-1], bounds[1:])
    )
    total = parts[0]
    for part in parts[1:]:
        total.merge(part)
    return total.result()


class Surrogate(RegressorMixin, BaseEstimator):
    """Base class of treebo's surrogates.

    This class checks the inputs and, against ``_parameter_constraints``, the
    parameters, and gives ``fit``, ``predict`` and ``predict_dist``.
    ``__init__`` of subclasses only stores parameters, as scikit-learn
    requires, so ``sklearn.base.clone`` works.

    A subclass implements one of two pairs of hooks on validated float arrays:

    - ``_fit_standardized(X, z)`` and ``_predict_standardized(X)``: the model
      is fitted on ``z = (y - y_mean_) / y_scale_`` and predicts on that
      scale; this class standardizes the targets and maps the
      :class:`Prediction` back to the units of ``y``. Constant targets (spread
      below ``1e-12`` of their magnitude) fit nothing: the surrogate predicts
      the constant with zero variance, unless the subclass sets
      ``_fit_constant_targets`` (then it is fitted on the centred targets,
      with ``y_scale_ = 1``).
    - ``_fit(X, y)`` and ``_predict_dist(X)``: the model works in the units
      of ``y`` (the forests and the Mondrian forest, whose nodes hold target
      values).

    Inputs are encoded points, rows of ``[0, 1]^D``; any real inputs work,
    but space-filling choices (candidate sets, default length scales) assume
    the unit cube.

    Attributes
    ----------
    n_features_in_ : int
        Number of input columns seen by ``fit``.
    y_mean_, y_scale_ : float
        The affine map from standardized targets back to ``y``; only for
        surrogates fitted on standardized targets. ``y_scale_`` is 0 when
        the targets were constant and nothing was fitted.
    """

    #: Capability tag: True for models whose mean and variance are smooth in x
    #: and revert to a prior away from the data (the GP). The optimizer then
    #: standardizes their targets, polishes their acquisition maximum with
    #: gradients, and adds none of the exploration terms trees need.
    smooth: bool = False

    #: Constraints of the constructor's parameters, in scikit-learn's
    #: declarative form; checked at every ``fit``.
    _parameter_constraints: dict = {}

    #: Fit constant targets too (at unit scale) instead of predicting the
    #: constant with zero variance; for models whose variance comes from a
    #: prior rather than from the spread of the targets.
    _fit_constant_targets: bool = False

    @property
    def seeded(self) -> bool:
        """Capability tag: True when a ``random_state`` parameter seeds the fit.

        The optimizer hands such a surrogate a seed drawn from its own
        generator at every refit, so that a seeded run is reproducible.
        """
        return "random_state" in self.get_params(deep=False)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: ArrayLike, y: ArrayLike) -> Surrogate:
        """Fit the surrogate.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        X_array, y_array = validate_data(self, X, y, dtype=np.float64, y_numeric=True)
        self._fit(X_array, y_array)
        return self

    def predict_dist(self, X: ArrayLike) -> Prediction:
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
        return self._predict_dist(validate_data(self, X, dtype=np.float64, reset=False))

    @overload
    def predict(self, X: ArrayLike, return_std: Literal[False] = ...) -> np.ndarray: ...

    @overload
    def predict(self, X: ArrayLike, return_std: Literal[True]) -> tuple[np.ndarray, np.ndarray]: ...

    @overload
    def predict(
        self, X: ArrayLike, return_std: bool
    ) -> np.ndarray | tuple[np.ndarray, np.ndarray]: ...

    def predict(
        self, X: ArrayLike, return_std: bool = False
    ) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
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
        """Standardize ``y`` (shape (n_samples,)) and fit on it with ``_fit_standardized``."""
        self.y_mean_ = float(np.mean(y))
        scale = float(np.std(y))
        # Below this the standardized targets would be rounding noise. On
        # constant targets a model's fitted noise and spread go to 0, so the
        # prediction is the constant with zero variance, without a fit.
        constant = not scale > 1e-12 * max(1.0, float(np.abs(y).max()))
        if constant and not self._fit_constant_targets:
            self.y_scale_ = 0.0
            return
        self.y_scale_ = 1.0 if constant else scale
        self._fit_standardized(X, (y - self.y_mean_) / self.y_scale_)

    def _predict_dist(self, X: np.ndarray) -> Prediction:
        """``_predict_standardized`` mapped back to the units of ``y``."""
        n_points = X.shape[0]
        if self.y_scale_ == 0.0:
            zeros = np.zeros(n_points)
            return Prediction(
                mean=np.full(n_points, self.y_mean_),
                variance=zeros,
                epistemic=zeros.copy(),
                aleatoric=zeros.copy(),
            )
        z = self._predict_standardized(X)
        scale2 = self.y_scale_**2
        epistemic = z.epistemic * scale2
        aleatoric = z.aleatoric * scale2
        return Prediction(
            mean=self.y_mean_ + self.y_scale_ * z.mean,
            variance=epistemic + aleatoric,
            epistemic=epistemic,
            aleatoric=aleatoric,
        )

    def _fit_standardized(self, X: np.ndarray, z: np.ndarray) -> None:
        """Fit on standardized targets ``z``, shape (n_samples,)."""
        raise NotImplementedError

    def _predict_standardized(self, X: np.ndarray) -> Prediction:
        """The prediction in standardized units, each field of shape (n_points,)."""
        raise NotImplementedError
