"""Space: encoding points, snapping, sampling, grids and the errors that name a dimension."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from treebo.space import Binary, Categorical, Integer, Real, Space

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


categories = st.lists(
    st.one_of(
        st.text(max_size=5),
        st.integers(-5, 5),
        st.none(),
        st.tuples(st.integers(0, 3), st.text(max_size=2)),
    ),
    min_size=1,
    max_size=6,
    unique_by=lambda v: (type(v).__name__, v),
)

dimensions = st.one_of(real_dims(), integer_dims(), categories.map(Categorical), st.just(Binary()))


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


# -- round trips (property-based) ----------------------------------------------------------


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
    # A fixed atol of 1e-12 is too tight for Real(21.16, 21.16015625).
    for j, dim in enumerate(space.dimensions):
        cols = space.columns_of(j)
        if isinstance(dim, Real):
            lo, hi = (
                (math.log(dim.low), math.log(dim.high))
                if dim.prior == "log-uniform"
                else (dim.low, dim.high)
            )  # the encoded scale
            scale = max(abs(lo), abs(hi)) / (hi - lo)
            atol = 8 * np.finfo(float).eps * max(scale, 1.0)
            if dim.prior == "log-uniform":  # exp then log: relative error of x, in log units
                atol += 8 * np.finfo(float).eps / (hi - lo)
            np.testing.assert_allclose(
                snapped[:, cols], space.encode(space.decode(U))[:, cols], rtol=0, atol=atol
            )
    discrete = [space.columns_of(j) for j, d in enumerate(space.dimensions) if d.is_discrete]
    for cols in discrete:
        np.testing.assert_array_equal(snapped[:, cols], space.encode(space.decode(U))[:, cols])
    np.testing.assert_array_equal(space.snap(snapped), snapped)
    # Snapping a feasible encoding changes nothing.
    X = space.encode(space.decode(U))
    np.testing.assert_array_equal(space.snap(X), X)


def test_samples_follow_each_dimension_prior_and_reproduce_from_the_seed():
    # The distribution of 4,000 draws (encoding sampled points alone cannot
    # fail, since decoding clips).
    space = Space(
        [
            Real(-2.0, 3.0),
            Real(1e-3, 1e3, prior="log-uniform"),
            Integer(0, 9),
            Integer(1, 1000, prior="log-uniform"),
            Categorical(["a", "b", "c"]),
            Binary(),
        ]
    )
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


# -- points as lists and dicts -------------------------------------------------------------


def test_dict_space_gives_dicts_and_names_columns():
    space = Space(
        {
            "lr": Real(1e-4, 1, log=True),
            "depth": Integer(1, 8),
            "kind": Categorical(["a", "b", "c"]),
        }
    )
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


def test_an_unconditional_space_encodes_snaps_and_describes_its_dimensions():
    space = Space(
        {"r": Real(0.0, 4.0), "n": Integer(1, 3), "k": Categorical(["a", "b"]), "f": Binary()}
    )
    assert not space.conditional
    assert all(d.active_if is None for d in space.dimensions)
    assert space.to_dict() == {
        "dimensions": [
            {"type": "Real", "name": "r", "low": 0.0, "high": 4.0, "prior": "uniform"},
            {"type": "Integer", "name": "n", "low": 1, "high": 3, "prior": "uniform"},
            {"type": "Categorical", "name": "k", "categories": ["'a'", "'b'"]},
            {"type": "Binary", "name": "f"},
        ],
        "points_are_dicts": True,
    }
    np.testing.assert_array_equal(
        space.encode([{"r": 1.0, "n": 2, "k": "b", "f": 1}]), [[0.25, 0.5, 0.0, 1.0, 1.0]]
    )
    np.testing.assert_array_equal(
        space.snap([[1.5, 0.9, 0.3, 0.2, 0.4]]), [[1.0, 5 / 6, 1.0, 0.0, 0.0]]
    )
    assert space.active_mask(np.zeros((2, 5))).all() and space.active_mask(
        np.zeros((2, 5))
    ).shape == (2, 4)
    assert space.point_to_json({"r": 1.0, "n": 2, "k": "b", "f": 1}) == [1.0, 2, 1, 1]
    assert space.drop_inactive({"f": 1, "r": 1.0, "n": 2, "k": "b"}) == {
        "r": 1.0,
        "n": 2,
        "k": "b",
        "f": 1,
    }
    grid = Space([Integer(0, 1), Categorical(["a", "b"])]).grid()
    np.testing.assert_array_equal(grid, [[0.25, 1, 0], [0.25, 0, 1], [0.75, 1, 0], [0.75, 0, 1]])
    assert repr(Integer(0, 1)) == "Integer(0, 1)" and repr(Binary()) == "Binary()"


# -- errors --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make, message",
    [
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
        (
            lambda: Categorical(["a", "a"], name="kind"),
            "dimension 'kind': category 'a' appears twice",
        ),
        (lambda: Categorical([[1], [2]], name="kind"), "is not hashable"),
        (lambda: Categorical("abc", name="kind"), "categories must be a list"),
        (lambda: Space([]), "must not be empty"),
        (lambda: Space([Real(0, 1, name="a"), Real(0, 1, name="a")]), "repeated: \\['a'\\]"),
        (lambda: Space({"a": Real(0, 1, name="b")}), "names must agree"),
        (lambda: Space([object()]), "dimension 'x0': cannot make a dimension"),
    ],
)
def test_bad_definitions_raise_value_error_naming_the_dimension(make, message):
    with pytest.raises(ValueError, match=message):
        make()


@pytest.mark.parametrize(
    "point, message",
    [
        ([2.0, 1, "a"], "dimension 'x': value 2.0 is outside"),
        ([0.5, 1.5, "a"], "dimension 'n': value 1.5 is not an integer"),
        ([0.5, 1, "z"], "dimension 'c': 'z' is not one of the categories"),
        ([0.5, 1], "has 2 values; the space has 3"),
    ],
)
def test_infeasible_points_raise_value_error_naming_the_dimension(point, message):
    space = Space(
        [Real(0, 1, name="x"), Integer(0, 3, name="n"), Categorical(["a", "b"], name="c")]
    )
    with pytest.raises(ValueError, match=message):
        space.encode([point])


def test_encode_rejects_a_bare_point():
    with pytest.raises(ValueError, match="wrap a single point"):
        Space([Real(0, 1), Real(0, 1)]).encode([0.1, 0.2])
