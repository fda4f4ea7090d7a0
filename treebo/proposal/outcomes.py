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

from collections.abc import Callable

import numpy as np
from scipy.special import log_ndtr

from .._checks import check_choice
from ..surrogates import Surrogate, as_surrogate, fitted_clone
from ..surrogates.gp import GaussianProcessSurrogate

__all__ = [
    "chebyshev_values",
    "total_violation",
    "FeasibilityModel",
    "constraint_model",
    "add_log_feasibility",
    "ObjectiveScoring",
    "HypervolumeScore",
    "hypervolume_improvement",
    "CHEBYSHEV_RHO",
    "MULTI_OBJECTIVE",
]

#: Weight of the sum term of the augmented Chebyshev scalarization (Knowles 2006), which
#: keeps weakly dominated points from tying with the points that dominate them.
CHEBYSHEV_RHO = 0.05

#: The GP of a constraint (``constraint_surrogate="gp"``): one marginal-likelihood start on
#: at most 100 points, refined on all of them. Every proposal fits every constraint, and
#: the GP surrogate's three starts on every point cost each constraint 3 to 5 times a
#: whole single-objective ask at 200 points (docs/design.md, "Several objectives and
#: constraints").
_CONSTRAINT_GP_FIT_SAMPLES = 100

#: Candidates, in decreasing order of their score, whose feasibility is predicted at
#: once by :func:`add_log_feasibility` (the first block; each next block is twice as large).
_FEASIBILITY_BLOCK = 2048

#: Standard deviations of a constraint's prediction are at least this share of the
#: constraint's spread on the data: a forest whose trees agree is not certain. A smooth
#: model's (the GP's) variance already says what it knows; its floor only keeps the
#: division finite (the forest's floor stalled the pressure vessel: docs/design.md).
_MIN_RELATIVE_STD = 1e-3
_MIN_RELATIVE_STD_SMOOTH = 1e-6


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
    """The sum of each row's positive violations (0 where every constraint holds; NaN stays NaN).

    Parameters
    ----------
    violations : ndarray of shape (n_points, n_constraints)

    Returns
    -------
    ndarray of shape (n_points,)
    """
    return np.clip(violations, 0.0, None).sum(axis=1)


def constraint_model(surrogate: str | Surrogate) -> Surrogate:
    """The unfitted model of each constraint that ``constraint_surrogate`` names.

    Parameters
    ----------
    surrogate : str or Surrogate
        A registered name (``"gp"``: the GP with one start of its fit, on at
        most 100 points, refined on all) or an unfitted instance (cloned).

    Returns
    -------
    Surrogate
    """
    if isinstance(surrogate, str) and surrogate == "gp":
        return GaussianProcessSurrogate(n_restarts=0, max_fit_samples=_CONSTRAINT_GP_FIT_SAMPLES)
    return as_surrogate(surrogate)


def add_log_feasibility(
    scores: np.ndarray,
    points: np.ndarray,
    log_probability: Callable[[np.ndarray], np.ndarray],
    n_exact: int = 5,
) -> np.ndarray:
    """``scores + log P(feasible)``, exact for the ``n_exact`` best; lower candidates get -inf.

    A log-probability is at most 0, so a candidate's total is at most its
    score: predicting the constraints for the candidates in decreasing order
    of score can stop at the first whose score is below the ``n_exact``-th
    best total so far. The best candidates and their order are those of the
    totals over every candidate, at a fraction of the constraints'
    predictions (a pool of 57,000 candidates; the acquisition maximizer
    polishes at most five).

    Parameters
    ----------
    scores : ndarray of shape (n_points,)
        Acquisition scores, higher is better (-inf allowed).
    points : ndarray of shape (n_points, n_columns)
        Encoded.
    log_probability : callable
        ``log_probability(points)`` -> log P(every constraint holds), at most 0.
    n_exact : int, default 5
        How many of the best totals are exact.

    Returns
    -------
    ndarray of shape (n_points,)
    """
    total = np.full(len(scores), -np.inf)
    order = np.argsort(-scores, kind="stable")
    done, block = 0, _FEASIBILITY_BLOCK
    while done < len(order):
        rows = order[done : done + block]
        if done >= n_exact:
            evaluated = total[order[:done]]
            bound = np.partition(evaluated, done - n_exact)[done - n_exact]
            rows = rows[scores[rows] >= bound]
            if len(rows) == 0:
                break
        total[rows] = scores[rows] + log_probability(points[rows])
        done += block
        block *= 2
    return total


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
        self.min_std = _MIN_RELATIVE_STD_SMOOTH if surrogate.smooth else _MIN_RELATIVE_STD
        for j in range(violations.shape[1]):
            c = violations[:, j]
            # Scaled, not centred: the limit stays at 0 on the model's scale.
            scale = float(np.std(c)) or float(np.max(np.abs(c))) or 1.0
            self.models.append(fitted_clone(surrogate, X, c / scale, seed))
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
            std = np.sqrt(np.maximum(prediction.variance, self.min_std**2))
            out += log_ndtr(-prediction.mean / std)
        return out


#: Values of ``multi_objective``: how a proposal scores candidates with several objectives.
MULTI_OBJECTIVE = ("parego", "ehvi")

#: Monte Carlo draws per candidate of the expected hypervolume improvement.
EHVI_SAMPLES = 32


class ObjectiveScoring:
    """How a proposal scores candidates when there are several objectives.

    Parameters
    ----------
    multi_objective : {"parego", "ehvi"}, default "parego"
        ``"parego"``: expected improvement of the augmented Chebyshev
        scalarization under weights drawn for each proposal
        (:func:`chebyshev_values`). ``"ehvi"``: with two objectives, the
        expected improvement of the hypervolume of the front, estimated from
        one model per objective by :data:`EHVI_SAMPLES` joint draws per
        candidate (:func:`hypervolume_improvement`); with three or more
        objectives it is ``"parego"``. Either way the step kinds, the
        candidate pool and its local centres follow the scalarization.
    """

    def __init__(self, multi_objective: str = "parego"):
        self.multi_objective = check_choice(multi_objective, "multi_objective", MULTI_OBJECTIVE)

    def get_params(self) -> dict[str, str]:
        return {"multi_objective": self.multi_objective}

    def uses_hypervolume(self, n_objectives: int) -> bool:
        """Whether candidates are scored by the expected hypervolume improvement.

        Parameters
        ----------
        n_objectives : int

        Returns
        -------
        bool
        """
        return self.multi_objective == "ehvi" and n_objectives == 2


def hypervolume_improvement(
    points: np.ndarray, front: np.ndarray, reference: np.ndarray
) -> np.ndarray:
    """How much the hypervolume of a two-objective front grows when each point is added.

    Parameters
    ----------
    points : ndarray of shape (n_points, 2)
        Objective values, minimized.
    front : ndarray of shape (n_front, 2)
        Mutually non-dominated, sorted by the first objective (so the second
        decreases).
    reference : ndarray of shape (2,)

    Returns
    -------
    ndarray of shape (n_points,)
        At least 0.
    """
    r1, r2 = reference
    p1 = np.minimum(points[:, :1], r1)
    p2 = np.minimum(points[:, 1:], r2)
    box = ((r1 - p1) * (r2 - p2))[:, 0]
    if not len(front):
        return box
    # The front clipped to the point's box is still a staircase: its area there is a
    # sum of strips between consecutive first objectives.
    x = np.minimum(np.maximum(front[None, :, 0], p1), r1)
    y = np.minimum(np.maximum(front[None, :, 1], p2), r2)
    widths = np.diff(np.concatenate([x, np.full_like(p1, r1)], axis=1), axis=1)
    return np.maximum(box - np.sum(widths * (r2 - y), axis=1), 0.0)


class HypervolumeScore:
    """log EHVI of candidates from one model per objective, for one proposal.

    Parameters
    ----------
    models : list of PredictiveModel
        Fitted, one per objective, predicting the objectives scaled to [0, 1].
    front : ndarray of shape (n_front, 2)
        The front of the feasible evaluations (and the batch's earlier points
        at their predicted means), on that scale, sorted by the first objective.
    rng : numpy.random.Generator
        Draws the joint samples, the same for every candidate.
    """

    #: The hypervolume's corner on the [0, 1] scale of each objective: the worst value plus 10%.
    REFERENCE = np.array([1.1, 1.1])

    def __init__(self, models: list, front: np.ndarray, rng: np.random.Generator):
        self.models = models
        self.front = front
        self.draws = rng.standard_normal((EHVI_SAMPLES, 2))

    def __call__(self, points: np.ndarray) -> np.ndarray:
        out = np.empty(len(points))
        chunk = 2048
        for start in range(0, len(points), chunk):
            rows = points[start : start + chunk]
            moments = [m.predict_dist(rows) for m in self.models]
            mean = np.stack([p.mean for p in moments], axis=1)
            std = np.stack([p.std for p in moments], axis=1)
            samples = mean[:, None, :] + std[:, None, :] * self.draws[None, :, :]
            gain = hypervolume_improvement(samples.reshape(-1, 2), self.front, self.REFERENCE)
            out[start : start + chunk] = np.log(gain.reshape(len(rows), -1).mean(axis=1) + 1e-300)
        return out
