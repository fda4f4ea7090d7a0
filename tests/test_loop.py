"""The minimize loop: failures that speak up, direction, Ctrl-C."""

import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

import treebo
from treebo import Optimizer, Real, minimize
from treebo.callbacks import EarlyStopper, ThresholdStopper
from treebo.failures import ObjectiveError, ObjectiveFailureWarning
from treebo.storage import StorageMismatchError, read_study

FAST = {"n_candidates": 256, "n_local_candidates": 64, "n_jump_candidates": 64}
ROOT = str(Path(treebo.__file__).resolve().parent.parent)


def _buggy(x):
    return undefined_name + x[0]  # noqa: F821 - the bug under test


def test_an_objective_that_always_raises_stops_within_the_initial_design(tmp_path):
    db = tmp_path / "s.db"
    with pytest.warns(
        ObjectiveFailureWarning,
        match=r"trial 0 failed \(the first failed "
        r"evaluation .*\): NameError: name 'undefined_name' is not defined$",
    ) as caught:
        with pytest.raises(
            ObjectiveError,
            match=r"raised NameError in each of the first 5 "
            r"evaluations \(trials 0 to 4, recorded as failed in .*s\.db\)",
        ) as info:
            minimize(_buggy, [Real(0, 1)], n_calls=20, random_state=0, storage=db, **FAST)
    # Reported once, at the first failure, not at every one.
    assert len([w for w in caught if w.category is ObjectiveFailureWarning]) == 1
    assert isinstance(info.value.__cause__, NameError)
    rows = read_study(db)["trials"]
    assert [r["status"] for r in rows] == ["failed"] * 5
    assert rows[0]["error"] == "NameError: name 'undefined_name' is not defined"


def test_a_short_budget_stops_at_its_end_and_a_forgotten_return_counts_too():
    with pytest.warns(ObjectiveFailureWarning, match="objective returned None"):
        with pytest.raises(
            ObjectiveError,
            match=r"returned None in each of the first 3 "
            "evaluations.*must return a number",
        ):
            minimize(lambda x: None, [Real(0, 1)], n_calls=3, random_state=0, **FAST)


def test_failures_at_some_points_are_failed_trials_and_the_run_goes_on():
    def sometimes(x):
        if x[0] > 0.5:
            raise ValueError("diverged")
        return (x[0] - 0.2) ** 2

    with pytest.warns(ObjectiveFailureWarning, match="ValueError: diverged"):
        result = minimize(sometimes, [Real(0, 1)], n_calls=12, random_state=0, **FAST)
    assert len(result.func_vals) == 12
    assert 0 < result.n_failed < 12
    assert result.x[0] <= 0.5
    assert all(e == "ValueError: diverged" for e in result.errors if e)


def test_different_exception_types_do_not_stop_the_run():
    errors = [KeyError("a"), ValueError("b")]

    def alternating(x):
        if errors:
            raise errors.pop()
        return x[0]

    with pytest.warns(ObjectiveFailureWarning):
        result = minimize(alternating, [Real(0, 1)], n_calls=7, random_state=0, **FAST)
    assert result.n_failed == 2 and len(result.func_vals) == 7


def test_catch_makes_named_exceptions_failed_trials_and_raises_others(tmp_path):
    # Named in catch: expected, never stops the run, even when every call fails.
    with pytest.warns(ObjectiveFailureWarning):
        result = minimize(_buggy, [Real(0, 1)], n_calls=7, random_state=0, catch=NameError, **FAST)
    assert result.n_failed == 7 and result.x is None

    calls = []

    def raises_later(x):
        calls.append(x)
        if len(calls) == 3:
            raise KeyError("missing column")
        return x[0]

    db = tmp_path / "c.db"
    with pytest.raises(KeyError, match="missing column") as info:
        minimize(
            raises_later,
            [Real(0, 1)],
            n_calls=10,
            random_state=0,
            storage=db,
            catch=(ValueError, ArithmeticError),
            **FAST,
        )
    assert any(
        "trial 2 raised KeyError, which is not one of catch" in note
        for note in info.value.__notes__
    )
    assert len(calls) == 3
    assert [r["status"] for r in read_study(db)["trials"]] == ["complete", "complete", "failed"]

    with pytest.raises(ValueError, match="catch must be None, an exception class"):
        minimize(_buggy, [Real(0, 1)], n_calls=7, catch="NameError")


def test_a_worker_process_failure_is_reported_and_stops_the_run_too():
    with pytest.warns(ObjectiveFailureWarning, match="NameError"):
        with pytest.raises(
            ObjectiveError, match=r"raised NameError in each of the first (\d+)"
        ) as info:
            minimize(
                _buggy,
                [Real(0, 1)],
                n_calls=10,
                random_state=0,
                n_jobs=2,
                n_initial_points=4,
                **FAST,
            )
    # The run stops at the 4th same failure; with two workers, the evaluation in
    # flight beside it may be told first, so 4 or 5 are counted.
    assert int(re.search(r"first (\d+)", str(info.value)).group(1)) in (4, 5)
    # A NameError pickles: the cause came back from the worker.
    assert isinstance(info.value.__cause__, NameError)


def _quadratic(x):
    return -((x[0] - 0.3) ** 2)


def test_maximize_reports_the_largest_value_and_the_study_refuses_the_other_direction(tmp_path):
    db = tmp_path / "m.db"
    result = minimize(
        _quadratic,
        [Real(0, 1)],
        n_calls=12,
        random_state=0,
        direction="maximize",
        storage=db,
        **FAST,
    )
    assert result.direction == "maximize"
    assert result.fun == np.max(result.func_vals) and result.fun > -1e-3
    np.testing.assert_array_equal(result.func_vals, [_quadratic(x) for x in result.x_iters])
    # The same run minimizing the negation proposes the same points.
    mirrored = minimize(lambda x: -_quadratic(x), [Real(0, 1)], n_calls=12, random_state=0, **FAST)
    assert mirrored.x_iters == result.x_iters
    with pytest.raises(StorageMismatchError, match="direction: stored 'maximize', given None"):
        minimize(_quadratic, [Real(0, 1)], n_calls=14, random_state=0, storage=db, **FAST)
    with pytest.raises(ValueError, match="direction must be one of"):
        Optimizer([Real(0, 1)], direction="max")
    resumed = minimize(
        _quadratic,
        [Real(0, 1)],
        n_calls=14,
        random_state=0,
        direction="maximize",
        storage=db,
        **FAST,
    )
    assert resumed.x_iters[:12] == result.x_iters and len(resumed.func_vals) == 14


def test_callbacks_follow_the_direction():
    result = minimize(
        _quadratic,
        [Real(0, 1)],
        n_calls=40,
        random_state=0,
        direction="maximize",
        callback=ThresholdStopper(-1e-2),
        **FAST,
    )
    assert result.fun >= -1e-2 and len(result.func_vals) < 40
    assert "reached" in result.message and ">= threshold" in result.message
    stopper = EarlyStopper(patience=3)
    result = minimize(
        _quadratic,
        [Real(0, 1)],
        n_calls=40,
        random_state=0,
        direction="maximize",
        callback=stopper,
        **FAST,
    )
    values = result.func_vals
    best = np.maximum.accumulate(values)
    # Stopped right after three evaluations that did not raise the maximum.
    assert len(values) < 40 and np.all(best[-4:] == best[-1]) and best[-5] < best[-1]


def _run_script(tmp_path, body):
    script = tmp_path / "run.py"
    script.write_text(textwrap.dedent(body))
    env = {**os.environ, "PYTHONPATH": ROOT}
    return subprocess.Popen(
        [sys.executable, str(script)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tmp_path,
    )


@pytest.mark.parametrize("stored", [True, False])
def test_ctrl_c_ends_with_a_short_traceback_and_a_resume_hint(tmp_path, stored):
    marker = tmp_path / "started"
    proc = _run_script(
        tmp_path,
        f"""
        import pathlib, time
        from treebo import minimize, Real

        def slow(x):
            pathlib.Path({str(marker)!r}).touch()
            time.sleep(0.05)
            return (x[0] - 0.3) ** 2

        minimize(slow, [Real(0, 1)], n_calls=100000, random_state=0,
                 {"storage='s.db'," if stored else ""} n_candidates=2000)
        """,
    )
    try:
        deadline = time.monotonic() + 120
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(2.0)  # into the model-based iterations: fits and acquisitions
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        proc.kill()  # never leave a run of 100,000 calls behind a failed test
    assert proc.returncode != 0
    lines = err.strip().splitlines()
    if stored:
        assert lines[-1].startswith("KeyboardInterrupt: interrupted after ")
        assert lines[-1].endswith(
            "evaluations, all recorded in s.db; the same call resumes the study"
        )
        n = int(lines[-1].split()[3])
        assert n >= 5 and len(read_study(tmp_path / "s.db")["trials"]) >= n
    else:
        assert lines[-1].endswith(
            "which are lost: pass storage='study.db' to record a run so that it can be resumed"
        )
    # The user's line, minimize's raise, nothing from inside the loop or scikit-learn.
    assert len(lines) <= 8, err
    assert "sklearn" not in err and "treebo/parallel/" not in err


def test_a_run_without_an_initial_design_is_not_stopped_by_its_first_failure():
    # n_initial_points=0: still three failures in a row, not one, stop the run.
    calls = []

    def fails_twice(x):
        calls.append(x)
        if len(calls) <= 2:
            raise RuntimeError("license server busy")
        return x[0]

    with pytest.warns(ObjectiveFailureWarning):
        result = minimize(
            fails_twice, [Real(0, 1)], n_calls=6, n_initial_points=0, random_state=0, **FAST
        )
    assert result.n_failed == 2 and len(result.func_vals) == 6
    with pytest.warns(ObjectiveFailureWarning):
        with pytest.raises(ObjectiveError, match="in each of the first 3 evaluations"):
            minimize(_buggy, [Real(0, 1)], n_calls=6, n_initial_points=0, random_state=0, **FAST)
