import math
import numbers
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from treebo import Optimizer
from treebo.space import Binary, Categorical, Integer, Real, Space

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
