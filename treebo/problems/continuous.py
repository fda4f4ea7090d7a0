"""Continuous benchmark functions of Kim & Choi (2022), with the domains of its code.

Formulas, constants, domains and optima follow ``problems.md`` §2. Every
function is noise-free and is minimized.
"""

from __future__ import annotations

import math

import numpy as np

from ..space import Real
from .base import Problem, ScalableProblem

__all__ = ["Ackley", "Bohachevsky", "Branin", "Hartmann6", "Michalewicz", "Rosenbrock"]


class Ackley(ScalableProblem):
    """Ackley function, ``a = 20, b = 0.2, c = 2 pi``, on ``[-32.768, 32.768]^d``.

    ``-20 exp(-0.2 sqrt(sum(x^2) / d)) - exp(sum(cos(2 pi x)) / d) + 20 + e``.

    Parameters
    ----------
    dim : int, default 4
        Number of dimensions.
    """

    def __init__(self, dim: int = 4):
        super().__init__("ackley", dim, (-32.768, 32.768), minimizer=0.0)

    def evaluate(self, x: np.ndarray) -> float:
        d = len(x)
        return float(
            -20.0 * math.exp(-0.2 * math.sqrt(np.sum(x**2) / d))
            - math.exp(np.sum(np.cos(2.0 * math.pi * x)) / d)
            + 20.0
            + math.e
        )


class Bohachevsky(Problem):
    """Bohachevsky function 1 on ``[-100, 100]^2``.

    ``x1^2 + 2 x2^2 - 0.3 cos(3 pi x1) - 0.4 cos(4 pi x2) + 0.7``.
    """

    def __init__(self) -> None:
        super().__init__(
            "bohachevsky",
            [Real(-100.0, 100.0), Real(-100.0, 100.0)],
            optimal_value=0.0,
            optimizers=[[0.0, 0.0]],
        )

    def evaluate(self, x: np.ndarray) -> float:
        x1, x2 = x
        return float(
            x1**2
            + 2.0 * x2**2
            - 0.3 * math.cos(3.0 * math.pi * x1)
            - 0.4 * math.cos(4.0 * math.pi * x2)
            + 0.7
        )


class Branin(Problem):
    """Branin-Hoo function on ``[-5, 10] x [0, 15]``; three global minimizers.

    ``(x2 - b x1^2 + c x1 - r)^2 + s (1 - t) cos(x1) + s`` with
    ``b = 5.1 / (4 pi^2)``, ``c = 5 / pi``, ``r = 6``, ``s = 10``, ``t = 1 / (8 pi)``.
    """

    def __init__(self) -> None:
        b, c = 5.1 / (4.0 * math.pi**2), 5.0 / math.pi
        minimizers = [[x1, b * x1**2 - c * x1 + 6.0] for x1 in (-math.pi, math.pi, 3 * math.pi)]
        super().__init__(
            "branin",
            [Real(-5.0, 10.0), Real(0.0, 15.0)],
            optimal_value=5.0 / (4.0 * math.pi),
            optimizers=minimizers,
        )

    def evaluate(self, x: np.ndarray) -> float:
        x1, x2 = x
        b, c, r, s, t = 5.1 / (4.0 * math.pi**2), 5.0 / math.pi, 6.0, 10.0, 1.0 / (8.0 * math.pi)
        return float((x2 - b * x1**2 + c * x1 - r) ** 2 + s * (1.0 - t) * math.cos(x1) + s)


HARTMANN6_ALPHA = np.array([1.0, 1.2, 3.0, 3.2])
HARTMANN6_A = np.array(
    [
        [10.0, 3.0, 17.0, 3.5, 1.7, 8.0],
        [0.05, 10.0, 17.0, 0.1, 8.0, 14.0],
        [3.0, 3.5, 1.7, 10.0, 17.0, 8.0],
        [17.0, 8.0, 0.05, 10.0, 0.1, 14.0],
    ]
)
HARTMANN6_P = 1e-4 * np.array(
    [
        [1312, 1696, 5569, 124, 8283, 5886],
        [2329, 4135, 8307, 3736, 1004, 9991],
        [2348, 1451, 3522, 2883, 3047, 6650],
        [4047, 8828, 8732, 5743, 1091, 381],
    ]
)


class Hartmann6(Problem):
    """Hartmann 6-D function on ``[0, 1]^6``.

    ``-sum_i alpha_i exp(-sum_j A_ij (x_j - P_ij)^2)`` with the standard constants.
    """

    def __init__(self) -> None:
        super().__init__(
            "hartmann6",
            [Real(0.0, 1.0) for _ in range(6)],
            optimal_value=-3.32236801141551,
            optimizers=[[0.20168952, 0.15001069, 0.47687398, 0.27533243, 0.31165162, 0.65730054]],
        )

    def evaluate(self, x: np.ndarray) -> float:
        inner = np.sum(HARTMANN6_A * (x[None, :] - HARTMANN6_P) ** 2, axis=1)
        return float(-np.sum(HARTMANN6_ALPHA * np.exp(-inner)))


class Michalewicz(ScalableProblem):
    """Michalewicz function with ``m = 10`` on ``[0, pi]^d``.

    ``-sum_i sin(x_i) sin(i x_i^2 / pi)^20`` (``i`` from 1). The optimum is
    known for ``d = 2`` only.

    Parameters
    ----------
    dim : int, default 2
        Number of dimensions.
    """

    def __init__(self, dim: int = 2):
        # The minimizer's coordinates differ, so the optimum is set here.
        super().__init__("michalewicz", dim, (0.0, math.pi))
        if self.dim == 2:
            self.optimal_value = -1.8013034100985534
            self.optimizers = [[2.20290552, math.pi / 2]]

    def evaluate(self, x: np.ndarray) -> float:
        i = np.arange(1, len(x) + 1)
        return float(-np.sum(np.sin(x) * np.sin(i * x**2 / math.pi) ** 20))


class Rosenbrock(ScalableProblem):
    """Rosenbrock function on ``[-2.048, 2.048]^d``.

    ``sum_i 100 (x_{i+1} - x_i^2)^2 + (x_i - 1)^2``.

    Parameters
    ----------
    dim : int, default 4
        Number of dimensions.
    """

    def __init__(self, dim: int = 4):
        super().__init__("rosenbrock", dim, (-2.048, 2.048), minimizer=1.0)

    def evaluate(self, x: np.ndarray) -> float:
        return float(np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (x[:-1] - 1.0) ** 2))
