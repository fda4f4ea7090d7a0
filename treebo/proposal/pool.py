"""The candidate pool an ``ask`` shares between its proposals, and random unseen points."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._checks import check_int, check_real
from ..acquisition.candidates import (
    jump_candidates,
    local_candidates,
    local_centers,
    sobol_candidates,
)
from ..space import Space, SpaceExhausted
from .base import UnseenFilter

__all__ = ["CandidatePool"]


class CandidatePool:
    """Sobol points plus neighbours of the best points: what refinement steps score.

    Parameters
    ----------
    n_candidates : int, default 50_000
        Sobol candidates per ``ask``. Discrete spaces with at most this many
        points are scored exhaustively instead.
    local_search : bool, default True
        Add neighbours of the best evaluated points: ``n_local_candidates``
        Gaussian steps (:func:`~treebo.acquisition.local_candidates`) and
        ``n_jump_candidates`` one-dimension jumps
        (:func:`~treebo.acquisition.jump_candidates`), spread over up to
        ``n_local_centers`` centres, the best points that are at least
        ``local_center_spacing`` apart (:func:`~treebo.acquisition.local_centers`).
    n_local_candidates : int, default 5_000
    n_jump_candidates : int, default 2_000
    n_local_centers : int, default 5
    local_center_spacing : float, default 0.1
        Minimum largest-coordinate difference between two centres, in
        encoded units (the unit cube); 0 takes the ``n_local_centers`` best
        points, however close together.
    """

    def __init__(
        self,
        n_candidates: int = 50_000,
        local_search: bool = True,
        n_local_candidates: int = 5_000,
        n_jump_candidates: int = 2_000,
        n_local_centers: int = 5,
        local_center_spacing: float = 0.1,
    ):
        self.n_candidates = check_int(n_candidates, "n_candidates")
        self.local_search = bool(local_search)
        self.n_local_candidates = check_int(n_local_candidates, "n_local_candidates", 0)
        self.n_jump_candidates = check_int(n_jump_candidates, "n_jump_candidates", 0)
        self.n_local_centers = check_int(n_local_centers, "n_local_centers")
        self.local_center_spacing = check_real(local_center_spacing, "local_center_spacing")

    def get_params(self) -> dict[str, Any]:
        """The settings, as given."""
        return {
            "n_candidates": self.n_candidates,
            "local_search": self.local_search,
            "n_local_candidates": self.n_local_candidates,
            "n_local_centers": self.n_local_centers,
            "n_jump_candidates": self.n_jump_candidates,
            "local_center_spacing": self.local_center_spacing,
        }

    def build(
        self, space: Space, X_complete: np.ndarray, z_complete: np.ndarray, rng: np.random.Generator
    ) -> np.ndarray:
        """The candidate pool of one ``ask``.

        Parameters
        ----------
        space : Space
        X_complete : ndarray of shape (n_complete, n_columns)
            Encoded points with a complete evaluation.
        z_complete : ndarray of shape (n_complete,)
            Their targets; the lowest ones become local-search centres.
        rng : numpy.random.Generator

        Returns
        -------
        ndarray of shape (n_pool, n_columns)
            Every point of a discrete space with at most ``n_candidates``
            points; otherwise snapped Sobol points, then local and jump
            neighbours of the centres. Rows may repeat or be taken already.
        """
        if space.cardinality <= self.n_candidates:
            return space.grid()
        parts = [space.snap(sobol_candidates(self.n_candidates, space.n_columns, rng))]
        if self.local_search:
            centers = X_complete[
                local_centers(
                    X_complete, z_complete, self.n_local_centers, self.local_center_spacing
                )
            ]
            if self.n_local_candidates > 0:
                per_center = max(1, self.n_local_candidates // len(centers))
                parts.append(local_candidates(space, centers, per_center, rng))
            if self.n_jump_candidates > 0:
                per_center = max(1, self.n_jump_candidates // len(centers))
                parts.append(jump_candidates(space, centers, per_center, rng))
        return np.vstack(parts)

    def random_point(
        self, space: Space, unseen: UnseenFilter, rng: np.random.Generator
    ) -> np.ndarray:
        """A uniformly random unseen point (encoded).

        Drawn from every point of a discrete space with at most
        ``n_candidates`` points, otherwise from 1024 points of
        :meth:`~treebo.Space.sample_encoded`.

        Parameters
        ----------
        space : Space
        unseen : callable
            ``unseen(X)`` keeps the rows of ``X`` that are distinct and
            neither evaluated nor pending.
        rng : numpy.random.Generator

        Returns
        -------
        ndarray of shape (n_columns,)

        Raises
        ------
        SpaceExhausted
            When none of those points is unseen.
        """
        if space.cardinality <= self.n_candidates:
            pool = unseen(space.grid())
        else:
            pool = unseen(space.sample_encoded(1024, rng))
        if len(pool) == 0:
            raise SpaceExhausted(
                f"all {int(space.cardinality)} points of the search space have "
                "been evaluated or proposed"
            )
        return pool[rng.integers(len(pool))]
