"""Space files and functions named on the command line."""

import json

import pytest

from treebo.objective import function_space, load_function, load_space_file
from treebo.space import Binary, Categorical, Integer, Real, Space
from treebo.storage import space_description


def test_a_toml_file_and_its_json_twin_give_the_same_space(tmp_path):
    (tmp_path / "s.toml").write_text("""
[[dimensions]]
name = "kernel"
type = "Categorical"
categories = ["rbf", "poly", 3]

[[dimensions]]
name = "degree"
type = "Integer"
low = 2
high = 5
active_if = { kernel = ["poly"] }

[[dimensions]]
name = "C"
type = "Real"
low = 0.001
high = 100.0
prior = "log-uniform"

[[dimensions]]
name = "shrinking"
type = "Binary"
""")
    expected = Space(
        {
            "kernel": Categorical(["rbf", "poly", 3]),
            "degree": Integer(2, 5, active_if={"kernel": "poly"}),
            "C": Real(1e-3, 100.0, "log-uniform"),
            "shrinking": Binary(),
        }
    )
    assert load_space_file(tmp_path / "s.toml") == expected
    (tmp_path / "s.json").write_text(
        json.dumps(
            {
                "dimensions": [
                    {"name": "kernel", "type": "Categorical", "categories": ["rbf", "poly", 3]},
                    {
                        "name": "degree",
                        "type": "Integer",
                        "low": 2,
                        "high": 5,
                        "active_if": {"kernel": ["poly"]},
                    },
                    {"name": "C", "type": "Real", "low": 1e-3, "high": 100, "prior": "log-uniform"},
                    {"name": "shrinking", "type": "Binary"},
                ]
            }
        )
    )
    assert load_space_file(tmp_path / "s.json") == expected


@pytest.mark.parametrize(
    "space",
    [
        Space(
            {
                "model": Categorical(["svm", None, (1, 2)]),
                "C": Real(1e-3, 10, "log-uniform", active_if={"model": "svm"}),
                "n": Integer(1, 100, active_if={"model": [None, (1, 2)]}),
                "b": Binary(),
            }
        ),
        Space([Real(0, 1), Integer(-3, 3), Categorical([1.5, "a", True])]),
    ],
)
def test_what_to_dict_writes_is_read_back_exactly(space, tmp_path):
    path = tmp_path / "dumped.json"
    path.write_text(json.dumps(space.to_dict()))
    again = load_space_file(path)
    assert again == space and space_description(again) == space_description(space)


def test_unreadable_files_are_named(tmp_path):
    with pytest.raises(ValueError, match="space file '.*nope.toml' does not exist"):
        load_space_file(tmp_path / "nope.toml")
    (tmp_path / "bad.toml").write_text("[[dimensions]\n")
    with pytest.raises(ValueError, match="cannot read space file '.*bad.toml'"):
        load_space_file(tmp_path / "bad.toml")


def test_functions_from_files_and_modules(tmp_path):
    (tmp_path / "helper.py").write_text("SCALE = 3\n")
    (tmp_path / "obj.py").write_text(
        "import helper\n\ndef f(x):\n    return helper.SCALE * x['a']\n\n"
        "f.space = {'a': (0.0, 1.0)}\n"
        "class Model:\n    @staticmethod\n    def loss(x):\n        return 1.0\n"
    )
    f = load_function(f"{tmp_path / 'obj.py'}:f")
    assert f({"a": 2.0}) == 6.0 and function_space(f) == Space({"a": Real(0.0, 1.0)})
    assert load_function(f"{tmp_path / 'obj.py'}:Model.loss")({}) == 1.0
    sqrt = load_function("math:sqrt")
    assert sqrt(4.0) == 2.0 and function_space(sqrt) is None
    with pytest.raises(ValueError, match="must be FILE.py:FUNCTION or MODULE:FUNCTION"):
        load_function("obj.py")
    with pytest.raises(ValueError, match=r"has no 'g'; its functions: \['Model', 'f'\]"):
        load_function(f"{tmp_path / 'obj.py'}:g")
    with pytest.raises(ValueError, match="cannot import module 'no_such_module_x'"):
        load_function("no_such_module_x:f")
    (tmp_path / "broken.py").write_text("raise RuntimeError('at import')\n")
    with pytest.raises(ValueError, match="raised RuntimeError when loaded: at import"):
        load_function(f"{tmp_path / 'broken.py'}:f")
    (tmp_path / "obj.txt").write_text("def f(x):\n    return 1.0\n")
    with pytest.raises(ValueError, match="'.*obj.txt' is not a Python module"):
        load_function(f"{tmp_path / 'obj.txt'}:f")


# -- space files are read with bounded size and depth ------------------------------------------
DEEP = 100_000
DEEP_FILES = {
    "lists.json": '{"dimensions": ' + "[" * DEEP + "]" * DEEP + "}",
    "objects.json": '{"dimensions": [' + '{"a": ' * DEEP + "1" + "}" * DEEP + "]}",
    "arrays.toml": "dimensions = " + "[" * DEEP + "]" * DEEP + "\n",
    "tables.toml": "x = " + "{a = " * DEEP + "1" + "}" * DEEP + "\n",
    # Not deep for the parser, but slow: its cost grows with the square of the parts.
    "dotted.toml": "x" + ".a" * 20_000 + " = 1\n",
}


@pytest.mark.fault
@pytest.mark.parametrize("name", sorted(DEEP_FILES))
def test_a_deeply_nested_space_file_is_a_short_value_error_naming_the_file(name, tmp_path):
    path = tmp_path / name
    path.write_text(DEEP_FILES[name])
    with pytest.raises(ValueError) as caught:
        load_space_file(path)
    assert str(caught.value) == f"space file {str(path)!r} is nested deeper than 100 levels"


@pytest.mark.fault
@pytest.mark.parametrize("suffix", [".json", ".toml"])
def test_a_space_file_over_4_mib_is_refused_unread(suffix, tmp_path):
    path = tmp_path / f"big{suffix}"
    padding = " " * (4 * 2**20)
    path.write_text(
        '{"dimensions": [{"name": "a", "type": "Binary"}]}' + padding
        if suffix == ".json"
        else '[[dimensions]]\nname = "a"\ntype = "Binary"\n' + padding
    )
    with pytest.raises(ValueError) as caught:
        load_space_file(path)
    assert str(caught.value) == (
        f"space file {str(path)!r} is larger than 4 MiB ({path.stat().st_size:,} bytes)"
    )


@pytest.mark.fault
def test_a_long_value_in_a_space_file_is_shown_as_a_short_excerpt(tmp_path):
    path = tmp_path / "space.json"
    junk = "x" * 1_000_000
    path.write_text(json.dumps({"dimensions": [junk]}))
    with pytest.raises(ValueError, match="dimension 0 must be a table") as caught:
        load_space_file(path)
    assert len(str(caught.value)) < 300
    path.write_text(json.dumps({"dimensions": [{"name": junk, "type": "Binary"}], junk: 1}))
    with pytest.raises(ValueError, match="unknown keys") as caught:
        load_space_file(path)
    assert len(str(caught.value)) < 300


def test_a_space_file_nested_100_levels_is_read(tmp_path):
    # The bound leaves room for any real space: this file is 100 levels deep (the
    # top table, the list of dimensions, a dimension, its categories, 96 in the category).
    category = 0
    for _ in range(96):
        category = [category]
    path = tmp_path / "space.json"
    path.write_text(
        json.dumps({"dimensions": [{"name": "c", "type": "Categorical", "categories": [category]}]})
    )
    with pytest.raises(ValueError, match="unhashable|category"):
        load_space_file(path)  # read, then refused for what it says, not for its depth
    path.write_text(
        json.dumps({"dimensions": [{"name": "c", "type": "Categorical", "categories": ["a", "b"]}]})
    )
    assert load_space_file(path) == Space({"c": Categorical(["a", "b"])})
