"""Which study a storage holds, and the checks a resume makes of its stored rows."""

import json
import os
import sqlite3
import subprocess
import sys

import pytest

from treebo import Categorical, Optimizer, Real, Space, minimize
from treebo.storage import StorageMismatchError, read_study, space_description

from .helpers import FAST, MIXED, ROOT, SPACE_2D, mixed_study, quadratic


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
        Optimizer(
            SPACE_2D,
            random_state=0,
            storage=db,
            n_candidates=600,
            surrogate_params={"n_estimators": 20},
        )
    with pytest.raises(StorageMismatchError, match="random_state=0, given random_state=5"):
        Optimizer(SPACE_2D, random_state=5, storage=db, **FAST)
    # None of the refused openings changed or locked the study.
    with Optimizer(SPACE_2D, random_state=0, storage=db, **FAST) as opt:
        assert len(opt.trials) == 2


_BAD_ROWS = {
    "real out of range": (
        "UPDATE trials SET point = '[1000000000.0, 0, 1, 0]' WHERE status = 'pending'",
        r"'r' = 1000000000.0|outside",
    ),
    "category index -1": (
        "UPDATE trials SET point = '[0.5, -1, 1, 0]' WHERE number = 1",
        r"category index -1 \(allowed: an integer from 0 to 2\)",
    ),
    "too many values": (
        "UPDATE trials SET point = '[0.5, 0, 1, 0, 7]' WHERE number = 2",
        r"allowed: a list of 4 values",
    ),
    "text for a real": (
        "UPDATE trials SET point = '[\"x\", 0, 1, 0]' WHERE number = 0",
        r"'r' = 'x'",
    ),
    "binary 2": (
        "UPDATE trials SET point = '[0.5, 0, 1, 2]' WHERE number = 0",
        r"'b' = 2 \(allowed: an integer in \[0, 1\]\)",
    ),
    "text value": (
        "UPDATE trials SET value = 'abc' WHERE number = 3",
        r"value 'abc' of a complete trial",
    ),
    "value of a pending trial": (
        "UPDATE trials SET value = 1.5 WHERE status = 'pending'",
        r"value 1.5 of a pending trial",
    ),
    "unknown status": ("UPDATE trials SET status = 'done' WHERE number = 0", r"status 'done'"),
    "encoded point of another point": (
        "UPDATE trials SET x_encoded = "
        "(SELECT x_encoded FROM trials WHERE number = 1) "
        "WHERE number = 0",
        r"is not the encoding of point",
    ),
    "short encoded point": (
        "UPDATE trials SET x_encoded = x'0000' WHERE number = 0",
        r"buffer size must be a multiple",
    ),
    "text timing": ("UPDATE trials SET fit_time = 'slow' WHERE number = 4", r"fit_time 'slow'"),
}


@pytest.mark.fault
@pytest.mark.parametrize("case", sorted(_BAD_ROWS))
def test_a_crafted_row_is_refused_with_the_study_the_trial_and_the_problem(tmp_path, case):
    db = tmp_path / "s.db"
    mixed_study(db)
    statement, problem = _BAD_ROWS[case]
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("PRAGMA ignore_check_constraints = 1")  # the schema's CHECK on status
    conn.execute(statement)
    conn.close()
    with pytest.raises(
        ValueError,
        match=rf"storage '.*s\.db' is damaged: trial \d+: .*"
        rf"({problem})",
    ):
        Optimizer(MIXED, n_initial_points=4, random_state=0, storage=db, **FAST)


@pytest.mark.fault
def test_an_untouched_mixed_study_resumes(tmp_path):
    # The checks above must not refuse what treebo itself wrote.
    db = tmp_path / "s.db"
    mixed_study(db, n_calls=12)
    with Optimizer(MIXED, n_initial_points=4, random_state=0, storage=db, **FAST) as opt:
        assert len(opt.trials) == 13 and opt.trials[-1].status == "pending"


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
        proc = subprocess.run(
            [sys.executable, "-c", source, str(db), str(n_calls)],
            env={**os.environ, "PYTHONHASHSEED": hash_seed},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        orders.add(proc.stdout.strip().splitlines()[0])
    assert len(orders) > 1  # the seeds did give the set other orders
    assert len(read_study(db)["trials"]) == 6


def test_equal_categories_are_described_alike_in_any_order():
    a = space_description(Space([Categorical([frozenset("abc"), ("x", frozenset({1, 2}))])]))
    b = space_description(Space([Categorical([frozenset("cba"), ("x", frozenset({2, 1}))])]))
    assert a == b
    assert a["dimensions"][0]["categories"] == [
        "frozenset({'a', 'b', 'c'})",
        "('x', frozenset({1, 2}))",
    ]


@pytest.mark.fault
def test_a_dict_study_resumed_as_a_list_says_how_the_points_differ(tmp_path):
    db = tmp_path / "s.db"
    minimize(
        lambda p: p["a"] ** 2,
        {"a": Real(0.0, 1.0)},
        n_calls=3,
        n_initial_points=2,
        random_state=0,
        storage=db,
        **FAST,
    )
    with pytest.raises(StorageMismatchError) as caught:
        minimize(
            lambda x: x[0] ** 2,
            [Real(0.0, 1.0, name="a")],
            n_calls=4,
            n_initial_points=2,
            random_state=0,
            storage=db,
            **FAST,
        )
    lines = str(caught.value).splitlines()
    stored = next(line for line in lines if "stored:" in line)
    given = next(line for line in lines if "given:" in line)
    assert stored.endswith("points as dicts") and given.endswith("points as lists")


# -- a crafted stored description gives a short message -----------------------------------------
def _craft_space(db, change):
    conn = sqlite3.connect(db, isolation_level=None)
    (text,) = conn.execute("SELECT value FROM study WHERE key = 'space'").fetchone()
    description = json.loads(text)
    change(description)
    conn.execute("UPDATE study SET value = ? WHERE key = 'space'", (json.dumps(description),))
    conn.close()


_CRAFTED_SPACES = {
    # A megabyte category: the summary of the stored space would hold all of it.
    "long category": (
        lambda d: d["dimensions"][1]["categories"].__setitem__(0, "-" * 10**6 + "1"),
        "c=Categorical('a', 'b', 'c')",  # the given space, in full
    ),
    # A million categories.
    "many categories": (
        lambda d: d["dimensions"][1].__setitem__("categories", [f"'{i}'" for i in range(10**6)]),
        "c=Categorical('a', 'b', 'c')",
    ),
    # A megabyte in a key the summary leaves out: the entries themselves are shown.
    "long other key": (
        lambda d: d["dimensions"][0].__setitem__("note", "x" * 10**6),
        '"name": "r", "note": "xxx',
    ),
}


@pytest.mark.fault
@pytest.mark.parametrize("case", sorted(_CRAFTED_SPACES))
def test_a_space_mismatch_with_a_crafted_megabyte_description_is_short(tmp_path, case):
    db = tmp_path / "s.db"
    mixed_study(db)
    change, shown = _CRAFTED_SPACES[case]
    _craft_space(db, change)
    with pytest.raises(StorageMismatchError, match="different search space") as caught:
        Optimizer(MIXED, n_initial_points=4, random_state=0, storage=db, **FAST)
    message = str(caught.value)
    assert len(message) < 1500 and all(len(line) < 700 for line in message.splitlines())
    assert shown in message


@pytest.mark.fault
def test_a_crafted_megabyte_setting_is_shown_as_an_excerpt(tmp_path):
    db = tmp_path / "s.db"
    mixed_study(db)
    conn = sqlite3.connect(db, isolation_level=None)
    (text,) = conn.execute("SELECT value FROM study WHERE key = 'settings'").fetchone()
    settings = json.loads(text)
    settings["acquisition"] = "y" * 10**6
    settings.update({f"junk{i}": i for i in range(10**5)})
    conn.execute("UPDATE study SET value = ? WHERE key = 'settings'", (json.dumps(settings),))
    conn.close()
    with pytest.raises(StorageMismatchError, match="other settings") as caught:
        Optimizer(MIXED, n_initial_points=4, random_state=0, storage=db, **FAST)
    message = str(caught.value)
    assert len(message) < 2000, message[:3000]
    assert "acquisition: stored 'yyyy" in message and "and 99,991 more" in message


def test_a_category_a_study_could_not_read_back_is_refused_before_anything_is_stored(tmp_path):
    db = tmp_path / "s.db"
    long = "x" * 70_000
    with pytest.raises(ValueError) as caught:
        Optimizer([Categorical([long, "b"], name="c")], storage=db, **FAST)
    assert str(caught.value) == (
        "dimension 'c': the repr of category 0 is longer than 65,536 characters "
        "(70,002 characters); a study stores only categories it can read back"
    )
    assert not db.exists() or "space" not in read_study(db)["meta"]
    Optimizer([Categorical([long, "b"], name="c")], **FAST).ask()  # fine without a storage
