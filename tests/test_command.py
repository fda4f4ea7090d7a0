"""External commands as objectives."""

import sys
import time

import pytest

from treebo.command import CommandError, CommandObjective, last_number

PY = sys.executable


@pytest.mark.parametrize(
    "text, value",
    [
        ("loss 0.25\n", 0.25),
        ("epoch 3/10\nval_loss=1.5e-3.\n", 1.5e-3),
        ("-2", -2.0),
        ("resnet50 done: 7\nsaved resnet50", 7.0),
        ("x\n", None),
        ("result: nan", float("nan")),
    ],
)
def test_last_number(text, value):
    found = last_number(text)
    if value is None or value != value:
        assert (found is None) if value is None else found != found
    else:
        assert found == value


def test_values_fill_the_placeholders_as_single_arguments(tmp_path):
    script = "import sys; print(len(sys.argv) - 1, sys.argv[1]); print(float(sys.argv[2]) * 2)"
    func = CommandObjective([PY, "-c", script, "{name}", "{lr}"], ["name", "lr"])
    # A value with spaces and shell characters stays one argument; a float keeps every digit.
    assert func({"name": "a b; rm -rf x", "lr": 0.1 + 0.2}) == (0.1 + 0.2) * 2
    shell = CommandObjective(
        f"{PY} -c 'import sys; print(sys.argv[1])' {{name}}", ["name"], shell=True
    )
    assert shell({"name": "3.5 $(echo 7)"}) == 7.0  # quoted: one argument, last number 7


def test_json_field_exit_status_and_timeout(tmp_path):
    # Doubled braces are literal ones; {x} is the placeholder.
    ok = CommandObjective(
        [PY, "-c", "import json; print(json.dumps({{'m': {{'loss': {x}}}}}))"],
        ["x"],
        json_field="m.loss",
    )
    assert ok({"x": 4}) == 4
    missing = CommandObjective([PY, "-c", "print('{{\"a\": 1}}')"], ["x"], json_field="loss")
    with pytest.raises(CommandError, match=r"no field 'loss' \(at 'loss'; keys there: \['a'\]\)"):
        missing({"x": 1})
    noisy = "import sys\nfor i in range(30): print('line', i, file=sys.stderr)\nsys.exit(4)"
    failing = CommandObjective([PY, "-c", noisy], ["x"])
    with pytest.raises(CommandError, match="command exited with status 4") as info:
        failing({"x": 1})
    tail = str(info.value).split("standard error ends with:\n")[1].splitlines()
    assert tail == [f"line {i}" for i in range(20, 30)]
    slow = CommandObjective([PY, "-c", "import time; time.sleep(30)"], ["x"], timeout=0.5)
    start = time.monotonic()
    with pytest.raises(CommandError, match="timed out after 0.5 s"):
        slow({"x": 1})
    assert time.monotonic() - start < 10
    with pytest.raises(ValueError, match=r"placeholder \{y\} names no dimension"):
        CommandObjective("echo {y}", ["x"])
    with pytest.raises(ValueError, match="command must not be empty"):
        CommandObjective("", ["x"])
