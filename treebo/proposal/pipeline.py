"""The proposal pipeline: the candidate pool, the step kinds, their schedule, the maximizer."""

from __future__ import annotations

from typing import Any

from ..acquisition import AcquisitionMaximizer
from .base import Proposal, Step, StepData
from .explore import ExploreStep
from .jump import JumpStep
from .local import LocalStep
from .pool import CandidatePool
from .refine import RefineStep
from .schedule import CycleSchedule

__all__ = ["ProposalPipeline", "STEP_KINDS"]

#: Step kind name -> class. A new kind is a module with a :class:`Step` subclass,
#: registered here and named by a schedule.
STEP_KINDS: dict[str, type[Step]] = {
    "refine": RefineStep,
    "jump": JumpStep,
    "explore": ExploreStep,
    "local": LocalStep,
}


class ProposalPipeline:
    """How a model-based point is proposed: which step, from which candidates, chosen how.

    Parameters
    ----------
    maximizer : AcquisitionMaximizer
    pool : CandidatePool
    steps : dict of str to Step
        One instance per kind the schedule names; ``"refine"`` is required:
        it is what a step that has nothing to propose defers to.
    schedule : CycleSchedule
    """

    def __init__(self, maximizer: AcquisitionMaximizer, pool: CandidatePool,
                 steps: dict[str, Step], schedule: CycleSchedule):
        if "refine" not in steps:
            raise ValueError("steps must include a 'refine' step")
        self.maximizer = maximizer
        self.pool = pool
        self.steps = steps
        self.schedule = schedule

    @classmethod
    def from_settings(cls, acquisition: str = "ei", acquisition_params: dict | None = None, *,
                      acq_optimizer: str = "auto", n_candidates: int = 50_000,
                      local_search: bool = True, n_local_candidates: int = 5_000,
                      n_jump_candidates: int = 2_000, n_local_centers: int = 5,
                      local_center_spacing: float = 0.1,
                      distance_variance: str | float = "auto",
                      explore_every: str | int = "auto", explore_length: float = 0.1,
                      jump_every: str | int = "auto", jump_distance: float = 0.25,
                      local_steps: str | bool = "auto") -> ProposalPipeline:
        """The pipeline of :class:`~treebo.Optimizer`'s keyword arguments (documented there)."""
        return cls(
            AcquisitionMaximizer(acquisition, acquisition_params, acq_optimizer=acq_optimizer),
            CandidatePool(n_candidates, local_search, n_local_candidates, n_jump_candidates,
                          n_local_centers, local_center_spacing),
            {"refine": RefineStep(distance_variance),
             "jump": JumpStep(n_jump_candidates, jump_distance, distance_variance),
             "explore": ExploreStep(explore_length),
             "local": LocalStep()},
            CycleSchedule(explore_every, jump_every, local_steps))

    def get_params(self) -> dict[str, Any]:
        """Every setting of the maximizer, pool, steps and schedule, for storing with a study.

        Steps prefix a setting with their kind where two parts share a name
        with different meanings; settings of the same name and meaning (a
        jump step's ``n_jump_candidates`` and the pool's) appear once.
        """
        params: dict[str, Any] = {**self.maximizer.get_params(), **self.pool.get_params()}
        for kind, step in self.steps.items():
            for name, value in step.get_params().items():
                key = name if params.get(name, value) == value else f"{kind}_{name}"
                params[key] = value
        params.update(self.schedule.get_params())
        return params

    def step_kind(self, n_model: int, smooth: bool) -> str:
        """The schedule's kind for the proposal after ``n_model`` model-based ones."""
        return self.schedule.step_kind(n_model, smooth)

    def propose(self, data: StepData, kind: str) -> Proposal:
        """One proposal by the step of ``kind``, or by the refinement step when it has none."""
        proposal = self.steps[kind].propose(data, self.maximizer)
        if proposal is None:
            proposal = self.steps["refine"].propose(data, self.maximizer)
        assert proposal is not None  # a refinement step always proposes
        return proposal
