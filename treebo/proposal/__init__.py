"""Proposals: from the evaluations so far to the next point.

One model-based proposal goes through a :class:`ProposalPipeline`: its
:class:`CycleSchedule` names the step kind, the step (one class per kind,
one module each) fits its model, picks its candidates and adjusts the
prediction, and the :class:`~treebo.acquisition.AcquisitionMaximizer` takes
the argmax. The kinds:

* :class:`RefineStep` (``refine.py``): the surrogate over the ask's
  :class:`CandidatePool`, with an exploration variance;
* :class:`LocalStep` (``local.py``): a Gaussian process on the incumbent's
  nearest points, inside a box around it;
* :class:`JumpStep` (``jump.py``): far one-dimension moves of the incumbent;
* :class:`ExploreStep` (``explore.py``): the prediction reverts to the prior
  away from the data.
"""

from .base import ModelStep, Proposal, Step, StepData
from .explore import ExploreStep
from .jump import JumpStep
from .local import LocalStep
from .pipeline import STEP_KINDS, ProposalPipeline
from .pool import CandidatePool
from .refine import RefineStep
from .schedule import CycleSchedule, cycle_step_kind

__all__ = [
    "ProposalPipeline",
    "CandidatePool",
    "CycleSchedule",
    "cycle_step_kind",
    "STEP_KINDS",
    "Step",
    "ModelStep",
    "StepData",
    "Proposal",
    "RefineStep",
    "JumpStep",
    "ExploreStep",
    "LocalStep",
]
