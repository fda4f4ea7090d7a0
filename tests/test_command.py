"""External commands as objectives."""

import json
import math
import os
import secrets
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from treebo.command import CommandError, CommandObjective, last_number

PY = sys.executable
ROOT = Path(__file__).resolve().parents[1]


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


# -- faults: hostile values through --shell, commands that leave processes behind ---------

HOSTILE = [
    "x; touch PWNED; echo y",
    "$(touch PWNED)",
    "`touch PWNED`",
    "'",
    '"',
    "\\",
    "$HOME",
    "a\nb",
    "*",
    "-n",
    "",
    "${1}",
    "'\"; touch PWNED; echo \"'",
    "\\'$(touch PWNED)\\\"",
]

# Each template writes the text it received to the file `out` (a value passes through
# every quoting context of the shell), then prints the objective's value.
QUOTINGS = {
    "bare": ("printf '%s' {a}", lambda v: v),
    "single quotes": ("printf '%s' '{a}'", lambda v: v),
    "single quotes with text": ("printf '%s' 'it is {a} here'", lambda v: f"it is {v} here"),
    "double quotes": ("printf '%s' \"{a}\"", lambda v: v),
    "double quotes with text": ("printf '%s' \"$HOME is not {a}\"", lambda v: f"/h is not {v}"),
    "glued to an option": ("printf '%s' --lr={a}", lambda v: f"--lr={v}"),
    "glued across quotings": ("printf '%s' \"<{a}>\"'[{b}]'{c}", lambda v: f"<{v}>[{v}]{v}"),
    "after a comment with a quote": ("# it's a comment\nprintf '%s' {a}", lambda v: v),
    "after a command substitution": (
        "d=$(printf x); printf '%s' \"$d{a}\" '{b}'",
        lambda v: f"x{v}{v}",
    ),
    "after backquotes": ("d=`printf x`; printf '%s' \"$d\"{a}", lambda v: f"x{v}"),
    "in a case": ("case {a} in *) printf '%s' \"{b}\";; esac", lambda v: v),
    "literal braces": ("printf '%s' '{{{a}}}' {{{b}}}", lambda v: f"{{{v}}}{{{v}}}"),
}


def _shell_objective(template, tmp_path, names=("a", "b", "c")):
    (tmp_path / "decoy").write_text("")  # something for an unquoted * to expand to
    return CommandObjective(template + " > out; echo 1", list(names), shell=True, cwd=str(tmp_path))


@pytest.mark.fault
@pytest.mark.parametrize("quoting", list(QUOTINGS))
@pytest.mark.parametrize("value", HOSTILE)
def test_shell_values_are_data_whatever_the_quoting(tmp_path, monkeypatch, quoting, value):
    monkeypatch.setenv("HOME", "/h")
    template, expected = QUOTINGS[quoting]
    func = _shell_objective(template, tmp_path)
    assert func({"a": value, "b": value, "c": value}) == 1
    assert not (tmp_path / "PWNED").exists()
    assert (tmp_path / "out").read_text() == expected(value)


@pytest.mark.fault
def test_shell_format_specs_and_inactive_dimensions(tmp_path):
    template = "printf '%s|' {a:.3g} '{b:>4}' \"[{c}]\" '{c:.2f}' {b!r}"
    func = _shell_objective(template, tmp_path)
    assert func({"a": 0.123456, "b": "x'y"}) == 1  # c is inactive: an empty string
    assert (tmp_path / "out").read_text() == "0.123| x'y|[]||\"x'y\"|"
    shown = func.arguments({"a": 0.5, "b": "$(x)", "c": 2.0})
    assert shown[:2] == ["/bin/sh", "-c"]
    assert shown[3:] == ["treebo", "0.5", "$(x)", "2.0", "2.00", "'$(x)'"]


@pytest.mark.fault
@pytest.mark.parametrize(
    "template, where",
    [
        ("echo $(printf '%s' {a})", "$(...)"),
        ("echo \"$(printf '%s' '{a}')\"", "$(...)"),
        ("echo `printf '%s' {a}`", "`...`"),
        ("echo ${{X:-{a}}}", "${...}"),
        ("echo $(( {a} + 1 ))", "$((...))"),
        ("cat <<EOF\n{a}\nEOF", "here-document"),
        ("cat <<'EOF'\nx\nEOF\necho {a}", "here-document"),
        ("echo \\{a}", "backslash"),
        ('echo "\\{a}"', "backslash"),
        ("echo ${a}", "'$'"),
        ('echo "${a}"', "'$'"),
        ("echo $'{a}'", "$'...'"),
        ("echo $(case x in x) echo;; esac) {a}", "'case' inside $(...)"),
        ("(( {a} > 1 )) && echo 1", "((...))"),
    ],
)
def test_shell_refuses_a_placeholder_whose_quoting_it_cannot_tell(template, where):
    with pytest.raises(ValueError) as info:
        CommandObjective(template, ["a"], shell=True)
    message = str(info.value)
    assert "\n" not in message
    assert "placeholder {a}" in message and where in message
    assert "v={a}" in message or "remove" in message or "write {a}" in message
    # Without --shell nothing is parsed by a shell, so the same text is accepted.
    CommandObjective(template.replace("\n", " "), ["a"])


@pytest.mark.fault
def test_minimize_through_the_shell_with_hostile_categories_runs_no_value(tmp_path):
    space = {
        "dimensions": [
            {"name": "a", "type": "Categorical", "categories": HOSTILE[:2]},
            {"name": "b", "type": "Categorical", "categories": HOSTILE[2:4]},
            {"name": "c", "type": "Categorical", "categories": [HOSTILE[4], HOSTILE[12]]},
        ]
    }
    (tmp_path / "space.json").write_text(json.dumps(space))
    command = "printf '%s\\n' {a} '{b}' \"{c}\" >> seen; echo 1"
    done = _treebo(
        ["minimize", "--command", command, "--shell", "--space", "space.json"]
        + ["--n-calls", "4", "--storage", "s.db", "--seed", "0", "--quiet"],
        cwd=tmp_path,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "PWNED").exists()
    from treebo.shared_study import read_shared

    rows = read_shared(tmp_path / "s.db")[1]
    assert [r["status"] for r in rows] == ["complete"] * 4, rows
    expected = "".join(f"{r['x']['a']}\n{r['x']['b']}\n{r['x']['c']}\n" for r in rows)
    assert sorted((tmp_path / "seen").read_text().split("\n")) == sorted(expected.split("\n"))


def _treebo(argv, cwd, timeout):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [PY, "-m", "treebo", *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _tag() -> str:
    """A sleep duration no other process uses, to find what a test started in /proc."""
    return f"{secrets.randbelow(10**6) + 10**6}.{secrets.randbelow(10**6)}"


def _alive(tag: str, program: bytes = b"") -> list[int]:
    """Processes of ``program`` whose command line holds ``tag`` (zombies have none)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as file:
                cmdline = file.read()
        except OSError:
            continue
        if tag.encode() in cmdline and cmdline.startswith(program):
            found.append(int(entry))
    return found


def _kill_all(tag: str) -> None:
    for pid in _alive(tag):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def _none_alive(tag: str, within: float = 1.0) -> list[int]:
    end = time.monotonic() + within
    while (left := _alive(tag)) and time.monotonic() < end:
        time.sleep(0.05)
    return left


def _call_in_thread(func, x, limit):
    """Call ``func(x)`` in a thread; the outcome, or None if it still runs after ``limit``."""
    outcome = {}

    def run():
        try:
            outcome["value"] = func(x)
        except BaseException as error:  # noqa: BLE001 - the test inspects it
            outcome["error"] = error

    thread = threading.Thread(target=run, daemon=True)
    start = time.monotonic()
    thread.start()
    thread.join(limit)
    return (None if thread.is_alive() else outcome), time.monotonic() - start, thread


DETACHED = {
    "setsid": "setsid sleep {t} & echo 1; sleep {t}",
    "double fork": (
        f"{PY} -c 'import os, time\nif os.fork(): os._exit(0)\nos.setsid()\n"
        "if os.fork(): os._exit(0)\ntime.sleep({t})'; echo 1; sleep {t}"
    ),
}


@pytest.mark.fault
@pytest.mark.parametrize("how", list(DETACHED))
def test_a_timeout_ends_processes_that_left_the_process_group(how):
    tag = _tag()
    func = CommandObjective(DETACHED[how].format(t=tag), ["x"], shell=True, timeout=2)
    thread = None
    try:
        outcome, took, thread = _call_in_thread(func, {"x": 1}, limit=2 + 6)
        assert outcome is not None, f"still running {took:.0f} s after a timeout of 2 s"
        assert isinstance(outcome.get("error"), CommandError), outcome
        assert str(outcome["error"]).startswith("timed out after 2 s")
        assert took < 2 + 4
        assert _none_alive(tag) == [], "a process of the evaluation outlived it"
    finally:
        _kill_all(tag)
        if thread is not None:
            thread.join(5)


@pytest.mark.fault
def test_an_exited_command_is_read_at_once_and_its_leftovers_ended():
    tag = _tag()
    # The detached sleep keeps standard output open; the value was printed before exit.
    func = CommandObjective(
        f"setsid sleep {tag} & echo 'loss 0.5'; echo more >&2", ["x"], shell=True
    )
    thread = None
    try:
        outcome, took, thread = _call_in_thread(func, {"x": 1}, limit=8)
        assert outcome is not None, f"still running after {took:.0f} s"
        assert outcome == {"value": 0.5}
        assert took < 3  # the grace for the last output is at most 1 s
        assert _none_alive(tag) == []
    finally:
        _kill_all(tag)
        if thread is not None:
            thread.join(5)


@pytest.mark.fault
def test_an_interrupted_evaluation_ends_its_detached_processes(tmp_path):
    tag = _tag()
    script = (
        "from treebo.command import CommandObjective\n"
        f"CommandObjective('setsid sleep {tag} & sleep {tag}', ['x'], shell=True)({{'x': 1}})\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen([PY, "-c", script], env=env, stderr=subprocess.PIPE, text=True)
    try:
        end = time.monotonic() + 30
        while len(_alive(tag, b"sleep")) < 2 and time.monotonic() < end:  # both started
            time.sleep(0.05)
        assert len(_alive(tag, b"sleep")) == 2
        child.send_signal(signal.SIGINT)
        _, stderr = child.communicate(timeout=30)
        assert "KeyboardInterrupt" in stderr
        assert _none_alive(tag) == []
    finally:
        child.kill()
        child.wait()
        _kill_all(tag)


@pytest.mark.fault
def test_cli_timeout_with_a_detached_child_is_a_failed_trial_and_leaves_nothing(tmp_path):
    tag = _tag()
    space = {"dimensions": [{"name": "x", "type": "Real", "low": 0.0, "high": 1.0}]}
    (tmp_path / "space.json").write_text(json.dumps(space))
    command = f"setsid sleep {tag} & echo {{x}}; sleep {tag}"
    argv = ["minimize", "--command", command, "--shell", "--space", "space.json"]
    argv += ["--timeout", "2", "--n-calls", "1", "--n-initial-points", "1"]
    argv += ["--storage", "s.db", "--quiet"]
    try:
        start = time.monotonic()
        try:
            done = _treebo(argv, cwd=tmp_path, timeout=60)
        except subprocess.TimeoutExpired:
            pytest.fail("treebo minimize still ran 60 s after a --timeout of 2 s")
        assert time.monotonic() - start < 40
        # The first evaluation failed: the run stops, as for any objective that always fails.
        assert done.returncode == 1 and "timed out after 2 s" in done.stderr, done
        from treebo.shared_study import read_shared

        (row,) = read_shared(tmp_path / "s.db")[1]
        assert row["status"] == "failed" and row["error"].startswith(
            "treebo.command.CommandError: timed out after 2 s"
        ), row
        assert _none_alive(tag) == []
    finally:
        _kill_all(tag)


def _printing(tmp_path, text, **kwargs) -> CommandObjective:
    """An objective whose command prints ``text`` (written to a file first, for its size)."""
    path = tmp_path / "out.txt"
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return CommandObjective(["cat", str(path)], ["x"], **kwargs)


@pytest.mark.fault
@pytest.mark.parametrize(
    "stdout, field, message",
    [
        ('{"loss": ' + "[" * 100_000 + "]" * 100_000 + "}\n", "loss", "nested"),
        ('{"loss": 0.5, "pad": "' + "x" * 3_000_000 + '"}\n', "loss", "long"),
        (json.dumps({f"k{i}": i for i in range(20_000)}) + "\n", "loss", "no field 'loss'"),
    ],
    ids=["deep", "huge", "many keys"],
)
def test_a_hostile_json_line_is_a_failed_trial_with_a_short_message(
    tmp_path, stdout, field, message
):
    func = _printing(tmp_path, stdout, json_field=field)
    with pytest.raises(CommandError, match=message) as info:
        func({"x": 1})
    assert len(str(info.value)) < 1000


@pytest.mark.fault
def test_a_json_field_that_is_no_number_is_a_failed_trial_with_an_excerpt(tmp_path):
    func = _printing(tmp_path, json.dumps({"loss": "x" * 100_000}) + "\n", json_field="loss")
    with pytest.raises(CommandError, match="JSON field 'loss' printed by .* is '\"xxx") as info:
        func({"x": 1})
    assert str(info.value).endswith("...', not a number") and len(str(info.value)) < 400


@pytest.mark.fault
def test_output_that_is_not_utf8_is_read(tmp_path):
    assert _printing(tmp_path, b"\xff\xfe bad bytes\nloss 0.25\n")({"x": 1}) == 0.25
    with pytest.raises(CommandError, match="printed no number"):
        _printing(tmp_path, b"\xff\n")({"x": 1})


# -- a JSON object of metrics (a study with objectives) ----------------------------------------
def test_metrics_are_the_numbers_of_the_last_line_s_json_object(tmp_path):
    line = {"error": 0.125, "latency": 3, "model": "resnet", "flag": True, "nested": {"a": 1}}
    func = _printing(tmp_path, "epoch 1: loss 9\n" + json.dumps(line) + "\n\n", metrics=["error"])
    # Numbers only (a bool is no number); the objective's own entries whatever their order.
    assert func({"x": 1}) == {"error": 0.125, "latency": 3}
    # NaN is kept: the study records it as a failed evaluation, with the metric's name.
    assert math.isnan(_printing(tmp_path, '{"a": NaN}', metrics=["a"])({"x": 1})["a"])
    # Without metrics, the same output gives the last number, as before.
    assert _printing(tmp_path, json.dumps(line) + "\n")({"x": 1}) == 1.0


@pytest.mark.parametrize(
    "stdout, message",
    [
        ("", r"printed nothing on standard output, not a JSON object of the metrics \['error'\]"),
        ('{"error": 0.1}\nfinal 0.1\n', r"last line printed by .* is 'final 0.1', not a JSON obj"),
        ("[0.1, 0.2]\n", r"is '\[0.1, 0.2\]', not a JSON object of the metrics"),
        ('{"error": 0.1\n', r"is '\{\"error\": 0.1', not a JSON object"),
        ('{"loss": 0.1}\n', r"has no metric 'error' \(its keys: \['loss'\]\)"),
        ('{"error": "0.1"}\n', r"the metric 'error' printed by .* is '\"0.1\"', not a number"),
        ('{"error": ' + "[" * 1000 + "]" * 1000 + "}\n", "nested deeper than 100 levels"),
    ],
    ids=["nothing", "not last", "a list", "not JSON", "missing", "a string", "deep"],
)
def test_a_last_line_that_is_no_json_object_of_the_metrics_is_a_failed_trial(
    tmp_path, stdout, message
):
    func = _printing(tmp_path, stdout, metrics=["error"])
    with pytest.raises(CommandError, match=message) as info:
        func({"x": 1})
    assert len(str(info.value)) < 600


def test_metrics_and_json_field_are_exclusive():
    with pytest.raises(ValueError, match="give one of them"):
        CommandObjective(["echo"], ["x"], json_field="a", metrics=["a"])
