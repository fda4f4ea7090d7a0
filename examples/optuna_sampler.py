"""
Optuna: treebo as a sampler
===========================

Tune a mixed search space (a log-scaled float, an integer, a float on a grid
and a categorical) in an Optuna study whose sampler is
:class:`~treebo.integration.optuna.TreeBOSampler`, next to Optuna's TPE and
random samplers, and print the best loss each found in 30 trials. The
objective is a cheap stand-in for a model's validation loss (minimum 0 at
``lr=0.01, depth=7, subsample=0.8, booster="gbtree"``). Needs the ``[optuna]``
extra::

    pip install 'treebo[optuna]' && python examples/optuna_sampler.py
"""

import math
import time

import optuna

from treebo.integration.optuna import TreeBOSampler


def objective(trial):
    lr = trial.suggest_float("lr", 1e-4, 1e-1, log=True)
    depth = trial.suggest_int("depth", 2, 12)
    subsample = trial.suggest_float("subsample", 0.5, 1.0, step=0.05)
    booster = trial.suggest_categorical("booster", ["gbtree", "dart", "linear"])
    loss = (math.log10(lr) + 2) ** 2 + 0.05 * (depth - 7) ** 2 + 2 * (subsample - 0.8) ** 2
    return loss + {"gbtree": 0.0, "dart": 0.1, "linear": 0.5}[booster]


if __name__ == "__main__":
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    samplers = {
        # 5,000 candidates per proposal instead of 50,000 keep the example short.
        "treebo (BwO)": TreeBOSampler(seed=0, n_candidates=5_000),
        "TPE": optuna.samplers.TPESampler(seed=0),
        "random": optuna.samplers.RandomSampler(seed=0),
    }
    for name, sampler in samplers.items():
        start = time.perf_counter()
        study = optuna.create_study(sampler=sampler)
        study.optimize(objective, n_trials=30)
        print(
            f"{name:>13}: best loss {study.best_value:.4f} in "
            f"{time.perf_counter() - start:.1f} s, at {study.best_params}"
        )
