"""Where evaluations run: resolve_executor, treebo's process pool, Dask."""

import concurrent.futures as cf
import logging
import os
import signal
import time

import pytest
from joblib import Parallel, delayed

from treebo import minimize
from treebo.parallel import resolve_executor
from treebo.storage import read_study

from .helpers import FAST, SPACE_2D, assert_distinct, quadratic


def test_worker_processes_run_closures_and_a_killed_worker_is_retried(tmp_path, caplog):
    marker, offset = tmp_path / "killed", 0.25  # a closure, shipped by cloudpickle

    def objective(x):
        with open(tmp_path / f"{os.getpid()}.log", "a") as log:
            log.write(f"{x}\n")
        time.sleep(0.2)
        try:  # exactly one evaluation, whichever gets here first, kills its worker
            os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            os.kill(os.getpid(), signal.SIGKILL)
        except FileExistsError:
            pass
        return (x[0] - offset) ** 2 + x[1] ** 2

    with caplog.at_level(logging.WARNING, logger="treebo"):
        res = minimize(
            objective,
            SPACE_2D,
            n_calls=8,
            n_jobs=2,
            random_state=0,
            storage=tmp_path / "study.db",
            **FAST,
        )
    assert marker.exists() and "evaluation lost" in caplog.text
    # The killed evaluation (and any other the broken pool lost) was run again.
    assert res.statuses == ["complete"] * 8
    assert_distinct(res.x_iters)
    assert [r["status"] for r in read_study(tmp_path / "study.db")["trials"]] == res.statuses
    # Two worker processes, then a fresh one after the kill; never the driver.
    pids = {int(p.stem) for p in tmp_path.glob("*.log")}
    assert os.getpid() not in pids and len(pids) >= 3
    # treebo's pool leaves joblib's own (scikit-learn's n_jobs) working.
    assert Parallel(n_jobs=2)(delayed(abs)(i) for i in range(-2, 2)) == [2, 1, 0, 1]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(n_jobs=0), "n_jobs must be a positive integer or -1"),
        (dict(n_jobs=2.5), "n_jobs must be a positive integer or -1"),
        (dict(timeout=0), "timeout must be a positive number of seconds"),
        (dict(timeout=float("inf")), "timeout must be a positive number of seconds"),
        (dict(executor="dask"), "executor must be a concurrent.futures.Executor"),
        (dict(max_retries=-1), "max_retries must be an integer >= 0"),
        (dict(strategy="kriging"), "strategy must be one of"),
    ],
)
def test_bad_parallel_arguments_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        minimize(quadratic, SPACE_2D, n_calls=3, **kwargs)


class _OpaqueExecutor(cf.Executor):
    def submit(self, fn, /, *args, **kwargs):
        raise AssertionError("not reached")


def test_an_executor_of_unknown_size_needs_n_jobs():
    with pytest.raises(ValueError, match="pass n_jobs"):
        minimize(quadratic, SPACE_2D, n_calls=3, executor=_OpaqueExecutor())


def test_a_dask_client_executor_works_and_knows_its_size(dask_client):
    res = minimize(
        lambda x: x[0] ** 2 + x[1] ** 2,
        SPACE_2D,
        n_calls=5,
        executor=dask_client.get_executor(),
        random_state=0,
        **FAST,
    )
    assert len(res.x_iters) == 5 and res.n_failed == 0
    assert resolve_executor(None, dask_client.get_executor(), None)[1] == 2


def test_treebo_starts_no_more_workers_than_evaluations_left(tmp_path):
    res = minimize(
        lambda x: float(os.getpid()),
        SPACE_2D,
        n_calls=3,
        n_jobs=16,
        random_state=0,
        n_initial_points=3,
        **FAST,
    )
    assert len(set(res.func_vals)) <= 3
    from treebo.parallel.executors import _POOL

    assert _POOL["n_workers"] == 3
