"""The jump step: far one-dimension moves of the incumbent, scored as a refinement."""

from __future__ import annotations

import numpy as np

from .._checks import check_int, check_real
from ..acquisition.candidates import jump_candidates, rows_within_memory
from .base import StepData
from .refine import RefineStep

__all__ = ["JumpStep"]


class JumpStep(RefineStep):
    """Score copies of the incumbent with one dimension redrawn far from its value.

    This is the perturbation of an iterated local search: it leaves a basin
    in one coordinate, which a refinement step, drawn to the incumbent's
    neighbourhood by the acquisition, does not (see docs/design.md,
    "Exploration"). The prediction is adjusted as a refinement step's.

    Parameters
    ----------
    n_jump_candidates : int, default 2_000
        Copies of the incumbent, each with one dimension redrawn over its
        whole range (:func:`~treebo.acquisition.jump_candidates`).
    jump_distance : float, default 0.25
        Of those, only the ones that moved at least this far in the redrawn
        dimension are kept, in encoded units (the largest coordinate
        difference; a binary flip or a category switch moves 1).
    distance_variance : "auto" or float, default "auto"
        As for :class:`~treebo.proposal.RefineStep`.
    """

    name = "jump"

    def __init__(
        self,
        n_jump_candidates: int = 2_000,
        jump_distance: float = 0.25,
        distance_variance: str | float = "auto",
    ):
        super().__init__(distance_variance)
        self.n_jump_candidates = check_int(n_jump_candidates, "n_jump_candidates", 0)
        self.jump_distance = check_real(jump_distance, "jump_distance")

    def jump_pool(self, data: StepData, incumbent: np.ndarray) -> np.ndarray:
        """Far one-dimension jumps from the encoded ``incumbent``.

        Parameters
        ----------
        data : StepData
            Gives the space and the random stream.
        incumbent : ndarray of shape (n_columns,)
            The encoded point to jump from.

        Returns
        -------
        ndarray of shape (n_jumps, n_columns)
            At most ``n_jump_candidates`` rows (none when it is 0; fewer
            when they would pass
            :data:`~treebo.acquisition.candidates.CANDIDATE_MEMORY`), each
            differing from ``incumbent`` by at least ``jump_distance`` in some
            column; rows may repeat or be taken already.
        """
        # Held to the memory bound of every candidate array, like the pool.
        n_jumps = min(self.n_jump_candidates, rows_within_memory(data.space.n_columns))
        jumps = jump_candidates(data.space, incumbent[None, :], n_jumps, data.rng)
        return jumps[np.abs(jumps - incumbent).max(axis=1) >= self.jump_distance]

    def candidates(self, data: StepData, incumbent: int) -> np.ndarray:
        jumps = data.unseen(self.jump_pool(data, data.X[incumbent]))
        return jumps if len(jumps) else data.pool  # no jump left: an ordinary step
