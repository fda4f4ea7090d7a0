"""Which kind of step each model-based proposal takes."""

from __future__ import annotations

from typing import Any

from .._checks import check_auto_or, check_int

__all__ = ["CycleSchedule", "cycle_step_kind"]


def _every(value: Any, name: str) -> str | int:
    return check_auto_or(value, name, lambda v, n: check_int(v, n, 0), "an integer >= 0")


class CycleSchedule:
    """A fixed cycle of step kinds, counted in model-based proposals.

    Parameters
    ----------
    explore_every : "auto" or int, default "auto"
        Every ``explore_every``-th proposal is an exploration step
        (:class:`~treebo.proposal.ExploreStep`). ``"auto"`` is 8 for tree
        surrogates, 0 (off) for smooth ones (the GP, whose posterior already
        reverts to its prior away from the data).
    jump_every : "auto" or int, default "auto"
        Every ``jump_every``-th proposal is a jump step
        (:class:`~treebo.proposal.JumpStep`). ``"auto"`` is 4 for tree
        surrogates, 0 for smooth ones.
    local_steps : "auto" or bool, default "auto"
        Whether the remaining proposals are local steps
        (:class:`~treebo.proposal.LocalStep`, a Gaussian process around the
        incumbent; a refinement step where it has nothing to refine) rather
        than refinement steps (:class:`~treebo.proposal.RefineStep`, the
        surrogate over the whole pool). ``"auto"`` is on for tree surrogates,
        off for smooth ones, which refine smoothly already.

    Notes
    -----
    With the defaults, a tree surrogate's cycle of eight proposals is local,
    jump, local, local, local, jump, local, explore (:func:`cycle_step_kind`).
    """

    def __init__(
        self,
        explore_every: str | int = "auto",
        jump_every: str | int = "auto",
        local_steps: str | bool = "auto",
    ):
        self.explore_every = _every(explore_every, "explore_every")
        self.jump_every = _every(jump_every, "jump_every")
        if not (local_steps == "auto" or isinstance(local_steps, bool)):
            raise ValueError(f"local_steps must be 'auto', True or False, got {local_steps!r}")
        self.local_steps = local_steps

    def get_params(self) -> dict[str, Any]:
        """The settings, as given (``"auto"`` unresolved)."""
        return {
            "explore_every": self.explore_every,
            "jump_every": self.jump_every,
            "local_steps": self.local_steps,
        }

    def resolved(self, smooth: bool) -> tuple[int, int, bool]:
        """``explore_every``, ``jump_every`` and ``local_steps`` for a smooth or a tree model.

        Parameters
        ----------
        smooth : bool
            Whether the surrogate is smooth (``surrogate.smooth``, the GP):
            it decides what ``"auto"`` means.

        Returns
        -------
        explore_every, jump_every : int
        local_steps : bool
        """
        explore, jump, local = self.explore_every, self.jump_every, self.local_steps
        if explore == "auto":
            explore = 0 if smooth else 8
        if jump == "auto":
            jump = 0 if smooth else 4
        if local == "auto":
            local = not smooth
        return int(explore), int(jump), bool(local)

    def step_kind(self, n_model: int, smooth: bool) -> str:
        """The kind of the proposal that follows ``n_model`` model-based ones.

        Parameters
        ----------
        n_model : int
            Model-based proposals made so far.
        smooth : bool
            As for :meth:`resolved`.

        Returns
        -------
        {"refine", "local", "explore", "jump"}
            See :func:`cycle_step_kind`.
        """
        return cycle_step_kind(n_model, *self.resolved(smooth))


def cycle_step_kind(
    n_model: int, explore_every: int, jump_every: int, local_steps: bool = False
) -> str:
    """The kind of the proposal that follows ``n_model`` model-based ones.

    ``"explore"`` when ``n_model % explore_every == explore_every - 1`` (the
    ``explore_every``-th, ``2 * explore_every``-th, ... proposal); ``"jump"``
    when ``n_model % jump_every == (jump_every // 2 - 1) % jump_every`` (the
    2nd, 6th, 10th, ... proposal for ``jump_every=4``; every proposal for 1),
    which takes precedence if both fall on one proposal; otherwise
    ``"local"`` with ``local_steps``, ``"refine"`` without. 0 turns a kind
    off. With ``explore_every=8``, ``jump_every=4`` and local steps (the
    defaults for tree surrogates) the cycle is local, jump, local, local,
    local, jump, local, explore.

    Parameters
    ----------
    n_model : int
        Model-based proposals made so far.
    explore_every, jump_every : int
        Resolved (no ``"auto"``).
    local_steps : bool, default False

    Returns
    -------
    {"refine", "local", "explore", "jump"}
    """
    if jump_every > 0 and n_model % jump_every == (jump_every // 2 - 1) % jump_every:
        return "jump"
    if explore_every > 0 and n_model % explore_every == explore_every - 1:
        return "explore"
    return "local" if local_steps else "refine"
