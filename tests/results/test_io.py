"""dump/load round trips and reading a result from a storage file."""

import math
import pickle

import numpy as np
import pytest

import treebo
from treebo import Binary, Categorical, Integer, Optimizer, Real, minimize
from treebo.results.io import as_result, dump, load, read_result


class Marker:  # a category without a literal repr
    pass


def _objective(x):
    if x["n"] == 3:
        raise RuntimeError("n = 3 crashes")
    return (x["a"] - 0.3) ** 2 + (0.5 if x["c"] == "u" else 0.0) + 0.01 * x["n"]


SPACE = {
    "a": Real(-1, 1),
    "n": Integer(1, 8),
    "c": Categorical(["u", "v", None]),
    "b": Binary(),
    "lr": Real(1e-4, 1.0, "log-uniform"),
}


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    path = tmp_path_factory.mktemp("io") / "study.db"
    res = minimize(_objective, SPACE, n_calls=14, random_state=3, storage=path, n_candidates=1000)
    return path, res


def _assert_same(a, b):
    assert a.x_iters == b.x_iters
    np.testing.assert_array_equal(a.func_vals, b.func_vals)  # NaN where failed, both
    assert a.space == b.space
    assert a.statuses == b.statuses and a.errors == b.errors
    assert a.x == b.x and (a.fun == b.fun or (math.isnan(a.fun) and math.isnan(b.fun)))


def test_dump_and_load_round_trip(study, tmp_path):
    _, res = study
    assert res.n_failed >= 1  # the study has a failed trial, with NaN in func_vals
    dump(res, tmp_path / "res.pkl")
    loaded = load(tmp_path / "res.pkl")
    assert type(loaded) is type(res)
    _assert_same(loaded, res)
    np.testing.assert_array_equal(loaded.fit_time, res.fit_time)
    assert set(loaded) == set(res)
    assert [p.name for p in tmp_path.iterdir()] == ["res.pkl"]  # no temporary file left


def test_dump_keeps_categories_of_any_type(tmp_path):
    res = minimize(
        lambda x: float(x[0] is Marker),
        [Categorical([Marker, int, (1, 2)])],
        n_calls=3,
        random_state=0,
    )
    treebo.dump(res, tmp_path / "r.pkl")
    loaded = treebo.load(tmp_path / "r.pkl")
    assert loaded.x_iters == res.x_iters and loaded.space == res.space
    assert {x[0] for x in loaded.x_iters} == {Marker, int, (1, 2)}


def test_load_refuses_files_dump_did_not_write(tmp_path):
    (tmp_path / "text.pkl").write_text("not a pickle")
    with pytest.raises(ValueError, match="not a result written by treebo.dump"):
        load(tmp_path / "text.pkl")
    (tmp_path / "other.pkl").write_bytes(pickle.dumps({"x": 1}))
    with pytest.raises(ValueError, match="not a result written by treebo.dump"):
        load(tmp_path / "other.pkl")
    with pytest.raises(ValueError, match="result must be an OptimizeResult"):
        dump({"x": 1}, tmp_path / "no.pkl")


def test_read_result_equals_the_run_result(study):
    path, res = study
    read = read_result(path)
    _assert_same(read, res)
    np.testing.assert_array_equal(read.fit_time, res.fit_time)
    np.testing.assert_array_equal(read.acq_time, res.acq_time)
    assert read.numbers == list(range(14)) and read.n_pending == 0
    assert read.origins[:5] == ["initial"] * 5 and set(read.origins[5:]) <= {"model", "random"}
    assert np.isfinite(read.eval_time).all() and (read.told_at >= read.asked_at).all()
    assert read.surrogate == "bwo" and read.random_state == 3
    assert read.settings["n_candidates"] == 1000
    assert as_result(path).x_iters == read.x_iters and as_result(res) is res


def test_read_result_leaves_pending_trials_out(tmp_path):
    path = tmp_path / "pending.db"
    with Optimizer([Real(0, 1), Integer(0, 9)], random_state=0, storage=path) as opt:
        for _ in range(3):
            x = opt.ask()
            opt.tell(x, x[0] + x[1])
        opt.ask()  # asked, never told
    read = read_result(path)
    assert len(read.x_iters) == 3 and read.n_pending == 1
    assert read.x_iters == [t.x for t in opt.trials[:3]]


def test_read_result_rebuilds_a_conditional_space(tmp_path):
    space = {
        "kind": Categorical(["lin", "rbf"]),
        "gamma": Real(1e-3, 1.0, "log-uniform", active_if={"kind": "rbf"}),
        "depth": Integer(1, 4),
        "deep": Binary(active_if={"depth": [3, 4]}),
    }
    res = minimize(
        lambda p: p.get("gamma", 0.5) + p["depth"],
        space,
        n_calls=8,
        random_state=1,
        storage=tmp_path / "c.db",
        n_candidates=500,
    )
    read = read_result(tmp_path / "c.db")
    assert read.space == res.space
    assert read.x_iters == res.x_iters  # dicts without the inactive dimensions


def test_read_result_gives_object_categories_as_their_repr(tmp_path):
    res = minimize(
        lambda x: float(x[0] is Marker),
        [Categorical([Marker, "m", 2.5])],
        n_calls=3,
        random_state=0,
        storage=tmp_path / "o.db",
    )
    read = read_result(tmp_path / "o.db")
    assert read.space.dimensions[0].categories == (repr(Marker), "m", 2.5)
    assert [x[0] for x in read.x_iters] == [
        repr(x[0]) if x[0] is Marker else x[0] for x in res.x_iters
    ]


def test_read_result_gives_the_settings_that_reopen_the_study(tmp_path):
    path = tmp_path / "gp.db"
    minimize(
        lambda x: (x[0] - 0.2) ** 2,
        [Real(0, 1)],
        n_calls=4,
        surrogate="gp",
        surrogate_params={"length_scale_bounds": (0.1, 10.0)},
        acquisition="lcb",
        random_state=5,
        storage=path,
        n_candidates=300,
    )
    read = read_result(path)
    # The parameters that differ from the surrogate's defaults, a stored tuple as the tuple.
    assert read.surrogate_params == {"length_scale_bounds": (0.1, 10.0)}
    assert read.settings["random_state"] == read.random_state == 5
    assert read.settings["acquisition"] == "lcb" and read.settings["n_candidates"] == 300
    with Optimizer(read.space, storage=path, **read.settings) as opt:
        assert len(opt.trials) == 4


def test_bad_sources_are_refused(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        read_result(tmp_path / "missing.db")
    with pytest.raises(ValueError, match="expected an OptimizeResult or the path"):
        as_result(42)


# -- faults: a dump that cannot be written leaves the previous file --------------------------
DUMP_BIG = """
import numpy as np
import treebo
from treebo.result import OptimizeResult

treebo.dump(OptimizeResult(x=[0.0], fun=0.0, func_vals=np.zeros(50_000)), "result.pkl")
"""


@pytest.mark.fault
def test_dump_cut_short_by_a_file_size_limit_leaves_the_previous_file(study, tmp_path):
    import os
    import resource
    import subprocess
    import sys
    from pathlib import Path

    _, res = study
    dump(res, tmp_path / "result.pkl")
    before = (tmp_path / "result.pkl").read_bytes()

    def limited():
        # Python ignores SIGXFSZ, so a write past the limit fails with EFBIG.
        resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, 100_000))

    proc = subprocess.run(
        [sys.executable, "-c", DUMP_BIG],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(Path(treebo.__file__).parents[1])},
        preexec_fn=limited,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert len(before) < 100_000  # the new file, 400 kB of values, is what the limit stops
    assert (tmp_path / "result.pkl").read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["result.pkl"]
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[-1] == (
        "treebo.files.WriteError: cannot write result.pkl: File too large"
    )


def test_dump_keeps_the_mode_of_the_file_it_replaces(study, tmp_path):
    _, res = study
    target = tmp_path / "result.pkl"
    target.write_bytes(b"old")
    target.chmod(0o640)  # a result kept from other users
    dump(res, target)
    assert target.stat().st_mode & 0o7777 == 0o640
    _assert_same(load(target), res)


def test_read_result_of_a_maximized_study_has_the_objectives_own_values(tmp_path):
    db = tmp_path / "max.db"
    res = minimize(
        lambda x: -((x[0] - 0.3) ** 2),
        [Real(0.0, 1.0)],
        n_calls=7,
        random_state=0,
        storage=db,
        direction="maximize",
        n_candidates=200,
    )
    read = read_result(db)
    assert read.fun == res.fun and read.x == res.x and read.direction == "maximize"
    np.testing.assert_array_equal(read.func_vals, res.func_vals)
    assert read.fun == max(read.func_vals)
    assert "surrogate_params: {}" in repr(read)  # one line per field, empty tables too
