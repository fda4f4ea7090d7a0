import math

import numpy as np
import pytest

from treebo import Real, minimize
from treebo.callbacks import DeadlineStopper, EarlyStopper, ThresholdStopper
from treebo.result import OptimizeResult

SPACE_2D = [Real(-1.0, 1.0), Real(-1.0, 1.0)]
FAST = dict(n_candidates=500, surrogate_params={"n_estimators": 20})


def quadratic(x):
    return (x[0] - 0.3) ** 2 + (x[1] + 0.2) ** 2


def _first_stop(stopper, values):
    """Length of the first prefix of ``values`` at which ``stopper`` says stop."""
    for n in range(1, len(values) + 1):
        vals = np.array(values[:n], dtype=float)
        done = vals[~np.isnan(vals)]
        if stopper(OptimizeResult(func_vals=vals, fun=done.min() if len(done) else math.nan)):
            return n
    return None


def test_early_stopper_counts_evaluations_without_an_improvement_of_delta():
    values = [5.0, 4.0, 4.0, 3.95, math.nan, 3.9, 3.9, 3.9]
    # With delta = 0.1 only 5 -> 4 counts; three evaluations later (the NaN
    # included) the patience of 3 is used up.
    assert _first_stop(EarlyStopper(patience=3, delta=0.1), values) == 5
    # With delta = 0 the 3.95 and the first 3.9 are improvements.
    assert _first_stop(EarlyStopper(patience=3, delta=0.0), values) is None
    assert _first_stop(EarlyStopper(patience=2, delta=0.0), values) == 8
    # Failures before the first complete value do not count.
    assert _first_stop(EarlyStopper(patience=2), [math.nan, math.nan, 1.0, 1.0]) is None
    stopper = EarlyStopper(patience=3, delta=0.1)
    _first_stop(stopper, values)
    assert stopper.message == (
        "the best value 3.95 did not improve by more than 0.1 in the last 3 evaluations"
    )


def test_early_stopping_ends_a_run_on_a_plateau():
    res = minimize(
        lambda x: 1.0,
        SPACE_2D,
        n_calls=30,
        callback=EarlyStopper(patience=4),
        random_state=0,
        **FAST,
    )
    assert len(res.x_iters) == 5
    assert res.message == (
        "stopped by a callback after 5 evaluations: the best value 1 did "
        "not improve by more than 0 in the last 4 evaluations"
    )


def test_threshold_stopper_stops_at_the_first_good_enough_value():
    res = minimize(
        quadratic, SPACE_2D, n_calls=40, callback=ThresholdStopper(0.05), random_state=0, **FAST
    )
    assert res.func_vals[-1] <= 0.05 and np.all(res.func_vals[:-1] > 0.05)
    assert len(res.x_iters) < 40
    assert res.message.endswith(f"reached {res.func_vals[-1]:.6g} <= threshold 0.05")


def test_deadline_stopper_stops_before_the_next_evaluation_would_overrun():
    clock = [100.0]
    stopper = DeadlineStopper(5.5)
    stopper._clock = lambda: clock[0]

    def objective(x):
        clock[0] += 1.0  # each evaluation takes one (fake) second
        return quadratic(x)

    res = minimize(objective, SPACE_2D, n_calls=20, callback=stopper, random_state=0, **FAST)
    # After 5 evaluations 5 s are used and the next would end at 6 s > 5.5 s.
    assert len(res.x_iters) == 5
    assert res.message == (
        "stopped by a callback after 5 evaluations: deadline of 5.5 s: "
        "5.0 s used, about 1 s per evaluation"
    )
    # The clock restarts with every run.
    res = minimize(objective, SPACE_2D, n_calls=3, callback=stopper, random_state=0, **FAST)
    assert len(res.x_iters) == 3 and res.message == "reached n_calls=3"


def test_progress_bar_reports_the_calls_and_the_best_value(capsys):
    res = minimize(quadratic, SPACE_2D, n_calls=6, progress_bar=True, random_state=0, **FAST)
    lines = capsys.readouterr().err.splitlines()
    assert lines[-1].startswith(f"treebo [{'#' * 30}] 6/6 best={res.fun:.6g}")
    assert len(lines) == 2  # the first update and the last, on a non-terminal


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: EarlyStopper(patience=0), "patience must be an integer >= 1"),
        (lambda: EarlyStopper(delta=-1), "delta must be >= 0"),
        (lambda: DeadlineStopper(0), "total_time must be > 0"),
        (lambda: ThresholdStopper(math.nan), "threshold must be a finite number"),
    ],
)
def test_bad_callback_arguments_are_named(make, message):
    with pytest.raises(ValueError, match=message):
        make()
