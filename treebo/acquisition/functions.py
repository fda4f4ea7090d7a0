"""Acquisition functions: how good a candidate looks, from the surrogate's mean and std.

Acquisition functions are written for *minimization* and evaluated on the
standardized target scale. :func:`acquisition_score` turns any of them into a
"higher is better" score used to rank candidates; expected improvement is
ranked by its logarithm (:func:`log_expected_improvement`), which stays finite
and ordered far from the data where EI itself underflows to 0.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import erfcx, log_ndtr, ndtr

__all__ = [
    "expected_improvement",
    "log_expected_improvement",
    "probability_of_improvement",
    "lower_confidence_bound",
    "acquisition_score",
    "check_acquisition",
    "ACQUISITIONS",
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


def _prepare(mean: ArrayLike, std: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    mean = np.asarray(mean, dtype=float)
    std = np.asarray(std, dtype=float)
    if mean.shape != std.shape:
        raise ValueError(f"mean and std must have the same shape, got {mean.shape} and {std.shape}")
    if np.any(std < 0):
        raise ValueError("std must be non-negative")
    return mean, std


def log_expected_improvement(
    mean: ArrayLike, std: ArrayLike, best: float, xi: float = 0.0
) -> np.ndarray:
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


def expected_improvement(
    mean: ArrayLike, std: ArrayLike, best: float, xi: float = 0.0
) -> np.ndarray:
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


def probability_of_improvement(
    mean: ArrayLike, std: ArrayLike, best: float, xi: float = 0.0
) -> np.ndarray:
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


def _log_pi(mean: ArrayLike, std: ArrayLike, best: float, xi: float) -> np.ndarray:
    mean, std = _prepare(mean, std)
    gap = best - xi - mean
    out = np.where(gap > 0, 0.0, -np.inf)
    positive = std > MIN_STD
    out[positive] = log_ndtr(gap[positive] / std[positive])
    return out


def lower_confidence_bound(mean: ArrayLike, std: ArrayLike, kappa: float = 1.96) -> np.ndarray:
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
    """Validate an acquisition name and its parameters; return the full parameter set.

    Parameters
    ----------
    name : {"ei", "pi", "lcb"}
        The acquisition, as for :func:`acquisition_score`.
    params : dict or None
        Parameters to override: ``xi`` for ``"ei"`` and ``"pi"``, ``kappa``
        for ``"lcb"``; each a finite number >= 0. ``None`` keeps the defaults.

    Returns
    -------
    dict of str to float
        Every parameter of the acquisition, the defaults updated by ``params``.

    Raises
    ------
    ValueError
        For an unknown name, a parameter the acquisition does not take, or a
        value that is not a finite number >= 0.
    """
    if name not in ACQUISITIONS:
        raise ValueError(f"unknown acquisition {name!r}; choose one of {list(ACQUISITIONS)}")
    params = dict(params or {})
    unknown = sorted(set(params) - set(ACQUISITIONS[name]))
    if unknown:
        raise ValueError(
            f"acquisition {name!r} takes parameters {list(ACQUISITIONS[name])}, "
            f"got unknown {unknown}"
        )
    full = {**ACQUISITIONS[name], **params}
    for key, value in full.items():
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not (math.isfinite(value) and value >= 0)
        ):
            raise ValueError(
                f"acquisition parameter {key!r} must be a finite number >= 0, got {value!r}"
            )
    return full


def acquisition_score(
    name: str, mean: np.ndarray, std: np.ndarray, best: float, **params: float
) -> np.ndarray:
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
