import numpy as np
import pytest

from treebo.history import Trial
from treebo.resume import MAX_RESUME_OFFERS, PendingRetries


def _trials(statuses):
    trials = []
    for number, status in enumerate(statuses):
        trial = Trial(number=number, x=[0.1 * number], x_encoded=np.array([0.1 * number]))
        if status == "complete":
            trial.status, trial.value = "complete", 1.0
        trials.append(trial)
    return trials


def test_retry_queues_the_pending_trials_in_order_and_counts_each_offer():
    trials = _trials(["complete", "pending", "pending"])
    retries = PendingRetries({})
    assert retries.settle(trials, "retry") == []
    assert retries.queue == [1, 2]
    assert retries.take(trials, 1) == [trials[1]]
    assert retries.offers == {"1": 1} and retries.queue == [2]


def test_a_trial_offered_too_often_is_failed_with_the_reason():
    trials = _trials(["pending", "pending"])
    retries = PendingRetries({"0": MAX_RESUME_OFFERS, "1": MAX_RESUME_OFFERS - 1})
    failed = retries.settle(trials, "retry")
    assert [t.number for t, _ in failed] == [0]
    assert "does evaluating this point kill the process?" in failed[0][1]
    assert retries.queue == [1]


@pytest.mark.parametrize("policy, n_failed, queued", [("fail", 2, []), ("keep", 0, [])])
def test_fail_and_keep_policies(policy, n_failed, queued):
    retries = PendingRetries({})
    failed = retries.settle(_trials(["pending", "complete", "pending"]), policy)
    assert len(failed) == n_failed and retries.queue == queued


def test_an_interrupted_offer_is_taken_back_and_a_state_restores():
    trials = _trials(["pending", "pending"])
    retries = PendingRetries({})
    retries.settle(trials, "retry")
    before = retries.state()
    retries.take(trials, 2)
    assert retries.interrupted([trials[0]]) is True
    assert retries.offers == {"0": 0, "1": 1}
    assert retries.interrupted([trials[0]]) is False  # nothing left to take back
    retries.restore(before)
    assert retries.queue == [0, 1] and retries.offers == {}


def test_a_trial_told_without_its_offer_leaves_the_queue():
    trials = _trials(["pending", "pending"])
    retries = PendingRetries({})
    retries.settle(trials, "retry")
    retries.told(0)
    assert retries.take(trials, 5) == [trials[1]]
