import json
import math
import os
import pickle
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier

from treebo import Binary, Categorical, Integer, Optimizer, Real, Space, minimize
from treebo.storage import (
    InMemoryStorage,
    SQLiteStorage,
    StorageAccessError,
    StorageLockedError,
    StorageMismatchError,
    read_study,
)

ROOT = Path(__file__).resolve().parents[1]
SPACE_2D = [Real(-1.0, 1.0), Real(-1.0, 1.0)]
FAST = dict(n_candidates=500, surrogate_params={"n_estimators": 20})


def quadratic(x):
    return (x[0] - 0.3) ** 2 + (x[1] + 0.2) ** 2


def flaky(x):
    # Deterministic failures, so that runs can be compared point by point.
    if x[0] > 0.6:
        raise RuntimeError("simulator crashed")
    return quadratic(x)


def test_every_trial_is_stored_with_its_point_value_status_timings_and_seed(tmp_path):
    space = {"lr": Real(1e-4, 1.0, prior="log-uniform"), "depth": Integer(1, 6),
             "model": Categorical([RandomForestClassifier, ExtraTreesClassifier, None]),
             "flag": Binary()}

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
            np.testing.assert_allclose(trial.x_encoded, opt.space.encode([trial.x])[0],
                                       rtol=1e-12)
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
    with Optimizer(SPACE_2D, n_initial_points=2, random_state=0, storage=db2,
                   resume_pending="fail", **FAST) as opt:
        assert opt.trials[0].status == "failed"
        assert "ended before telling its value" in opt.trials[0].error
        assert opt.ask() != a
    assert read_study(db2)["trials"][0]["status"] == "failed"


def test_a_different_space_surrogate_setting_or_seed_is_refused(tmp_path):
    db = tmp_path / "study.db"
    minimize(quadratic, SPACE_2D, n_calls=2, random_state=0, storage=db, **FAST)
    with pytest.raises(StorageMismatchError, match="different search space") as info:
        Optimizer([Real(-1.0, 1.0), Real(-1.0, 2.0)], random_state=0, storage=db, **FAST)
    assert "x1=Real(-1.0, 2.0, uniform)" in str(info.value)
    with pytest.raises(StorageMismatchError, match="surrogate: stored 'bwo', given 'rf'"):
        Optimizer(SPACE_2D, "rf", random_state=0, storage=db, **FAST)
    with pytest.raises(StorageMismatchError, match="n_estimators"):
        Optimizer(SPACE_2D, random_state=0, storage=db, n_candidates=500)
    with pytest.raises(StorageMismatchError, match="n_candidates: stored 500, given 600"):
        Optimizer(SPACE_2D, random_state=0, storage=db, n_candidates=600,
                  surrogate_params={"n_estimators": 20})
    with pytest.raises(StorageMismatchError, match="random_state=0, given random_state=5"):
        Optimizer(SPACE_2D, random_state=5, storage=db, **FAST)
    # None of the refused openings changed or locked the study.
    with Optimizer(SPACE_2D, random_state=0, storage=db, **FAST) as opt:
        assert len(opt.trials) == 2


def test_a_study_is_open_in_one_optimizer_at_a_time(tmp_path):
    db = tmp_path / "study.db"
    first = Optimizer(SPACE_2D, random_state=0, storage=db, **FAST)
    with pytest.raises(StorageLockedError, match=f"open in another optimizer \\(pid {os.getpid()}"):
        Optimizer(SPACE_2D, random_state=0, storage=db, **FAST)
    first.close()
    Optimizer(SPACE_2D, random_state=0, storage=db, **FAST).close()


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
            point, value, error)
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


def _locked_pattern():
    return f"open in another optimizer \\(pid {os.getpid()}"


@pytest.mark.fault
def test_a_study_is_locked_through_a_symlink_to_it(tmp_path):
    db = tmp_path / "s.db"
    link = tmp_path / "link.db"
    link.symlink_to(db)  # dangling until the first optimizer creates the study
    with Optimizer(SPACE_2D, random_state=0, storage=db, **FAST):
        with pytest.raises(StorageLockedError, match=_locked_pattern()):
            Optimizer(SPACE_2D, random_state=0, storage=link, **FAST)
    with Optimizer(SPACE_2D, random_state=0, storage=link, **FAST) as opt:
        opt.tell([0.1, 0.2], 1.0)
        with pytest.raises(StorageLockedError, match=_locked_pattern()):
            Optimizer(SPACE_2D, random_state=0, storage=db, **FAST)
    assert len(read_study(db)["trials"]) == 1


@pytest.mark.fault
def test_a_study_is_locked_through_a_hard_link_to_it_in_any_directory(tmp_path):
    db = tmp_path / "s.db"
    minimize(quadratic, SPACE_2D, n_calls=2, random_state=0, storage=db, **FAST)
    (tmp_path / "other").mkdir()
    for hard in (tmp_path / "hard.db", tmp_path / "other" / "elsewhere.db"):
        os.link(db, hard)
        with Optimizer(SPACE_2D, random_state=0, storage=db, **FAST):
            with pytest.raises(StorageLockedError, match=_locked_pattern()):
                Optimizer(SPACE_2D, random_state=0, storage=hard, **FAST)
        with Optimizer(SPACE_2D, random_state=0, storage=hard, **FAST) as opt:
            assert len(opt.trials) == 2
            with pytest.raises(StorageLockedError, match=_locked_pattern()):
                Optimizer(SPACE_2D, random_state=0, storage=db, **FAST)


@pytest.mark.fault
def test_a_symlink_at_the_lock_path_is_refused_and_its_target_left_alone(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"precious data\n")
    db = Path(os.path.realpath(tmp_path)) / "study.db"
    lock = db.with_name("study.db-lock")
    lock.symlink_to(victim)
    with pytest.raises(OSError, match="lock file .*study.db-lock.* is a symbolic link"):
        Optimizer(SPACE_2D, random_state=0, storage=db, **FAST)
    assert victim.read_bytes() == b"precious data\n" and lock.is_symlink()
    # A hard link at the lock path is a regular file: locked, never rewritten.
    lock.unlink()
    os.link(victim, lock)
    with Optimizer(SPACE_2D, random_state=0, storage=db, **FAST) as opt:
        opt.tell([0.1, 0.2], 1.0)
        with pytest.raises(StorageLockedError, match="open in another optimizer"):
            Optimizer(SPACE_2D, random_state=0, storage=db, **FAST)
    assert victim.read_bytes() == b"precious data\n"
    # A directory in its place is refused before anything is opened.
    lock.unlink()
    lock.mkdir()
    with pytest.raises(OSError, match="is a directory, not a regular file"):
        Optimizer(SPACE_2D, random_state=0, storage=db, **FAST)


# -- crafted storage files (issue 16.4): a resume checks every row it trusts --------------

MIXED = [Real(0.0, 1.0, name="r"), Categorical(["a", "b", "c"], name="c"),
         Integer(1, 5, name="i"), Binary(name="b")]


def _mixed_study(path, n_calls=6):
    opt = Optimizer(MIXED, n_initial_points=4, random_state=0, storage=path, **FAST)
    for _ in range(n_calls):
        x = opt.ask()
        opt.tell(x, float(x[0]) + x[2])
    opt.ask()  # one pending trial
    opt.close()


def _sql(path, statement, *args):
    import sqlite3
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute(statement, args)
    conn.close()


_BAD_ROWS = {
    "real out of range": ("UPDATE trials SET point = '[1000000000.0, 0, 1, 0]' WHERE "
                          "status = 'pending'", r"'r' = 1000000000.0|outside"),
    "category index -1": ("UPDATE trials SET point = '[0.5, -1, 1, 0]' WHERE number = 1",
                          r"category index -1 \(allowed: an integer from 0 to 2\)"),
    "too many values": ("UPDATE trials SET point = '[0.5, 0, 1, 0, 7]' WHERE number = 2",
                        r"allowed: a list of 4 values"),
    "text for a real": ("UPDATE trials SET point = '[\"x\", 0, 1, 0]' WHERE number = 0",
                        r"'r' = 'x'"),
    "binary 2": ("UPDATE trials SET point = '[0.5, 0, 1, 2]' WHERE number = 0",
                 r"'b' = 2 \(allowed: an integer in \[0, 1\]\)"),
    "text value": ("UPDATE trials SET value = 'abc' WHERE number = 3",
                   r"value 'abc' of a complete trial"),
    "value of a pending trial": ("UPDATE trials SET value = 1.5 WHERE status = 'pending'",
                                 r"value 1.5 of a pending trial"),
    "unknown status": ("UPDATE trials SET status = 'done' WHERE number = 0",
                       r"status 'done'"),
    "encoded point of another point": ("UPDATE trials SET x_encoded = "
                                       "(SELECT x_encoded FROM trials WHERE number = 1) "
                                       "WHERE number = 0", r"is not the encoding of point"),
    "short encoded point": ("UPDATE trials SET x_encoded = x'0000' WHERE number = 0",
                            r"buffer size must be a multiple"),
    "text timing": ("UPDATE trials SET fit_time = 'slow' WHERE number = 4",
                    r"fit_time 'slow'"),
}


@pytest.mark.fault
@pytest.mark.parametrize("case", sorted(_BAD_ROWS))
def test_a_crafted_row_is_refused_with_the_study_the_trial_and_the_problem(tmp_path, case):
    db = tmp_path / "s.db"
    _mixed_study(db)
    statement, problem = _BAD_ROWS[case]
    import sqlite3
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("PRAGMA ignore_check_constraints = 1")  # the schema's CHECK on status
    conn.execute(statement)
    conn.close()
    with pytest.raises(ValueError, match=rf"storage '.*s\.db' is damaged: trial \d+: .*"
                                         rf"({problem})"):
        Optimizer(MIXED, n_initial_points=4, random_state=0, storage=db, **FAST)


@pytest.mark.fault
def test_an_untouched_mixed_study_resumes(tmp_path):
    # The checks above must not refuse what treebo itself wrote.
    db = tmp_path / "s.db"
    _mixed_study(db, n_calls=12)
    with Optimizer(MIXED, n_initial_points=4, random_state=0, storage=db, **FAST) as opt:
        assert len(opt.trials) == 13 and opt.trials[-1].status == "pending"


@pytest.mark.fault
@pytest.mark.parametrize("statement, listed", [
    ("CREATE TRIGGER wipe AFTER INSERT ON trials BEGIN DELETE FROM trials; END",
     "trigger 'wipe'"),
    ("CREATE VIEW best AS SELECT * FROM trials", "view 'best'"),
])
def test_a_study_file_with_a_trigger_or_view_is_not_opened(tmp_path, statement, listed):
    db = tmp_path / "s.db"
    _mixed_study(db)
    _sql(db, statement)
    for open_it in (lambda: Optimizer(MIXED, random_state=0, storage=db, **FAST),
                    lambda: read_study(db)):
        with pytest.raises(ValueError, match=f"holds {listed}; a treebo study has no triggers"):
            open_it()
    # Nothing ran: the trials are all still there.
    import sqlite3
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT COUNT(*) FROM trials").fetchone()[0] == 7
    conn.close()


@pytest.mark.fault
def test_a_trials_table_with_other_columns_is_refused(tmp_path):
    db = tmp_path / "s.db"
    _mixed_study(db)
    _sql(db, "ALTER TABLE trials ADD COLUMN extra TEXT")
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
    codes = [subprocess.run([sys.executable, "-c", script], timeout=120).returncode
             for _ in range(4)]
    # The first run and the two resumes that offer the point again die on it;
    # the next resume records it as failed and finishes the run.
    assert codes == [-signal.SIGKILL] * 3 + [0]
    trials = read_study(db)["trials"]
    assert len(trials) == 8
    assert trials[3]["status"] == "failed"
    assert "offered again 2 times" in trials[3]["error"]
    assert all(t["status"] == "complete" for i, t in enumerate(trials) if i != 3)
    assert read_study(db)["meta"]["resume_offers"] == {"3": 2}


# -- the storage protocol: the in-memory default -------------------------------------

def test_the_default_storage_is_in_memory_and_resumes_a_study_within_the_process():
    straight = Optimizer(SPACE_2D, random_state=4, **FAST)
    storage = InMemoryStorage()
    first = Optimizer(SPACE_2D, random_state=4, storage=storage, **FAST)
    assert isinstance(straight.storage, InMemoryStorage)
    for opt in (straight, first):
        for _ in range(7):
            x = opt.ask()
            opt.tell(x, quadratic(x))
    pending = first.ask()
    straight.ask()
    with pytest.raises(StorageLockedError, match="in use by another optimizer"):
        Optimizer(SPACE_2D, random_state=4, storage=storage, **FAST)
    first.close()
    # The resumed optimizer offers the pending point first, then continues both
    # random streams: its proposals are those of the run that never stopped.
    resumed = Optimizer(SPACE_2D, random_state=4, storage=storage, **FAST)
    assert resumed.ask() == pending and resumed.trials[-1] is not first.trials[-1]
    for opt in (straight, resumed):
        opt.tell(pending, quadratic(pending))
        for _ in range(3):
            x = opt.ask()
            opt.tell(x, quadratic(x))
    assert resumed.get_result().x_iters == straight.get_result().x_iters
    resumed.close()
    with pytest.raises(StorageMismatchError, match="storage '<in memory>' holds a study run "
                       "with other settings"):
        Optimizer(SPACE_2D, random_state=4, storage=storage, n_candidates=400)


def test_a_conditional_study_resumes_with_the_proposals_of_an_uninterrupted_run(tmp_path):
    space = {"model": Categorical(["a", "b"]), "x": Real(0.0, 1.0),
             "depth": Integer(1, 8, active_if={"model": "b"}),
             "rate": Real(1e-3, 1.0, prior="log-uniform", active_if={"model": "b"})}

    def objective(x):
        return x["x"] + (0.1 * x["depth"] * x["rate"] if x["model"] == "b" else 0.5)

    straight = minimize(objective, space, n_calls=12, random_state=2, **FAST)
    db = tmp_path / "conditional.db"
    minimize(objective, space, n_calls=7, random_state=2, storage=db, **FAST)
    rows = read_study(db)["trials"]
    assert any(row["point"][2] is None for row in rows)  # inactive dimensions are null
    resumed = minimize(objective, space, n_calls=12, random_state=2, storage=db, **FAST)
    assert resumed.x_iters == straight.x_iters


# -- storage files that cannot be used: named with the file and the cause ---------------

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
    proc = subprocess.run([*prefix, sys.executable, "-c", source], capture_output=True,
                          text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.fault
def test_a_study_in_a_read_only_directory_is_named_as_such_before_any_evaluation(
        user_dir, unprivileged_prefix):
    report = _run_child(unprivileged_prefix, user_dir, """
        make_study(os.path.join(HERE, "s.db"))
        os.chmod(HERE, 0o555)
        print(json.dumps({"existing": attempt(os.path.join(HERE, "s.db")),
                          "new": attempt(os.path.join(HERE, "new.db"))}))
    """)
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
def test_a_read_only_study_file_is_refused_when_opened_naming_the_file(user_dir,
                                                                      unprivileged_prefix):
    report = _run_child(unprivileged_prefix, user_dir, """
        db = os.path.join(HERE, "s.db")
        make_study(db)
        os.chmod(db, 0o444)
        got = attempt(db)
        got["readable"] = len(__import__("treebo.storage").storage.read_study(db)["trials"])
        print(json.dumps(got))
    """)
    assert report["type"] == "StorageAccessError", report
    assert f"storage '{user_dir / 's.db'}' cannot be written: the file is read-only" in (
        report["message"])
    assert report["calls"] == 0 and report["readable"] == 3


def _full_disk_prefix(mount_point):
    """Run a child in its own user and mount namespace with a 256 KiB tmpfs at
    ``mount_point`` (a real file system that fills up), or skip."""
    import shutil
    unshare = shutil.which("unshare")
    probe = [unshare, "-Urm", "sh", "-c", f"mount -t tmpfs -o size=256k tmpfs {mount_point}"]
    if unshare is None or subprocess.run(probe, capture_output=True).returncode != 0:
        pytest.skip("cannot mount a small tmpfs in a user namespace (unshare -Urm) here")
    return [unshare, "-Urm", "sh", "-c",
            f'mount -t tmpfs -o size=256k tmpfs {mount_point} && exec "$0" "$@"']


@pytest.mark.fault
def test_a_study_on_a_full_disk_is_named_full_not_damaged(tmp_path):
    mount = tmp_path / "disk"
    mount.mkdir()
    report = _run_child(_full_disk_prefix(mount), mount, """
        db = os.path.join(HERE, "s.db")
        make_study(db)
        fd = os.open(os.path.join(HERE, "filler"), os.O_WRONLY | os.O_CREAT)
        try:
            while True:
                os.write(fd, b"\\0" * 1024)
        except OSError:
            pass
        print(json.dumps(attempt(db)))
    """)
    assert report["type"] == "StorageAccessError", report
    assert "s.db' cannot be written: the disk is full" in report["message"]
    assert "not a treebo study" not in report["message"] and report["calls"] == 0


def _foreign_database(path):
    import sqlite3
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
    conn.executemany("INSERT INTO customers (name) VALUES (?)", [("ada",), ("grace",)])
    conn.close()


def _foreign_study_table(path):
    import sqlite3
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("CREATE TABLE study (key TEXT PRIMARY KEY, value TEXT, owner TEXT)")
    conn.execute("INSERT INTO study VALUES ('mode', 'production', 'billing')")
    conn.close()


@pytest.mark.fault
@pytest.mark.parametrize("make, problem", [
    (_foreign_database, r"it holds the table\(s\) \['customers'\]"),
    (_foreign_study_table, r"its study table has the columns \['key', 'value', 'owner'\]"),
])
def test_another_applications_sqlite_file_is_refused_and_left_byte_for_byte(tmp_path, make,
                                                                            problem):
    db = tmp_path / "app.db"
    make(db)
    before = db.read_bytes()
    listing = sorted(p.name for p in tmp_path.iterdir())
    for open_it in (lambda: Optimizer(SPACE_2D, random_state=0, storage=db, **FAST),
                    lambda: minimize(quadratic, SPACE_2D, n_calls=3, storage=db, **FAST),
                    lambda: read_study(db)):
        with pytest.raises(StorageAccessError, match=f"is the SQLite database of another "
                                                     f"application \\({problem}"):
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


_HASHED_SPACE = """
import sys
sys.path.insert(0, {root!r})
from treebo import Categorical, Real, minimize
fruit = frozenset({{"apple", "banana", "cherry", "damson"}})
print(repr(fruit))
minimize(lambda x: x[1] + len(x[0]), [Categorical([fruit, frozenset({{"kiwi"}})]), Real(0, 1)],
         n_calls=int(sys.argv[2]), n_initial_points=2, random_state=0, storage=sys.argv[1],
         n_candidates=100, surrogate_params={{"n_estimators": 5}})
"""


@pytest.mark.fault
def test_a_space_with_frozenset_categories_resumes_under_any_hash_seed(tmp_path):
    db, source = tmp_path / "s.db", _HASHED_SPACE.format(root=str(ROOT))
    orders = set()
    for n_calls, hash_seed in enumerate(("1", "2", "3", "4"), start=3):
        proc = subprocess.run([sys.executable, "-c", source, str(db), str(n_calls)],
                              env={**os.environ, "PYTHONHASHSEED": hash_seed},
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr[-2000:]
        orders.add(proc.stdout.strip().splitlines()[0])
    assert len(orders) > 1  # the seeds did give the set other orders
    assert len(read_study(db)["trials"]) == 6


def test_equal_categories_are_described_alike_in_any_order():
    from treebo.storage import space_description
    a = space_description(Space([Categorical([frozenset("abc"), ("x", frozenset({1, 2}))])]))
    b = space_description(Space([Categorical([frozenset("cba"), ("x", frozenset({2, 1}))])]))
    assert a == b
    assert a["dimensions"][0]["categories"] == ["frozenset({'a', 'b', 'c'})",
                                                "('x', frozenset({1, 2}))"]


@pytest.mark.fault
def test_a_dict_study_resumed_as_a_list_says_how_the_points_differ(tmp_path):
    db = tmp_path / "s.db"
    minimize(lambda p: p["a"] ** 2, {"a": Real(0.0, 1.0)}, n_calls=3, n_initial_points=2,
             random_state=0, storage=db, **FAST)
    with pytest.raises(StorageMismatchError) as caught:
        minimize(lambda x: x[0] ** 2, [Real(0.0, 1.0, name="a")], n_calls=4,
                 n_initial_points=2, random_state=0, storage=db, **FAST)
    lines = str(caught.value).splitlines()
    stored = next(line for line in lines if "stored:" in line)
    given = next(line for line in lines if "given:" in line)
    assert stored.endswith("points as dicts") and given.endswith("points as lists")


class _SigintAfter(_InterruptAfter):
    """A connection that sends this process a real SIGINT right after ``statement`` runs."""

    def execute(self, sql, *args):
        result = self._conn.execute(sql, *args)
        if sql == self._statement:
            self._statement = None
            os.kill(os.getpid(), signal.SIGINT)
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
    assert [(r["status"], r["value"]) for r in rows][:2] == [("complete", quadratic(x)),
                                                            ("complete", 7.0)]
    assert len(rows) == 3
