"""Space.from_dict: reading a space back from Space.to_dict's form or a hand-written one."""

import json

import pytest

from treebo.space import Binary, Categorical, Integer, Real, Space


class Marker:  # a category without a literal repr
    pass


@pytest.mark.parametrize(
    "space",
    [
        Space(
            {
                "model": Categorical(["svm", None, (1, 2)]),
                "C": Real(1e-3, 10, "log-uniform", active_if={"model": "svm"}),
                "n": Integer(1, 100, active_if={"model": [None, (1, 2)]}),
                "b": Binary(),
                "deep": Binary(active_if={"n": [3, 4], "b": 1}),
            }
        ),
        Space(
            [
                Real(0, 1),
                Integer(-3, 3, log=False),
                Categorical([1.5, "a", True]),
                Integer(1, 2**40, log=True),
            ]
        ),
    ],
)
@pytest.mark.parametrize("object_categories", ["raise", "repr"])
def test_what_to_dict_writes_is_read_back_exactly(space, object_categories):
    description = json.loads(json.dumps(space.to_dict()))
    again = Space.from_dict(description, object_categories=object_categories)
    assert again == space and again.to_dict() == space.to_dict()
    assert again.sample(5, 0) == space.sample(5, 0)


def test_a_hand_written_description_gives_values_as_written_and_dict_points():
    space = Space.from_dict(
        {
            "dimensions": [
                {"name": "kernel", "type": "Categorical", "categories": ["rbf", "poly", 3]},
                {
                    "name": "degree",
                    "type": "Integer",
                    "low": 2,
                    "high": 5,
                    "active_if": {"kernel": ["poly", 3]},
                },
                {"name": "C", "type": "Real", "low": 1e-3, "high": 100.0, "prior": "log-uniform"},
                {"name": "shrinking", "type": "Binary"},
            ]
        }
    )
    assert space == Space(
        {
            "kernel": Categorical(["rbf", "poly", 3]),
            "degree": Integer(2, 5, active_if={"kernel": ["poly", 3]}),
            "C": Real(1e-3, 100.0, "log-uniform"),
            "shrinking": Binary(),
        }
    )
    # Written as themselves, not as reprs or indexes: "3" would be a category's repr.
    assert space.dimensions[0].categories == ("rbf", "poly", 3)


def test_object_categories_raise_or_come_back_as_their_repr():
    description = Space([Categorical([Marker, "m", 2.5])]).to_dict()
    with pytest.raises(
        ValueError,
        match=r"dimension 'x0': category \"<class .*Marker'>\" is "
        "not the repr of a plain value",
    ):
        Space.from_dict(description)
    read = Space.from_dict(description, object_categories="repr")
    assert read.dimensions[0].categories == (repr(Marker), "m", 2.5)
    # A repr string that equals another category's text: every category as its repr.
    clash = Space([Categorical([Marker, repr(Marker)])]).to_dict()
    read = Space.from_dict(clash, object_categories="repr")
    assert read.dimensions[0].categories == (repr(Marker), repr(repr(Marker)))
    with pytest.raises(ValueError, match=r"object_categories must be one of \('raise', 'repr'\)"):
        Space.from_dict(description, object_categories="text")


def test_a_dumped_condition_is_read_as_the_parents_values():
    space = Space(
        {
            "k": Categorical(["a", "b", "c"]),
            "n": Integer(5, 9),
            "x": Real(0, 1, active_if={"k": ["c", "a"], "n": [7]}),
        }
    )
    description = space.to_dict()
    assert description["dimensions"][2]["active_if"] == {"k": [0, 2], "n": [7]}
    assert Space.from_dict(description).dimensions[2].active_if == {"k": ["a", "c"], "n": [7]}


@pytest.mark.parametrize(
    "description, message",
    [
        ({"dimensions": []}, "non-empty list 'dimensions'"),
        ({"dimensions": [{"type": "Real", "low": 0, "high": 1}]}, "dimension 0 needs a name"),
        ({"dimensions": ["a"]}, "dimension 0 must be a table with name and type"),
        (
            {"dimensions": [{"name": "a", "type": "Binary"}, {"name": "a", "type": "Binary"}]},
            r"dimension names must be unique; repeated: \['a'\]",
        ),
        (
            {"dimensions": [{"name": "a", "type": "Float"}]},
            r"dimension 'a': type must be one of \['Binary', 'Categorical', 'Integer', 'Real'\], "
            "got 'Float'",
        ),
        (
            {"dimensions": [{"name": "a", "type": "Real", "low": 0}]},
            "dimension 'a': a Real needs high",
        ),
        ({"dimensions": [{"name": "a", "type": "Integer"}]}, "an Integer needs low and high"),
        (
            {"dimensions": [{"name": "a", "type": "Real", "low": 0, "high": 1, "log": True}]},
            r"unknown keys \['log'\] for a Real",
        ),
        (
            {"dimensions": [{"name": "a", "type": "Real", "low": 1, "high": 0}]},
            "dimension 'a': low must be smaller than high",
        ),
        (
            {"dimensions": [{"name": "a", "type": "Categorical", "categories": "ab"}]},
            "needs a list of categories",
        ),
        ({"dimensions": [{"name": "a", "type": "Binary"}], "dims": 1}, r"unknown keys \['dims'\]"),
        (
            {
                "dimensions": [{"name": "a", "type": "Binary", "active_if": {"z": [1]}}],
                "points_are_dicts": True,
            },
            "dimension 'a': active_if names 'z', which is not a dimension",
        ),
    ],
)
def test_a_bad_description_names_the_entry(description, message):
    with pytest.raises(ValueError, match=message):
        Space.from_dict(description)


# -- crafted categories: a stored repr is parsed with bounded size and depth --------------------
def _dumped(category_repr):
    return {
        "dimensions": [{"name": "c", "type": "Categorical", "categories": ["'a'", category_repr]}],
        "points_are_dicts": True,
    }


_CRAFTED = {
    # The parser's stack overflows: a MemoryError without the bound.
    "a million signs": (
        "-" * 10**6 + "1",
        r"is longer than 65,536 characters \(1,000,001 characters\)",
    ),
    # Short, but deep enough for a RecursionError without the bound.
    "5,000 signs": ("-" * 5000 + "1", "nested deeper than 100 levels"),
    "3,000 nots": ("not " * 3000 + "1", "nested deeper than 100 levels"),
    "deep brackets": ("(" * 150 + "1" + ")" * 150, "nested deeper than 100 levels"),
}


@pytest.mark.fault
@pytest.mark.parametrize("case", sorted(_CRAFTED))
@pytest.mark.parametrize("object_categories", ["raise", "repr"])
def test_a_crafted_category_is_a_short_value_error_naming_the_dimension(case, object_categories):
    text, cause = _CRAFTED[case]
    with pytest.raises(ValueError, match=cause) as caught:
        Space.from_dict(_dumped(text), object_categories=object_categories)
    message = str(caught.value)
    assert message.startswith("dimension 'c': category ")
    assert len(message) < 300 and "\n" not in message


def test_categories_at_the_bounds_are_read_back():
    deep = (0,)
    for _ in range(98):
        deep = (deep,)  # a tuple 99 levels deep: its repr has 99 brackets
    long = "x" * 65_000
    space = Space({"c": Categorical([deep, long, -1])})
    assert Space.from_dict(json.loads(json.dumps(space.to_dict()))) == space
