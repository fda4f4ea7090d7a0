"""Several objectives and constraints in a proposal.

The proposal pipeline scores candidates by the improvement of one target.
With several objectives, each proposal draws its own weights and takes the
augmented Chebyshev scalarization of the objectives as that target (ParEGO,
Knowles 2006): over many proposals the weights sweep the whole front, and
the points of one batch, each with its own weights, aim at different parts
of it. With constraints, each constraint gets a surrogate of its own and the
acquisition is multiplied by the probability that every constraint holds
(Schonlau et al. 1998; Gardner et al. 2014); while no evaluated point is
feasible, the target is the total violation, so the search looks for the
feasible region first.
"""

from __future__ import annotations

import numpy as np
from scipy.special import log_ndtr
from sklearn.base import clone

from ..surrogates import Surrogate

__all__ = ["chebyshev_values", "total_violation", "FeasibilityModel", "CHEBYSHEV_RHO"]

#: Weight of the sum term of the augmented Chebyshev scalarization (Knowles 2006), which
#: keeps weakly dominated points from tying with the points that dominate them.
CHEBYSHEV_RHO = 0.05

#: Standard deviations of a constraint's prediction are at least this share of the
#: constraint's spread on the data: a forest whose trees agree is not certain.
_MIN_RELATIVE_STD = 1e-3


def chebyshev_values(Y: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """One value per row: the augmented Chebyshev scalarization of its objectives.

    Each objective is first scaled to [0, 1] over the finite rows (an
    objective that does not vary is 0).

    Parameters
    ----------
    Y : ndarray of shape (n_points, n_objectives)
        Objectives to minimize; rows with a NaN (failures) stay NaN.
    weights : ndarray of shape (n_objectives,)
        Non-negative, summing to 1.

    Returns
    -------
    ndarray of shape (n_points,)
        ``max_i w_i f_i + rho * sum_i w_i f_i`` of the scaled objectives;
        lower is better.
    """
    finite = np.all(np.isfinite(Y), axis=1)
    out = np.full(len(Y), np.nan)
    if not finite.any():
        return out
    low, high = Y[finite].min(axis=0), Y[finite].max(axis=0)
    span = np.where(high > low, high - low, 1.0)
    weighted = weights * (Y[finite] - low) / span
    out[finite] = weighted.max(axis=1) + CHEBYSHEV_RHO * weighted.sum(axis=1)
    return out


def total_violation(violations: np.ndarray) -> np.ndarray:
    """The sum of each row's positive violations (0 where every constraint holds; NaN stays NaN)."""
    return np.clip(violations, 0.0, None).sum(axis=1)


class FeasibilityModel:
    """The log-probability that every constraint holds at a point, from one surrogate each.

    Parameters
    ----------
    surrogate : Surrogate
        Unfitted; cloned for each constraint.
    X : ndarray of shape (n_points, n_columns)
        Encoded points with complete evaluations.
    violations : ndarray of shape (n_points, n_constraints)
        Their violations (at most 0 where a constraint holds).
    seed : int, optional
        The surrogates' ``random_state``, for those that take one.
    """

    def __init__(
        self, surrogate: Surrogate, X: np.ndarray, violations: np.ndarray, seed: int | None = None
    ):
        self.models = []
        self.scales = []
        for j in range(violations.shape[1]):
            c = violations[:, j]
            # Scaled, not centred: the limit stays at 0 on the model's scale.
            scale = float(np.std(c)) or float(np.max(np.abs(c))) or 1.0
            model = clone(surrogate)
            if seed is not None and model.seeded:
                model.set_params(random_state=seed)
            self.models.append(model.fit(X, c / scale))
            self.scales.append(scale)

    def log_probability(self, points: np.ndarray) -> np.ndarray:
        """log P(every constraint holds) at ``points``, treating the constraints as independent.

        Parameters
        ----------
        points : ndarray of shape (n_points, n_columns)
            Encoded.

        Returns
        -------
        ndarray of shape (n_points,)
            At most 0; finite.
        """
        out = np.zeros(len(points))
        for model in self.models:
            prediction = model.predict_dist(points)
            std = np.sqrt(np.maximum(prediction.variance, _MIN_RELATIVE_STD**2))
            out += log_ndtr(-prediction.mean / std)
        return out
