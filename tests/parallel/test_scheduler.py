"""The scheduling loop: evaluations in flight, lost, overdue, interrupted, stopped."""

import concurrent.futures as cf
import json
import logging
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

import treebo
from treebo import Integer, minimize
from treebo.storage import read_study

from .helpers import FAST, SPACE_2D, assert_distinct, quadratic


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
    assert_distinct(res.x_iters)


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


def _run_script(path, source, *args, timeout):
    """Run ``source`` as a script in a fresh interpreter (its own session, so that a
    hang can be killed with every process it started); return (stdout, stderr,
    seconds from the script's last line to the interpreter's exit)."""
    path.write_text(textwrap.dedent(source))
    env = {**os.environ, "PYTHONPATH": str(Path(treebo.__file__).parents[1])}
    proc = subprocess.Popen(
        [sys.executable, str(path), *map(str, args)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"no exit within {timeout} s\n--- stdout\n{out}\n--- stderr\n{err[-3000:]}")
    exited = time.time()
    assert proc.returncode == 0, f"--- stdout\n{out}\n--- stderr\n{err[-3000:]}"
    report = json.loads(out.strip().splitlines()[-1])
    return report, err, exited - report["finished_at"]


_STUCK_WORKER_SCRIPT = """
    import json, os, sys, time
    from treebo import Real, minimize
    from treebo.storage import read_study

    def objective(x):
        # HERE is a global of the main script: cloudpickle ships its value.
        try:  # the first evaluation to start is stuck for ever
            os.close(os.open(os.path.join(HERE, "stuck"), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            time.sleep(0.3)
            # Was the stuck evaluation still beating when this one ended?
            beat = os.path.join(HERE, "heartbeat")
            alive = os.path.exists(beat) and time.time() - os.path.getmtime(beat) < 0.5
            with open(os.path.join(HERE, "saw_stuck_alive"), "a") as log:
                log.write(f"{alive}\\n")
            return x[0] ** 2 + x[1] ** 2
        while True:
            try:  # swallows the alarm's exception, and every other
                with open(os.path.join(HERE, "heartbeat"), "ab") as beat:
                    beat.write(b".")
                time.sleep(0.05)
            except BaseException:
                pass

    if __name__ == "__main__":
        HERE, n_jobs = sys.argv[1], int(sys.argv[2])
        db = os.path.join(HERE, "study.db")
        res = minimize(objective, [Real(-1.0, 1.0), Real(-1.0, 1.0)], n_calls=10, timeout=1,
                       n_jobs=n_jobs, random_state=0, storage=db, n_candidates=500,
                       surrogate_params={"n_estimators": 20})
        beats = os.path.getsize(os.path.join(HERE, "heartbeat"))
        time.sleep(0.5)
        rows = read_study(db)["trials"]
        print(json.dumps({
            "statuses": res.statuses, "errors": res.errors,
            "eval_times": [r["eval_time"] for r in rows],
            "still_beating": os.path.getsize(os.path.join(HERE, "heartbeat")) > beats,
            "saw_stuck_alive": open(os.path.join(HERE, "saw_stuck_alive")).read().split(),
            "finished_at": time.time()}))
"""


@pytest.mark.fault
@pytest.mark.slow
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_a_worker_stuck_past_its_timeout_is_killed_and_replaced(tmp_path, n_jobs):
    # The worker that ignores its alarm is killed and replaced: the later
    # evaluations run instead of queueing behind it, and the interpreter exits.
    report, err, exit_delay = _run_script(
        tmp_path / "stuck.py", _STUCK_WORKER_SCRIPT, tmp_path, n_jobs, timeout=180
    )
    assert report["statuses"].count("failed") == 1
    stuck = report["statuses"].index("failed")
    assert report["errors"][stuck] == "timed out after 1 s"
    # The other nine really ran (each sleeps 0.3 s), among them any
    # evaluation killed along with the stuck one and submitted again.
    ran = [t for i, t in enumerate(report["eval_times"]) if i != stuck]
    assert report["statuses"].count("complete") == 9 and all(t >= 0.3 for t in ran)
    # The stuck worker was killed during the run (nine evaluations of 0.3 s
    # outlast its 2 s), not when the run ended; it stays dead.
    assert report["saw_stuck_alive"][-1] == "False" and not report["still_beating"]
    assert exit_delay < 20  # and nothing holds up the interpreter's exit
    assert "recorded as failed and its worker killed" in err


@pytest.mark.fault
def test_a_thread_past_its_timeout_is_abandoned_and_its_trial_failed(tmp_path):
    # A thread cannot be killed: its trial is failed, its future abandoned,
    # and the run goes on in the other thread.
    release, calls = threading.Event(), []

    def objective(x):
        calls.append(x)
        if len(calls) == 1:
            release.wait(60)  # past the timeout and the grace: abandoned
        elif len(calls) == 2:
            time.sleep(0.8)  # back within the grace, but too late: failed too
        return quadratic(x)

    db = tmp_path / "study.db"
    with cf.ThreadPoolExecutor(max_workers=2) as pool:
        try:
            res = minimize(
                objective,
                SPACE_2D,
                n_calls=5,
                executor=pool,
                n_jobs=1,
                timeout=0.5,
                random_state=0,
                storage=db,
                **FAST,
            )
            assert not release.is_set()  # minimize returned with the thread still stuck
        finally:
            release.set()
    assert res.statuses == ["failed", "failed"] + ["complete"] * 3
    assert res.errors[:2] == ["timed out after 0.5 s"] * 2
    eval_times = [r["eval_time"] for r in read_study(db)["trials"]]
    assert eval_times[0] is None and eval_times[1] >= 0.8


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
    assert (
        "trial 2: evaluation lost (BrokenExecutor: worker died); submitting it again (retry 1 of 1)"
    ) in caplog.text

    calls.clear()
    with _LosingExecutor(2) as pool:  # the retry is lost too
        res = minimize(objective, SPACE_2D, n_calls=6, executor=pool, random_state=0, **FAST)
    assert res.statuses == ["complete"] * 2 + ["failed"] + ["complete"] * 3
    assert res.errors[2] == "evaluation lost: BrokenExecutor: worker died"
    assert len(calls) == 5 and pool.n_submitted == 7
    with _LosingExecutor(1) as pool:
        res = minimize(
            objective, SPACE_2D, n_calls=6, executor=pool, max_retries=0, random_state=0, **FAST
        )
    assert res.statuses[2] == "failed" and pool.n_submitted == 6


def test_an_executor_that_refuses_work_ends_the_run_with_a_message():
    pool = cf.ThreadPoolExecutor(max_workers=2)
    pool.shutdown()
    seen = []
    res = minimize(
        quadratic,
        SPACE_2D,
        n_calls=5,
        executor=pool,
        random_state=0,
        callback=[lambda r: seen.append(len(r.x_iters))],
        **FAST,
    )
    assert res.message == "stopped: the executor refused new evaluations"
    assert res.statuses == ["failed", "failed"]
    assert seen == [1, 2]  # callbacks see the refused trials too
    assert res.errors[0].startswith("could not submit the evaluation: RuntimeError")


def test_a_callback_stop_leaves_running_evaluations_pending_for_resume(tmp_path):
    release = threading.Event()

    def objective(x):
        if x[0] > 0:
            release.wait(30)
        return quadratic(x)

    db = tmp_path / "study.db"
    with cf.ThreadPoolExecutor(max_workers=3) as pool:
        res = minimize(
            objective,
            SPACE_2D,
            n_calls=10,
            executor=pool,
            random_state=0,
            storage=db,
            callback=lambda r: len(r.x_iters) >= 1,
            **FAST,
        )
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
        res = minimize(
            lambda x: x[0] + x[1],
            [Integer(0, 2), Integer(0, 1)],
            n_calls=20,
            executor=pool,
            random_state=0,
            **FAST,
        )
    assert len(res.x_iters) == 6 and res.n_failed == 0
    assert_distinct(res.x_iters)
    assert res.message == "all 6 points of the search space have been evaluated or proposed"


@pytest.mark.fault
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_ctrl_c_in_the_driver_stops_the_run_and_leaves_trials_pending(tmp_path, n_jobs):
    driver, marker = os.getpid(), tmp_path / "interrupted"

    def objective(x):
        time.sleep(0.2)
        try:  # the third evaluation to start presses Ctrl-C in the driver
            with open(tmp_path / "started", "a") as log:
                log.write(".\n")
            # ">= 3", not "== 3": two workers may both append before either
            # reads, and then neither would see 3 (a flaky run in CI). The
            # O_EXCL marker lets exactly one of them press.
            if len((tmp_path / "started").read_text().split()) >= 3:
                os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
                os.kill(driver, signal.SIGINT)
                time.sleep(60)
        except FileExistsError:
            pass
        return x[0] ** 2 + x[1] ** 2

    db = tmp_path / "study.db"
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        minimize(objective, SPACE_2D, n_calls=10, n_jobs=n_jobs, random_state=0, storage=db, **FAST)
    assert time.monotonic() - start < 30 and marker.exists()
    rows = read_study(db)["trials"]
    statuses = [r["status"] for r in rows]
    # What finished before Ctrl-C is told; what was in flight stays pending.
    assert 1 <= statuses.count("complete") and "failed" not in statuses
    # In flight: at most n_jobs; one more when Ctrl-C lands inside a tell's
    # commit, which is rolled back and leaves that trial pending too.
    assert 1 <= statuses.count("pending") <= n_jobs + 1
    res = minimize(quadratic, SPACE_2D, n_calls=10, random_state=0, storage=db, **FAST)
    assert res.statuses == ["complete"] * 10


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
    res = minimize(
        objective, SPACE_2D, n_calls=8, executor=dask_client, random_state=0, storage=db, **FAST
    )
    killed_point = eval(marker.read_text())  # noqa: S307 - written above
    assert len(res.x_iters) == 8
    assert_distinct(res.x_iters)
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
        v for v, s in zip(res.func_vals, res.statuses) if s == "complete"
    ]


_NO_WORKERS_SCRIPT = """
    import json, os, subprocess, sys, time
    import dask, distributed
    import treebo.parallel
    from treebo import Real, minimize
    from treebo.storage import read_study

    def objective(x):
        os._exit(1)  # kills the worker process evaluating it

    if __name__ == "__main__":
        here = sys.argv[1]
        treebo.parallel.DASK_NO_WORKERS_TIMEOUT = 3.0
        # One death makes Dask give up on a task (KilledWorker), and workers
        # without a nanny stay dead: three kills leave the cluster empty.
        dask.config.set({"distributed.scheduler.allowed-failures": 0})
        cluster = distributed.LocalCluster(n_workers=0, processes=True, dashboard_address=None)
        client = distributed.Client(cluster)
        for _ in range(3):
            subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker",
                              cluster.scheduler_address, "--no-nanny", "--nthreads", "1",
                              "--no-dashboard"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        client.wait_for_workers(3, timeout=120)
        db = os.path.join(here, "study.db")
        start = time.monotonic()
        res = minimize(objective, [Real(-1.0, 1.0), Real(-1.0, 1.0)], n_calls=4,
                       executor=client, n_jobs=1, max_retries=1, random_state=0, storage=db,
                       n_candidates=500, surrogate_params={"n_estimators": 20})
        seconds = time.monotonic() - start
        rows = read_study(db)["trials"]
        client.close()
        cluster.close()
        print(json.dumps({"message": res.message, "seconds": seconds,
                          "rows": [[r["status"], r["error"]] for r in rows],
                          "finished_at": time.time()}))
"""


@pytest.mark.fault
@pytest.mark.slow
def test_a_dask_cluster_left_without_workers_stops_the_run(tmp_path):
    # minimize returns instead of waiting for ever for a worker.
    pytest.importorskip("distributed")
    report, err, _ = _run_script(
        tmp_path / "no_workers.py", _NO_WORKERS_SCRIPT, tmp_path, timeout=240
    )
    # Trial 0 killed two workers (the first try and its retry) and is failed
    # with the reason; trial 1 killed the last one, and its retry waits for a
    # worker that never comes: the run stops and leaves it pending.
    assert err.count("trial 0: evaluation lost (KilledWorker") == 2
    assert "(retry 1 of 1)" in err
    (status0, error0), (status1, error1) = report["rows"]
    assert status0 == "failed" and error0.startswith("evaluation lost: KilledWorker")
    assert (status1, error1) == ("pending", None)
    assert report["message"] == (
        "stopped: the Dask cluster has no workers (none for 3 s); "
        "the 1 evaluations in flight are left pending"
    )
    assert report["seconds"] < 60


@pytest.mark.fault
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_clean_ctrl_cs_on_one_slow_evaluation_never_fail_it(tmp_path, n_jobs):
    driver, slow = os.getpid(), tmp_path / "slow.json"

    def objective(x):
        # The 4th evaluation of the first run is slow, and the user presses
        # Ctrl-C (a real SIGINT to the driver) during it, in three runs in a row.
        if interrupting[0]:
            if not slow.exists() and len(list(tmp_path.glob("call-*"))) >= 3:
                slow.write_text(json.dumps(list(x)))
            if slow.exists() and json.loads(slow.read_text()) == list(x):
                os.kill(driver, signal.SIGINT)
                time.sleep(30)
        (tmp_path / f"call-{time.monotonic_ns()}").touch()
        return quadratic(x)

    db = tmp_path / "study.db"
    interrupting = [True]
    for _ in range(3):
        with pytest.raises(KeyboardInterrupt):
            minimize(
                objective, SPACE_2D, n_calls=8, n_jobs=n_jobs, random_state=0, storage=db, **FAST
            )
    # No clean interrupt counted as an offer that crashed the process.
    study = read_study(db)
    offers = study["meta"].get("resume_offers", {})
    pending = [r["number"] for r in study["trials"] if r["status"] == "pending"]
    assert pending and all(offers.get(str(n), 0) == 0 for n in pending), (offers, pending)
    interrupting[0] = False
    res = minimize(
        objective, SPACE_2D, n_calls=8, n_jobs=n_jobs, random_state=0, storage=db, **FAST
    )
    assert res.statuses == ["complete"] * 8, res.errors
    assert json.loads(slow.read_text()) in res.x_iters
