"""Figures (needs matplotlib: ``pip install 'treebo[plot]'``).

One module per kind of figure; their public functions are re-exported here.
"""

from .regret import plot_regret, plot_results  # noqa: F401
