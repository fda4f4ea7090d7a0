"""treebo.integration.optuna.codec in real studies: Optuna's distributions as treebo's dimensions.

Figures in the comments: measured with Optuna 5.0.0 on the 2-core development
machine, with the fast proposals of ``studies.FAST``.
"""

import numpy as np
import pytest

optuna = pytest.importorskip(
    "optuna", reason="the Optuna integration needs optuna: pip install 'treebo[optuna]'"
)

from optuna.distributions import (  # noqa: E402
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)
from optuna.trial import TrialState  # noqa: E402

from .studies import make_sampler, proposal_of  # noqa: E402

# -- (b) mixed spaces ---------------------------------------------------------------------
DISTRIBUTIONS = {
    "n_units": IntDistribution(4, 512, log=True),
    "dropout": FloatDistribution(0.0, 0.5, step=0.05),
    "lr": FloatDistribution(1e-5, 1e-1, log=True),
    "batch": IntDistribution(16, 256, step=16),
    "optimizer": CategoricalDistribution(["adam", "sgd", None, 3]),
    "momentum": FloatDistribution(0.9, 0.9),  # single-valued
}


def _mixed(trial):
    p = {name: trial._suggest(name, d) for name, d in DISTRIBUTIONS.items()}
    score = (np.log2(p["n_units"]) - 6) ** 2 + 10 * (p["dropout"] - 0.2) ** 2
    score += (np.log10(p["lr"]) + 3) ** 2 + ((p["batch"] - 64) / 64) ** 2
    return score + {"adam": 0.0, "sgd": 0.5, None: 1.0, 3: 2.0}[p["optimizer"]]


def _on_grid(value, low, step):
    k = (value - low) / step
    return abs(k - round(k)) < 1e-9


def test_mixed_space_params_stay_within_their_distributions():
    study = optuna.create_study(sampler=make_sampler(1))
    study.optimize(_mixed, n_trials=25)
    trials = study.trials
    assert all(t.state == TrialState.COMPLETE for t in trials)
    for t in trials:
        p = t.params
        assert isinstance(p["n_units"], int) and 4 <= p["n_units"] <= 512
        assert 0.0 <= p["dropout"] <= 0.5 and _on_grid(p["dropout"], 0.0, 0.05)
        assert 1e-5 <= p["lr"] <= 1e-1
        assert isinstance(p["batch"], int) and 16 <= p["batch"] <= 256 and p["batch"] % 16 == 0
        assert p["optimizer"] in ("adam", "sgd", None, 3) and p["momentum"] == 0.9
    # Trials 5 on were proposed by treebo, jointly, over every parameter but the
    # single-valued one; the objective got exactly the published values.
    for t in trials[5:]:
        published = proposal_of(t)
        assert set(published) == set(DISTRIBUTIONS) - {"momentum"}
        for name, internal in published.items():
            assert DISTRIBUTIONS[name].to_external_repr(internal) == t.params[name]
    assert not any(proposal_of(t) for t in trials[:5])
    # Treebo's grid values are the written decimals, without accumulated float error
    # (Optuna's RandomSampler gives 0.15000000000000002 for 0.15).
    assert all(t.params["dropout"] == round(t.params["dropout"], 2) for t in trials[5:])
    assert study.best_value < 2.0
