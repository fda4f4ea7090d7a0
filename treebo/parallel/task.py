"""What runs where the executor puts an evaluation: the objective, its timeout, the watchdog.

:func:`evaluate_task` runs the objective and turns its failures (an
exception, ``SystemExit`` included, or an overrun of ``timeout``) into a
returned error text, so that an exception coming out of a future always
means the executor lost the evaluation. :func:`bind_to_driver` is the
initializer of treebo's worker processes: it makes each one die with the
process that started it.
"""

from __future__ import annotations

import math
import os
import signal
import threading
import time
import traceback
from collections.abc import Callable
from types import FrameType
from typing import Any

__all__ = ["evaluate_task", "timeout_text", "bind_to_driver"]

#: Seconds between a worker's checks that the driver that started it is alive.
_WATCH_INTERVAL = 0.25


class _EvaluationTimeout(BaseException):
    """Raised inside the objective by the worker's alarm.

    A BaseException, so that an objective's own ``except Exception`` does not
    swallow it.
    """


def _raise_timeout(signum: int, frame: FrameType | None) -> None:
    raise _EvaluationTimeout


def timeout_text(timeout: float) -> str:
    """The error text of a trial that ran past ``timeout`` seconds.

    Parameters
    ----------
    timeout : float
        Seconds the evaluation was allowed.

    Returns
    -------
    str
        ``"timed out after 2 s"``.
    """
    return f"timed out after {timeout:g} s"


def evaluate_task(
    func: Callable, x: Any, timeout: float | None, driver_pid: int, token: tuple
) -> tuple[Any, str | None, float]:
    """Run ``func(x)`` where the executor put it; never raises for a failure of ``func``.

    Returns ``(value, error text or None, seconds)``. An evaluation that took
    longer than ``timeout`` is a failure even when it returned (a thread
    cannot be interrupted). ``token`` (trial number and submission) only
    makes every submission distinct, so that executors that cache by
    arguments (Dask with ``pure=True``) never hand back an earlier attempt's
    result.

    Parameters
    ----------
    func : callable
        The objective.
    x : list or dict
        The point, as the objective takes it.
    timeout : float or None
        Seconds the evaluation may run. In a worker process's main thread an
        alarm (``SIGALRM``) interrupts it then; elsewhere (the driver, a
        thread) it is only measured.
    driver_pid : int
        The process id of the driver: where Ctrl-C is the user's, and where
        the alarm must not be set.
    token : tuple
        ``(trial number, submission)``.

    Returns
    -------
    value : object
        What ``func`` returned, or None after a failure.
    error : str or None
        The failure's text (``"ValueError: ..."``, ``"timed out after 2 s"``).
    seconds : float
        Wall-clock seconds of the evaluation.

    Raises
    ------
    KeyboardInterrupt
        Only in the driver's main thread, where it means Ctrl-C: elsewhere
        Python never raises it for a signal of the driver, so it is the
        objective's own failure.
    """
    in_driver_main = (
        os.getpid() == driver_pid and threading.current_thread() is threading.main_thread()
    )
    # The alarm is only safe in a worker process's main thread: never in the
    # driver (it would take over the user's SIGALRM) and never in a thread.
    alarm = (
        timeout is not None
        and os.getpid() != driver_pid
        and hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
    )
    limit = math.inf if timeout is None else timeout
    if alarm:
        previous = signal.signal(signal.SIGALRM, _raise_timeout)
    start = time.perf_counter()
    try:
        # Armed and disarmed inside the try: an alarm at any instant is caught below.
        try:
            if alarm:
                signal.setitimer(signal.ITIMER_REAL, limit)
            value = func(x)
        finally:
            if alarm:
                signal.setitimer(signal.ITIMER_REAL, 0)
    except _EvaluationTimeout:
        return None, timeout_text(limit), time.perf_counter() - start
    except BaseException as error:  # noqa: BLE001 - any failure of user code is a failed trial
        if isinstance(error, KeyboardInterrupt) and in_driver_main:
            raise
        # SystemExit (sys.exit() in the objective) too: the same failed trial
        # inline and in any worker, where an executor would report it as a
        # lost evaluation and have it retried.
        text = "".join(traceback.format_exception_only(type(error), error)).strip()
        return None, text, time.perf_counter() - start
    finally:
        if alarm:
            signal.signal(signal.SIGALRM, previous)
    seconds = time.perf_counter() - start
    if seconds > limit:
        return None, timeout_text(limit), seconds
    return value, None, seconds


def bind_to_driver(driver_pid: int) -> None:
    """Make this worker process of treebo's pool die with the driver that started it.

    Run by each worker as it starts. A daemon thread checks every
    ``_WATCH_INTERVAL`` seconds that the worker's parent is still the driver;
    once the driver is gone, however it ended (SIGKILL included), the worker
    kills itself, so no evaluation runs on orphaned. (``PR_SET_PDEATHSIG``
    would fire when the *thread* that started the worker ends, which in a
    pool is whichever thread submitted work; a process group is not signalled
    when only the driver is killed.)

    Parameters
    ----------
    driver_pid : int
        The process id of the driver that made the pool.
    """
    if os.getppid() != driver_pid:  # the driver died before this worker started
        _kill_self()
    threading.Thread(
        target=_watch_driver, args=(driver_pid,), daemon=True, name="treebo-driver-watch"
    ).start()


def _watch_driver(driver_pid: int) -> None:
    while os.getppid() == driver_pid:
        time.sleep(_WATCH_INTERVAL)
    _kill_self()


def _kill_self() -> None:
    # SIGKILL: an objective cannot catch or ignore it (where there is none, SIGTERM).
    os.kill(os.getpid(), getattr(signal, "SIGKILL", signal.SIGTERM))
