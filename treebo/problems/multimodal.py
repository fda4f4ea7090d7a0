"""Standard multimodal test functions with known optima, beyond the paper's six.

Together with :mod:`treebo.problems.continuous` they make the wider continuous
suite (``problem_suites()["continuous_all"]``). Every function is noise-free and
is minimized. Formulas, domains and optima are the published ones (each class
names its source); where a source gives the optimum to few digits, the value
used here was recomputed by Newton's method on the gradient in 40-digit
arithmetic (mpmath) and agrees with the published digits.

Besides ``evaluate`` on one point, each class has ``values`` on many points at
once (one per row), the same formula on the last axis; ``evaluate(x)`` is
``float(values(x))``.
"""

from __future__ import annotations

import math

import numpy as np

from ..space import Real
from .base import Problem, ScalableProblem

__all__ = ["Hartmann3", "Shekel", "Levy", "Rastrigin", "Schwefel", "StyblinskiTang"]


class _Vectorized(Problem):
    """A continuous problem whose formula works on the last axis of an array."""

    def values(self, x: np.ndarray) -> np.ndarray:
        """Objective values of points given along the last axis.

        Parameters
        ----------
        x : array_like of shape (..., n_dims)
            Points in the dimensions' own units; not checked against ``space``.

        Returns
        -------
        ndarray of shape (...)
            One value per point.
        """
        raise NotImplementedError

    def evaluate(self, x: np.ndarray) -> float:
        return float(self.values(x))


# Dixon & Szego (1978), as tabulated in Hedar's collection; note p_41 = 0.03815.
_HARTMANN3_ALPHA = np.array([1.0, 1.2, 3.0, 3.2])
_HARTMANN3_A = np.array(
    [
        [3.0, 10.0, 30.0],
        [0.1, 10.0, 35.0],
        [3.0, 10.0, 30.0],
        [0.1, 10.0, 35.0],
    ]
)
_HARTMANN3_P = np.array(
    [
        [0.3689, 0.1170, 0.2673],
        [0.4699, 0.4387, 0.7470],
        [0.1091, 0.8732, 0.5547],
        [0.03815, 0.5743, 0.8828],
    ]
)


class Hartmann3(_Vectorized):
    """Hartmann 3-D function on ``[0, 1]^3``.

    The form is Hartman's (1973); the constants ``alpha``, ``A`` and ``P`` are
    those of L. C. W. Dixon & G. P. Szego (eds.), *Towards Global Optimisation
    2*, North-Holland, 1978, as tabulated in A.-R. Hedar's *Global
    Optimization Test Problems* (Kyoto University), with ``p_41 = 0.03815``.
    Surjanovic & Bingham's Virtual Library of Simulation Experiments
    (sfu.ca/~ssurjano/hart3.html) prints ``p_41 = 0.0381``; with that
    constant the minimum would be about ``-3.8627797873``.

    Optimum ``f* = -3.86278214782076`` (Hedar; Surjanovic & Bingham round it
    to ``-3.86278``) at about ``(0.114614, 0.555649, 0.852547)``. The
    minimizer stored in ``optimizers`` is the Newton-refined one, where the
    function equals ``f*`` to double precision.

    ``-sum_i alpha_i exp(-sum_j A_ij (x_j - P_ij)^2)``, ``i = 1..4``, ``j = 1..3``.
    """

    def __init__(self) -> None:
        super().__init__(
            "hartmann3",
            [Real(0.0, 1.0) for _ in range(3)],
            optimal_value=-3.862782147820755,
            optimizers=[[0.11461433858967198, 0.55564884997185693, 0.85254695352086578]],
        )

    def values(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        inner = np.sum(_HARTMANN3_A * (x[..., None, :] - _HARTMANN3_P) ** 2, axis=-1)
        return -np.sum(_HARTMANN3_ALPHA * np.exp(-inner), axis=-1)


# Dixon & Szego (1978): the centres a_i (rows) and widths c_i of Shekel's foxholes.
_SHEKEL_A = np.array(
    [
        [4.0, 4.0, 4.0, 4.0],
        [1.0, 1.0, 1.0, 1.0],
        [8.0, 8.0, 8.0, 8.0],
        [6.0, 6.0, 6.0, 6.0],
        [3.0, 7.0, 3.0, 7.0],
        [2.0, 9.0, 2.0, 9.0],
        [5.0, 5.0, 3.0, 3.0],
        [8.0, 1.0, 8.0, 1.0],
        [6.0, 2.0, 6.0, 2.0],
        [7.0, 3.6, 7.0, 3.6],
    ]
)
_SHEKEL_C = np.array([0.1, 0.2, 0.2, 0.4, 0.4, 0.6, 0.3, 0.7, 0.5, 0.5])


class Shekel(_Vectorized):
    """Shekel function with ``m = 10`` on ``[0, 10]^4`` (Shekel 10).

    The form is Shekel's (1971); the centres ``a_i`` and widths ``c_i`` are
    those of Dixon & Szego (1978), as tabulated in Hedar's *Global
    Optimization Test Problems*; their seventh centre is ``(5, 5, 3, 3)``.
    Surjanovic & Bingham (sfu.ca/~ssurjano/shekel.html) print ``(5, 3, 5, 3)``
    there, which moves the minimum to about ``-10.5364432`` at a point with
    ``x1 = x3`` and ``x2 = x4``; their ``f* ~ -10.5364`` at ``(4, 4, 4, 4)``
    fits both to the digits given.

    Optimum ``f* = -10.5364098166920`` (Hedar) at about
    ``(4.00075, 4.00059, 3.99966, 3.99951)``; the stored minimizer is the
    Newton-refined one.

    ``-sum_i 1 / (|x - a_i|^2 + c_i)``, ``i = 1..10``.
    """

    def __init__(self) -> None:
        super().__init__(
            "shekel",
            [Real(0.0, 10.0) for _ in range(4)],
            optimal_value=-10.536409816692043,
            optimizers=[
                [4.0007465315920467, 4.000592934138532, 3.9996633980403223, 3.9995098005868076]
            ],
        )

    def values(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        squared = np.sum((x[..., None, :] - _SHEKEL_A) ** 2, axis=-1)
        return -np.sum(1.0 / (squared + _SHEKEL_C), axis=-1)


class Levy(_Vectorized, ScalableProblem):
    """Levy function on ``[-10, 10]^d``.

    ``sin^2(pi w_1) + sum_{i<d} (w_i - 1)^2 (1 + 10 sin^2(pi w_i + 1))
    + (w_d - 1)^2 (1 + sin^2(2 pi w_d))`` with ``w_i = 1 + (x_i - 1) / 4``,
    in the form of Surjanovic & Bingham's Virtual Library of Simulation
    Experiments (sfu.ca/~ssurjano/levy.html). Optimum ``f* = 0`` at
    ``(1, ..., 1)`` (in floating point, ``sin(pi)^2 ~ 1.5e-32`` there).

    Parameters
    ----------
    dim : int, default 6
        Number of dimensions.
    """

    def __init__(self, dim: int = 6):
        super().__init__("levy", dim, (-10.0, 10.0), minimizer=1.0)

    def values(self, x: np.ndarray) -> np.ndarray:
        w = 1.0 + (np.asarray(x, dtype=float) - 1.0) / 4.0
        head, last = w[..., :-1], w[..., -1]
        return (
            np.sin(math.pi * w[..., 0]) ** 2
            + np.sum((head - 1.0) ** 2 * (1.0 + 10.0 * np.sin(math.pi * head + 1.0) ** 2), axis=-1)
            + (last - 1.0) ** 2 * (1.0 + np.sin(2.0 * math.pi * last) ** 2)
        )


class Rastrigin(_Vectorized, ScalableProblem):
    """Rastrigin function on ``[-5.12, 5.12]^d``.

    ``10 d + sum_i (x_i^2 - 10 cos(2 pi x_i))``, in the form of Surjanovic &
    Bingham (sfu.ca/~ssurjano/rastr.html), after Rastrigin (1974); computed
    as ``sum_i (x_i^2 + 10 (1 - cos(2 pi x_i)))``, the same function, which
    stays non-negative under rounding. Optimum ``f* = 0`` at the origin.

    Parameters
    ----------
    dim : int, default 4
        Number of dimensions.
    """

    def __init__(self, dim: int = 4):
        super().__init__("rastrigin", dim, (-5.12, 5.12), minimizer=0.0)

    def values(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        return np.sum(x**2 + 10.0 * (1.0 - np.cos(2.0 * math.pi * x)), axis=-1)


# x sin(sqrt(x)) is largest on [-500, 500] at the root of sin(s) + (s / 2) cos(s), s = sqrt(x);
# 418.9829 (the published constant) exceeds that maximum, 418.98288727243371, by this much.
_SCHWEFEL_X = 420.96874635998203
_SCHWEFEL_GAP = 1.2727566293725214e-05


class Schwefel(_Vectorized, ScalableProblem):
    """Schwefel function (``418.9829 d - sum x_i sin(sqrt|x_i|)``) on ``[-500, 500]^d``.

    In the form of Surjanovic & Bingham (sfu.ca/~ssurjano/schwef.html), after
    Schwefel (1981). The global minimizer, near the domain's corner, is
    ``x_i = 420.968746359982...`` in every coordinate (the root of
    ``sin(s) + (s / 2) cos(s)`` with ``s = sqrt(x_i)``; published as
    ``420.9687``). The published ``f* = 0`` holds only to the four decimals of
    the constant 418.9829: the exact minimum with that constant is
    ``d * 1.27275662937e-5`` (``5.0910265175e-5`` for ``d = 4``), computed here
    in 40-digit arithmetic, and that is ``optimal_value``.

    Parameters
    ----------
    dim : int, default 4
        Number of dimensions.
    """

    def __init__(self, dim: int = 4):
        super().__init__("schwefel", dim, (-500.0, 500.0), _SCHWEFEL_X, _SCHWEFEL_GAP)

    def values(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        return 418.9829 * x.shape[-1] - np.sum(x * np.sin(np.sqrt(np.abs(x))), axis=-1)


# Per coordinate: the smaller real root of 4 t^3 - 32 t + 5 and the value of the summand there.
_STYBLINSKI_TANG_X = -2.903534027771177
_STYBLINSKI_TANG_F = -39.166165703771415


class StyblinskiTang(_Vectorized, ScalableProblem):
    """Styblinski-Tang function on ``[-5, 5]^d``.

    From M. A. Styblinski & T.-S. Tang, "Experiments in nonconvex
    optimization: stochastic approximation with function smoothing and
    simulated annealing", *Neural Networks* 3 (1990), in the form of
    Surjanovic & Bingham (sfu.ca/~ssurjano/stybtang.html). Separable: every
    coordinate is the same double well,
    ``sum_i (x_i^4 - 16 x_i^2 + 5 x_i) / 2``. Optimum
    ``f* = -39.16616570377142 d`` at ``x_i = -2.903534027771177``, the
    smaller real root of ``4 t^3 - 32 t + 5`` (Surjanovic & Bingham give
    ``-39.16599 d`` at ``-2.903534``; the digits here are from 40-digit
    arithmetic).

    Parameters
    ----------
    dim : int, default 5
        Number of dimensions.
    """

    def __init__(self, dim: int = 5):
        super().__init__(
            "styblinski_tang", dim, (-5.0, 5.0), _STYBLINSKI_TANG_X, _STYBLINSKI_TANG_F
        )

    def values(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        return 0.5 * np.sum(x**4 - 16.0 * x**2 + 5.0 * x, axis=-1)
