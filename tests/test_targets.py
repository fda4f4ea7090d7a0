import math

import numpy as np
import pytest

from treebo.targets import check_failure_value, training_values, transform_targets


def test_failures_take_the_worst_value_or_the_given_one():
    y = np.array([3.0, math.nan, 1.0, 2.0])
    np.testing.assert_array_equal(training_values(y), [3.0, 3.0, 1.0, 2.0])
    np.testing.assert_array_equal(training_values(y, failure_value=10.0), [3.0, 10.0, 1.0, 2.0])


@pytest.mark.parametrize("strategy, lie", [("cl_min", 1.0), ("cl_mean", 2.0), ("cl_max", 3.0)])
def test_pending_points_follow_at_the_lie_over_the_finite_values(strategy, lie):
    values = training_values(np.array([3.0, math.nan, 1.0, 2.0]), 2, strategy=strategy)
    np.testing.assert_array_equal(values, [3.0, 3.0, 1.0, 2.0, lie, lie])


def test_bad_failure_values_and_strategies_are_named():
    for bad in ("best", math.inf, True, None):
        with pytest.raises(ValueError, match="failure_value must be 'worst' or a finite"):
            check_failure_value(bad)
    with pytest.raises(ValueError, match="strategy must be one of"):
        training_values(np.array([1.0]), 1, strategy="cl_median")


@pytest.mark.parametrize("kind", ["log", "standardize"])
def test_targets_keep_the_order_and_are_standardized(kind):
    y = np.array([5.0, 1.0, 3.0, 100.0])
    z = transform_targets(y, kind)
    np.testing.assert_array_equal(np.argsort(z), np.argsort(y))
    assert abs(z.mean()) < 1e-12 and abs(z.std() - 1.0) < 1e-12
