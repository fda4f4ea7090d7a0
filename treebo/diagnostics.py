"""How good is a surrogate's predictive uncertainty? Divergence, likelihood, coverage.

Every function takes :class:`~treebo.surrogates.base.Prediction` objects (the
output of ``surrogate.predict_dist(X)``), so it works for any surrogate and any
set of points: a test grid, held-out evaluations, or the optimizer's
candidates.

- :func:`kl_normal` / :func:`mean_kl`: Kullback-Leibler divergence between two
  surrogates' predictive Normals, point by point or averaged, in either
  direction. Kim & Choi (2022, Table 2) compare each tree model with a GP this
  way; their wording ("from GP to a model") leaves the direction open and
  their code computes ``KL(model || GP)`` (see :func:`published_kl`).
- :func:`gaussian_nll`: mean negative log predictive density of observed values.
- :func:`interval_coverage`: share of observed values inside the central
  predictive intervals at several levels; a calibrated model covers 50% of
  them with its 50% interval.
- :func:`epistemic_share`: the share of the predictive variance that is
  epistemic (disagreement between ensemble members, or the GP's posterior
  variance of the function) rather than aleatoric (noise).
- :func:`uncertainty_report`: all of the above for a fitted surrogate.

Tree ensembles predict a variance of exactly zero where every member agrees
and every leaf is pure. A Normal with zero variance has no density, so the
divergences and the likelihood floor every variance at ``min_variance``; the
floor then decides how large the penalty for such overconfidence is, which is
why it is a parameter and not hidden.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import ndtri

from .surrogates.base import Prediction

__all__ = [
    "kl_normal",
    "mean_kl",
    "published_kl",
    "gaussian_nll",
    "interval_coverage",
    "epistemic_share",
    "uncertainty_report",
    "UncertaintyReport",
    "DEFAULT_LEVELS",
    "DIRECTIONS",
]

#: Central-interval levels reported by default.
DEFAULT_LEVELS = (0.5, 0.8, 0.95)

#: Accepted values of ``direction`` in :func:`mean_kl`.
DIRECTIONS = ("model||reference", "reference||model")

#: Default variance floor, in squared units of y.
_MIN_VARIANCE = 1e-12


def _check_min_variance(min_variance: Any) -> float:
    if (
        isinstance(min_variance, bool)
        or not isinstance(min_variance, numbers.Real)
        or not float(min_variance) > 0
        or not np.isfinite(float(min_variance))
    ):
        raise ValueError(f"min_variance must be a positive finite number, got {min_variance!r}")
    return float(min_variance)


def _as_prediction(prediction: Any, name: str) -> Prediction:
    if not isinstance(prediction, Prediction):
        raise ValueError(
            f"{name} must be a treebo Prediction (from surrogate.predict_dist), "
            f"got {type(prediction).__name__}"
        )
    return prediction


def _same_length(*pairs: tuple[str, np.ndarray]) -> None:
    lengths = {name: len(values) for name, values in pairs}
    if len(set(lengths.values())) > 1:
        raise ValueError(f"inputs must have the same number of points, got {lengths}")


def kl_normal(
    mean_p: Any, var_p: Any, mean_q: Any, var_q: Any, *, min_variance: float = _MIN_VARIANCE
) -> np.ndarray:
    """Pointwise ``KL(N(mean_p, var_p) || N(mean_q, var_q))``.

    ``ln(sigma_q / sigma_p) + (var_p + (mean_p - mean_q)^2) / (2 var_q) - 1/2``,
    with both variances first raised to at least ``min_variance``.

    Parameters
    ----------
    mean_p, var_p, mean_q, var_q : array-like of shape (n_points,)
        Means and variances of the two Normals; scalars broadcast.
    min_variance : float, default 1e-12
        Floor on both variances, in squared units of y.

    Returns
    -------
    ndarray of shape (n_points,)
        Non-negative divergences, in nats.
    """
    floor = _check_min_variance(min_variance)
    mean_p, var_p, mean_q, var_q = np.broadcast_arrays(
        *(np.asarray(a, dtype=float) for a in (mean_p, var_p, mean_q, var_q))
    )
    if np.any(var_p < 0) or np.any(var_q < 0):
        raise ValueError("variances must be non-negative")
    var_p = np.maximum(var_p, floor)
    var_q = np.maximum(var_q, floor)
    ratio = var_p / var_q
    # 0.5 * (ratio - 1 - log ratio) is >= 0 and exact near ratio = 1.
    return 0.5 * ((ratio - 1.0 - np.log(ratio)) + (mean_p - mean_q) ** 2 / var_q)


def mean_kl(
    prediction: Prediction,
    reference: Prediction,
    *,
    direction: str = "model||reference",
    min_variance: float = _MIN_VARIANCE,
) -> float:
    """Average over points of the KL divergence between two predictive Normals.

    Parameters
    ----------
    prediction : Prediction
        The model's predictive Normals, e.g. ``forest.predict_dist(grid)``.
    reference : Prediction
        The reference's, on the same points (e.g. a GP).
    direction : {"model||reference", "reference||model"}
        ``KL(model || reference)`` penalizes a model that is confident where
        the reference is not only through a log term, and a model that is
        wider than the reference quadratically; ``KL(reference || model)``
        the other way round: it explodes where the model is overconfident.
    min_variance : float, default 1e-12
        Floor on both variances, in squared units of y.

    Returns
    -------
    float
        Mean divergence per point, in nats.
    """
    prediction = _as_prediction(prediction, "prediction")
    reference = _as_prediction(reference, "reference")
    _same_length(("prediction", prediction.mean), ("reference", reference.mean))
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {DIRECTIONS}, got {direction!r}")
    if direction == "reference||model":
        prediction, reference = reference, prediction
    return float(
        np.mean(
            kl_normal(
                prediction.mean,
                prediction.variance,
                reference.mean,
                reference.variance,
                min_variance=min_variance,
            )
        )
    )


def published_kl(prediction: Prediction, reference: Prediction) -> float:
    """The quantity Kim & Choi (2022) printed as the KL divergence in Table 2.

    Their code evaluates ``KL(model || GP)`` point by point as
    ``ln(sigma_GP / (sigma + 1e-7)) + (sigma^2 + (mu - mu_GP)^2) / (2 sigma_GP^2) - 1/2``
    but assigns instead of adding inside its loop, so what it returns, and
    what the table shows, is that value at the *last* grid point divided by
    the number of grid points (``problems.md`` §9). This function recomputes
    exactly that, to compare with the paper; use :func:`mean_kl` for the
    average the paper meant.

    Parameters
    ----------
    prediction, reference : Prediction
        Model and GP on the same grid, in grid order.

    Returns
    -------
    float
    """
    prediction = _as_prediction(prediction, "prediction")
    reference = _as_prediction(reference, "reference")
    _same_length(("prediction", prediction.mean), ("reference", reference.mean))
    sigma = float(np.sqrt(prediction.variance[-1]))
    sigma_ref = float(np.sqrt(reference.variance[-1]))
    delta = float(prediction.mean[-1] - reference.mean[-1])
    last = np.log(sigma_ref / (sigma + 1e-7)) + (sigma**2 + delta**2) / (2.0 * sigma_ref**2) - 0.5
    return float(last / len(prediction.mean))


def _targets(y: Any, prediction: Prediction) -> np.ndarray:
    y = np.asarray(y, dtype=float)
    if y.ndim != 1:
        raise ValueError(f"y must be one-dimensional, got shape {y.shape}")
    _same_length(("y", y), ("prediction", prediction.mean))
    if not np.all(np.isfinite(y)):
        raise ValueError("y must be finite")
    return y


def gaussian_nll(y: Any, prediction: Prediction, *, min_variance: float = _MIN_VARIANCE) -> float:
    """Mean negative log density of observed values under the predictive Normals.

    Parameters
    ----------
    y : array-like of shape (n_points,)
        Observed values at the predicted points.
    prediction : Prediction
    min_variance : float, default 1e-12
        Floor on the predictive variance, in squared units of y.

    Returns
    -------
    float
        ``mean(0.5 log(2 pi var) + (y - mean)^2 / (2 var))``, in nats per
        point; lower is better. It depends on the units of y (an affine
        change ``y -> a y`` adds ``log |a|``).
    """
    prediction = _as_prediction(prediction, "prediction")
    y = _targets(y, prediction)
    var = np.maximum(prediction.variance, _check_min_variance(min_variance))
    return float(
        np.mean(0.5 * np.log(2.0 * np.pi * var) + (y - prediction.mean) ** 2 / (2.0 * var))
    )


def _check_levels(levels: Any) -> np.ndarray:
    levels = np.atleast_1d(np.asarray(levels, dtype=float))
    if levels.ndim != 1 or levels.size == 0 or np.any(~(levels > 0)) or np.any(~(levels < 1)):
        raise ValueError(f"levels must be numbers strictly between 0 and 1, got {levels!r}")
    return levels


def interval_coverage(
    y: Any, prediction: Prediction, levels: ArrayLike = DEFAULT_LEVELS
) -> np.ndarray:
    """Share of observed values inside each central predictive interval.

    The central interval at level ``p`` is ``mean +- z sigma`` with
    ``z = Phi^-1((1 + p) / 2)`` (1.96 for 95%). Values on the boundary count
    as inside, so a point predicted exactly with zero variance is covered.

    Parameters
    ----------
    y : array-like of shape (n_points,)
    prediction : Prediction
    levels : sequence of float in (0, 1), default (0.5, 0.8, 0.95)

    Returns
    -------
    ndarray of shape (n_levels,)
        Empirical coverage per level; a calibrated model gives about
        ``levels``, an overconfident one less.
    """
    prediction = _as_prediction(prediction, "prediction")
    y = _targets(y, prediction)
    levels = _check_levels(levels)
    z = ndtri(0.5 + levels / 2.0)
    distance = np.abs(y - prediction.mean)
    return (distance[None, :] <= z[:, None] * prediction.std[None, :]).mean(axis=1)


def epistemic_share(prediction: Prediction) -> float:
    """Share of the total predictive variance that is epistemic.

    ``sum(epistemic) / sum(variance)`` over the points: 1 for a model whose
    variance is all disagreement between members (or posterior variance of
    the function), 0 for one that only reports noise (NGBoost, or a forest
    whose trees all agree). NaN when the total variance is zero everywhere.

    Parameters
    ----------
    prediction : Prediction

    Returns
    -------
    float
    """
    prediction = _as_prediction(prediction, "prediction")
    total = float(np.sum(prediction.variance))
    return float(np.sum(prediction.epistemic)) / total if total > 0 else float("nan")


@dataclass(frozen=True)
class UncertaintyReport:
    """Uncertainty diagnostics of one surrogate on one set of points.

    Made by :func:`uncertainty_report`; the fields are read-only.

    Parameters
    ----------
    n_points : int
        Number of points diagnosed.
    epistemic_share : float
        See :func:`epistemic_share`.
    nll : float or None
        Mean negative log predictive density (when ``y`` was given).
    coverage : dict of float to float
        Level -> empirical coverage (empty without ``y``).
    kl_to_reference : float or None
        Mean ``KL(model || reference)`` (when a reference was given).
    kl_from_reference : float or None
        Mean ``KL(reference || model)``.
    """

    n_points: int
    epistemic_share: float
    nll: float | None = None
    coverage: dict = field(default_factory=dict)
    kl_to_reference: float | None = None
    kl_from_reference: float | None = None


def uncertainty_report(
    model: Any,
    X: Any,
    y: Any = None,
    *,
    reference: Any = None,
    levels: ArrayLike = DEFAULT_LEVELS,
    min_variance: float = _MIN_VARIANCE,
) -> UncertaintyReport:
    """Diagnose a fitted surrogate's predictive distribution on the points ``X``.

    Parameters
    ----------
    model : fitted Surrogate or Prediction
        The surrogate to check (or its predictions on ``X``).
    X : array-like of shape (n_points, n_features) or None
        Encoded points; may be None when ``model`` (and ``reference``) are
        Predictions already.
    y : array-like of shape (n_points,), optional
        Held-out observed values at ``X``; gives the NLL and the coverage.
    reference : fitted Surrogate or Prediction, optional
        E.g. a GP fitted on the same data; gives both KL directions.
    levels : sequence of float, default (0.5, 0.8, 0.95)
    min_variance : float, default 1e-12

    Returns
    -------
    UncertaintyReport
    """

    def predict(obj: Any, name: str) -> Prediction:
        if isinstance(obj, Prediction):
            return obj
        if not hasattr(obj, "predict_dist"):
            raise ValueError(
                f"{name} must be a fitted treebo surrogate or a Prediction, got "
                f"{type(obj).__name__}"
            )
        if X is None:
            raise ValueError(f"X is needed to predict with {name}")
        return obj.predict_dist(X)

    prediction = predict(model, "model")
    report: dict[str, Any] = {
        "n_points": len(prediction),
        "epistemic_share": epistemic_share(prediction),
    }
    if y is not None:
        levels = _check_levels(levels)
        report["nll"] = gaussian_nll(y, prediction, min_variance=min_variance)
        report["coverage"] = dict(
            zip(levels.tolist(), interval_coverage(y, prediction, levels).tolist())
        )
    if reference is not None:
        ref = predict(reference, "reference")
        report["kl_to_reference"] = mean_kl(
            prediction, ref, direction="model||reference", min_variance=min_variance
        )
        report["kl_from_reference"] = mean_kl(
            prediction, ref, direction="reference||model", min_variance=min_variance
        )
    return UncertaintyReport(**report)
