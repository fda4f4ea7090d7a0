"""Figures (needs matplotlib: ``pip install 'treebo[plot]'``).

One module per kind of figure; their public functions are re-exported here.
"""

from .pareto import plot_hypervolume, plot_pareto_front  # noqa: F401
from .regret import plot_regret, plot_results  # noqa: F401
from .results import (  # noqa: F401
    plot_convergence,
    plot_evaluations,
    plot_importance,
    plot_objective,
)
from .uncertainty import (  # noqa: F401
    bwo_ablation_surrogates,
    fit_surrogates_1d,
    plot_bwo_ablation,
    plot_prediction_1d,
    plot_uncertainty_1d,
)
