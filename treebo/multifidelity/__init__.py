"""Multi-fidelity optimization: cheap evaluations at low budgets, a model over every budget.

* :mod:`~treebo.multifidelity.brackets`: Hyperband's brackets and rung budgets;
* :mod:`~treebo.multifidelity.schedule`: successive halving inside the
  brackets, synchronous or asynchronous (ASHA);
* :mod:`~treebo.multifidelity.proposal`: new configurations from one
  surrogate over (configuration, budget);
* :mod:`~treebo.multifidelity.checkpoints`: trainings that continue from one
  budget to the next;
* :mod:`~treebo.multifidelity.plan`: the budget dimension, the run's plan
  and options;
* :mod:`~treebo.multifidelity.jobs`: a run as jobs of the one driver
  (:func:`treebo.parallel.run_evaluations`);
* :mod:`~treebo.multifidelity.loop`: :func:`minimize_multifidelity`, the run's
  arguments and study.
"""

from .brackets import Bracket, hyperband_brackets, rung_budgets
from .checkpoints import Checkpoint
from .loop import BUDGET_NAME, minimize_multifidelity
from .proposal import MODEL_BUDGETS, ConfigurationModel
from .schedule import Job, RungSchedule

__all__ = [
    "minimize_multifidelity",
    "hyperband_brackets",
    "rung_budgets",
    "Bracket",
    "Checkpoint",
    "RungSchedule",
    "Job",
    "ConfigurationModel",
    "MODEL_BUDGETS",
    "BUDGET_NAME",
]
