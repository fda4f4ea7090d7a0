import concurrent.futures as cf
import logging
import os
import signal
import threading
import time

import pytest
from joblib import Parallel, delayed

from treebo import Integer, Real, minimize
from treebo.parallel import resolve_executor
from treebo.storage import read_study

SPACE_2D = [Real(-1.0, 1.0), Real(-1.0, 1.0)]
FAST = dict(n_candidates=500, surrogate_params={"n_estimators": 20})


def quadratic(x):
    return (x[0] - 0.3) ** 2 + (x[1] + 0.2) ** 2


def _assert_distinct(points):
    assert len({tuple(p) for p in points}) == len(points)


def test_a_thread_pool_keeps_exactly_n_jobs_evaluations_in_flight():
    lock, running, peak = threading.Lock(), [0], [0]

    def objective(x):
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        time.sleep(0.2)
        with lock:
            running[0] -= 1
        return quadratic(x)

    with cf.ThreadPoolExecutor(max_workers=3) as pool:
        res = minimize(objective, SPACE_2D, n_calls=9, executor=pool, random_state=0, **FAST)
    # n_jobs defaults to the pool's 3 workers: the first three points start together.
    assert peak[0] == 3
    assert len(res.x_iters) == 9 and res.statuses == ["complete"] * 9
    _assert_distinct(res.x_iters)


def test_proposals_are_asynchronous_not_in_lockstep_batches():
    # The first evaluation to start blocks until three others have finished,
    # which can only happen if new points are proposed while it runs.
    others_done, lock, first = threading.Semaphore(0), threading.Lock(), []

    def objective(x):
        with lock:
            blocker = not first
            first.append(x)
        if blocker:
            released = all(others_done.acquire(timeout=60) for _ in range(3))
            return 100.0 if released else -1.0
        others_done.release()
        return quadratic(x)

    with cf.ThreadPoolExecutor(max_workers=2) as pool:
        res = minimize(objective, SPACE_2D, n_calls=6, executor=pool, random_state=0, **FAST)
    assert list(res.func_vals).count(100.0) == 1 and -1.0 not in res.func_vals


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
        assert (status, error) == (("failed", "timed out after 1 s") if is_slow
                                   else ("complete", None))
    # Not a timing assertion: 30 s sleeps that had run to the end would take minutes.
    assert elapsed < 30


class _LosingExecutor(cf.ThreadPoolExecutor):
    """A pool that loses the first ``times`` submissions of the third point it
    is given, as if its worker had died (``submit(fn, func, x, ...)``)."""

    def __init__(self, times):
        super().__init__(max_workers=2)
        self.times, self.points, self.n_submitted = times, [], 0

    def submit(self, fn, /, *args, **kwargs):
        self.n_submitted += 1
        point = tuple(args[1])
        if point not in self.points:
            self.points.append(point)
        if self.points.index(point) == 2 and self.times > 0:
            self.times -= 1
            future = cf.Future()
            future.set_exception(cf.BrokenExecutor("worker died"))
            return future
        return super().submit(fn, *args, **kwargs)


def test_a_lost_evaluation_is_retried_then_failed(caplog):
    calls = []

    def objective(x):
        calls.append(x)
        return quadratic(x)

    with caplog.at_level(logging.WARNING, logger="treebo"), _LosingExecutor(1) as pool:
        res = minimize(objective, SPACE_2D, n_calls=6, executor=pool, random_state=0, **FAST)
    assert res.statuses == ["complete"] * 6 and len(calls) == 6 and pool.n_submitted == 7
    assert ("trial 2: evaluation lost (BrokenExecutor: worker died); submitting it again "
            "(retry 1 of 1)") in caplog.text

    calls.clear()
    with _LosingExecutor(2) as pool:  # the retry is lost too
        res = minimize(objective, SPACE_2D, n_calls=6, executor=pool, random_state=0, **FAST)
    assert res.statuses == ["complete"] * 2 + ["failed"] + ["complete"] * 3
    assert res.errors[2] == "evaluation lost: BrokenExecutor: worker died"
    assert len(calls) == 5 and pool.n_submitted == 7
    with _LosingExecutor(1) as pool:
        res = minimize(objective, SPACE_2D, n_calls=6, executor=pool, max_retries=0,
                       random_state=0, **FAST)
    assert res.statuses[2] == "failed" and pool.n_submitted == 6


def test_an_executor_that_refuses_work_ends_the_run_with_a_message():
    pool = cf.ThreadPoolExecutor(max_workers=2)
    pool.shutdown()
    seen = []
    res = minimize(quadratic, SPACE_2D, n_calls=5, executor=pool, random_state=0,
                   callback=[lambda r: seen.append(len(r.x_iters))], **FAST)
    assert res.message == "stopped: the executor refused new evaluations"
    assert res.statuses == ["failed", "failed"]
    assert seen == [1, 2]                     # callbacks see the refused trials too
    assert res.errors[0].startswith("could not submit the evaluation: RuntimeError")


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
        res = minimize(objective, SPACE_2D, n_calls=8, n_jobs=2, random_state=0,
                       storage=tmp_path / "study.db", **FAST)
    assert marker.exists() and "evaluation lost" in caplog.text
    # The killed evaluation (and any other the broken pool lost) was run again.
    assert res.statuses == ["complete"] * 8
    _assert_distinct(res.x_iters)
    assert [r["status"] for r in read_study(tmp_path / "study.db")["trials"]] == res.statuses
    # Two worker processes, then a fresh one after the kill; never the driver.
    pids = {int(p.stem) for p in tmp_path.glob("*.log")}
    assert os.getpid() not in pids and len(pids) >= 3
    # treebo's pool leaves joblib's own (scikit-learn's n_jobs) working.
    assert Parallel(n_jobs=2)(delayed(abs)(i) for i in range(-2, 2)) == [2, 1, 0, 1]


def test_a_callback_stop_leaves_running_evaluations_pending_for_resume(tmp_path):
    release = threading.Event()

    def objective(x):
        if x[0] > 0:
            release.wait(30)
        return quadratic(x)

    db = tmp_path / "study.db"
    with cf.ThreadPoolExecutor(max_workers=3) as pool:
        res = minimize(objective, SPACE_2D, n_calls=10, executor=pool, random_state=0,
                       storage=db, callback=lambda r: len(r.x_iters) >= 1, **FAST)
        release.set()
    assert res.message == "stopped by a callback after 1 evaluations"
    rows = read_study(db)["trials"]
    pending = [r["point"] for r in rows if r["status"] == "pending"]
    assert len(rows) == 3 and len(pending) == 2 and all(p[0] > 0 for p in pending)
    # Resuming evaluates the abandoned points first, then goes on.
    res = minimize(quadratic, SPACE_2D, n_calls=10, random_state=0, storage=db, **FAST)
    assert res.x_iters[:3] == [r["point"] for r in rows]
    assert len(res.x_iters) == 10 and res.statuses == ["complete"] * 10


def test_a_tiny_space_runs_out_while_evaluations_are_in_flight():
    with cf.ThreadPoolExecutor(max_workers=3) as pool:
        res = minimize(lambda x: x[0] + x[1], [Integer(0, 2), Integer(0, 1)], n_calls=20,
                       executor=pool, random_state=0, **FAST)
    assert len(res.x_iters) == 6 and res.n_failed == 0
    _assert_distinct(res.x_iters)
    assert res.message == "all 6 points of the search space have been evaluated or proposed"


@pytest.mark.parametrize("kwargs, message", [
    (dict(n_jobs=0), "n_jobs must be a positive integer or -1"),
    (dict(n_jobs=2.5), "n_jobs must be a positive integer or -1"),
    (dict(timeout=0), "timeout must be a positive number of seconds"),
    (dict(timeout=float("inf")), "timeout must be a positive number of seconds"),
    (dict(executor="dask"), "executor must be a concurrent.futures.Executor"),
    (dict(max_retries=-1), "max_retries must be an integer >= 0"),
    (dict(strategy="kriging"), "strategy must be one of"),
])
def test_bad_parallel_arguments_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        minimize(quadratic, SPACE_2D, n_calls=3, **kwargs)


class _OpaqueExecutor(cf.Executor):
    def submit(self, fn, /, *args, **kwargs):
        raise AssertionError("not reached")


def test_an_executor_of_unknown_size_needs_n_jobs():
    with pytest.raises(ValueError, match="pass n_jobs"):
        minimize(quadratic, SPACE_2D, n_calls=3, executor=_OpaqueExecutor())


# -- dask.distributed -----------------------------------------------------------------

@pytest.fixture(scope="module")
def dask_client():
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None)
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()


def test_dask_spreads_evaluations_and_survives_a_killed_worker(dask_client, tmp_path):
    marker = tmp_path / "killed"

    def objective(x):
        with open(tmp_path / f"{os.getpid()}.log", "a") as log:
            log.write(f"{x}\n")
        time.sleep(0.3)
        try:  # exactly one evaluation kills its worker process mid-evaluation
            fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            os.write(fd, repr(list(x)).encode())
            os.close(fd)
            os.kill(os.getpid(), signal.SIGKILL)
        except FileExistsError:
            pass
        return x[0] ** 2 + x[1] ** 2

    workers_before = set(dask_client.run(os.getpid).values())
    db = tmp_path / "study.db"
    res = minimize(objective, SPACE_2D, n_calls=8, executor=dask_client, random_state=0,
                   storage=db, **FAST)
    killed_point = eval(marker.read_text())  # noqa: S307 - written above
    assert len(res.x_iters) == 8
    _assert_distinct(res.x_iters)
    # Dask reschedules the lost task on a live worker, so the trial completes;
    # were it lost for good, treebo would retry it or record it as failed.
    index = res.x_iters.index(killed_point)
    assert res.statuses[index] == "complete" or res.errors[index].startswith("evaluation lost")
    assert res.statuses.count("complete") >= 7
    # The evaluations ran on both workers, and one of them was replaced.
    worker_pids = {int(p.stem) for p in tmp_path.glob("*.log")}
    assert os.getpid() not in worker_pids and len(worker_pids & workers_before) == 2
    assert len(workers_before - set(dask_client.run(os.getpid).values())) == 1
    # Nothing told is missing from the storage.
    rows = read_study(db)["trials"]
    assert [r["status"] for r in rows] == res.statuses
    assert [r["value"] for r in rows if r["status"] == "complete"] == [
        v for v, s in zip(res.func_vals, res.statuses) if s == "complete"]


def test_a_dask_client_executor_works_and_knows_its_size(dask_client):
    res = minimize(lambda x: x[0] ** 2 + x[1] ** 2, SPACE_2D, n_calls=5,
                   executor=dask_client.get_executor(), random_state=0, **FAST)
    assert len(res.x_iters) == 5 and res.n_failed == 0
    assert resolve_executor(None, dask_client.get_executor(), None)[1] == 2
