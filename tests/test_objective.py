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
