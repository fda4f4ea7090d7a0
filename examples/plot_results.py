"""
Looking at a result: convergence, partial dependence, evaluations, importance
==============================================================================

A short hyperparameter-like study of a stand-in loss (it ignores ``dropout``)
and the four figures treebo draws from its result. The same calls take the
path of a storage file instead of the result.
"""

import math

from treebo import Categorical, Integer, Real, minimize
from treebo.plotting import plot_convergence, plot_evaluations, plot_importance, plot_objective

space = {
    "learning_rate": Real(1e-4, 1e-1, prior="log-uniform"),
    "layers": Integer(1, 6),
    "optimizer": Categorical(["sgd", "adam", "rmsprop"]),
    "dropout": Real(0.0, 0.5),
}


def loss(p):
    penalty = {"sgd": 1.0, "adam": 0.0, "rmsprop": 0.5}[p["optimizer"]]
    return (math.log10(p["learning_rate"]) + 2.5) ** 2 + 0.1 * (p["layers"] - 3) ** 2 + penalty


res = minimize(loss, space, n_calls=30, random_state=0)
print(f"best value {res.fun:.4f} at {res.x}")

# %%
# The best value found so far after each evaluation.
plot_convergence(res)

# %%
# Partial dependence from a refit of the study's surrogate: one dimension on
# the diagonal, pairs below it; the red star is the best trial.
plot_objective(res)

# %%
# Where the evaluations went, coloured by evaluation number.
plot_evaluations(res)

# %%
# Each dimension's share of the main effects: ``dropout``, which the loss
# ignores, comes last.
plot_importance(res)
