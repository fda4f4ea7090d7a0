"""What runs in a worker: failures of the objective, its timeout, the watchdog."""

import logging
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import treebo
from treebo import minimize
from treebo.storage import read_study

from .helpers import FAST, SPACE_2D


def test_an_objective_past_its_timeout_is_a_failed_trial_and_the_run_goes_on():
    def objective(x):
        if x[0] > 0:
            time.sleep(30)  # interrupted in the worker by the alarm
        return x[0] ** 2 + x[1] ** 2  # no module globals: workers need not import this file

    start = time.monotonic()
    res = minimize(objective, SPACE_2D, n_calls=6, timeout=1.0, random_state=0, **FAST)
    elapsed = time.monotonic() - start
    assert len(res.x_iters) == 6
    slow = [x[0] > 0 for x in res.x_iters]
    assert any(slow) and not all(slow)
    for is_slow, status, error in zip(slow, res.statuses, res.errors):
        assert (status, error) == (
            ("failed", "timed out after 1 s") if is_slow else ("complete", None)
        )
    # Not a timing assertion: 30 s sleeps that had run to the end would take minutes.
    assert elapsed < 30


def _exit_objective(how, calls):
    """An objective that ends itself with ``how`` where x[0] > 0, logging every call
    to the file ``calls``."""

    def objective(x):
        with open(calls, "a") as log:
            log.write(f"{x}\n")
        if x[0] > 0:
            if how == "exit":
                sys.exit(3)
            raise KeyboardInterrupt
        return x[0] ** 2 + x[1] ** 2

    return objective


@pytest.mark.fault
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_sys_exit_in_the_objective_is_a_failed_trial_never_retried(tmp_path, n_jobs):
    # Neither the end of a sequential run nor, in worker processes, a lost
    # evaluation to retry.
    objective = _exit_objective("exit", tmp_path / "calls.log")
    res = minimize(objective, SPACE_2D, n_calls=6, n_jobs=n_jobs, random_state=0, **FAST)
    assert res.message == "reached n_calls=6"
    exited = [x[0] > 0 for x in res.x_iters]
    assert any(exited) and not all(exited)
    for has_exited, status, error in zip(exited, res.statuses, res.errors):
        assert (status, error) == (
            ("failed", "SystemExit: 3") if has_exited else ("complete", None)
        )
    assert len((tmp_path / "calls.log").read_text().splitlines()) == 6


@pytest.mark.fault
def test_a_keyboard_interrupt_raised_in_a_worker_is_a_failed_trial(tmp_path):
    # Not Ctrl-C in the driver, so not a reason to stop the run.
    objective = _exit_objective("interrupt", tmp_path / "calls.log")
    try:
        res = minimize(objective, SPACE_2D, n_calls=6, n_jobs=2, random_state=0, **FAST)
    except KeyboardInterrupt:
        pytest.fail("the objective's KeyboardInterrupt in a worker stopped the run")
    interrupted = [x[0] > 0 for x in res.x_iters]
    assert any(interrupted) and res.message == "reached n_calls=6"
    assert [e for e, i in zip(res.errors, interrupted) if i] == ["KeyboardInterrupt"] * sum(
        interrupted
    )
    assert len((tmp_path / "calls.log").read_text().splitlines()) == 6


_ORPHAN_SCRIPT = """
    import os, sys, time
    from treebo import Real, minimize

    def objective(x):
        # HERE is a global of the main script: cloudpickle ships its value.
        with open(os.path.join(HERE, f"worker-{os.getpid()}"), "w") as note:
            note.write(str(os.getppid()))
        end = time.time() + 120
        while time.time() < end:  # spends CPU, as a real objective would
            pass
        return x[0]

    if __name__ == "__main__":
        HERE = sys.argv[1]
        minimize(objective, [Real(0.0, 1.0), Real(0.0, 1.0)], n_calls=10, n_jobs=2,
                 random_state=0, n_candidates=500)
"""


def _running(pid):
    """Whether ``pid`` is a live process (a zombie nobody reaped is dead)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False


@pytest.mark.fault
@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc to see processes")
@pytest.mark.parametrize(
    "signum", [signal.SIGTERM, signal.SIGKILL, signal.SIGINT], ids=["SIGTERM", "SIGKILL", "SIGINT"]
)
def test_workers_die_with_their_driver_however_it_is_killed(tmp_path, signum):
    script = tmp_path / "driver.py"
    script.write_text(textwrap.dedent(_ORPHAN_SCRIPT))
    env = {**os.environ, "PYTHONPATH": str(Path(treebo.__file__).parents[1])}
    driver = subprocess.Popen(
        [sys.executable, str(script), str(tmp_path)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    workers = []
    try:
        deadline = time.monotonic() + 120
        while len(workers) < 2:
            assert time.monotonic() < deadline and driver.poll() is None, "no workers started"
            time.sleep(0.1)
            workers = [int(p.name.split("-")[1]) for p in tmp_path.glob("worker-*")]
        assert all((tmp_path / f"worker-{pid}").read_text() == str(driver.pid) for pid in workers)
        os.kill(driver.pid, signum)  # the driver alone, as kill, systemd or docker stop do
        driver.wait(timeout=60)
        deadline = time.monotonic() + 10
        while any(_running(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(_running(pid) for pid in workers), "a worker outlived its driver"
    finally:
        for pid in workers + [driver.pid]:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        driver.wait()


@pytest.mark.fault
def test_the_workers_own_alarm_stops_an_evaluation_at_its_timeout(tmp_path, caplog):
    from treebo.parallel.scheduler import _TIMEOUT_GRACE

    def objective(x):
        if x[0] > 0:
            time.sleep(30)  # interrupted by the worker's alarm
        # No module globals: a worker importing this file would eat into the timeout.
        return x[0] ** 2 + x[1] ** 2

    db = tmp_path / "study.db"
    with caplog.at_level(logging.WARNING, logger="treebo"):
        res = minimize(
            objective,
            SPACE_2D,
            n_calls=6,
            n_initial_points=6,
            timeout=0.2,
            random_state=0,
            storage=db,
            **FAST,
        )
    slow = [i for i, x in enumerate(res.x_iters) if x[0] > 0]
    assert slow and [res.errors[i] for i in slow] == ["timed out after 0.2 s"] * len(slow)
    rows = read_study(db)["trials"]
    for i in slow:
        # Reported by the worker itself (which measured it), not given up on by
        # the driver _TIMEOUT_GRACE later (which records no evaluation time).
        assert rows[i]["eval_time"] is not None
        assert 0.2 <= rows[i]["eval_time"] < 0.2 + _TIMEOUT_GRACE / 2
    assert "after its timeout" not in caplog.text
