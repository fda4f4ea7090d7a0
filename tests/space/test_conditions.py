"""Conditional dimensions: activity, inactive columns, canonical conditions, counting points."""

import itertools
import math
import pickle
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treebo import acquisition as acq
from treebo.space import INACTIVE, Binary, Categorical, Integer, Real, Space


def svc_space():
    """An SVC's space: degree only for the polynomial kernel, gamma for rbf and poly."""
    return Space(
        {
            "kernel": Categorical(["linear", "rbf", "poly"]),
            "C": Real(1e-3, 1e3, prior="log-uniform"),
            "gamma": Real(1e-4, 1.0, prior="log-uniform", active_if={"kernel": ["rbf", "poly"]}),
            "degree": Integer(2, 5, active_if={"kernel": "poly"}),
        }
    )


SVC_ACTIVE = {
    "linear": {"kernel", "C"},
    "rbf": {"kernel", "C", "gamma"},
    "poly": {"kernel", "C", "gamma", "degree"},
}


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
            memo[name] = all(
                active(parent) and point[parent] in values for parent, values in condition.items()
            )
        return memo[name]

    return {name for name in space.names if active(name)}


# -- an SVC space: degree only for the polynomial kernel, gamma for rbf and poly -----------


def test_svc_points_never_show_inactive_dimensions():
    space = svc_space()
    points = space.sample(300, random_state=0)
    for point in points:
        assert set(point) == SVC_ACTIVE[point["kernel"]]
        assert list(point) == [n for n in space.names if n in point]  # the space's order
    assert {p["kernel"] for p in points} == {"linear", "rbf", "poly"}
    assert {p["degree"] for p in points if "degree" in p} == {2, 3, 4, 5}


def test_svc_encoding_writes_the_inactive_constant_in_inactive_columns():
    space = svc_space()
    assert space.conditional and space.n_columns == 6
    X = space.encode(
        [
            {"kernel": "linear", "C": 1.0},
            {"kernel": "rbf", "C": 1.0, "gamma": 0.01},
            {"kernel": "poly", "C": 1.0, "gamma": 0.01, "degree": 3},
        ]
    )
    gamma, degree = space.columns_of("gamma"), space.columns_of("degree")
    np.testing.assert_array_equal(X[:, gamma.start], [INACTIVE, 0.5, 0.5])
    np.testing.assert_array_equal(X[0, degree], [INACTIVE])
    np.testing.assert_array_equal(X[1, degree], [INACTIVE])
    assert 0 <= X[2, degree.start] <= 1
    np.testing.assert_array_equal(
        space.active_mask(X),
        [[True, True, False, False], [True, True, True, False], [True, True, True, True]],
    )
    decoded = space.decode(X)
    assert decoded[0] == {"kernel": "linear", "C": 1.0}
    assert decoded[1] == {"kernel": "rbf", "C": 1.0, "gamma": pytest.approx(0.01, rel=1e-12)}
    assert decoded[2] == {
        "kernel": "poly",
        "C": 1.0,
        "gamma": pytest.approx(0.01, rel=1e-12),
        "degree": 3,
    }


def test_points_differing_only_in_inactive_values_encode_identically():
    space = svc_space()
    plain = {"kernel": "linear", "C": 2.0}
    variants = [
        dict(plain, degree=2),
        dict(plain, degree=5, gamma=0.1),
        dict(plain, gamma=None, degree="not even a number"),
    ]  # ignored, not checked
    X = space.encode([plain] + variants)
    assert (X == X[0]).all()
    assert all(space.drop_inactive(v) == plain for v in variants)
    assert all(space.point_to_json(v) == space.point_to_json(plain) for v in variants)
    assert not space.is_active(variants[0], "degree") and space.is_active(plain, "C")


def test_a_missing_active_dimension_is_an_error_naming_it_and_why():
    space = svc_space()
    with pytest.raises(
        ValueError,
        match=r"missing dimension\(s\) \['degree'\], which is active "
        r"there \(because kernel = 'poly'\)",
    ):
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
    centers = space.encode(
        [{"kernel": "linear", "C": 1.0}, {"kernel": "poly", "C": 1.0, "gamma": 0.01, "degree": 3}]
    )
    for X in (
        space.snap(acq.sobol_candidates(512, space.n_columns, rng)),
        acq.local_candidates(space, centers, 300, rng),
        acq.jump_candidates(space, centers, 300, rng),
    ):
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
    np.testing.assert_array_equal(space.snap(filled), S)  # the same points
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
        None,
        None,
        {"kernel": [1, 2]},
        {"kernel": [2]},
    ]
    assert "active_if" not in desc["dimensions"][0]
    other = Space(
        {
            **dict(zip(svc_space().names, svc_space().dimensions)),
            "degree": Integer(2, 5, active_if={"kernel": ["rbf", "poly"]}),
        }
    )
    assert other.to_dict() != desc and other != svc_space()


# -- definitions ---------------------------------------------------------------------------


def test_conditions_are_canonical_whatever_way_they_are_written():
    a = Space(
        {
            "k": Categorical(["x", "y", "z"]),
            "n": Integer(1, 4),
            "c": Real(0, 1, active_if={"k": ["z", "x"], "n": [3.0, 1, 3]}),
        }
    )
    b = Space(
        {
            "c": Real(0, 1, active_if={"n": (1, 3), "k": {"x", "z"}}),
            "k": Categorical(["x", "y", "z"]),
            "n": Integer(1, 4),
        }
    )
    assert a.dimensions[2].active_if == {"k": ["x", "z"], "n": [1, 3]}
    assert b.dimensions[0] == a.dimensions[2] and hash(b.dimensions[0]) == hash(a.dimensions[2])
    assert a.to_dict()["dimensions"][2]["active_if"] == b.to_dict()["dimensions"][0]["active_if"]
    assert repr(a.dimensions[2]) == (
        "Real(0.0, 1.0, name='c', active_if={'k': ['x', 'z'], 'n': [1, 3]})"
    )
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
    assert dim.replace(name="degree").active_if == {"kernel": ["poly"]}
    assert dim != Integer(2, 5) and dim == Integer(2, 5, active_if={"kernel": ["poly"]})
    assert repr(space).count("active_if") == 2
    # The public attribute is a copy: changing it changes nothing.
    space.dimensions[3].active_if["kernel"].append("linear")
    assert space.dimensions[3].active_if == {"kernel": ["poly"]}


def test_a_parent_may_follow_its_child_and_the_given_order_is_kept():
    space = Space(
        {
            "degree": Integer(2, 5, active_if={"kernel": "poly"}),
            "kernel": Categorical(["linear", "poly"]),
            "C": Real(0.1, 1.0),
        }
    )
    assert space.names == ["degree", "kernel", "C"]
    assert space.columns_of("degree") == slice(0, 1) and space.columns_of("kernel") == slice(1, 3)
    X = space.encode([{"kernel": "linear", "C": 0.5}, {"kernel": "poly", "C": 0.5, "degree": 5}])
    assert X[0, 0] == INACTIVE and X[1, 0] == 1 - 1 / 8
    assert space.decode(X) == [
        {"kernel": "linear", "C": 0.5},
        {"degree": 5, "kernel": "poly", "C": 0.5},
    ]


def test_nesting_three_levels_deep():
    # A child whose parent is inactive is inactive, even where the parent's
    # columns (all INACTIVE) would decode to an allowed value: "linear" is the
    # first category, which an all-equal one-hot block decodes to.
    space = Space(
        {
            "model": Categorical(["svc", "tree"]),
            "kernel": Categorical(["linear", "poly"], active_if={"model": "svc"}),
            "scale": Binary(active_if={"kernel": "linear"}),
            "degree": Integer(2, 4, active_if={"kernel": "poly"}),
            "coef0": Real(0.0, 1.0, active_if={"degree": [3, 4]}),
            "depth": Integer(1, 3, active_if={"model": "tree"}),
        }
    )
    X = space.encode(
        [
            {"model": "tree", "depth": 2},
            {"model": "svc", "kernel": "linear", "scale": 1},
            {"model": "svc", "kernel": "poly", "degree": 2},
            {"model": "svc", "kernel": "poly", "degree": 4, "coef0": 0.5},
        ]
    )
    np.testing.assert_array_equal(
        space.active_mask(X),
        [[1, 0, 0, 0, 0, 1], [1, 1, 1, 0, 0, 0], [1, 1, 0, 1, 0, 0], [1, 1, 0, 1, 1, 0]],
    )
    points = space.sample(500, random_state=0)
    for point in points:
        assert set(point) == reference_active(space, point)
    assert sum("coef0" in p for p in points) > 50
    # tree: 3 depths; svc+linear: 2; svc+poly: degree 2, or 3-4 with coef0 (reals).
    assert space.cardinality == math.inf
    given = dict(zip(space.names, space.dimensions))
    discrete = Space({**given, "coef0": Binary(active_if={"degree": [3, 4]})})
    assert discrete.cardinality == 3 + 2 + (1 + 2 * 2) == len(discrete.grid())


def test_several_parents_mean_and():
    space = Space(
        {
            "a": Binary(),
            "b": Categorical(["x", "y", "z"]),
            "c": Integer(0, 9, active_if={"a": 1, "b": ["y", "z"]}),
        }
    )
    points = space.sample(400, random_state=1)
    assert all(("c" in p) == (p["a"] == 1 and p["b"] in ("y", "z")) for p in points)
    assert space.cardinality == 2 * 3 - 2 + 2 * 10 == len(space.grid())


def test_cardinality_and_grid_count_distinct_points_only():
    space = Space({"model": Categorical(["a", "b"]), "x": Integer(1, 3, active_if={"model": "a"})})
    grid = space.grid()
    assert space.cardinality == 4 and grid.shape == (4, 3)
    assert len(np.unique(grid, axis=0)) == 4
    assert space.decode(grid) == [
        {"model": "a", "x": 1},
        {"model": "a", "x": 2},
        {"model": "a", "x": 3},
        {"model": "b"},
    ]
    np.testing.assert_array_equal(space.snap(grid), grid)
    given = dict(zip(space.names, space.dimensions))
    assert Space({**given, "r": Real(0, 1, active_if={"model": "b"})}).cardinality == math.inf


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


# -- errors --------------------------------------------------------------------------------

KERNEL = Categorical(["linear", "rbf", "poly"])


@pytest.mark.parametrize(
    "make, message",
    [
        (
            lambda: Space(
                {"kernel": KERNEL, "degree": Integer(2, 5, active_if={"kernal": "poly"})}
            ),
            r"dimension 'degree': active_if\['kernal'\] names no dimension of the space; "
            r"the parent must be one of \['kernel'\]",
        ),
        (
            lambda: Space({"C": Real(0, 1), "degree": Integer(2, 5, active_if={"C": 0.5})}),
            r"dimension 'degree': active_if\['C'\]: parent 'C' is a Real; conditions take discrete "
            r"parents \(Categorical, Integer or Binary\)",
        ),
        (
            lambda: Space(
                {"kernel": KERNEL, "degree": Integer(2, 5, active_if={"kernel": "sigmoid"})}
            ),
            r"dimension 'degree': active_if\['kernel'\]: 'kernel' cannot take the value 'sigmoid' "
            r"\(allowed: one of \['linear', 'rbf', 'poly'\]\)",
        ),
        (
            lambda: Space({"n": Integer(1, 3), "x": Real(0, 1, active_if={"n": [2, 4]})}),
            r"dimension 'x': active_if\['n'\]: 'n' cannot take the value 4 "
            r"\(allowed: an integer in \[1, 3\]\)",
        ),
        (
            lambda: Space({"n": Integer(0, 3), "x": Real(0, 1, active_if={"n": True})}),
            r"'n' cannot take the value True",
        ),
        (
            lambda: Space({"b": Binary(), "x": Real(0, 1, active_if={"b": 2})}),
            r"dimension 'x': active_if\['b'\]: 'b' cannot take the value 2 \(allowed: 0 or 1\)",
        ),
        (
            lambda: Space(
                {"p": Categorical([(1, "a"), (2, "b")]), "x": Real(0, 1, active_if={"p": (1, "a")})}
            ),
            r"cannot take the value 1 .*name a tuple category inside a list",
        ),
        (
            lambda: Space({"a": Binary(active_if={"a": 1})}),
            r"dimension 'a': active_if\['a'\] names the dimension itself",
        ),
        (
            lambda: Space({"a": Binary(active_if={"b": 1}), "b": Binary(active_if={"a": 0})}),
            r"dimension 'a': active_if conditions form a cycle \('a' -> 'b' -> 'a'",
        ),
        (
            lambda: Space(
                {
                    "r": Binary(),
                    "a": Binary(active_if={"c": 1}),
                    "b": Binary(active_if={"a": 1, "r": 0}),
                    "c": Binary(active_if={"b": 1}),
                }
            ),
            r"dimension 'a': active_if conditions form a cycle \('a' -> 'c' -> 'b' -> 'a'",
        ),
        (
            lambda: Integer(2, 5, name="degree", active_if={"kernel": []}),
            r"dimension 'degree': active_if\['kernel'\] is empty; "
            r"give at least one value of 'kernel'",
        ),
        (
            lambda: Integer(2, 5, name="degree", active_if="kernel == 'poly'"),
            r"dimension 'degree': active_if must be a dict of parent dimension name -> "
            r"allowed value or list of values \(or None\), got \"kernel == 'poly'\"",
        ),
        (
            lambda: Integer(2, 5, name="degree", active_if=[("kernel", "poly")]),
            r"dimension 'degree': active_if must be a dict",
        ),
        (
            lambda: Real(0, 1, name="x", active_if={1: "a"}),
            r"dimension 'x': active_if keys must be names of parent dimensions \(strings\), got 1",
        ),
        (
            lambda: Real(0, 1, name="x", active_if={"k": [["a"]]}),
            r"dimension 'x': active_if\['k'\] value \['a'\] is not hashable",
        ),
        (
            lambda: Space([Categorical(["a", "b"], name="k"), Real(0, 1, active_if={"k": "a"})]),
            r"dimension 'x1' has active_if, which needs a space built from a dict of name -> "
            r"dimension",
        ),
    ],
)
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


# -- properties of random conditional spaces -----------------------------------------------


@st.composite
def conditional_spaces(draw, discrete=False):
    """Up to 6 dimensions, each conditional on up to two earlier discrete ones, shuffled."""
    n = draw(st.integers(1, 6))
    kinds = draw(
        st.lists(
            st.sampled_from(["cat", "int", "bin"] + ([] if discrete else ["real"])),
            min_size=n,
            max_size=n,
        )
    )
    dims, values = [], []
    for i, kind in enumerate(kinds):
        parents = [j for j in range(i) if kinds[j] != "real"]
        chosen = (
            draw(st.lists(st.sampled_from(parents), unique=True, max_size=2)) if parents else []
        )
        active_if = {
            f"d{j}": draw(st.lists(st.sampled_from(values[j]), min_size=1, unique=True))
            for j in chosen
        } or None
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
