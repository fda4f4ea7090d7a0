import pickle
import re

import pytest

from treebo import Real, minimize_multifidelity
from treebo.multifidelity import Checkpoint

SPACE = [Real(-1.0, 1.0), Real(-1.0, 1.0)]


def _value(x, budget):
    return (x[0] - 0.3) ** 2 + (x[1] + 0.2) ** 2 - (9 - budget) / 9


class Training:
    """An objective that keeps, in its checkpoint, the budget it has trained to."""

    def __init__(self):
        self.calls = []

    def __call__(self, x, budget, checkpoint):
        state = checkpoint.path / "state.pkl"
        trained = pickle.loads(state.read_bytes()) if checkpoint.continues else 0
        # The state left by the previous evaluation is the one this one continues.
        assert trained == (checkpoint.budget or 0)
        state.write_bytes(pickle.dumps(budget))
        self.calls.append((tuple(x), budget, checkpoint))
        return _value(x, budget)


def _run(func, total=5, **kwargs):
    kwargs.setdefault("random_state", 0)
    return minimize_multifidelity(func, SPACE, 1, 9, total, 3, **kwargs)


def test_a_promotion_continues_from_the_previous_evaluation_and_pays_the_difference(tmp_path):
    training = Training()
    result = _run(training, total=5, checkpoint_dir=tmp_path)
    by_config = {}
    for x, budget, checkpoint in training.calls:
        by_config.setdefault(x, []).append((budget, checkpoint))
    for chain in by_config.values():
        budgets = [b for b, _ in chain]
        assert [c.budget for _, c in chain] == [None, *budgets[:-1]]
        assert len({c.path for _, c in chain}) == 1  # one directory per configuration
    paths = [chain[0][1].path for chain in by_config.values()]
    assert len(set(paths)) == len(paths) and all(p.parent == tmp_path for p in paths)
    assert any(len(chain) == 3 for chain in by_config.values())  # promoted twice
    previous = {}
    expected = []
    for x, budget in zip(result.x_iters, result.budgets):
        expected.append(budget - previous.get(tuple(x), 0))
        previous[tuple(x)] = budget
    assert result.costs == expected
    assert result.spent == pytest.approx(sum(expected) / 9) and result.spent <= 5 + 1e-12


def test_continued_trainings_fit_more_evaluations_into_the_same_budget(tmp_path):
    plain = _run(_value, total=3)
    continued = _run(Training(), total=3, checkpoint_dir=tmp_path)
    # The first bracket is the same (9 at 1, 3 at 3, 1 at 9), but it costs 9 + 6 + 6
    # instead of 9 + 9 + 9, which leaves room for the next bracket's first evaluations.
    assert plain.budgets == [1] * 9 + [3] * 3 + [9]
    assert continued.budgets[:13] == plain.budgets and len(continued.budgets) > 13
    assert sum(continued.costs[:13]) == 21 and continued.spent <= 3 + 1e-12
    # It stops only when the next evaluation would not fit.
    assert 3 * 9 - sum(continued.costs) < 9


def test_a_stopped_run_with_checkpoints_resumes_equal(tmp_path):
    db, checkpoints = tmp_path / "mf.db", tmp_path / "checkpoints"
    stopped = _run(
        Training(),
        storage=db,
        checkpoint_dir=checkpoints,
        callback=lambda r: len(r.func_vals) >= 14,
    )
    assert len(stopped.func_vals) == 14
    resumed_training = Training()  # asserts that every state it loads is the expected one
    resumed = _run(resumed_training, storage=db, checkpoint_dir=checkpoints)
    uninterrupted = _run(Training(), checkpoint_dir=tmp_path / "fresh")
    assert resumed.x_iters == uninterrupted.x_iters
    assert resumed.budgets == uninterrupted.budgets
    assert resumed.costs == uninterrupted.costs
    assert len(resumed_training.calls) == len(uninterrupted.func_vals) - 14


def _worker_training(x, budget, checkpoint):
    assert checkpoint.path.is_dir()  # made in the worker, before the call
    (checkpoint.path / f"{budget}").touch()
    return _value(x, budget)


def test_worker_processes_get_their_checkpoint_directories(tmp_path):
    result = _run(_worker_training, total=4, n_jobs=2, checkpoint_dir=tmp_path)
    assert result.n_failed == 0
    made = sorted(p.name for d in tmp_path.iterdir() for p in d.iterdir())
    assert sorted(str(b) for b in result.budgets) == made


def test_checkpoints_come_after_the_report_function(tmp_path):
    def reporting(x, budget, report, checkpoint):
        assert isinstance(checkpoint, Checkpoint) and callable(report)
        report(1, _value(x, 1))
        return _value(x, budget)

    result = _run(reporting, total=4, intermediate=True, checkpoint_dir=tmp_path)
    assert result.n_failed == 0 and len(result.reported_vals) > 0


@pytest.mark.parametrize("value", [3, "", b"dir"])
def test_checkpoint_dir_must_be_a_path(value):
    with pytest.raises(ValueError, match="checkpoint_dir must be a directory path"):
        _run(Training(), checkpoint_dir=value)


# -- faults: a checkpoint directory that cannot be used is refused before anything runs ------
TRAIN = """
from pathlib import Path

def train(x, epochs, checkpoint):
    Path("evaluated").touch()  # a marker: the objective ran
    return (x["a"] - 0.3) ** 2 + 1 / epochs

train.space = {"a": (-1.0, 1.0)}
"""


def _minimize_args(checkpoint_dir):
    return [
        "minimize",
        "train.py:train",
        "--budget-param",
        "epochs",
        "--min-budget",
        "1",
        "--max-budget",
        "9",
        "--total-budget",
        "3",
        "--checkpoint-dir",
        checkpoint_dir,
        "--storage",
        "s.db",
        "--quiet",
    ]


@pytest.mark.fault
def test_cli_refuses_a_checkpoint_dir_that_is_a_file_before_any_evaluation(
    tmp_path, monkeypatch, capsys
):
    from treebo.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text(TRAIN)
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "ck").write_text("a file\n")
    for checkpoint_dir, cause in (
        ("run/ck", "is a file, not a directory"),
        ("run/ck/deeper", "run/ck is a file, not a directory"),
    ):
        assert main(_minimize_args(checkpoint_dir)) == 2
        captured = capsys.readouterr()
        assert (
            captured.err == f"treebo minimize: error: --checkpoint-dir {checkpoint_dir}: {cause}\n"
        )
        assert captured.out == ""
    # Nothing ran: no evaluation, and the storage was not even made.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run", "train.py"]
    assert (tmp_path / "run" / "ck").read_text() == "a file\n"


@pytest.mark.fault
def test_cli_refuses_a_checkpoint_dir_it_cannot_write_in(user_dir, unprivileged_prefix):
    import os
    import subprocess
    import sys
    from pathlib import Path

    import treebo

    (user_dir / "train.py").write_text(TRAIN)
    locked = user_dir / "locked"
    locked.mkdir(mode=0o555)
    os.chown(locked, user_dir.stat().st_uid, user_dir.stat().st_gid)
    proc = subprocess.run(
        [*unprivileged_prefix, sys.executable, "-m", "treebo", *_minimize_args("locked/ck")],
        cwd=user_dir,
        env={**os.environ, "PYTHONPATH": str(Path(treebo.__file__).parents[1])},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 2 and proc.stdout == "", proc.stderr
    assert proc.stderr == (
        "treebo minimize: error: --checkpoint-dir locked/ck: locked is not writable by this user\n"
    )
    assert sorted(p.name for p in user_dir.iterdir()) == ["locked", "train.py"]


@pytest.mark.fault
def test_checkpoint_dir_that_is_a_file_raises_before_the_objective_is_called(tmp_path):
    training = Training()
    taken = tmp_path / "ck"
    taken.write_text("a file\n")
    for value, cause in (
        (taken, "is a file, not a directory"),
        (taken / "sub", f"{taken} is a file"),
    ):
        with pytest.raises(ValueError, match=re.escape(f"checkpoint_dir {value}: {cause}")):
            _run(training, checkpoint_dir=value, storage=tmp_path / "s.db")
    assert training.calls == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ck"]  # no storage made either


def test_checkpoint_dir_is_made_when_missing(tmp_path):
    result = _run(Training(), total=2, checkpoint_dir=tmp_path / "new" / "ck")
    assert result.n_failed == 0 and any((tmp_path / "new" / "ck").iterdir())
