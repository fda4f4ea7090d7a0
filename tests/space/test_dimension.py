"""What every dimension provides: its description, its JSON numbers, and its moves."""

import ast
import math
import re

import numpy as np
import pytest

from treebo.space import Binary, Categorical, Dimension, Integer, Real

KINDS = [
    Real(-2.0, 3.0, name="r"),
    Real(1e-3, 1e3, "log-uniform", name="lr"),
    Integer(-5, 20, name="n"),
    Integer(1, 10**6, log=True, name="big"),
    Categorical(["a", None, (1, "t"), 2.5, True], name="c"),
    Categorical(["only"], name="one"),
    Binary(name="b"),
]
IDS = ["real", "log-real", "integer", "log-integer", "categorical", "one-category", "binary"]


def _literals(reprs):
    return [ast.literal_eval(text) for text in reprs]


@pytest.mark.parametrize("dim", KINDS, ids=IDS)
def test_each_kind_describes_itself_and_is_read_back_equal(dim):
    entry = dim.to_dict()
    assert entry["type"] == type(dim).__name__ and entry["name"] == dim.name
    assert set(entry) - {"type", "name"} == type(dim).description_keys
    again = Dimension.from_dict(entry, read_categories=_literals)
    assert type(again) is type(dim) and again == dim
    conditional = Dimension.from_dict(entry, active_if={"p": 1}, read_categories=_literals)
    assert conditional.active_if == {"p": [1]}


@pytest.mark.parametrize("dim", KINDS, ids=IDS)
def test_numbers_stand_for_values_and_agree_with_the_encoding(dim):
    rng = np.random.default_rng(0)
    X = dim.snap(rng.random((200, dim.n_columns)))
    values = dim.decode(X)
    numbers = [dim.to_number(v) for v in values]
    assert all(type(n) is (float if isinstance(dim, Real) else int) for n in numbers)
    assert all(dim.number_problem(n) is None for n in numbers)
    assert [dim.from_number(n) for n in numbers] == values
    np.testing.assert_array_equal(dim.decode_numbers(X), np.array(numbers, dtype=float))
    # Unsnapped rows give the numbers of the values they decode to.
    U = rng.random((200, dim.n_columns))
    np.testing.assert_array_equal(dim.decode_numbers(U), [dim.to_number(v) for v in dim.decode(U)])


@pytest.mark.parametrize(
    "dim, number, message",
    [
        (Real(0, 1), "0.5", r"'0.5' \(allowed: a number in \[0.0, 1.0\]\)"),
        (Real(0, 1), math.nan, r"nan \(allowed: a number"),
        (Real(0, 1), True, r"True \(allowed: a number"),
        (Integer(1, 3), 4, r"4 \(allowed: an integer in \[1, 3\]\)"),
        (Integer(1, 3), 2.0, r"2.0 \(allowed: an integer in \[1, 3\]\)"),
        (Integer(1, 3), True, r"True \(allowed: an integer"),
        (Categorical(["a", "b"]), 2, r"category index 2 \(allowed: an integer from 0 to 1\)"),
        (Categorical(["a", "b"]), -1, "category index -1"),
        (Categorical(["a", "b"]), "a", "category index 'a'"),
        (Binary(), 2, r"2 \(allowed: an integer in \[0, 1\]\)"),
        (Binary(), False, r"False \(allowed: an integer in \[0, 1\]\)"),
    ],
)
def test_number_problem_refuses_what_to_number_never_writes(dim, number, message):
    problem = dim.number_problem(number)
    assert problem is not None and re.match(message, problem), problem


def test_evenly_spaced_values_cover_each_kind():
    np.testing.assert_array_equal(Real(0, 1).evenly_spaced(5)[:, 0], [0, 0.25, 0.5, 0.75, 1])
    few = Integer(1, 4)
    np.testing.assert_array_equal(few.evenly_spaced(10), few.encode([1, 2, 3, 4]))
    many = Integer(0, 999)
    spread = many.decode(many.evenly_spaced(11))
    assert (
        spread == sorted(set(spread)) and len(spread) == 11 and spread[0] == 0 and spread[-1] == 999
    )
    # Every label whatever n_points.
    np.testing.assert_array_equal(Categorical(list("abc")).evenly_spaced(2), np.eye(3))
    np.testing.assert_array_equal(Binary().evenly_spaced(1), [[0.0], [1.0]])


@pytest.mark.parametrize("dim", KINDS, ids=IDS)
def test_a_redraw_changes_labels_and_spreads_numbers(dim):
    rng = np.random.default_rng(1)
    X = dim.snap(rng.random((3000, dim.n_columns)))
    redrawn = dim.redraw(X, rng)
    assert redrawn.shape == X.shape
    before, after = dim.decode(X), dim.decode(dim.snap(redrawn))
    if dim.is_numeric:
        # A uniform draw on the encoded scale, whatever the current value.
        assert np.all((redrawn >= 0) & (redrawn < 1))
        assert abs(redrawn.mean() - 0.5) < 0.02
    elif dim.cardinality == 1:
        assert after == before
    else:
        assert all(a != b for a, b in zip(after, before))
        # Uniform over the other values: every value about equally often.
        counts = np.bincount([dim.to_number(v) for v in after], minlength=dim.n_columns)
        assert counts.min() > 0.8 * len(X) / dim.cardinality


@pytest.mark.parametrize("dim", KINDS, ids=IDS)
def test_a_step_moves_to_a_neighbouring_value(dim):
    rng = np.random.default_rng(2)
    X = dim.snap(rng.random((3000, dim.n_columns)))
    sizes = np.full(len(X), 0.01)
    moved = dim.snap(dim.step(X, sizes, rng))
    before, after = dim.decode(X), dim.decode(moved)
    if isinstance(dim, Real):
        # A Gaussian step of 0.01 encoded units, clipped to the unit interval.
        inside = (X[:, 0] > 0.05) & (X[:, 0] < 0.95)
        assert abs(np.std(moved[inside, 0] - X[inside, 0]) - 0.01) < 0.001
    elif isinstance(dim, Integer):
        # At least one value, and within the bounds.
        assert all(a != b and dim.low <= b <= dim.high for a, b in zip(before, after))
    elif dim.cardinality > 1:
        assert all(a != b for a, b in zip(after, before))


def test_a_step_size_is_relative_to_the_number_of_integers():
    dim = Integer(0, 1000)
    X = dim.encode([500] * 4000)
    after = np.array(dim.decode(dim.step(X, np.full(4000, 0.01), np.random.default_rng(3))))
    # |N(0, 1)| * 0.01 * 1001 rounded, at least 1: a mean shift of about 8 values.
    assert 7 < np.abs(after - 500).mean() < 9


def test_replace_renames_and_reconditions_a_copy():
    dim = Integer(2, 5, name="degree", active_if={"kernel": "poly"})
    renamed = dim.replace(name="d")
    assert renamed.name == "d" and renamed.active_if == {"kernel": ["poly"]}
    assert dim.replace(active_if=None).active_if is None
    assert dim.replace(active_if={"k": [1, 1, 2]}).active_if == {"k": [1, 2]}
    assert dim.name == "degree" and dim.active_if == {"kernel": ["poly"]}
