"""RunSpec and the key that identifies a run."""

from treebo.bench import RunSpec
from treebo.bench.spec import run_key

from .helpers import fake_record


def test_the_key_leaves_out_the_budget_and_matches_the_records():
    spec = RunSpec("branin", "rf", 2, 10, problem_params={"b": 1}, overrides={"n_candidates": 8})
    assert (
        spec.key()
        == RunSpec(
            "branin", "rf", 2, 99, problem_params={"b": 1}, overrides={"n_candidates": 8}
        ).key()
    )
    assert (
        spec.key()
        != RunSpec(
            "branin", "rf", 3, 10, problem_params={"b": 1}, overrides={"n_candidates": 8}
        ).key()
    )
    assert spec.key() == run_key("branin", {"b": 1}, "rf", 2, "default", {"n_candidates": 8})
    # The key the test records carry is the one RunSpec gives.
    assert fake_record("branin", "rf", 2, [1.0] * 6)["key"] == RunSpec("branin", "rf", 2, 6).key()
