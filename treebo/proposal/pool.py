"""The candidate pool an ``ask`` shares between its proposals, and random unseen points."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._checks import check_int, check_real
from ..acquisition.candidates import (
    jump_candidates,
    local_candidates,
    local_centers,
    rows_within_memory,
    sobol_candidates,
)
from ..space import Space, SpaceExhausted
from .base import UnseenFilter

__all__ = ["CandidatePool"]


class CandidatePool:
    """Sobol points plus neighbours of the best points: what refinement steps score.

    The pool of an ask takes at most 256 MiB
    (:data:`~treebo.acquisition.candidates.CANDIDATE_MEMORY`): when
    ``n_candidates + n_local_candidates + n_jump_candidates`` rows of the
    space's encoded columns would take more, the three are scaled down by the
    same factor, to :func:`~treebo.acquisition.candidates.rows_within_memory`
    rows in all. With the defaults that happens above 588 encoded columns; on
    10,000 columns a pool holds 3,355 rows (with five centres, 2,950 Sobol
    points, 290 local and 115 jump neighbours).

    Parameters
    ----------
    n_candidates : int, default 50_000
        Sobol candidates per ``ask`` (fewer on very wide spaces, see above).
        Discrete spaces with at most this many points are scored
        exhaustively instead, if all their points fit in the memory bound.
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
            points (and at most ``rows_within_memory(n_columns)``); otherwise
            snapped Sobol points, then local and jump neighbours of the
            centres, at most ``rows_within_memory(n_columns)`` rows in all.
            Rows may repeat or be taken already.
        """
        rows = rows_within_memory(space.n_columns)
        if space.cardinality <= min(self.n_candidates, rows):
            return space.grid()
        centers = np.empty((0, space.n_columns))
        if self.local_search:
            centers = X_complete[
                local_centers(
                    X_complete, z_complete, self.n_local_centers, self.local_center_spacing
                )
            ]
        n_sobol, local_per_center, jump_per_center = self._sizes(len(centers), rows)
        parts = [space.snap(sobol_candidates(n_sobol, space.n_columns, rng))]
        if local_per_center > 0:
            parts.append(local_candidates(space, centers, local_per_center, rng))
        if jump_per_center > 0:
            parts.append(jump_candidates(space, centers, jump_per_center, rng))
        return np.vstack(parts)

    def _sizes(self, n_centers: int, rows: int) -> tuple[int, int, int]:
        """Sobol points, and local and jump neighbours per centre, of a pool of at most ``rows``."""
        if not n_centers:  # no local search
            return min(self.n_candidates, rows), 0, 0
        local = max(1, self.n_local_candidates // n_centers) if self.n_local_candidates else 0
        jump = max(1, self.n_jump_candidates // n_centers) if self.n_jump_candidates else 0
        if self.n_candidates + (local + jump) * n_centers <= rows:
            return self.n_candidates, local, jump
        # Too wide for the memory bound: every part shrinks by the same factor,
        # and the Sobol points take the rows the neighbours leave.
        requested = self.n_candidates + self.n_local_candidates + self.n_jump_candidates
        scale = min(1.0, rows / requested)
        local = int(self.n_local_candidates * scale) // n_centers
        jump = int(self.n_jump_candidates * scale) // n_centers
        return min(self.n_candidates, max(1, rows - (local + jump) * n_centers)), local, jump

    def random_point(
        self, space: Space, unseen: UnseenFilter, rng: np.random.Generator
    ) -> np.ndarray:
        """A uniformly random unseen point (encoded).

        Drawn from every point of a discrete space with at most
        ``n_candidates`` points (and at most ``rows_within_memory(n_columns)``),
        otherwise from 1024 points of :meth:`~treebo.Space.sample_encoded`
        (fewer if they would not fit in that many rows).

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
        rows = rows_within_memory(space.n_columns)
        if space.cardinality <= min(self.n_candidates, rows):
            pool = unseen(space.grid())
        else:
            pool = unseen(space.sample_encoded(min(1024, rows), rng))
        if len(pool) == 0:
            raise SpaceExhausted(
                f"all {int(space.cardinality)} points of the search space have "
                "been evaluated or proposed"
            )
        return pool[rng.integers(len(pool))]
