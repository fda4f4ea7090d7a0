import pytest

from treebo.proposal import CycleSchedule, cycle_step_kind


def test_the_default_cycle_of_a_tree_surrogate_and_of_a_smooth_one():
    schedule = CycleSchedule()
    kinds = [schedule.step_kind(n, smooth=False) for n in range(16)]
    assert kinds == ["local", "jump", "local", "local", "local", "jump", "local", "explore"] * 2
    assert {schedule.step_kind(n, smooth=True) for n in range(12)} == {"refine"}
    assert schedule.resolved(smooth=False) == (8, 4, True)
    assert schedule.resolved(smooth=True) == (0, 0, False)
    assert CycleSchedule(2, 3, False).resolved(True) == (2, 3, False)


def test_cycle_step_kind_places_jumps_between_explorations():
    # Jumps fall halfway between explorations and win where both fall on one step.
    assert [cycle_step_kind(n, 8, 4) for n in range(8)] == [
        "refine",
        "jump",
        "refine",
        "refine",
        "refine",
        "jump",
        "refine",
        "explore",
    ]
    assert [cycle_step_kind(n, 4, 0) for n in range(4)] == ["refine"] * 3 + ["explore"]
    assert cycle_step_kind(0, 1, 0) == "explore" and cycle_step_kind(0, 1, 2) == "jump"
    assert {cycle_step_kind(n, 0, 1) for n in range(5)} == {"jump"}
    assert {cycle_step_kind(n, 0, 0) for n in range(5)} == {"refine"}
    assert {cycle_step_kind(n, 0, 0, True) for n in range(5)} == {"local"}


@pytest.mark.parametrize(
    "settings, message",
    [
        (dict(explore_every=-1), "explore_every must be 'auto' or an integer >= 0"),
        (dict(jump_every=2.5), "jump_every must be 'auto' or an integer >= 0"),
        (dict(local_steps="yes"), "local_steps must be 'auto', True or False"),
    ],
)
def test_bad_settings_are_named(settings, message):
    with pytest.raises(ValueError, match=message):
        CycleSchedule(**settings)
