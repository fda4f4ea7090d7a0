"""treebo.untrusted: bounded parsing of JSON, TOML and Python literals, and excerpts."""

import ast
import json
import sys

import pytest

from treebo.untrusted import (
    BoundExceededError,
    check_literal_bounds,
    excerpt,
    literal,
    load_json,
    load_toml,
    shorten_reprs,
)

PLAIN = ["'a'", "-1", "1.5e-05", "(1, 'a')", "(0,)", "[1, [2, 3]]", "{1, 2}", "{'k': (None, True)}",
         "b'x'", "(-0-1j)", "'a' 'b'", "set()", "'" + "x" * 60_000 + "'"]  # fmt: skip


@pytest.mark.parametrize("text", PLAIN)
def test_a_plain_repr_reads_as_literal_eval_reads_it(text):
    assert literal(text, what="t") == ast.literal_eval(text)


@pytest.mark.parametrize(
    "text, bound",
    [
        ("-" * 200 + "1", "nested deeper than 100 levels"),
        ("not " * 3000 + "1", "nested deeper than 100 levels"),
        ("1" + "+1" * 150, "nested deeper than 100 levels"),
        ("a" + ".b" * 150, "nested deeper than 100 levels"),
        ("[" * 101 + "]" * 101, "nested deeper than 100 levels"),
        ("-(" * 60 + "1" + ")" * 60, "nested deeper than 100 levels"),
        ("-" * 10**6 + "1", r"longer than 65,536 characters \(1,000,001 characters\)"),
    ],
)
def test_a_repr_over_a_bound_is_refused_before_it_is_parsed(text, bound):
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(150)  # the check itself recurses nowhere
    try:
        with pytest.raises(BoundExceededError, match=f"^t is {bound}$"):
            literal(text, what="t")
        with pytest.raises(BoundExceededError):
            check_literal_bounds(text, what="t")
    finally:
        sys.setrecursionlimit(limit)


@pytest.mark.parametrize("text", ["<object>", "nan", "f(1)", "'unclosed", "(1,", "1 +", "\x00"])
def test_text_that_is_no_literal_is_a_plain_value_error(text):
    with pytest.raises(ValueError, match="^t is not the repr of a plain value$") as caught:
        literal(text, what="t")
    assert not isinstance(caught.value, BoundExceededError)
    check_literal_bounds(text, what="t")  # within the bounds: a writer may store it


def test_brackets_inside_strings_do_not_count():
    text = "(" * 50 + "1" + ")" * 50
    assert load_json(json.dumps({"a": [text, '\\"' + text]}), what="t")["a"][0] == text
    assert load_toml(f"a = {json.dumps(text)}\nb = '{text}'\n", what="t")["b"] == text
    assert literal(repr(("[" * 500, "]")), what="t") == ("[" * 500, "]")
    toml = f"a = \"\"\"x{text}\"\"\"\"\nb = '''{text}''''\n# {'[' * 500}\nc = 1\n"
    assert load_toml(toml, what="t") == {"a": f'x{text}"', "b": f"{text}'", "c": 1}


@pytest.mark.parametrize(
    "text",
    [
        # A string that TOML closes with two quotes of its own hides nothing after it.
        'a = ["""x"""", ' + "[" * 500 + "]" * 500 + "]\n",
        'a = {b = """x"""", ' + "c." * 5000 + "d = 1}\n",
        "[x" + ".a" * 200 + "]\n",
        "a = 1\nb" + ".c" * 100 + " = 1\n",  # 101 tables, with the document
        # 101 levels, counted once parsed: the document, a list of tables, a table, 98 lists.
        "[[a]]\nb = " + "[" * 98 + "]" * 98 + "\n",
    ],
)
def test_toml_nesting_is_counted_through_its_strings_and_dotted_keys(text):
    with pytest.raises(BoundExceededError, match="^t is nested deeper than 100 levels$"):
        load_toml(text, what="t")


def test_a_document_of_100_levels_is_read():
    assert load_json("[" * 100 + "]" * 100, what="t") is not None
    assert load_toml("a = " + "[" * 99 + "]" * 99 + "\n", what="t") is not None
    with pytest.raises(BoundExceededError):
        load_json("[" * 101 + "]" * 101, what="t")
    with pytest.raises(BoundExceededError):
        load_toml("a = " + "[" * 100 + "]" * 100 + "\n", what="t")


def test_excerpts_are_short_whatever_they_show():
    assert excerpt("abc") == "'abc'"
    long = excerpt("-" * 10**6)
    assert len(long) == 80 and long.startswith("'---") and long.endswith("…'")
    deep: list = []
    for _ in range(100_000):
        deep = [deep]
    assert len(excerpt(deep)) <= 80 and len(excerpt({str(i): i for i in range(10**5)})) <= 80
    message = f"dimension {'n' * 1000!r}: low must be smaller than high"
    assert shorten_reprs(message, ["n" * 1000]) == (
        f"dimension {excerpt('n' * 1000)}: low must be smaller than high"
    )
