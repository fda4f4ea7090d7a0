"""The points a study evaluates before its surrogate is used."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ._checks import check_choice, check_int
from .acquisition import sobol_candidates
from .space import Space

__all__ = ["INITIAL_DESIGNS", "InitialDesign"]

#: The kinds of initial design.
INITIAL_DESIGNS = ("sobol", "random")


class InitialDesign:
    """A fixed set of first points: scrambled Sobol or uniformly random.

    The points depend only on the space, ``n_points`` and the random
    generator, so runs with different surrogates and the same seed share them.

    Parameters
    ----------
    space : Space
    n_points : int
        Points in the design; 0 for none.
    kind : {"sobol", "random"}
    rng : numpy.random.Generator
        The design's own stream; drawn from once, here.

    Attributes
    ----------
    points : ndarray of shape (n_points, n_columns)
        The design, encoded and snapped to the space's values.
    """

    def __init__(self, space: Space, n_points: int, kind: str, rng: np.random.Generator):
        n_points = check_int(n_points, "n_initial_points", 0)
        kind = check_choice(kind, "initial_design", INITIAL_DESIGNS)
        width = space.n_columns
        if n_points == 0:
            self.points = np.empty((0, width))
        elif kind == "sobol":
            self.points = space.snap(sobol_candidates(n_points, width, rng))
        else:
            self.points = space.snap(rng.random((n_points, width)))

    def next_point(
        self, unseen: Callable[[np.ndarray], np.ndarray], random_point: Callable[[], np.ndarray]
    ) -> tuple[np.ndarray, str]:
        """The first design point not evaluated or proposed yet, or a random one.

        Parameters
        ----------
        unseen : callable
            Maps encoded rows to those that are no trial's point
            (:meth:`~treebo.history.History.unseen`).
        random_point : callable
            Returns a random unseen encoded point, for when every design
            point is taken (told without being asked, say).

        Returns
        -------
        point : ndarray of shape (n_columns,)
        origin : {"initial", "random"}
        """
        design = unseen(self.points)
        if len(design):
            return design[0], "initial"
        return random_point(), "random"
