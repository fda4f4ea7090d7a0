"""Pareto dominance and exact hypervolume, checked against brute force."""

import itertools

import numpy as np
import pytest

from treebo.pareto import hypervolume, non_dominated


def _dominated_brute(Y):
    n = len(Y)
    keep = []
    for i in range(n):
        dominated = any(np.all(Y[j] <= Y[i]) and np.any(Y[j] < Y[i]) for j in range(n) if j != i)
        repeated = any(np.array_equal(Y[j], Y[i]) for j in range(i))
        keep.append(not dominated and not repeated)
    return np.array(keep)


def _hypervolume_grid(Y, reference, steps):
    # Count cells of a grid that contains every corner: exact for integer data.
    axes = [np.arange(0, r, 1.0) + 0.5 for r in reference]
    cells = np.array(list(itertools.product(*axes)))
    covered = np.zeros(len(cells), dtype=bool)
    for y in Y:
        covered |= np.all(cells >= y, axis=1)
    return covered.sum() * steps


@pytest.mark.parametrize("m", [2, 3, 4])
def test_non_dominated_matches_brute_force(m):
    rng = np.random.default_rng(m)
    Y = rng.integers(0, 5, size=(60, m)).astype(float)  # many ties and repeats
    assert np.array_equal(non_dominated(Y), _dominated_brute(Y))


@pytest.mark.parametrize("m", [1, 2, 3, 4])
def test_hypervolume_is_exact_on_integer_points(m):
    rng = np.random.default_rng(10 + m)
    Y = rng.integers(0, 6, size=(25, m)).astype(float)
    reference = np.full(m, 6.0)
    assert hypervolume(Y, reference) == pytest.approx(_hypervolume_grid(Y, reference, 1.0))


def test_hypervolume_of_known_fronts():
    assert hypervolume([[1.0, 2.0], [2.0, 1.0]], [3.0, 3.0]) == 3.0
    # A point beyond the reference in one objective adds nothing.
    assert hypervolume([[1.0, 2.0], [0.5, 4.0]], [3.0, 3.0]) == 2.0
    assert hypervolume(np.empty((0, 2)), [1.0, 1.0]) == 0.0
    # The unit cube's corner point dominates the whole box.
    assert hypervolume([[0.0, 0.0, 0.0]], [2.0, 2.0, 2.0]) == 8.0


def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="reference must be 2 finite numbers"):
        hypervolume([[1.0, 2.0]], [3.0])
    with pytest.raises(ValueError, match="Y must hold finite values"):
        non_dominated([[1.0, np.nan]])
    with pytest.raises(ValueError, match=r"Y must be an array of shape \(n_points, n_objectives\)"):
        non_dominated([1.0, 2.0])
