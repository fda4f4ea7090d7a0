import itertools
import math
import numbers
import pickle
import time
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from treebo import Optimizer
from treebo import acquisition as acq
from treebo.space import INACTIVE, Binary, Categorical, Integer, Real, Space

# -- strategies -----------------------------------------------------------------------

finite = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)


@st.composite
def real_dims(draw):
    low = draw(finite)
    high = draw(finite.filter(lambda h: h > low + 1e-6 * max(1.0, abs(low))))
    if draw(st.booleans()) and low > 0:
        return Real(low, high, prior="log-uniform")
    return Real(low, high)


@st.composite
def integer_dims(draw):
    low = draw(st.integers(-1000, 1000))
    high = draw(st.integers(low + 1, low + 2000))
    if draw(st.booleans()) and low >= 1:
        return Integer(low, high, log=True)
    return Integer(low, high)


categories = st.lists(st.one_of(st.text(max_size=5), st.integers(-5, 5), st.none(),
                                st.tuples(st.integers(0, 3), st.text(max_size=2))),
                      min_size=1, max_size=6, unique_by=lambda v: (type(v).__name__, v))

dimensions = st.one_of(real_dims(), integer_dims(), categories.map(Categorical),
                       st.just(Binary()))


@st.composite
def spaces_and_points(draw):
    dims = draw(st.lists(dimensions, min_size=1, max_size=5))
    as_dict = draw(st.booleans())
    space = Space({f"d{i}": d for i, d in enumerate(dims)} if as_dict else dims)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    return space, space.sample(draw(st.integers(1, 8)), rng), rng


def _same_value(a, b, dim):
    if isinstance(dim, Real):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9 * (dim.high - dim.low))
    return a == b and type(a) is type(b)


# -- round trips (property-based) -------------------------------------------------------

@settings(max_examples=200, deadline=None)
@given(spaces_and_points())
def test_decode_encode_round_trip(data):
    space, points, _ = data
    X = space.encode(points)
    assert X.shape == (len(points), space.n_columns)
    assert np.all((X >= 0) & (X <= 1))
    back = space.decode(X)
    for p, q in zip(points, back):
        values_p = [p[n] for n in space.names] if isinstance(p, dict) else p
        values_q = [q[n] for n in space.names] if isinstance(q, dict) else q
        assert all(_same_value(a, b, d) for a, b, d in zip(values_p, values_q, space.dimensions))


@settings(max_examples=200, deadline=None)
@given(spaces_and_points())
def test_snap_is_encode_of_decode_and_idempotent(data):
    space, _, rng = data
    U = rng.random((20, space.n_columns))
    snapped = space.snap(U)
    # A real column goes through low + u * span and back: each step rounds to
    # the float spacing at max(|low|, |high|), which is span-relative error
    # eps * max(|low|, |high|) / span in u (on the log scale for log priors).
    # Issue 17: a fixed atol of 1e-12 failed for Real(21.16, 21.16015625).
    for dim, cols in zip(space.dimensions, space._slices):
        if isinstance(dim, Real):
            scale = max(abs(dim._lo), abs(dim._hi)) / (dim._hi - dim._lo)
            atol = 8 * np.finfo(float).eps * max(scale, 1.0)
            if dim.prior == "log-uniform":  # exp then log: relative error of x, in log units
                atol += 8 * np.finfo(float).eps / (dim._hi - dim._lo)
            np.testing.assert_allclose(snapped[:, cols], space.encode(space.decode(U))[:, cols],
                                       rtol=0, atol=atol)
    discrete = [c for d, c in zip(space.dimensions, space._slices) if not isinstance(d, Real)]
    for cols in discrete:
        np.testing.assert_array_equal(snapped[:, cols], space.encode(space.decode(U))[:, cols])
    np.testing.assert_array_equal(space.snap(snapped), snapped)
    # Snapping a feasible encoding changes nothing.
    X = space.encode(space.decode(U))
    np.testing.assert_array_equal(space.snap(X), X)


def test_samples_follow_each_dimension_prior_and_reproduce_from_the_seed():
    # Issue 17: the old test only encoded sampled points, which cannot fail
    # since decoding clips. This one checks the distribution of 4,000 draws.
    space = Space([Real(-2.0, 3.0), Real(1e-3, 1e3, prior="log-uniform"), Integer(0, 9),
                   Integer(1, 1000, prior="log-uniform"), Categorical(["a", "b", "c"]),
                   Binary()])
    points = space.sample(4000, random_state=3)
    assert points == space.sample(4000, random_state=3)
    assert points != space.sample(4000, random_state=4)
    columns = list(zip(*points))
    assert all(type(v) is float for v in columns[0] + columns[1])
    assert all(type(v) is int for v in columns[2] + columns[3] + columns[5])
    # Uniform on the real line, and on the log scale for the log prior.
    assert stats.kstest(np.array(columns[0]), stats.uniform(-2.0, 5.0).cdf).pvalue > 1e-3
    assert stats.kstest(np.log10(columns[1]), stats.uniform(-3.0, 6.0).cdf).pvalue > 1e-3
    # Every integer, category and bit equally likely (chi-square on the counts).
    for values, support in ((columns[2], range(10)), (columns[4], "abc"), (columns[5], (0, 1))):
        counts = [values.count(v) for v in support]
        assert stats.chisquare(counts).pvalue > 1e-3
    # The log-uniform integer k owns [k - 0.5, k + 0.5) on the log scale, so
    # the integers 1-9, 10-99 and 100-1000 get log(9.5/0.5), log(99.5/9.5)
    # and log(1000.5/99.5) of log(1000.5/0.5) (0.39, 0.31, 0.30).
    decades = np.bincount(np.minimum(np.log10(columns[3]).astype(int), 2), minlength=3)
    edges = np.log([0.5, 9.5, 99.5, 1000.5])
    expected = np.diff(edges) / (edges[-1] - edges[0]) * len(points)
    assert stats.chisquare(decades, expected).pvalue > 1e-3


# -- specific behaviour -------------------------------------------------------------------

def test_integer_values_get_equal_shares_of_the_unit_interval():
    dim = Integer(0, 3)
    u = np.linspace(0, 1, 40_001)[:-1]
    counts = np.bincount(dim.decode(u[:, None]), minlength=4)
    assert np.all(np.abs(counts / len(u) - 0.25) < 1e-3)
    np.testing.assert_allclose(dim.encode([0, 1, 2, 3]).ravel(), [0.125, 0.375, 0.625, 0.875])


def test_log_uniform_real_spreads_over_orders_of_magnitude():
    dim = Real(1e-4, 1.0, prior="log-uniform")
    assert Real(1e-4, 1.0, log=True) == dim
    np.testing.assert_allclose(dim.encode([1e-4, 1e-2, 1.0]).ravel(), [0.0, 0.5, 1.0])


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


def test_dict_space_gives_dicts_and_names_columns():
    space = Space({"lr": Real(1e-4, 1, log=True), "depth": Integer(1, 8),
                   "kind": Categorical(["a", "b", "c"])})
    assert space.names == ["lr", "depth", "kind"]
    assert space.n_columns == 5
    assert space.columns_of("kind") == slice(2, 5)
    point = space.sample(1, 0)[0]
    assert set(point) == {"lr", "depth", "kind"}
    with pytest.raises(ValueError, match="missing dimension"):
        space.encode([{"lr": 0.1, "depth": 2}])
    with pytest.raises(ValueError, match="unknown dimension"):
        space.encode([{"lr": 0.1, "depth": 2, "kind": "a", "other": 1}])


def test_shorthand_dimensions():
    space = Space([(0, 10), (0.0, 1.0), ["x", "y"]])
    assert isinstance(space.dimensions[0], Integer)
    assert isinstance(space.dimensions[1], Real)
    assert isinstance(space.dimensions[2], Categorical)
    assert space.names == ["x0", "x1", "x2"]


def test_grid_enumerates_every_discrete_point_once():
    space = Space([Integer(0, 2), Binary(), Categorical(["a", "b"])])
    grid = space.grid()
    assert grid.shape == (12, 4) and space.cardinality == 12
    assert len({tuple(map(repr, p)) for p in space.decode(grid)}) == 12
    with pytest.raises(ValueError, match="without Real"):
        Space([Real(0, 1)]).grid()


def test_sampling_is_reproducible_with_a_seed():
    space = Space([Real(0, 1), Integer(0, 100), Categorical(list("abcdef"))])
    assert space.sample(5, 42) == space.sample(5, 42)
    assert space.sample(5, 42) != space.sample(5, 43)


@pytest.mark.parametrize("make, message", [
    (lambda: Real(1, 1, name="lr"), "dimension 'lr': low must be smaller than high"),
    (lambda: Real(0, math.inf, name="lr"), "dimension 'lr': high must be finite"),
    (lambda: Real(0, 1, prior="log-uniform", name="lr"), "dimension 'lr': a log-uniform prior"),
    (lambda: Real(0, 1, prior="normal", name="lr"), "dimension 'lr': prior must be one of"),
    (lambda: Real(1, 2, prior="uniform", log=True, name="lr"), "contradicts"),
    (lambda: Real("a", 2, name="lr"), "dimension 'lr': low must be a number"),
    (lambda: Integer(0, 2.5, name="depth"), "dimension 'depth': high must be an integer"),
    (lambda: Integer(3, 3, name="depth"), "dimension 'depth': low must be smaller"),
    (lambda: Integer(0, 5, log=True, name="depth"), "needs low >= 1"),
    (lambda: Categorical([], name="kind"), "dimension 'kind': categories must not be empty"),
    (lambda: Categorical(["a", "a"], name="kind"), "dimension 'kind': category 'a' appears twice"),
    (lambda: Categorical([[1], [2]], name="kind"), "is not hashable"),
    (lambda: Categorical("abc", name="kind"), "categories must be a list"),
    (lambda: Space([]), "must not be empty"),
    (lambda: Space([Real(0, 1, name="a"), Real(0, 1, name="a")]), "repeated: \\['a'\\]"),
    (lambda: Space({"a": Real(0, 1, name="b")}), "names must agree"),
    (lambda: Space([object()]), "dimension 'x0': cannot make a dimension"),
])
def test_bad_definitions_raise_value_error_naming_the_dimension(make, message):
    with pytest.raises(ValueError, match=message):
        make()


@pytest.mark.parametrize("point, message", [
    ([2.0, 1, "a"], "dimension 'x': value 2.0 is outside"),
    ([0.5, 1.5, "a"], "dimension 'n': value 1.5 is not an integer"),
    ([0.5, 1, "z"], "dimension 'c': 'z' is not one of the categories"),
    ([0.5, 1], "has 2 values; the space has 3"),
])
def test_infeasible_points_raise_value_error_naming_the_dimension(point, message):
    space = Space([Real(0, 1, name="x"), Integer(0, 3, name="n"),
                   Categorical(["a", "b"], name="c")])
    with pytest.raises(ValueError, match=message):
        space.encode([point])


def test_encode_rejects_a_bare_point():
    with pytest.raises(ValueError, match="wrap a single point"):
        Space([Real(0, 1), Real(0, 1)]).encode([0.1, 0.2])


# -- bad input: refused with a message naming the dimension, or accepted as the number it is

MIXED = Space([Real(0, 1, name="x"), Integer(0, 3, name="n"), Categorical(["a", "b"], name="c"),
               Binary(name="b")])
REAL_TAKES = "a Real dimension takes an int or float"
INTEGER_TAKES = "an Integer dimension takes an int"


@pytest.mark.fault
@pytest.mark.parametrize("point, message", [
    (["0.5", 2, "a", 1], f"dimension 'x': value '0.5' is a string, not a number; {REAL_TAKES}"),
    ([b"0.5", 2, "a", 1], "dimension 'x': value b'0.5' is a string, not a number"),
    ([np.str_("0.5"), 2, "a", 1], r"dimension 'x': value np.str_\('0.5'\) is a string"),
    ([0.5, "2", "a", 1], f"dimension 'n': value '2' is a string, not a number; {INTEGER_TAKES}"),
    ([0.5, 2, "a", "1"], "dimension 'b': value '1' is a string, not a number; a Binary dimension "
                         "takes 0, 1, False or True"),
    ([True, 2, "a", 1], f"dimension 'x': value True is a bool, not a number; {REAL_TAKES}"),
    ([0.5, False, "a", 1], f"dimension 'n': value False is a bool, not a number; {INTEGER_TAKES}"),
    ([0.5, np.bool_(True), "a", 1], "dimension 'n': value np.True_ is a bool, not a number"),
    ([np.array(True), 2, "a", 1], r"dimension 'x': value array\(True\) is a bool"),
    ([[0.5], 2, "a", 1], r"dimension 'x': value \[0.5\] is a list, not a single number"),
    ([0.5, (2,), "a", 1], r"dimension 'n': value \(2,\) is a tuple, not a single number"),
    ([np.array([0.5]), 2, "a", 1], r"dimension 'x': value array\(\[0.5\]\) is an array of "
                                   r"shape \(1,\), not a single number"),
    ([None, 2, "a", 1], f"dimension 'x': value None is not a number; {REAL_TAKES}"),
    ([0.5 + 0j, 2, "a", 1], r"dimension 'x': value \(0.5\+0j\) is not a real number"),
], ids=["str", "bytes", "np.str_", "str-integer", "str-binary", "bool-real", "bool-integer",
        "np.bool_-integer", "0d-bool-real", "list", "tuple", "1d-array", "None", "complex"])
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


@pytest.mark.fault
@pytest.mark.parametrize("make, message", [
    (lambda: Real(1, 2, log="yes", name="lr"), "dimension 'lr': log must be True or False, "
                                               "got 'yes'"),
    (lambda: Integer(1, 8, log=1, name="depth"), "dimension 'depth': log must be True or False"),
    (lambda: Real(-1e308, 1e308, name="lr"), "dimension 'lr': high - low overflows float64; low "
                                             r"and high must be less than 1.798e\+308 apart"),
    (lambda: Real(0, 5e-324, name="lr"), r"dimension 'lr': \[low, high\] = \[0.0, 5e-324\] "
                                         "holds only 2 float64 values; a Real needs at least "
                                         r"2\*\*20 = 1048576"),
    (lambda: Real(1, 1 + 2.3e-16, name="lr"), r"dimension 'lr': \[low, high\] = "
                                              r"\[1.0, 1.0000000000000002\] holds only 2"),
    (lambda: Real(1, 1 + 1e-12, name="lr"), "dimension 'lr': .* holds only 4505 float64 values"),
    (lambda: Real(1e300, 1e300 * (1 + 1e-9), log=True, name="lr"),
     r"dimension 'lr': \[log\(low\), log\(high\)\] = .* holds only 8797 float64 values"),
    (lambda: Real(0, 10**400, name="lr"), "dimension 'lr': high must be finite and within the "
                                          r"float64 range \(magnitude at most 1.798e\+308\), "
                                          r"got 1000000000.*\.\.\.$"),
    (lambda: Real(Fraction(-10**400, 3), 0, name="lr"), "dimension 'lr': low must be finite"),
    (lambda: Integer(0, 10**30, name="depth"), "dimension 'depth': high must lie within "
                                               r"\+-2\*\*49 = \+-562949953421312"),
    (lambda: Integer(-2**49 - 1, 0, name="depth"), "dimension 'depth': low must lie within"),
    (lambda: Integer(0, 2.0**53, name="depth"), "dimension 'depth': high must lie within"),
    (lambda: Integer(1, 2**40 + 1, log=True, name="depth"),
     r"dimension 'depth': a log-uniform prior needs high <= 2\*\*40 = 1099511627776"),
    (lambda: Integer(0, Decimal("5.5"), name="depth"), "dimension 'depth': high must be an "
                                                       r"integer, got Decimal\('5.5'\)"),
], ids=["log-str", "log-int", "span-overflow", "subnormal-span", "2-floats", "4505-floats",
        "log-scale-degenerate", "real-beyond-float64", "fraction-beyond-float64",
        "integer-10**30", "integer-below-limit", "integer-float-2**53", "log-integer-2**40+1",
        "integer-decimal-5.5"])
def test_bad_bounds_are_refused_naming_the_argument(make, message):
    with pytest.raises(ValueError, match=message):
        make()


@pytest.mark.fault
@pytest.mark.parametrize("make, expected", [
    (lambda: Real(Decimal(0), 1), Real(0.0, 1.0)),
    (lambda: Real(Fraction(0), 1), Real(0.0, 1.0)),
    (lambda: Real(np.array(0.0), 1), Real(0.0, 1.0)),
    (lambda: Real(Fraction(1, 4), Decimal("0.5"), log=np.bool_(True)), Real(0.25, 0.5, log=True)),
    (lambda: Integer(Decimal(0), Fraction(10, 2)), Integer(0, 5)),
    (lambda: Integer(np.array(3), np.uint64(7)), Integer(3, 7)),
    (lambda: Space([(Decimal(0), Fraction(1, 2))]).dimensions[0], Real(0.0, 0.5, name="x0")),
], ids=["decimal", "fraction", "0d-array", "fraction-decimal-np.bool_-log", "integer-decimal",
        "integer-0d-uint64", "shorthand"])
def test_bounds_of_any_real_number_type_are_accepted(make, expected):
    dim = make()
    assert dim == expected
    assert type(dim.low) is type(expected.low) and type(dim.high) is type(expected.high)


@pytest.mark.fault
def test_integer_bounds_are_exact_up_to_the_limit_and_refused_beyond():
    for dim in (Integer(-2**49, 2**49), Integer(2**49 - 10**4, 2**49),
                Integer(2**40 - 10**4, 2**40, log=True)):
        values = [*range(dim.low, dim.low + 1000), *range(dim.high - 1000, dim.high + 1)]
        assert dim.decode(dim.encode(values)) == values
    with pytest.raises(ValueError, match="dimension 'depth': high must lie within"):
        Integer(0, 2**49 + 1, name="depth")


# Fuzzing: random (possibly garbage) bounds and point values.

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
    st.text(max_size=3), st.binary(max_size=2), st.booleans(), st.none(),
    st.sampled_from([np.str_("0.5"), np.bool_(True), np.array(False), 0.5 + 0j, object(), {}]),
    st.lists(finite, max_size=2), finite.map(lambda v: np.array([v])))

any_number = st.one_of(
    st.floats(), st.integers(-2**60, 2**60), st.sampled_from([10**30, -10**400, 2**49, 2**53]),
    st.decimals(), st.fractions(), finite.map(np.float64), st.integers(-10**6, 10**6).map(np.int64),
    finite.map(np.array))


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
            dims.append(Binary(name=name) if kind is Binary
                        else kind(low, high, log=log, name=name))
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
            assert math.isclose(float(given_value), back, rel_tol=1e-9,
                                abs_tol=1e-9 * (dim.high - dim.low))
        else:
            assert back == given_value


# -- conditional dimensions ----------------------------------------------------------

def svc_space():
    """The issue's example: degree only for the polynomial kernel, gamma for rbf and poly."""
    return Space({
        "kernel": Categorical(["linear", "rbf", "poly"]),
        "C": Real(1e-3, 1e3, prior="log-uniform"),
        "gamma": Real(1e-4, 1.0, prior="log-uniform", active_if={"kernel": ["rbf", "poly"]}),
        "degree": Integer(2, 5, active_if={"kernel": "poly"}),
    })


SVC_ACTIVE = {"linear": {"kernel", "C"}, "rbf": {"kernel", "C", "gamma"},
              "poly": {"kernel", "C", "gamma", "degree"}}


def reference_active(space, point):
    """The active dimensions of a user-facing point, straight from the definitions.

    Independent of the vectorized code under test: a dimension is active when
    every parent is active and the point gives the parent an allowed value.
    """
    dims = dict(zip(space.names, space.dimensions))
    memo = {}

    def active(name):
        if name not in memo:
            condition = dims[name].active_if or {}
            memo[name] = all(active(parent) and point[parent] in values
                             for parent, values in condition.items())
        return memo[name]

    return {name for name in space.names if active(name)}


# -- the SVC example ----------------------------------------------------------------------

def test_svc_points_never_show_inactive_dimensions():
    space = svc_space()
    points = space.sample(300, random_state=0)
    for point in points:
        assert set(point) == SVC_ACTIVE[point["kernel"]]
        assert list(point) == [n for n in space.names if n in point]   # the space's order
    assert {p["kernel"] for p in points} == {"linear", "rbf", "poly"}
    assert {p["degree"] for p in points if "degree" in p} == {2, 3, 4, 5}


def test_svc_encoding_writes_the_inactive_constant_in_inactive_columns():
    space = svc_space()
    assert space.conditional and space.n_columns == 6
    X = space.encode([{"kernel": "linear", "C": 1.0},
                      {"kernel": "rbf", "C": 1.0, "gamma": 0.01},
                      {"kernel": "poly", "C": 1.0, "gamma": 0.01, "degree": 3}])
    gamma, degree = space.columns_of("gamma"), space.columns_of("degree")
    np.testing.assert_array_equal(X[:, gamma.start], [INACTIVE, 0.5, 0.5])
    np.testing.assert_array_equal(X[0, degree], [INACTIVE])
    np.testing.assert_array_equal(X[1, degree], [INACTIVE])
    assert 0 <= X[2, degree.start] <= 1
    np.testing.assert_array_equal(space.active_mask(X), [[True, True, False, False],
                                                        [True, True, True, False],
                                                        [True, True, True, True]])
    decoded = space.decode(X)
    assert decoded[0] == {"kernel": "linear", "C": 1.0}
    assert decoded[1] == {"kernel": "rbf", "C": 1.0, "gamma": pytest.approx(0.01, rel=1e-12)}
    assert decoded[2] == {"kernel": "poly", "C": 1.0, "gamma": pytest.approx(0.01, rel=1e-12),
                          "degree": 3}


def test_points_differing_only_in_inactive_values_encode_identically():
    space = svc_space()
    plain = {"kernel": "linear", "C": 2.0}
    variants = [dict(plain, degree=2), dict(plain, degree=5, gamma=0.1),
                dict(plain, gamma=None, degree="not even a number")]   # ignored, not checked
    X = space.encode([plain] + variants)
    assert (X == X[0]).all()
    assert all(space.drop_inactive(v) == plain for v in variants)
    assert all(space.point_to_json(v) == space.point_to_json(plain) for v in variants)
    assert not space.is_active(variants[0], "degree") and space.is_active(plain, "C")


def test_a_missing_active_dimension_is_an_error_naming_it_and_why():
    space = svc_space()
    with pytest.raises(ValueError, match=r"missing dimension\(s\) \['degree'\], which is active "
                                         r"there \(because kernel = 'poly'\)"):
        space.encode([{"kernel": "poly", "C": 1.0, "gamma": 0.1}])
    with pytest.raises(ValueError, match=r"missing dimension\(s\) \['C'\]"):
        space.encode([{"kernel": "linear"}])
    with pytest.raises(ValueError, match="unknown dimension"):
        space.encode([{"kernel": "linear", "C": 1.0, "coef0": 1.0}])
    with pytest.raises(ValueError, match="dimension 'degree': value 7 is not an integer"):
        space.encode([{"kernel": "poly", "C": 1.0, "gamma": 0.1, "degree": 7}])


def test_snap_respects_the_conditions_and_is_encode_of_decode():
    space = svc_space()
    U = np.random.default_rng(0).random((2000, space.n_columns))
    S = space.snap(U)
    active = space.active_mask(S)
    np.testing.assert_array_equal(active, space.active_mask(U))
    for j, name in enumerate(space.names):
        cols = space.columns_of(name)
        assert (S[~active[:, j], cols] == INACTIVE).all()
        assert ((S[active[:, j], cols] >= 0) & (S[active[:, j], cols] <= 1)).all()
    np.testing.assert_array_equal(space.snap(S), S)
    np.testing.assert_allclose(space.encode(space.decode(U)), S, rtol=0, atol=1e-12)
    discrete = np.r_[0:3, 5]
    np.testing.assert_array_equal(space.encode(space.decode(U))[:, discrete], S[:, discrete])


def test_snap_of_many_candidate_rows_is_vectorized():
    space = svc_space()
    U = np.random.default_rng(0).random((50_000, space.n_columns))
    space.snap(U[:10])
    start = time.perf_counter()
    space.snap(U)
    space.active_mask(U)
    # A per-row Python loop takes about a second here; numpy takes milliseconds.
    assert time.perf_counter() - start < 0.5


def test_candidates_of_the_acquisition_respect_the_conditions():
    space = svc_space()
    rng = np.random.default_rng(1)
    centers = space.encode([{"kernel": "linear", "C": 1.0},
                            {"kernel": "poly", "C": 1.0, "gamma": 0.01, "degree": 3}])
    for X in (space.snap(acq.sobol_candidates(512, space.n_columns, rng)),
              acq.local_candidates(space, centers, 300, rng),
              acq.jump_candidates(space, centers, 300, rng)):
        active = space.active_mask(X)
        for j, name in enumerate(space.names):
            assert (X[~active[:, j], space.columns_of(name)] == INACTIVE).all()
        np.testing.assert_array_equal(space.snap(X), X)
        kernels = [p["kernel"] for p in space.decode(X)]
        assert all(set(p) == SVC_ACTIVE[k] for p, k in zip(space.decode(X), kernels))


def test_fill_inactive_keeps_the_points_and_spreads_activated_children():
    space = svc_space()
    S = space.sample_encoded(500, np.random.default_rng(0))
    filled = space.fill_inactive(S, np.random.default_rng(1))
    assert ((filled >= 0) & (filled <= 1)).all()
    np.testing.assert_array_equal(space.snap(filled), S)   # the same points
    # Switching the kernel to poly activates degree and gamma at drawn values,
    # not at their lowest ones (what the INACTIVE columns would snap to).
    poly = filled.copy()
    poly[:, space.columns_of("kernel")] = [0.0, 0.0, 1.0]
    points = space.decode(space.snap(poly))
    assert {p["degree"] for p in points} == {2, 3, 4, 5}
    assert len({p["gamma"] for p in points}) == len(points)
    plain = Space([Real(0, 1), Binary()])
    X = plain.sample_encoded(5, np.random.default_rng(0))
    np.testing.assert_array_equal(plain.fill_inactive(X, np.random.default_rng(0)), X)


def test_json_round_trip_writes_null_for_inactive_dimensions():
    space = svc_space()
    point = {"kernel": "rbf", "C": 0.5, "gamma": 0.25, "degree": 4}
    values = space.point_to_json(point)
    assert values == [1, 0.5, 0.25, None]
    assert space.point_from_json(values) == {"kernel": "rbf", "C": 0.5, "gamma": 0.25}
    for p in space.sample(50, random_state=2):
        assert space.point_from_json(space.point_to_json(p)) == p


def test_to_dict_records_each_condition_as_stored_values():
    desc = svc_space().to_dict()
    assert [d.get("active_if") for d in desc["dimensions"]] == [
        None, None, {"kernel": [1, 2]}, {"kernel": [2]}]
    assert "active_if" not in desc["dimensions"][0]
    other = Space({**svc_space()._as_given(),
                   "degree": Integer(2, 5, active_if={"kernel": ["rbf", "poly"]})})
    assert other.to_dict() != desc and other != svc_space()


# -- definitions --------------------------------------------------------------------------

def test_conditions_are_canonical_whatever_way_they_are_written():
    a = Space({"k": Categorical(["x", "y", "z"]), "n": Integer(1, 4),
               "c": Real(0, 1, active_if={"k": ["z", "x"], "n": [3.0, 1, 3]})})
    b = Space({"c": Real(0, 1, active_if={"n": (1, 3), "k": {"x", "z"}}),
               "k": Categorical(["x", "y", "z"]), "n": Integer(1, 4)})
    assert a.dimensions[2].active_if == {"k": ["x", "z"], "n": [1, 3]}
    assert b.dimensions[0] == a.dimensions[2] and hash(b.dimensions[0]) == hash(a.dimensions[2])
    assert a.to_dict()["dimensions"][2]["active_if"] == b.to_dict()["dimensions"][0]["active_if"]
    assert repr(a.dimensions[2]) == ("Real(0.0, 1.0, name='c', "
                                     "active_if={'k': ['x', 'z'], 'n': [1, 3]})")
    bit = Space({"on": Binary(), "v": Integer(0, 3, active_if={"on": True})})
    assert bit.dimensions[1].active_if == {"on": [1]}
    assert repr(Binary(active_if={"on": 1})) == "Binary(active_if={'on': [1]})"


def test_conditions_survive_renaming_copying_and_pickling():
    space = svc_space()
    assert Space(space) == space and hash(Space(space)) == hash(space)
    assert Space(space).to_dict() == space.to_dict()
    clone = pickle.loads(pickle.dumps(space))
    assert clone == space and clone.sample(5, 0) == space.sample(5, 0)
    dim = Integer(2, 5, active_if={"kernel": "poly"})
    assert dim._with_name("degree").active_if == {"kernel": ["poly"]}
    assert dim != Integer(2, 5) and dim == Integer(2, 5, active_if={"kernel": ["poly"]})
    assert repr(space).count("active_if") == 2
    # The public attribute is a copy: changing it changes nothing.
    space.dimensions[3].active_if["kernel"].append("linear")
    assert space.dimensions[3].active_if == {"kernel": ["poly"]}


def test_a_parent_may_follow_its_child_and_the_given_order_is_kept():
    space = Space({"degree": Integer(2, 5, active_if={"kernel": "poly"}),
                   "kernel": Categorical(["linear", "poly"]), "C": Real(0.1, 1.0)})
    assert space.names == ["degree", "kernel", "C"]
    assert space.columns_of("degree") == slice(0, 1) and space.columns_of("kernel") == slice(1, 3)
    X = space.encode([{"kernel": "linear", "C": 0.5}, {"kernel": "poly", "C": 0.5, "degree": 5}])
    assert X[0, 0] == INACTIVE and X[1, 0] == 1 - 1 / 8
    assert space.decode(X) == [{"kernel": "linear", "C": 0.5},
                               {"degree": 5, "kernel": "poly", "C": 0.5}]


def test_nesting_three_levels_deep():
    # A child whose parent is inactive is inactive, even where the parent's
    # columns (all INACTIVE) would decode to an allowed value: "linear" is the
    # first category, which an all-equal one-hot block decodes to.
    space = Space({
        "model": Categorical(["svc", "tree"]),
        "kernel": Categorical(["linear", "poly"], active_if={"model": "svc"}),
        "scale": Binary(active_if={"kernel": "linear"}),
        "degree": Integer(2, 4, active_if={"kernel": "poly"}),
        "coef0": Real(0.0, 1.0, active_if={"degree": [3, 4]}),
        "depth": Integer(1, 3, active_if={"model": "tree"}),
    })
    X = space.encode([{"model": "tree", "depth": 2},
                      {"model": "svc", "kernel": "linear", "scale": 1},
                      {"model": "svc", "kernel": "poly", "degree": 2},
                      {"model": "svc", "kernel": "poly", "degree": 4, "coef0": 0.5}])
    np.testing.assert_array_equal(space.active_mask(X), [
        [1, 0, 0, 0, 0, 1], [1, 1, 1, 0, 0, 0], [1, 1, 0, 1, 0, 0], [1, 1, 0, 1, 1, 0]])
    points = space.sample(500, random_state=0)
    for point in points:
        assert set(point) == reference_active(space, point)
    assert sum("coef0" in p for p in points) > 50
    # tree: 3 depths; svc+linear: 2; svc+poly: degree 2, or 3-4 with coef0 (reals).
    assert space.cardinality == math.inf
    discrete = Space({**space._as_given(), "coef0": Binary(active_if={"degree": [3, 4]})})
    assert discrete.cardinality == 3 + 2 + (1 + 2 * 2) == len(discrete.grid())


def test_several_parents_mean_and():
    space = Space({"a": Binary(), "b": Categorical(["x", "y", "z"]),
                   "c": Integer(0, 9, active_if={"a": 1, "b": ["y", "z"]})})
    points = space.sample(400, random_state=1)
    assert all(("c" in p) == (p["a"] == 1 and p["b"] in ("y", "z")) for p in points)
    assert space.cardinality == 2 * 3 - 2 + 2 * 10 == len(space.grid())


def test_cardinality_and_grid_count_distinct_points_only():
    space = Space({"model": Categorical(["a", "b"]), "x": Integer(1, 3, active_if={"model": "a"})})
    grid = space.grid()
    assert space.cardinality == 4 and grid.shape == (4, 3)
    assert len(np.unique(grid, axis=0)) == 4
    assert space.decode(grid) == [{"model": "a", "x": 1}, {"model": "a", "x": 2},
                                  {"model": "a", "x": 3}, {"model": "b"}]
    np.testing.assert_array_equal(space.snap(grid), grid)
    assert Space({**space._as_given(), "r": Real(0, 1, active_if={"model": "b"})}).cardinality \
        == math.inf


def test_cardinality_of_a_huge_conditional_space_is_counted_not_enumerated():
    # 30 switches, each with a child of 10 values: (1 + 10)**30 points; a star
    # of 25 binaries under one categorical, each with a child: exponential
    # states if enumerated, a product if counted as a tree.
    dims = {}
    for i in range(30):
        dims[f"s{i}"] = Binary()
        dims[f"v{i}"] = Integer(0, 9, active_if={f"s{i}": 1})
    assert Space(dims).cardinality == 11**30
    star = {"root": Categorical(["on", "off"])}
    for i in range(25):
        star[f"b{i}"] = Binary(active_if={"root": "on"})
        star[f"c{i}"] = Integer(1, 4, active_if={f"b{i}": 0})
    start = time.perf_counter()
    assert Space(star).cardinality == 1 + (1 + 4) ** 25
    assert time.perf_counter() - start < 0.5


# -- errors ---------------------------------------------------------------------------------

KERNEL = Categorical(["linear", "rbf", "poly"])


@pytest.mark.parametrize("make, message", [
    (lambda: Space({"kernel": KERNEL, "degree": Integer(2, 5, active_if={"kernal": "poly"})}),
     r"dimension 'degree': active_if\['kernal'\] names no dimension of the space; the parent "
     r"must be one of \['kernel'\]"),
    (lambda: Space({"C": Real(0, 1), "degree": Integer(2, 5, active_if={"C": 0.5})}),
     r"dimension 'degree': active_if\['C'\]: parent 'C' is a Real; conditions take discrete "
     r"parents \(Categorical, Integer or Binary\)"),
    (lambda: Space({"kernel": KERNEL, "degree": Integer(2, 5, active_if={"kernel": "sigmoid"})}),
     r"dimension 'degree': active_if\['kernel'\]: 'kernel' cannot take the value 'sigmoid' "
     r"\(allowed: one of \['linear', 'rbf', 'poly'\]\)"),
    (lambda: Space({"n": Integer(1, 3), "x": Real(0, 1, active_if={"n": [2, 4]})}),
     r"dimension 'x': active_if\['n'\]: 'n' cannot take the value 4 \(allowed: an integer in "
     r"\[1, 3\]\)"),
    (lambda: Space({"n": Integer(0, 3), "x": Real(0, 1, active_if={"n": True})}),
     r"'n' cannot take the value True"),
    (lambda: Space({"b": Binary(), "x": Real(0, 1, active_if={"b": 2})}),
     r"dimension 'x': active_if\['b'\]: 'b' cannot take the value 2 \(allowed: 0 or 1\)"),
    (lambda: Space({"p": Categorical([(1, "a"), (2, "b")]),
                    "x": Real(0, 1, active_if={"p": (1, "a")})}),
     r"cannot take the value 1 .*name a tuple category inside a list"),
    (lambda: Space({"a": Binary(active_if={"a": 1})}),
     r"dimension 'a': active_if\['a'\] names the dimension itself"),
    (lambda: Space({"a": Binary(active_if={"b": 1}), "b": Binary(active_if={"a": 0})}),
     r"dimension 'a': active_if conditions form a cycle \('a' -> 'b' -> 'a'"),
    (lambda: Space({"r": Binary(), "a": Binary(active_if={"c": 1}),
                    "b": Binary(active_if={"a": 1, "r": 0}), "c": Binary(active_if={"b": 1})}),
     r"dimension 'a': active_if conditions form a cycle \('a' -> 'c' -> 'b' -> 'a'"),
    (lambda: Integer(2, 5, name="degree", active_if={"kernel": []}),
     r"dimension 'degree': active_if\['kernel'\] is empty; give at least one value of 'kernel'"),
    (lambda: Integer(2, 5, name="degree", active_if="kernel == 'poly'"),
     r"dimension 'degree': active_if must be a dict of parent dimension name -> allowed value "
     r"or list of values \(or None\), got \"kernel == 'poly'\""),
    (lambda: Integer(2, 5, name="degree", active_if=[("kernel", "poly")]),
     r"dimension 'degree': active_if must be a dict"),
    (lambda: Real(0, 1, name="x", active_if={1: "a"}),
     r"dimension 'x': active_if keys must be names of parent dimensions \(strings\), got 1"),
    (lambda: Real(0, 1, name="x", active_if={"k": [["a"]]}),
     r"dimension 'x': active_if\['k'\] value \['a'\] is not hashable"),
    (lambda: Space([Categorical(["a", "b"], name="k"), Real(0, 1, active_if={"k": "a"})]),
     r"dimension 'x1' has active_if, which needs a space built from a dict of name -> "
     r"dimension"),
])
def test_bad_conditions_raise_value_error_naming_the_dimension_and_parent(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_is_active_checks_its_arguments():
    space = svc_space()
    with pytest.raises(ValueError, match="unknown dimension 'coef0'"):
        space.is_active({"kernel": "linear", "C": 1.0}, "coef0")
    with pytest.raises(ValueError, match="name must be the name of a dimension"):
        space.is_active({"kernel": "linear", "C": 1.0}, 2)
    with pytest.raises(ValueError, match="'sigmoid' is not one of the categories"):
        space.is_active({"kernel": "sigmoid", "C": 1.0}, "C")


# -- unconditional spaces are unchanged ------------------------------------------------------

def test_an_unconditional_space_encodes_snaps_and_describes_as_before():
    space = Space({"r": Real(0.0, 4.0), "n": Integer(1, 3), "k": Categorical(["a", "b"]),
                   "f": Binary()})
    assert not space.conditional
    assert all(d.active_if is None for d in space.dimensions)
    assert space.to_dict() == {"dimensions": [
        {"type": "Real", "name": "r", "low": 0.0, "high": 4.0, "prior": "uniform"},
        {"type": "Integer", "name": "n", "low": 1, "high": 3, "prior": "uniform"},
        {"type": "Categorical", "name": "k", "categories": ["'a'", "'b'"]},
        {"type": "Binary", "name": "f"}], "points_are_dicts": True}
    np.testing.assert_array_equal(space.encode([{"r": 1.0, "n": 2, "k": "b", "f": 1}]),
                                  [[0.25, 0.5, 0.0, 1.0, 1.0]])
    np.testing.assert_array_equal(space.snap([[1.5, 0.9, 0.3, 0.2, 0.4]]),
                                  [[1.0, 5 / 6, 1.0, 0.0, 0.0]])
    assert space.active_mask(np.zeros((2, 5))).all() and space.active_mask(np.zeros((2, 5))).shape \
        == (2, 4)
    assert space.point_to_json({"r": 1.0, "n": 2, "k": "b", "f": 1}) == [1.0, 2, 1, 1]
    assert space.drop_inactive({"f": 1, "r": 1.0, "n": 2, "k": "b"}) == \
        {"r": 1.0, "n": 2, "k": "b", "f": 1}
    grid = Space([Integer(0, 1), Categorical(["a", "b"])]).grid()
    np.testing.assert_array_equal(grid, [[0.25, 1, 0], [0.25, 0, 1], [0.75, 1, 0], [0.75, 0, 1]])
    assert repr(Integer(0, 1)) == "Integer(0, 1)" and repr(Binary()) == "Binary()"


# -- properties of random conditional spaces -------------------------------------------------

@st.composite
def conditional_spaces(draw, discrete=False):
    """Up to 6 dimensions, each conditional on up to two earlier discrete ones, shuffled."""
    n = draw(st.integers(1, 6))
    kinds = draw(st.lists(st.sampled_from(["cat", "int", "bin"] + ([] if discrete else ["real"])),
                          min_size=n, max_size=n))
    dims, values = [], []
    for i, kind in enumerate(kinds):
        parents = [j for j in range(i) if kinds[j] != "real"]
        chosen = draw(st.lists(st.sampled_from(parents), unique=True, max_size=2)) if parents \
            else []
        active_if = {f"d{j}": draw(st.lists(st.sampled_from(values[j]), min_size=1, unique=True))
                     for j in chosen} or None
        if kind == "cat":
            size = draw(st.integers(1, 4))
            dim = Categorical(["a", None, 3, ("t", 1)][:size], active_if=active_if)
        elif kind == "int":
            low = draw(st.integers(-3, 3))
            dim = Integer(low, low + draw(st.integers(1, 3)), active_if=active_if)
        elif kind == "bin":
            dim = Binary(active_if=active_if)
        else:
            dim = Real(-1.0, 2.0, active_if=active_if)
        dims.append(dim)
        values.append(dim.values() if kind != "real" else None)
    order = draw(st.permutations(range(n)))
    return Space({f"d{i}": dims[i] for i in order})


@settings(max_examples=150, deadline=None)
@given(conditional_spaces(), st.integers(0, 2**32 - 1))
def test_snap_is_idempotent_encode_of_decode_and_matches_the_definitions(space, seed):
    U = np.random.default_rng(seed).random((40, space.n_columns))
    S = space.snap(U)
    np.testing.assert_array_equal(space.snap(S), S)
    points = space.decode(U)
    assert points == space.decode(S)
    np.testing.assert_allclose(space.encode(points), S, rtol=0, atol=1e-12)
    active = space.active_mask(U)
    np.testing.assert_array_equal(active, space.active_mask(S))
    for point, row, flags in zip(points, S, active):
        names = {n for n, on in zip(space.names, flags) if on}
        assert set(point) == names == reference_active(space, point)
        for name in space.names:
            cols = space.columns_of(name)
            if name in names:
                assert ((row[cols] >= 0) & (row[cols] <= 1)).all()
            else:
                assert (row[cols] == INACTIVE).all()
        assert space.point_from_json(space.point_to_json(point)) == point
        assert space.drop_inactive(point) == point


@settings(max_examples=120, deadline=None)
@given(conditional_spaces(discrete=True))
def test_cardinality_and_grid_count_the_distinct_feasible_points(space):
    # Brute force: every combination of values, with inactive values dropped.
    distinct = set()
    for combination in itertools.product(*(d.values() for d in space.dimensions)):
        point = dict(zip(space.names, combination))
        active = reference_active(space, point)
        distinct.add(tuple((n, repr(point[n])) for n in space.names if n in active))
    grid = space.grid()
    assert space.cardinality == len(distinct) == len(grid) == len(np.unique(grid, axis=0))
    np.testing.assert_array_equal(space.snap(grid), grid)
    decoded = {tuple((n, repr(v)) for n, v in p.items()) for p in space.decode(grid)}
    assert decoded == distinct
