"""What the parallel-evaluation tests share: a fast optimizer setup and an objective."""

from treebo import Real

SPACE_2D = [Real(-1.0, 1.0), Real(-1.0, 1.0)]
FAST = dict(n_candidates=500, surrogate_params={"n_estimators": 20})


def quadratic(x):
    return (x[0] - 0.3) ** 2 + (x[1] + 0.2) ** 2


def assert_distinct(points):
    """No point was evaluated twice."""
    assert len({tuple(p) for p in points}) == len(points)
