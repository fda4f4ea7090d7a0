"""Acquisition: how candidates are generated, scored and the best one chosen.

* :mod:`treebo.acquisition.functions`: expected improvement (ranked by its
  logarithm), probability of improvement and the lower confidence bound, on
  the surrogate's mean and standard deviation.
* :mod:`treebo.acquisition.candidates`: scrambled Sobol points, local and
  jump neighbours of well-spaced centres, exact row bookkeeping.
* :mod:`treebo.acquisition.distance`: the exploration variance, which grows
  with the distance to the nearest evaluated point.
* :mod:`treebo.acquisition.maximizer`: :class:`AcquisitionMaximizer`, which
  turns a prediction into acquisition scores and returns the best candidate
  (with the flat-score fallback and L-BFGS-B polishing).

Which model, candidates and prediction a proposal uses is decided by its
step kind (:mod:`treebo.proposal`).
"""

from .candidates import (
    jump_candidates,
    local_candidates,
    local_centers,
    rows_in,
    sobol_candidates,
    unique_rows,
)
from .distance import distance_variance
from .functions import (
    ACQUISITIONS,
    MIN_STD,
    acquisition_score,
    check_acquisition,
    expected_improvement,
    log_expected_improvement,
    lower_confidence_bound,
    probability_of_improvement,
)
from .maximizer import AcquisitionMaximizer

__all__ = [
    "expected_improvement",
    "log_expected_improvement",
    "probability_of_improvement",
    "lower_confidence_bound",
    "acquisition_score",
    "check_acquisition",
    "ACQUISITIONS",
    "MIN_STD",
    "sobol_candidates",
    "local_centers",
    "local_candidates",
    "jump_candidates",
    "unique_rows",
    "rows_in",
    "distance_variance",
    "AcquisitionMaximizer",
]
