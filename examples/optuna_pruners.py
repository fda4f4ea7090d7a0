"""
Optuna: treebo with a pruner
============================

Tune a linear classifier trained epoch by epoch (``SGDClassifier.partial_fit``
on scikit-learn's bundled digits) in an Optuna study that stops unpromising
trials early with ``HyperbandPruner`` or ``SuccessiveHalvingPruner``, and
print the best validation error that :class:`~treebo.integration.optuna.TreeBOSampler`,
Optuna's TPE and random search find in 40 trials each, for seeds 0-2. The
sampler models a pruned trial as an evaluation at the budget it reached (its
last reported epoch), and proposes at the full budget. Needs the ``[optuna]``
extra; takes about a minute::

    pip install 'treebo[optuna]' && python examples/optuna_pruners.py
"""

import numpy as np
import optuna
from sklearn.datasets import load_digits
from sklearn.linear_model import SGDClassifier
from sklearn.model_selection import train_test_split

from treebo.integration.optuna import TreeBOSampler

X, y = load_digits(return_X_y=True)
X_train, X_valid, y_train, y_valid = train_test_split(X / 16.0, y, random_state=0)
EPOCHS = 27


def objective(trial):
    alpha = trial.suggest_float("alpha", 1e-6, 1e-1, log=True)
    eta0 = trial.suggest_float("eta0", 1e-4, 1.0, log=True)
    loss = trial.suggest_categorical("loss", ["hinge", "log_loss", "modified_huber"])
    model = SGDClassifier(
        alpha=alpha, loss=loss, learning_rate="constant", eta0=eta0, random_state=0
    )
    for epoch in range(EPOCHS):
        model.partial_fit(X_train, y_train, classes=np.arange(10))
        error = 1.0 - model.score(X_valid, y_valid)
        trial.report(error, step=epoch)
        if trial.should_prune():
            raise optuna.TrialPruned()
    return error


SAMPLERS = {
    "treebo": lambda seed: TreeBOSampler(seed=seed),
    "TPE": lambda seed: optuna.samplers.TPESampler(seed=seed),
    "random": lambda seed: optuna.samplers.RandomSampler(seed=seed),
}
PRUNERS = {
    "Hyperband": lambda: optuna.pruners.HyperbandPruner(
        min_resource=1, max_resource=EPOCHS, reduction_factor=3
    ),
    "successive halving": lambda: optuna.pruners.SuccessiveHalvingPruner(
        min_resource=1, reduction_factor=3
    ),
}

if __name__ == "__main__":
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    for pruner_name, make_pruner in PRUNERS.items():
        for sampler_name, make_sampler in SAMPLERS.items():
            best = []
            for seed in range(3):
                # Hyperband assigns a trial's bracket from the study's name.
                study = optuna.create_study(
                    sampler=make_sampler(seed),
                    pruner=make_pruner(),
                    study_name=f"sgd-digits-{seed}",
                )
                study.optimize(objective, n_trials=40)
                best.append(study.best_value)
            print(
                f"{pruner_name:>18} {sampler_name:>6}: best validation error "
                + " ".join(f"{b:.4f}" for b in best)
            )
