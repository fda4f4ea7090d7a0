import numpy as np

from treebo import Real, Space
from treebo.multifidelity import ConfigurationModel
from treebo.surrogates import make_surrogate


def _data():
    rng = np.random.default_rng(0)
    X = rng.random((30, 2))
    budgets = rng.choice([0.0, 0.5, 1.0], size=30)
    values = (X[:, 0] - 0.3) ** 2 + (X[:, 1] - 0.7) ** 2 + 0.1 * (1 - budgets)
    return X, values, budgets


def test_a_configuration_in_flight_pushes_the_next_proposal_away():
    space = Space([Real(0.0, 1.0), Real(0.0, 1.0)])
    model = ConfigurationModel(space, make_surrogate("bwo", n_estimators=30))
    X, values, budgets = _data()
    rungs = np.array([0.0, 0.5, 1.0])
    ranked = model.rank(X, values, budgets, rungs, np.random.default_rng(1))[0]
    first = ranked[0]
    # The same ranking while the first choice is being evaluated: it drops, and the
    # new first choice is farther from it than the old runner-up (a near twin).
    again = model.rank(X, values, budgets, rungs, np.random.default_rng(1), first[None, :])[0]
    position = int(np.flatnonzero(np.all(again == first, axis=1))[0])
    assert position > 0
    assert np.linalg.norm(again[0] - first) > 10 * np.linalg.norm(ranked[1] - first)
