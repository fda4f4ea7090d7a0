"""InMemoryStorage: the default storage, and a resume within the process."""

import pytest

from treebo import Optimizer
from treebo.storage import InMemoryStorage, StorageLockedError, StorageMismatchError

from .helpers import FAST, SPACE_2D, quadratic


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
    with pytest.raises(
        StorageMismatchError, match="storage '<in memory>' holds a study run with other settings"
    ):
        Optimizer(SPACE_2D, random_state=4, storage=storage, n_candidates=400)
