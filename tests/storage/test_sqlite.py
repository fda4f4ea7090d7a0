"""SQLiteStorage: the study journal, kills and interrupts, files that cannot be used."""

import json
import math
import os
import pickle
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest
from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier

from treebo import Binary, Categorical, Integer, Optimizer, Real, minimize
from treebo.storage import SQLiteStorage, StorageAccessError, read_study

from .helpers import FAST, MIXED, ROOT, SPACE_2D, flaky, mixed_study, quadratic, run_sql


def test_every_trial_is_stored_with_its_point_value_status_timings_and_seed(tmp_path):
    space = {
        "lr": Real(1e-4, 1.0, prior="log-uniform"),
        "depth": Integer(1, 6),
        "model": Categorical([RandomForestClassifier, ExtraTreesClassifier, None]),
        "flag": Binary(),
    }

    def objective(p):
        if p["model"] is None:
            return math.nan
        return (math.log10(p["lr"]) + 2) ** 2 + p["depth"] + p["flag"]

    db = tmp_path / "study.db"
    res = minimize(objective, space, n_calls=10, random_state=0, storage=db, **FAST)
    study = read_study(db)
    assert study["meta"]["seed"] == 0
    assert study["meta"]["settings"]["surrogate"] == "bwo"
    assert study["meta"]["settings"]["surrogate_params"]["n_estimators"] == 20
    rows = study["trials"]
    assert [r["number"] for r in rows] == list(range(10))
    assert [r["status"] for r in rows] == res.statuses
    for row, value, error in zip(rows, res.func_vals, res.errors):
        assert row["value"] == value or (row["value"] is None and np.isnan(value))
        assert row["error"] == error
        assert row["asked_at"] <= row["told_at"] and row["eval_time"] >= 0
    assert [r["origin"] for r in rows] == ["initial"] * 5 + ["model"] * 5
    assert all(r["seed"] is None for r in rows[:5]) and all(r["seed"] > 0 for r in rows[5:])
    assert all(r["fit_time"] > 0 for r in rows[5:])

    # Reopening gives back the same trials, bit for bit, categories included.
    with Optimizer(space, random_state=0, storage=db, **FAST) as opt:
        assert [t.x for t in opt.trials] == res.x_iters
        for trial, row in zip(opt.trials, rows):
            # The encoded point is stored as it was proposed: encoding the
            # decoded point again may differ in the last bit (log scale).
            assert trial.x_encoded.tobytes() == row["x_encoded"].tobytes()
            np.testing.assert_allclose(trial.x_encoded, opt.space.encode([trial.x])[0], rtol=1e-12)
        assert opt.get_result().fun == res.fun


def test_a_resumed_run_equals_the_uninterrupted_one(tmp_path):
    db = tmp_path / "study.db"
    first = minimize(flaky, SPACE_2D, n_calls=7, random_state=1, storage=db, **FAST)
    resumed = minimize(flaky, SPACE_2D, n_calls=13, random_state=1, storage=db, **FAST)
    straight = minimize(flaky, SPACE_2D, n_calls=13, random_state=1, **FAST)
    assert resumed.x_iters[:7] == first.x_iters
    assert resumed.x_iters == straight.x_iters
    np.testing.assert_array_equal(resumed.func_vals, straight.func_vals)
    assert resumed.errors == straight.errors and resumed.n_failed > 0
    # random_state=None resumes with the stored streams as well.
    again = minimize(flaky, SPACE_2D, n_calls=15, storage=db, **FAST)
    longer = minimize(flaky, SPACE_2D, n_calls=15, random_state=1, **FAST)
    assert again.x_iters == longer.x_iters
    # A study that already has n_calls evaluations evaluates nothing.
    calls = []
    done = minimize(lambda x: calls.append(x) or 0.0, SPACE_2D, n_calls=10, storage=db, **FAST)
    assert calls == [] and len(done.x_iters) == 15


def test_a_study_without_a_seed_is_reproducible_from_its_storage(tmp_path):
    db = tmp_path / "study.db"
    first = minimize(quadratic, SPACE_2D, n_calls=6, storage=db, **FAST)
    seed = read_study(db)["meta"]["seed"]
    assert isinstance(seed, int)
    resumed = minimize(quadratic, SPACE_2D, n_calls=9, storage=db, **FAST)
    straight = minimize(quadratic, SPACE_2D, n_calls=9, random_state=seed, **FAST)
    assert resumed.x_iters[:6] == first.x_iters and resumed.x_iters == straight.x_iters


@pytest.mark.fault
def test_pending_trials_of_a_dead_run_are_offered_again_or_failed(tmp_path):
    db = tmp_path / "study.db"
    opt = Optimizer(SPACE_2D, n_initial_points=2, random_state=0, storage=db, **FAST)
    a, b = opt.ask(), opt.ask()
    opt.tell(b, quadratic(b))
    c = opt.ask()
    opt.close()  # the run dies with a and c pending

    reference = Optimizer(SPACE_2D, n_initial_points=2, random_state=0, **FAST)
    ra, rb = reference.ask(), reference.ask()
    reference.tell(rb, quadratic(rb))
    rc = reference.ask()
    reference.tell(ra, quadratic(ra))
    reference.tell(rc, quadratic(rc))
    assert (ra, rb, rc) == (a, b, c)

    with Optimizer(SPACE_2D, n_initial_points=2, random_state=0, storage=db, **FAST) as opt:
        assert [t.status for t in opt.trials] == ["pending", "complete", "pending"]
        assert opt.ask(n_points=2) == [a, c]  # offered again, oldest first
        opt.tell(a, quadratic(a))
        opt.tell(c, quadratic(c))
        # The streams continued: the next point is the uninterrupted run's.
        assert opt.ask() == reference.ask()

    db2 = tmp_path / "study2.db"
    opt = Optimizer(SPACE_2D, n_initial_points=2, random_state=0, storage=db2, **FAST)
    a = opt.ask()
    opt.close()
    with Optimizer(
        SPACE_2D, n_initial_points=2, random_state=0, storage=db2, resume_pending="fail", **FAST
    ) as opt:
        assert opt.trials[0].status == "failed"
        assert "ended before telling its value" in opt.trials[0].error
        assert opt.ask() != a
    assert read_study(db2)["trials"][0]["status"] == "failed"


@pytest.mark.fault
def test_an_ask_that_cannot_be_committed_leaves_no_trace(tmp_path):
    db = tmp_path / "study.db"
    opt = Optimizer(SPACE_2D, n_initial_points=2, random_state=0, storage=db, **FAST)
    for x in opt.ask(n_points=3):
        opt.tell(x, quadratic(x))
    opt.storage.close()
    with pytest.raises(RuntimeError, match="is closed"):
        opt.ask(n_points=2)
    assert len(opt.trials) == 3  # neither trial of the failed batch stayed
    opt.storage.open()
    # The random streams were rolled back too: the batch comes out the same.
    points = opt.ask(n_points=2)
    reference = Optimizer(SPACE_2D, n_initial_points=2, random_state=0, **FAST)
    for x in reference.ask(n_points=3):
        reference.tell(x, quadratic(x))
    assert points == reference.ask(n_points=2)
    opt.close()


def test_bad_storage_arguments_are_named(tmp_path):
    with pytest.raises(ValueError, match="storage must be a path to a database file"):
        Optimizer(SPACE_2D, storage=":memory:")
    with pytest.raises(ValueError, match="resume_pending must be one of"):
        Optimizer(SPACE_2D, resume_pending="skip")
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not a database" * 100)
    with pytest.raises(ValueError, match="is not a treebo study database"):
        Optimizer(SPACE_2D, storage=junk)
    with pytest.raises(ValueError, match="does not exist"):
        read_study(tmp_path / "missing.db")
    assert isinstance(SQLiteStorage(tmp_path / "x.db"), SQLiteStorage)


_RUNNER = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, {root!r})
    from treebo import minimize, Real

    def objective(x):
        with open({log!r}, "a") as log:
            log.write(repr(list(x)) + "\\n")
        time.sleep(0.05)
        if x[0] > 0.6:
            raise RuntimeError("simulator crashed")
        return (x[0] - 0.3) ** 2 + (x[1] + 0.2) ** 2

    minimize(objective, [Real(-1.0, 1.0), Real(-1.0, 1.0)], n_calls={n_calls}, random_state=3,
             storage={db!r}, n_candidates=500, surrogate_params={{"n_estimators": 20}})
""")


def _told(db):
    try:
        return [r for r in read_study(db)["trials"] if r["status"] != "pending"]
    except Exception:  # noqa: BLE001 - the file may not exist yet
        return []


@pytest.mark.fault
def test_a_run_killed_with_sigkill_resumes_without_losing_or_repeating_a_told_trial(tmp_path):
    """Determinism argument: a proposal is a function of the told trials (in
    order) and of the model and acquisition streams' states. Each ask commits
    its trial together with the stream states after it, each tell commits the
    value, and SQLite applies a commit entirely or not at all, so wherever
    SIGKILL lands the file holds the state after some prefix of the run's
    asks and tells. Resuming from there replays the rest: a trial left
    pending is evaluated again at the same point without touching the
    streams, an ask that was not committed is made again from the same
    states, and the objective, the surrogate fits (seeded from the stream)
    and the float values (stored as IEEE doubles) are deterministic. So the
    resumed run must equal the uninterrupted one exactly.
    """
    db, log = tmp_path / "study.db", tmp_path / "evaluations.log"
    script = tmp_path / "run.py"
    script.write_text(_RUNNER.format(root=str(ROOT), log=str(log), db=str(db), n_calls=16))
    told_at_kill = []
    for kill_after in (4, 9):
        process = subprocess.Popen([sys.executable, str(script)])
        try:
            deadline = time.monotonic() + 120
            while len(_told(db)) < kill_after and process.poll() is None:
                assert time.monotonic() < deadline, "the run made no progress"
                time.sleep(0.01)
            assert process.poll() is None, "the run ended before it could be killed"
            os.kill(process.pid, signal.SIGKILL)
        finally:
            process.wait()
        assert process.returncode == -signal.SIGKILL
        told = _told(db)
        assert len(told) >= kill_after
        told_at_kill.append({r["number"]: (r["point"], r["value"], r["error"]) for r in told})
    assert told_at_kill[0].items() <= told_at_kill[1].items()  # nothing told was lost

    evaluated_before = len(log.read_text().splitlines())
    log_lines = []

    def objective(x):
        log_lines.append(list(x))
        if x[0] > 0.6:
            raise RuntimeError("simulator crashed")
        return quadratic(x)

    resumed = minimize(objective, SPACE_2D, n_calls=16, random_state=3, storage=db, **FAST)
    straight = minimize(flaky, SPACE_2D, n_calls=16, random_state=3, **FAST)
    assert resumed.x_iters == straight.x_iters
    np.testing.assert_array_equal(resumed.func_vals, straight.func_vals)
    assert resumed.errors == straight.errors
    # Every trial told before the second kill kept its point and value, and
    # none of them was evaluated again after it.
    rows = read_study(db)["trials"]
    for number, (point, value, error) in told_at_kill[1].items():
        assert (rows[number]["point"], rows[number]["value"], rows[number]["error"]) == (
            point,
            value,
            error,
        )
    told_points = [p for p, _, _ in told_at_kill[1].values()]
    assert not any(x in told_points for x in log_lines)
    assert len(told_points) + len(log_lines) == 16
    assert evaluated_before >= len(told_points)


def test_an_optimizer_with_a_storage_pickles_closed(tmp_path):
    opt = Optimizer(SPACE_2D, random_state=0, storage=tmp_path / "study.db", **FAST)
    opt.tell([0.1, 0.2], 1.0)
    copy = pickle.loads(pickle.dumps(opt))
    assert copy.storage.path == opt.storage.path and copy.trials[0].value == 1.0
    opt.close()
    with copy.storage.open() as storage:  # reopening the copy takes the lock again
        assert storage.load_trials()[0]["value"] == 1.0


@pytest.mark.fault
@pytest.mark.parametrize(
    "statement, listed",
    [
        (
            "CREATE TRIGGER wipe AFTER INSERT ON trials BEGIN DELETE FROM trials; END",
            "trigger 'wipe'",
        ),
        ("CREATE VIEW best AS SELECT * FROM trials", "view 'best'"),
    ],
)
def test_a_study_file_with_a_trigger_or_view_is_not_opened(tmp_path, statement, listed):
    db = tmp_path / "s.db"
    mixed_study(db)
    run_sql(db, statement)
    for open_it in (
        lambda: Optimizer(MIXED, random_state=0, storage=db, **FAST),
        lambda: read_study(db),
    ):
        with pytest.raises(ValueError, match=f"holds {listed}; a treebo study has no triggers"):
            open_it()
    # Nothing ran: the trials are all still there.
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT COUNT(*) FROM trials").fetchone()[0] == 7
    conn.close()


@pytest.mark.fault
def test_a_trials_table_with_other_columns_is_refused(tmp_path):
    db = tmp_path / "s.db"
    mixed_study(db)
    run_sql(db, "ALTER TABLE trials ADD COLUMN extra TEXT")
    with pytest.raises(ValueError, match="is damaged: its trials table has the columns"):
        Optimizer(MIXED, random_state=0, storage=db, **FAST)


_CRASHER = textwrap.dedent("""
    import json, os, signal, sys
    sys.path.insert(0, {root!r})
    from treebo import minimize, Real

    def objective(x):
        # The 4th point of the first run kills the process, and so does that
        # point whenever it is evaluated again: a point that crashes the process.
        if os.path.exists({crash!r}):
            with open({crash!r}) as f:
                if json.load(f) == list(x):
                    os.kill(os.getpid(), signal.SIGKILL)
        elif objective.calls == 3:
            with open({crash!r}, "w") as f:
                json.dump(list(x), f)
            os.kill(os.getpid(), signal.SIGKILL)
        objective.calls += 1
        return (x[0] - 0.3) ** 2 + (x[1] + 0.2) ** 2

    objective.calls = 0
    minimize(objective, [Real(-1.0, 1.0), Real(-1.0, 1.0)], n_calls=8, random_state=3,
             storage={db!r}, n_candidates=500, surrogate_params={{"n_estimators": 20}})
""")


@pytest.mark.fault
def test_a_point_that_kills_the_process_is_failed_after_two_resumes(tmp_path):
    db, crash = tmp_path / "s.db", tmp_path / "crash.json"
    script = _CRASHER.format(root=str(ROOT), db=str(db), crash=str(crash))
    codes = [
        subprocess.run([sys.executable, "-c", script], timeout=120).returncode for _ in range(4)
    ]
    # The first run and the two resumes that offer the point again die on it;
    # the next resume records it as failed and finishes the run.
    assert codes == [-signal.SIGKILL] * 3 + [0]
    trials = read_study(db)["trials"]
    assert len(trials) == 8
    assert trials[3]["status"] == "failed"
    assert "offered again 2 times" in trials[3]["error"]
    assert all(t["status"] == "complete" for i, t in enumerate(trials) if i != 3)
    assert read_study(db)["meta"]["resume_offers"] == {"3": 2}


def test_a_conditional_study_resumes_with_the_proposals_of_an_uninterrupted_run(tmp_path):
    space = {
        "model": Categorical(["a", "b"]),
        "x": Real(0.0, 1.0),
        "depth": Integer(1, 8, active_if={"model": "b"}),
        "rate": Real(1e-3, 1.0, prior="log-uniform", active_if={"model": "b"}),
    }

    def objective(x):
        return x["x"] + (0.1 * x["depth"] * x["rate"] if x["model"] == "b" else 0.5)

    straight = minimize(objective, space, n_calls=12, random_state=2, **FAST)
    db = tmp_path / "conditional.db"
    minimize(objective, space, n_calls=7, random_state=2, storage=db, **FAST)
    rows = read_study(db)["trials"]
    assert any(row["point"][2] is None for row in rows)  # inactive dimensions are null
    resumed = minimize(objective, space, n_calls=12, random_state=2, storage=db, **FAST)
    assert resumed.x_iters == straight.x_iters


_CHILD_HEADER = """
import json, os, sys
sys.path.insert(0, {root!r})
from treebo import Optimizer, Real, minimize
from treebo.storage import StorageAccessError

HERE = {here!r}


def make_study(path):
    with Optimizer([Real(0.0, 1.0)], n_initial_points=2, random_state=0, storage=path) as opt:
        for _ in range(3):
            x = opt.ask()
            opt.tell(x, (x[0] - 0.3) ** 2)


def attempt(path):
    calls = []
    try:
        minimize(lambda x: calls.append(x) or x[0], [Real(0.0, 1.0)], n_calls=5,
                 n_initial_points=2, random_state=0, storage=path)
    except Exception as error:  # report what the user would see
        return {{"type": type(error).__name__, "message": str(error), "calls": len(calls)}}
    return {{"type": None, "message": "", "calls": len(calls)}}
"""


def _run_child(prefix, here, body, timeout=180):
    source = _CHILD_HEADER.format(root=str(ROOT), here=str(here)) + textwrap.dedent(body)
    proc = subprocess.run(
        [*prefix, sys.executable, "-c", source], capture_output=True, text=True, timeout=timeout
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.fault
def test_a_study_in_a_read_only_directory_is_named_as_such_before_any_evaluation(
    user_dir, unprivileged_prefix
):
    report = _run_child(
        unprivileged_prefix,
        user_dir,
        """
        make_study(os.path.join(HERE, "s.db"))
        os.chmod(HERE, 0o555)
        print(json.dumps({"existing": attempt(os.path.join(HERE, "s.db")),
                          "new": attempt(os.path.join(HERE, "new.db"))}))
    """,
    )
    for case in ("existing", "new"):
        got = report[case]
        assert got["type"] == "StorageAccessError", got
        name = "s.db" if case == "existing" else "new.db"
        assert f"{user_dir / name}' cannot be written" in got["message"]
        assert f"its directory '{user_dir}' is not writable by this user" in got["message"]
        assert "not a treebo study" not in got["message"]
        assert got["calls"] == 0  # refused before anything was evaluated
    # The existing study is intact.
    assert len(read_study(user_dir / "s.db")["trials"]) == 3


@pytest.mark.fault
def test_a_read_only_study_file_is_refused_when_opened_naming_the_file(
    user_dir, unprivileged_prefix
):
    report = _run_child(
        unprivileged_prefix,
        user_dir,
        """
        db = os.path.join(HERE, "s.db")
        make_study(db)
        os.chmod(db, 0o444)
        got = attempt(db)
        got["readable"] = len(__import__("treebo.storage").storage.read_study(db)["trials"])
        print(json.dumps(got))
    """,
    )
    assert report["type"] == "StorageAccessError", report
    assert (
        f"storage '{user_dir / 's.db'}' cannot be written: the file is read-only"
        in (report["message"])
    )
    assert report["calls"] == 0 and report["readable"] == 3


def _full_disk_prefix(mount_point):
    """Run a child in its own user and mount namespace with a 256 KiB tmpfs at
    ``mount_point`` (a real file system that fills up), or skip."""
    import shutil

    unshare = shutil.which("unshare")
    probe = [unshare, "-Urm", "sh", "-c", f"mount -t tmpfs -o size=256k tmpfs {mount_point}"]
    if unshare is None or subprocess.run(probe, capture_output=True).returncode != 0:
        pytest.skip("cannot mount a small tmpfs in a user namespace (unshare -Urm) here")
    return [
        unshare,
        "-Urm",
        "sh",
        "-c",
        f'mount -t tmpfs -o size=256k tmpfs {mount_point} && exec "$0" "$@"',
    ]


@pytest.mark.fault
def test_a_study_on_a_full_disk_is_named_full_not_damaged(tmp_path):
    mount = tmp_path / "disk"
    mount.mkdir()
    report = _run_child(
        _full_disk_prefix(mount),
        mount,
        """
        db = os.path.join(HERE, "s.db")
        make_study(db)
        fd = os.open(os.path.join(HERE, "filler"), os.O_WRONLY | os.O_CREAT)
        try:
            while True:
                os.write(fd, b"\\0" * 1024)
        except OSError:
            pass
        print(json.dumps(attempt(db)))
    """,
    )
    assert report["type"] == "StorageAccessError", report
    assert "s.db' cannot be written: the disk is full" in report["message"]
    assert "not a treebo study" not in report["message"] and report["calls"] == 0


def _foreign_database(path):
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
    conn.executemany("INSERT INTO customers (name) VALUES (?)", [("ada",), ("grace",)])
    conn.close()


def _foreign_study_table(path):
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("CREATE TABLE study (key TEXT PRIMARY KEY, value TEXT, owner TEXT)")
    conn.execute("INSERT INTO study VALUES ('mode', 'production', 'billing')")
    conn.close()


@pytest.mark.fault
@pytest.mark.parametrize(
    "make, problem",
    [
        (_foreign_database, r"it holds the table\(s\) \['customers'\]"),
        (_foreign_study_table, r"its study table has the columns \['key', 'value', 'owner'\]"),
    ],
)
def test_another_applications_sqlite_file_is_refused_and_left_byte_for_byte(
    tmp_path, make, problem
):
    db = tmp_path / "app.db"
    make(db)
    before = db.read_bytes()
    listing = sorted(p.name for p in tmp_path.iterdir())
    for open_it in (
        lambda: Optimizer(SPACE_2D, random_state=0, storage=db, **FAST),
        lambda: minimize(quadratic, SPACE_2D, n_calls=3, storage=db, **FAST),
        lambda: read_study(db),
    ):
        with pytest.raises(
            StorageAccessError, match=f"is the SQLite database of another application \\({problem}"
        ):
            open_it()
    assert db.read_bytes() == before
    # Not even a lock file or a journal was left beside it.
    assert sorted(p.name for p in tmp_path.iterdir()) == listing


class _InterruptAfter:
    """A connection that raises KeyboardInterrupt right after ``statement`` runs once."""

    def __init__(self, conn, statement):
        self._conn, self._statement = conn, statement

    def execute(self, sql, *args):
        result = self._conn.execute(sql, *args)
        if sql == self._statement:
            self._statement = None
            raise KeyboardInterrupt
        return result

    def __getattr__(self, name):
        return getattr(self._conn, name)


@pytest.mark.fault
@pytest.mark.parametrize("statement", ["BEGIN IMMEDIATE", "COMMIT"])
def test_an_interrupt_inside_a_tell_leaves_the_optimizer_usable(tmp_path, statement):
    db = tmp_path / "s.db"
    opt = Optimizer(SPACE_2D, n_initial_points=2, random_state=0, storage=db, **FAST)
    x = opt.ask()
    real = opt.storage._conn
    opt.storage._conn = _InterruptAfter(real, statement)
    with pytest.raises(KeyboardInterrupt):
        opt.tell(x, quadratic(x))
    opt.storage._conn = real
    # The study goes on in the same optimizer: ask, tell, and the file agrees.
    if opt.trials[0].status == "pending":
        opt.tell(x, quadratic(x))
    for _ in range(2):
        y = opt.ask()
        opt.tell(y, quadratic(y))
    opt.close()
    rows = read_study(db)["trials"]
    assert [r["status"] for r in rows] == ["complete"] * 3
    assert [r["point"] for r in rows] == [t.x for t in opt.trials]


class _SigintAfter(_InterruptAfter):
    """A connection that sends the main thread a real SIGINT right after ``statement`` runs.

    To the main thread itself: a signal sent to the process may be delivered to
    another of its threads (BLAS, joblib), and the main thread would then run
    the handler at a later moment.
    """

    def execute(self, sql, *args):
        result = self._conn.execute(sql, *args)
        if sql == self._statement:
            self._statement = None
            signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)
        return result


@pytest.mark.fault
def test_ctrl_c_right_after_a_tells_commit_keeps_memory_and_file_in_step(tmp_path):
    db = tmp_path / "s.db"
    opt = Optimizer(SPACE_2D, n_initial_points=2, random_state=0, storage=db, **FAST)
    x = opt.ask()
    opt.tell(x, quadratic(x))
    real = opt.storage._conn
    opt.storage._conn = _SigintAfter(real, "COMMIT")
    with pytest.raises(KeyboardInterrupt):
        opt.tell([0.5, 0.5], 7.0)  # a point told without being asked
    opt.storage._conn = real
    # The commit happened, and so did the change in memory: the told trial is
    # there, so the next ask takes the next number instead of overwriting it.
    assert (len(opt.trials), opt.trials[1].value) == (2, 7.0)
    y = opt.ask()
    opt.tell(y, quadratic(y))
    opt.close()
    rows = read_study(db)["trials"]
    assert [(r["status"], r["value"]) for r in rows][:2] == [
        ("complete", quadratic(x)),
        ("complete", 7.0),
    ]
    assert len(rows) == 3


# -- stored JSON is read with bounded size and depth ---------------------------------------------
_DEEP_JSON = "[" * 100_000 + "]" * 100_000


@pytest.mark.fault
@pytest.mark.parametrize("key", ["space", "settings", "rng_model"])
def test_a_deeply_nested_study_value_is_a_short_error_naming_the_file_and_the_key(tmp_path, key):
    db = tmp_path / "s.db"
    mixed_study(db)
    run_sql(db, "UPDATE study SET value = ? WHERE key = ?", _DEEP_JSON, key)
    for read in (
        lambda: read_study(db),
        lambda: Optimizer(MIXED, n_initial_points=4, random_state=0, storage=db, **FAST),
    ):
        with pytest.raises(ValueError) as caught:
            read()
        assert str(caught.value) == (
            f"storage {str(db)!r} is damaged: stored {key!r} is nested deeper than 100 levels"
        )


@pytest.mark.fault
def test_a_deeply_nested_trial_point_is_a_short_error_naming_the_trial(tmp_path):
    db = tmp_path / "s.db"
    mixed_study(db)
    run_sql(db, "UPDATE trials SET point = ? WHERE number = 2", _DEEP_JSON)
    with pytest.raises(ValueError) as caught:
        read_study(db)
    assert str(caught.value) == (
        f"storage {str(db)!r} is damaged: trial 2: its point is nested deeper than 100 levels"
    )


@pytest.mark.fault
def test_a_study_value_over_16_mib_is_refused_unparsed(tmp_path):
    db = tmp_path / "s.db"
    mixed_study(db)
    run_sql(db, "UPDATE study SET value = ? WHERE key = 'settings'", '"' + "x" * 2**24 + '"')
    with pytest.raises(ValueError) as caught:
        read_study(db)
    assert str(caught.value) == (
        f"storage {str(db)!r} is damaged: stored 'settings' is longer than 16 MiB "
        "(16,777,218 characters)"
    )
