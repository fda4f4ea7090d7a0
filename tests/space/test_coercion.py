"""Point values: refused with a message naming the dimension, or accepted as the number they are."""

import math
import numbers
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treebo import Optimizer
from treebo.space import Binary, Categorical, Integer, Real, Space

MIXED = Space(
    [
        Real(0, 1, name="x"),
        Integer(0, 3, name="n"),
        Categorical(["a", "b"], name="c"),
        Binary(name="b"),
    ]
)

REAL_TAKES = "a Real dimension takes an int or float"

INTEGER_TAKES = "an Integer dimension takes an int"


@pytest.mark.fault
@pytest.mark.parametrize(
    "point, message",
    [
        (["0.5", 2, "a", 1], f"dimension 'x': value '0.5' is a string, not a number; {REAL_TAKES}"),
        ([b"0.5", 2, "a", 1], "dimension 'x': value b'0.5' is a string, not a number"),
        ([np.str_("0.5"), 2, "a", 1], r"dimension 'x': value np.str_\('0.5'\) is a string"),
        (
            [0.5, "2", "a", 1],
            f"dimension 'n': value '2' is a string, not a number; {INTEGER_TAKES}",
        ),
        (
            [0.5, 2, "a", "1"],
            "dimension 'b': value '1' is a string, not a number; a Binary dimension "
            "takes 0, 1, False or True",
        ),
        ([True, 2, "a", 1], f"dimension 'x': value True is a bool, not a number; {REAL_TAKES}"),
        (
            [0.5, False, "a", 1],
            f"dimension 'n': value False is a bool, not a number; {INTEGER_TAKES}",
        ),
        ([0.5, np.bool_(True), "a", 1], "dimension 'n': value np.True_ is a bool, not a number"),
        ([np.array(True), 2, "a", 1], r"dimension 'x': value array\(True\) is a bool"),
        ([[0.5], 2, "a", 1], r"dimension 'x': value \[0.5\] is a list, not a single number"),
        ([0.5, (2,), "a", 1], r"dimension 'n': value \(2,\) is a tuple, not a single number"),
        (
            [np.array([0.5]), 2, "a", 1],
            r"dimension 'x': value array\(\[0.5\]\) is an array of "
            r"shape \(1,\), not a single number",
        ),
        ([None, 2, "a", 1], f"dimension 'x': value None is not a number; {REAL_TAKES}"),
        ([0.5 + 0j, 2, "a", 1], r"dimension 'x': value \(0.5\+0j\) is not a real number"),
    ],
    ids=[
        "str",
        "bytes",
        "np.str_",
        "str-integer",
        "str-binary",
        "bool-real",
        "bool-integer",
        "np.bool_-integer",
        "0d-bool-real",
        "list",
        "tuple",
        "1d-array",
        "None",
        "complex",
    ],
)
def test_garbage_point_values_are_refused_naming_the_dimension(point, message):
    with pytest.raises(ValueError, match=message):
        MIXED.encode([point])


@pytest.mark.fault
def test_a_nested_value_in_a_two_dimensional_point_is_refused():
    with pytest.raises(ValueError, match=r"dimension 'x0': value \[0.5\] is a list"):
        Space([Real(0, 1), Integer(0, 3)]).encode([[[0.5], 1]])


@pytest.mark.fault
@pytest.mark.parametrize("x", [["0.5", 2, "a", 1], [True, 2, "a", 1], [[0.5], 2, "a", 1]])
def test_tell_refuses_garbage_and_records_nothing(x):
    opt = Optimizer(MIXED, random_state=0)
    with pytest.raises(ValueError, match="dimension 'x': value"):
        opt.tell(x, 1.0)
    assert opt.trials == []


# -- fuzzing: random (possibly garbage) bounds and point values ----------------------------

finite = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)


def _unwrap(value):
    return value.item() if isinstance(value, np.ndarray) and value.ndim == 0 else value


def _is_number(value, bools=False):
    value = _unwrap(value)
    if isinstance(value, (bool, np.bool_)):
        return bools
    return isinstance(value, (numbers.Real, Decimal))


def _as_types(value, dim_kind):
    """``value`` as one of the number types a user may pass to ``dim_kind`` (all exact)."""
    kinds = [lambda v: v, np.float64, np.array, Decimal, Fraction]
    if dim_kind is not Real:
        kinds += [int, np.int64]
    if dim_kind is Binary:
        kinds += [bool, np.bool_]
    return st.sampled_from(kinds).map(lambda kind: kind(value))


garbage = st.one_of(
    st.text(max_size=3),
    st.binary(max_size=2),
    st.booleans(),
    st.none(),
    st.sampled_from([np.str_("0.5"), np.bool_(True), np.array(False), 0.5 + 0j, object(), {}]),
    st.lists(finite, max_size=2),
    finite.map(lambda v: np.array([v])),
)

any_number = st.one_of(
    st.floats(),
    st.integers(-(2**60), 2**60),
    st.sampled_from([10**30, -(10**400), 2**49, 2**53]),
    st.decimals(),
    st.fractions(),
    finite.map(np.float64),
    st.integers(-(10**6), 10**6).map(np.int64),
    finite.map(np.array),
)


@st.composite
def fuzzed_dimension_specs(draw):
    kind = draw(st.sampled_from([Real, Integer, Binary]))
    if kind is Binary:
        return kind, None, None, False
    if draw(st.integers(0, 2)):  # mostly sensible bounds, as any exact number type
        integer = kind is Integer
        low = draw(st.integers(-1000, 1000) if integer else finite)
        high = low + draw(st.integers(1, 1000) if integer else st.floats(1e-3, 1e6))
        low, high = draw(_as_types(low, kind)), draw(_as_types(high, kind))
    else:
        low, high = draw(st.one_of(any_number, garbage)), draw(st.one_of(any_number, garbage))
    log = draw(st.sampled_from([False, False, True, np.bool_(True), "yes", 1, None]))
    return kind, low, high, log


@pytest.mark.fault
@settings(max_examples=200, deadline=None)
@given(st.lists(fuzzed_dimension_specs(), min_size=1, max_size=4), st.data())
def test_fuzzed_input_is_refused_naming_the_dimension_or_round_trips(specs, data):
    dims = []
    for i, (kind, low, high, log) in enumerate(specs):
        name = f"d{i}"
        try:
            dims.append(
                Binary(name=name) if kind is Binary else kind(low, high, log=log, name=name)
            )
        except (ValueError, TypeError) as error:
            assert f"dimension {name!r}: " in str(error)
            assert any(arg in str(error) for arg in ("low", "high", "log")), str(error)
            continue
        if kind is not Binary:
            assert _is_number(low) and _is_number(high) and isinstance(log, (bool, np.bool_))
            assert math.isfinite(dims[-1].low) and dims[-1].low < dims[-1].high
    if not dims:
        return
    space = Space(dims)
    point, must_fail, may_fail = [], [], []
    for dim in dims:
        how = data.draw(st.sampled_from(["valid", "valid", "number", "garbage"]))
        if how == "valid":
            seed = data.draw(st.integers(0, 2**32 - 1))
            value = dim.decode(np.random.default_rng(seed).random((1, 1)))[0]
            value = data.draw(_as_types(value, type(dim)))
        else:
            value = data.draw(any_number if how == "number" else garbage)
            may_fail.append(dim.name)
            if not _is_number(value, bools=isinstance(dim, Binary)):
                must_fail.append(dim.name)
        point.append(value)
    try:
        X = space.encode([point])
    except (ValueError, TypeError) as error:
        assert any(f"dimension {n!r}: " in str(error) for n in may_fail), str(error)
        return
    assert not must_fail, f"garbage accepted for {must_fail}: {point!r}"
    assert np.all(np.isfinite(X)) and np.all((X >= 0) & (X <= 1))
    for dim, given_value, back in zip(dims, point, space.decode(X)[0]):
        given_value = _unwrap(given_value)
        if isinstance(dim, Real):
            assert math.isclose(
                float(given_value), back, rel_tol=1e-9, abs_tol=1e-9 * (dim.high - dim.low)
            )
        else:
            assert back == given_value
