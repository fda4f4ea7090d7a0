"""The benchmark problem interface."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..space import Real, Space

__all__ = ["Problem", "ScalableProblem"]


class Problem:
    """A benchmark problem: a search space and an objective to minimize.

    Parameters
    ----------
    name : str
        Registry name, e.g. ``"branin"``.
    dimensions : list or dict of dimensions
        The search space.
    optimal_value : float or None
        Known global minimum, or None when unknown.
    optimizers : list of points
        Known global minimizers (possibly only some of them).

    Attributes
    ----------
    params : dict
        The constructor parameters that identify the instance (e.g.
        ``{"instance": 7270, "lam": 0.01}``); empty for fixed functions. With
        ``name`` it is what benchmark records store to rebuild the problem.
    regret_floor : float or None
        The smallest regret the problem's protocol reports (smaller regrets
        count as this one, e.g. ``1e-8`` for COCO's bbob functions); None
        (the default) leaves the benchmark analysis's own floor.
    record_points : bool
        Whether benchmark records keep every evaluated point (``x``); True
        by default. A suite of hundreds of runs whose measure is the values
        alone (COCO's bbob) sets it False, since the points are most of a
        record's size and follow from the seed and the code's version.

    Calling the problem on a user-facing point gives the objective value.
    Subclasses implement ``evaluate`` on a float array (for continuous
    problems) or override ``__call__``.
    """

    regret_floor: float | None = None
    record_points: bool = True

    def __init__(
        self,
        name: str,
        dimensions: Any,
        optimal_value: float | None = None,
        optimizers: list | None = None,
    ):
        self.name = name
        self.space = dimensions if isinstance(dimensions, Space) else Space(dimensions)
        self.optimal_value = optimal_value
        self.optimizers = list(optimizers or [])
        self.params: dict[str, Any] = {}

    def __call__(self, x: Any) -> float:
        self.space.encode([x])  # raises a clear ValueError for infeasible points
        return self.evaluate(np.asarray(x, dtype=float))

    def evaluate(self, x: np.ndarray) -> float:
        """The objective value at a feasible point.

        ``__call__`` checks the point against ``space`` before calling it.
        Each problem computes its own function, which its class description
        gives; :class:`Problem` itself has none.

        Parameters
        ----------
        x : ndarray of shape (n_dims,)
            The point as floats, one entry per dimension in the order of
            ``space``, in the dimensions' own units (binaries as 0.0 or 1.0).

        Returns
        -------
        float
            The objective value, to be minimized.

        Raises
        ------
        NotImplementedError
            In :class:`Problem` itself.
        """
        raise NotImplementedError

    def regret(self, value: float) -> float:
        """``value - optimal_value``; raises if the optimum is unknown.

        Parameters
        ----------
        value : float
            An objective value.

        Returns
        -------
        float

        Raises
        ------
        ValueError
            If ``optimal_value`` is None.
        """
        if self.optimal_value is None:
            raise ValueError(f"problem {self.name!r} has no known optimal value")
        return value - self.optimal_value

    def __repr__(self) -> str:
        return f"<Problem {self.name}: {self.space.n_dims} dimensions>"


class ScalableProblem(Problem):
    """A function defined in any number of dimensions, on a cube.

    Every dimension is ``Real(low, high)``, the name is ``f"{stem}_{dim}"``,
    and the stored global minimizer has the same value in every coordinate.

    Parameters
    ----------
    stem : str
        The name without its dimension, e.g. ``"ackley"``.
    dim : int
        Number of dimensions.
    bounds : tuple of float
        ``(low, high)`` of every dimension.
    minimizer : float or None, default None
        Every coordinate of the global minimizer; None when it is unknown
        (``optimal_value`` is then None and ``optimizers`` empty).
    optimal_value_per_dim : float, default 0.0
        The global minimum divided by ``dim``: 0 for a minimum of 0, and for
        a separable function the minimum of one coordinate's term.

    Attributes
    ----------
    dim : int
        Number of dimensions.
    """

    def __init__(
        self,
        stem: str,
        dim: int,
        bounds: tuple[float, float],
        minimizer: float | None = None,
        optimal_value_per_dim: float = 0.0,
    ):
        self.dim = int(dim)
        low, high = bounds
        known = minimizer is not None
        super().__init__(
            f"{stem}_{self.dim}",
            [Real(low, high) for _ in range(self.dim)],
            optimal_value=self.dim * optimal_value_per_dim if known else None,
            optimizers=[[minimizer] * self.dim] if known else [],
        )
