"""An Optuna sampler backed by treebo's surrogates: :class:`TreeBOSampler`.

Needs Optuna (``pip install 'treebo[optuna]'``); importing this package
without it raises an ImportError that names the extra. ``import treebo``
never imports Optuna.

Every proposal refits from the study's trials as the storage holds them, so
the sampler keeps no model between trials and any number of processes
sharing one storage can use it (see :class:`TreeBOSampler`).

Modules
-------
sampler
    :class:`TreeBOSampler`, the Optuna sampler.
codec
    :class:`~treebo.integration.optuna.codec.Codec`: an Optuna distribution
    as a treebo dimension, and values from one to the other.
study_data
    :class:`~treebo.integration.optuna.study_data.StudyData`: a study's
    trials as the encoded arrays of one proposal (pruned trials as
    evaluations at a lower budget, running ones as pending points).
publication
    :data:`PROPOSAL_KEY`: a proposal published in its trial's system
    attributes, written and read back.
seeds
    The seeds of a trial's streams, from the sampler's seed and the trial
    number.
"""

try:
    # Only to name the extra when Optuna is missing: the modules below import
    # from it.
    import optuna as _optuna  # noqa: F401
except ImportError as _error:
    raise ImportError(
        "treebo.integration.optuna needs Optuna; install it with: pip install 'treebo[optuna]'"
    ) from _error

from .publication import PROPOSAL_KEY as PROPOSAL_KEY
from .sampler import TreeBOSampler

__all__ = ["TreeBOSampler"]
