"""Figures (needs matplotlib: ``pip install 'treebo[plot]'``).

One module per kind of figure; their public functions are re-exported here.
"""
