"""Categorical and Binary: encodings of labels."""

import numpy as np

from treebo.space import Binary, Categorical, Space

# -- encodings -----------------------------------------------------------------------------


def test_categorical_gives_back_values_of_any_hashable_type():
    cats = ["adam", 3, None, ("a", 1), float]
    space = Space([Categorical(cats)])
    X = space.encode([[c] for c in cats])
    np.testing.assert_array_equal(X, np.eye(len(cats)))
    assert [p[0] for p in space.decode(X)] == cats
    assert space.decode([[0.1, 0.2, 0.9, 0.3, 0.0]])[0][0] is None


def test_binary_encodes_bools_and_decodes_ints():
    space = Space([Binary(), Binary()])
    X = space.encode([[True, 0], [1, False]])
    np.testing.assert_array_equal(X, [[1, 0], [1, 0]])
    assert space.decode([[0.7, 0.2]]) == [[1, 0]]
