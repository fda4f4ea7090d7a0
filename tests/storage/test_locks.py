"""One live optimizer per study, under every name of its file."""

import os
from pathlib import Path

import pytest

from treebo import Optimizer, minimize
from treebo.storage import StorageLockedError, read_study

from .helpers import FAST, SPACE_2D, quadratic


def test_a_study_is_open_in_one_optimizer_at_a_time(tmp_path):
    db = tmp_path / "study.db"
    first = Optimizer(SPACE_2D, random_state=0, storage=db, **FAST)
    with pytest.raises(StorageLockedError, match=f"open in another optimizer \\(pid {os.getpid()}"):
        Optimizer(SPACE_2D, random_state=0, storage=db, **FAST)
    first.close()
    Optimizer(SPACE_2D, random_state=0, storage=db, **FAST).close()


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
