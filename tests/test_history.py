import math

import numpy as np
import pytest

from treebo.history import History, Trial
from treebo.space import Real, Space

SPACE = Space([Real(0.0, 1.0), Real(0.0, 1.0)])


def _history(n_told=0, values=None):
    history = History(SPACE, np.random.default_rng(0).standard_normal(SPACE.n_columns))
    values = values if values is not None else [float(i) for i in range(n_told)]
    for i, value in enumerate(values):
        point = [i / 100, 0.5]
        trial = Trial(number=i, x=point, x_encoded=SPACE.encode([point])[0])
        error = None if math.isfinite(value) else "failed"
        history.tell(trial, value if error is None else None, error, None, lambda t: None)
    return history


def _pending(history, point):
    trial = Trial(number=len(history), x=point, x_encoded=SPACE.encode([point])[0], asked_at=1.0)
    history.append(trial)
    return trial


def test_observations_are_the_told_points_with_nan_failures_then_the_pending_ones():
    history = _history(values=[3.0, math.nan, 1.0, 2.0])
    _pending(history, [0.9, 0.9])
    X, y, pending = history.observations()
    assert X.shape == (4, 2)
    np.testing.assert_array_equal(y, [3.0, math.nan, 1.0, 2.0])
    np.testing.assert_array_equal(pending, SPACE.encode([[0.9, 0.9]]))


def test_a_tell_whose_commit_fails_leaves_the_history_as_it_was():
    history = _history(2)
    trial = _pending(history, [0.7, 0.7])

    def broken(_trial):
        raise OSError("disk full")

    with pytest.raises(OSError):
        history.tell(trial, 1.0, None, None, broken)
    assert (trial.status, trial.value, trial.told_at) == ("pending", None, None)
    assert (history.n_told, history.n_pending) == (2, 1)
    new = Trial(number=3, x=[0.1, 0.1], x_encoded=SPACE.encode([[0.1, 0.1]])[0])
    with pytest.raises(OSError):
        history.tell(new, 1.0, None, None, broken)
    assert len(history) == 3 and history.told_columns().number == [0, 1]
    history.tell(trial, -0.5, None, 2.0, lambda t: None)
    assert (trial.status, trial.eval_time, history.n_pending) == ("complete", 2.0, 0)
    assert history.told_columns().best is trial


def test_only_pending_trials_can_be_forgotten():
    history = _history(2)
    _pending(history, [0.7, 0.7])
    _pending(history, [0.8, 0.8])
    history.truncate(3)
    assert (len(history), history.n_pending) == (3, 1)
    with pytest.raises(ValueError, match="only pending trials"):
        history.truncate(1)


def test_unseen_drops_repeats_and_taken_points_and_find_matches_either_form():
    history = _history(70)  # beyond the first block of the encoded buffer
    taken = history.encoded()
    assert taken.shape == (70, 2)
    np.testing.assert_array_equal(taken[69], SPACE.encode([[0.69, 0.5]])[0])
    fresh = np.array([[0.2, 0.2], [0.2, 0.2], [0.3, 0.3]])
    X = np.vstack([taken[:5], fresh, taken[60:]])
    np.testing.assert_array_equal(history.unseen(X), fresh[[0, 2]])
    assert history.find([0.05, 0.5]) is history.trials[5]
    assert history.find([0.05, 0.5], pending_only=True) is None
    assert history.find([0.2, 0.2]) is None
    pending = _pending(history, [0.2, 0.2])
    assert history.find([0.2, 0.2], pending_only=True) is pending
    assert (history.n_told, history.n_pending, history.n_complete()) == (70, 1, 70)


# -- OptimizeResult.to_dataframe ---------------------------------------------------------------
def _conditional_study(path=None):
    from treebo import Categorical, Integer, minimize

    space = {
        "kind": Categorical(["lin", "rbf"]),
        "gamma": Real(1e-3, 1.0, "log-uniform", active_if={"kind": "rbf"}),
        "value": Integer(1, 4),
    }  # named like a column of the frame

    def objective(p):
        if p["value"] == 4:
            raise ValueError("value 4 is broken")
        return p.get("gamma", 0.5) + p["value"]

    return minimize(objective, space, n_calls=10, random_state=2, storage=path, n_candidates=500)


def test_to_dataframe_has_a_row_per_trial_and_a_column_per_dimension():
    pd = pytest.importorskip("pandas")
    res = _conditional_study()
    frame = res.to_dataframe()
    assert list(frame.columns) == [
        "number",
        "kind",
        "gamma",
        "param:value",
        "value",
        "state",
        "error",
        "fit_time",
        "acq_time",
    ]
    assert len(frame) == len(res.x_iters) == 10
    assert frame["number"].tolist() == list(range(10))
    assert frame["kind"].tolist() == [x["kind"] for x in res.x_iters]
    assert frame["param:value"].tolist() == [x["value"] for x in res.x_iters]
    # An inactive dimension is missing, an active one has its value.
    for x, gamma in zip(res.x_iters, frame["gamma"]):
        assert (pd.isna(gamma) and "gamma" not in x) or gamma == x["gamma"]
    np.testing.assert_array_equal(frame["value"].to_numpy(), res.func_vals)
    assert frame["state"].tolist() == res.statuses
    failed = frame[frame["state"] == "failed"]
    assert len(failed) == res.n_failed >= 1
    assert failed["value"].isna().all() and failed["error"].str.contains("value 4").all()


def test_to_dataframe_of_a_stored_study_has_origins_and_timings(tmp_path):
    pd = pytest.importorskip("pandas")
    from treebo.results.io import read_result

    _conditional_study(tmp_path / "s.db")
    frame = read_result(tmp_path / "s.db").to_dataframe()
    assert {"origin", "eval_time", "asked_at", "told_at"} <= set(frame.columns)
    assert frame["origin"].tolist()[:5] == ["initial"] * 5
    assert (frame["told_at"] >= frame["asked_at"]).all()
    assert isinstance(frame["told_at"].dtype, pd.DatetimeTZDtype)


def test_to_dataframe_without_pandas_names_what_to_install(monkeypatch):
    import sys

    res = _conditional_study()
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match=r"needs pandas.*pip install pandas"):
        res.to_dataframe()
