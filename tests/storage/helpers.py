"""What the storage tests share: a fast optimizer setup, objectives, a mixed study."""

import sqlite3
from pathlib import Path

from treebo import Binary, Categorical, Integer, Optimizer, Real

ROOT = Path(__file__).resolve().parents[2]  # the checkout: child scripts import treebo from it
SPACE_2D = [Real(-1.0, 1.0), Real(-1.0, 1.0)]
FAST = dict(n_candidates=500, surrogate_params={"n_estimators": 20})


def quadratic(x):
    return (x[0] - 0.3) ** 2 + (x[1] + 0.2) ** 2


def flaky(x):
    # Deterministic failures, so that runs can be compared point by point.
    if x[0] > 0.6:
        raise RuntimeError("simulator crashed")
    return quadratic(x)


MIXED = [
    Real(0.0, 1.0, name="r"),
    Categorical(["a", "b", "c"], name="c"),
    Integer(1, 5, name="i"),
    Binary(name="b"),
]


def mixed_study(path, n_calls=6):
    """A study of MIXED in ``path``: ``n_calls`` told trials and one pending."""
    opt = Optimizer(MIXED, n_initial_points=4, random_state=0, storage=path, **FAST)
    for _ in range(n_calls):
        x = opt.ask()
        opt.tell(x, float(x[0]) + x[2])
    opt.ask()  # one pending trial
    opt.close()


def run_sql(path, statement, *args):
    """Run one SQL statement on the file ``path``, behind treebo's back."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute(statement, args)
    conn.close()
