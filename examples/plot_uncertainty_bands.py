"""
Uncertainty bands on five points
================================

Five noisy points of a sine (the BwO paper's Figure 1), a random forest, the
BwO forest and a Gaussian process fitted to them, and the predictive mean with
mean ± 1.96 standard deviations. The random forest's band is about as wide at
the data as between it; the BwO forest's band closes at the data and opens
between it, as the GP's does. :doc:`/explanation/bwo` explains why.
"""

from treebo.plotting import plot_bwo_ablation, plot_uncertainty_1d

fig = plot_uncertainty_1d("few", ["rf", "bwo", "gp"])

# %%
# Which ingredient does what (the paper's Figure 6): bagging (B), oversampling
# the bootstrap to 4N points (O) and random split locations (R). Only all three
# together (R+B+O, the BwO forest) give a band that is narrow at the data and
# wide between it.

fig = plot_bwo_ablation("few")
