import pytest

from treebo.multifidelity import RungSchedule, hyperband_brackets


def _fill(schedule, values, start=0):
    """Start new configurations k<start>... and return their jobs."""
    jobs = []
    for i, _ in enumerate(values):
        job = schedule.next_job()
        assert job.key is None and job.rung == 0
        jobs.append(schedule.record(f"k{start + i}", job.budget))
    return jobs


def test_synchronous_promotes_the_best_third_once_the_rung_is_told():
    schedule = RungSchedule(hyperband_brackets(1, 9, 3), 3, asynchronous=False)
    values = [5.0, 1.0, 7.0, 3.0, 9.0, 0.5, 8.0, 2.0, 6.0]
    jobs = _fill(schedule, values)
    for job, value in list(zip(jobs, values))[:-1]:
        schedule.tell(job, value)
    # No promotion before the rung's last value: a free worker starts the next bracket.
    waiting = schedule.next_job()
    assert waiting.key is None and waiting.bracket == 1 and waiting.budget == 3
    schedule.tell(jobs[-1], values[-1])
    promoted = []
    for _ in range(3):
        job = schedule.next_job()
        assert job.rung == 1 and job.budget == 3
        promoted.append(schedule.record(job.key, job.budget))
    assert [j.key for j in promoted] == ["k5", "k1", "k7"]  # 0.5, 1.0, 2.0
    for job, value in zip(promoted, [4.0, 0.1, 2.0]):
        schedule.tell(job, value)
    top = schedule.next_job()
    assert (top.key, top.rung, top.budget) == ("k1", 2, 9)
    schedule.tell(schedule.record(top.key, top.budget), 0.05)
    # The bracket is done: the next bracket (s = 1) starts 5 configurations at budget 3.
    job = schedule.next_job()
    assert job.key is None and job.bracket == 1 and job.budget == 3


def test_failures_are_never_promoted():
    schedule = RungSchedule(hyperband_brackets(1, 9, 3), 3, asynchronous=False)
    jobs = _fill(schedule, range(9))
    for i, job in enumerate(jobs):
        schedule.tell(job, None if i < 7 else float(i))  # seven failures, two values
    keys = []
    while (job := schedule.next_job()).rung == 1:
        recorded = schedule.record(job.key, job.budget)
        keys.append(recorded.key)
        schedule.tell(recorded, 1.0)
    assert keys == ["k7", "k8"]
    assert (job.key, job.rung) == ("k7", 2)  # fewer than 3 at rung 1: the rung is done


def test_asynchronous_promotes_without_waiting_for_the_rung():
    schedule = RungSchedule(hyperband_brackets(1, 9, 3), 3, asynchronous=True)
    jobs = _fill(schedule, range(4))
    schedule.tell(jobs[0], 3.0)
    schedule.tell(jobs[1], 1.0)
    assert schedule.next_job().key is None  # two told: not yet eta = 3 of them
    schedule.tell(jobs[2], 2.0)
    job = schedule.next_job()  # three told, one pending: promote the best of the three
    assert (job.key, job.rung, job.budget) == ("k1", 1, 3)
    schedule.record(job.key, job.budget)
    assert schedule.next_job().key is None  # the next promotion needs six told


def test_asynchronous_opens_the_next_bracket_when_this_one_has_started_all():
    schedule = RungSchedule(hyperband_brackets(1, 9, 3), 3, asynchronous=True)
    _fill(schedule, range(9))  # all pending
    job = schedule.next_job()
    assert job.key is None and job.bracket == 1 and job.budget == 3


def test_record_refuses_a_budget_the_schedule_would_not_give():
    schedule = RungSchedule(hyperband_brackets(1, 9, 3), 3, asynchronous=False)
    with pytest.raises(ValueError, match="budget 3 does not fit the schedule"):
        schedule.record("k0", 3)
